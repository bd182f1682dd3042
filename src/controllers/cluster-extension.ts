/**
 * ClusterExtension reconciler (operator-controller's role, with dependency resolution back):
 * resolve the requested package against the served ClusterCatalogs, the cluster's own facts
 * and everything installed in the cluster (`src/installed`), then keep one BundleDeployment per
 * bundle of the extension's resolution set. A dependency already installed is shared rather than
 * installed again, the extension's own package installed as someone else's dependency is taken
 * over in place, and what no extension needs any more is removed. Reports `Installed`,
 * `Progressing`, `Deprecated`, the installed bundle, the explanation when nothing fits, and the
 * last resolutions (`status.history`).
 *
 * Reading the installed state and changing it happen while holding the installed-state lock,
 * so concurrent reconciles (and an overlapping second manager) never install a package twice.
 * The installed state is read from the manager's informer caches, as controller-runtime's cached
 * client reads, once they have caught up with this manager's own last writes (read-your-writes:
 * the resourceVersions its writes answered); the API server is listed instead when they have
 * not within a moment, after a delete, and whenever the lock was taken anew (another process may
 * have written in between).
 *
 * Steps: HandleFinalizer → Validate → Tidy → Resolve → CheckUpgradeable → Deploy → Report.
 */
import type { Logger } from 'pino';
import type { DeclarativeConfig } from '../catalog/index.js';
import type { KubeClient } from '../kube/client.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import { findCondition, type Condition, type KubeObject } from '../kube/types.js';
import { CatalogIndex, neededBundles, resolve, ResolutionError, type CatalogInput, type ChosenBundle, type ClusterFacts } from '../resolve/index.js';
import { ANNOTATION_BUNDLE_VERSION, API_VERSION, FINALIZER_CLEANUP, type BundleDeployment, type ClusterExtension, type ResolutionRecord } from '../api/types.js';
import { buildInstalledState, installedFacts, neededByLabel, requesterOf, unitOf, unitsNeededBy, type InstalledState } from '../installed/index.js';
import { errorMessage } from '../util/errors.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { MAX_DERIVED_NAME } from '../api/names.js';
import type { CatalogRegistry, ServedCatalog } from './catalog-registry.js';
import { applyStatus, Conditions, CONTINUE, ensureFinalizer, isDeleting, removeFinalizer, runSteps, stop, type Step, type StepOutcome } from './common.js';
import { changesForRemoval, changesForResolution, orphans, type ExtensionChanges } from './extension-changes.js';
import { replacedOperators, upgradeBlockers } from './operator-conditions.js';
import { DEFAULT_HISTORY_LIMIT, recordResolution, type ResolutionAttempt } from './resolution-history.js';

export { ANNOTATION_BUNDLE_NAME, ANNOTATION_BUNDLE_VERSION, ANNOTATION_CATALOG } from '../api/types.js';
export { bundleDeploymentName } from './extension-changes.js';

/** Runs a section that reads and changes the installed state, one at a time (a `LeaseLock`). */
export interface InstalledStateLock {
  withLock<T>(fn: () => Promise<T>, opts?: { signal?: AbortSignal }): Promise<T>;
  /** How many times the lock was taken anew (not carried over from the last section); see `LeaseLock`. */
  readonly acquisitions?: number;
}

/** A cache of one kind, kept current by a watch: an `Informer`. */
export interface KindCache<T extends KubeObject> {
  get(key: string): T | undefined;
  list(): T[];
  waitForResourceVersion(resourceVersion: string | undefined, timeoutMs: number): Promise<boolean>;
}

/** How long a read waits for the caches to catch up with this manager's writes before listing the API server. */
const CACHE_CATCH_UP_MS = 2_000;

export interface ClusterExtensionReconcilerOptions {
  client: KubeClient;
  registry: CatalogRegistry;
  /** Without it, the caller makes sure no two reconciles run at once. */
  lock?: InstalledStateLock;
  /** The cluster's version facts; without them cluster constraints are reported, not enforced. */
  clusterFacts?: { get(): Promise<ClusterFacts> };
  /**
   * The ClusterCatalogs in the cluster (an informer's cache). With it, an extension does not
   * resolve until every catalog it may draw from has served content once: resolving while
   * one is still loading would pick from part of what the cluster offers.
   */
  clusterCatalogs?: () => readonly KubeObject[];
  /**
   * The manager's caches of BundleDeployments and ClusterExtensions. Without them every
   * reconcile lists both from the API server.
   */
  caches?: { deployments: KindCache<BundleDeployment>; extensions: KindCache<ClusterExtension> };
}

/**
 * The ClusterCatalogs an extension's selector may draw from that are still loading: not served
 * by this manager yet, and not known to fail. One whose status says it serves (written before
 * this manager started) or that has no verdict yet is waited for; one reported `Serving=False`
 * (it could not be unpacked, or is Unavailable) or being deleted is not, so a broken catalog
 * does not hold every extension back.
 */
export function catalogsStillLoading(all: readonly KubeObject[], registry: Pick<CatalogRegistry, 'get'>, selector: { matchLabels?: Record<string, string> } | undefined): string[] {
  return all
    .filter((c) => c.metadata.deletionTimestamp === undefined && (c.spec as { availabilityMode?: string } | undefined)?.availabilityMode !== 'Unavailable')
    .filter((c) => findCondition((c.status as { conditions?: Parameters<typeof findCondition>[0] } | undefined)?.conditions, 'Serving')?.status !== 'False')
    .map((c) => ({ name: c.metadata.name ?? '', labels: c.metadata.labels ?? {} }))
    .filter((c) => c.name !== '' && matchesSelector(c, selector) && registry.get(c.name) === undefined)
    .map((c) => c.name)
    .sort();
}

interface State {
  ce: ClusterExtension;
  conditions: Conditions;
  logger: Logger;
  installed: InstalledState;
  /** The BundleDeployments this extension needs. */
  owned: BundleDeployment[];
  /** This extension's resolution set, in install order. */
  chosen: ChosenBundle[];
  notices: string[];
  history: ResolutionRecord[] | undefined;
  changes: ExtensionChanges | undefined;
}

/** Whether a ClusterCatalog (its name and labels) is one an extension's catalog selector draws from. */
export function matchesSelector(c: { name: string; labels: Record<string, string> }, selector: { matchLabels?: Record<string, string> } | undefined): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => c.labels[k] === v || (k === 'olm.operatorframework.io/metadata.name' && c.name === v));
}

/** What makes a ClusterExtension's spec unusable as written, each as `field: reason`. */
export function extensionSpecProblems(ce: ClusterExtension): string[] {
  const spec = ce.spec as Partial<ClusterExtension['spec']> | undefined;
  const problems: string[] = [];
  if ((ce.metadata.name ?? '').length > MAX_DERIVED_NAME) problems.push(`metadata.name: at most ${MAX_DERIVED_NAME} characters (it names Helm releases and labels)`);
  if (typeof spec?.namespace !== 'string' || spec.namespace === '') problems.push('spec.namespace: required');
  if (typeof spec?.serviceAccount?.name !== 'string' || spec.serviceAccount.name === '') problems.push('spec.serviceAccount.name: required');
  if (spec?.source?.sourceType !== 'Catalog') problems.push('spec.source.sourceType: must be Catalog');
  if (typeof spec?.source?.catalog?.packageName !== 'string' || spec.source.catalog.packageName === '') problems.push('spec.source.catalog.packageName: required');
  // Free-form, so the API server keeps it up to 10,000 levels deep (util/nesting.ts says why Binnacle does not).
  if (nestsDeeperThan(spec?.install?.config)) problems.push(`spec.install.config: nests deeper than ${MAX_NESTING} levels`);
  return problems;
}

/** Deprecation messages that apply to the chosen bundle, its package and the requested channels. */
function deprecations(cfg: DeclarativeConfig, pkg: string, bundle: string, channels: readonly string[]): { package?: string; channel?: string; bundle?: string } {
  const out: { package?: string; channel?: string; bundle?: string } = {};
  for (const d of cfg.deprecations.filter((x) => x.package === pkg)) {
    for (const e of d.entries) {
      if (e.reference.schema === 'olm.package') out.package = e.message;
      else if (e.reference.schema === 'olm.bundle' && e.reference.name === bundle) out.bundle = e.message;
      else if (e.reference.schema === 'olm.channel' && e.reference.name !== undefined && channels.includes(e.reference.name)) out.channel = e.message;
    }
  }
  return out;
}

export class ClusterExtensionReconciler implements Reconciler {
  /** The index of the catalogs last resolved against: rebuilding it for every extension costs more than solving. */
  private index: { inputs: CatalogInput[]; index: CatalogIndex } | undefined;
  /** The newest resourceVersion of each kind this manager wrote or read live: the caches must reach it. */
  private readonly fresh = { deployments: '', extensions: '' };
  /** Set by a delete (which answers no resourceVersion): the next read lists the API server. */
  private mustList = true;
  /** The lock's acquisition count at the last read; a change means another process may have written. */
  private lockHeld: number | undefined;
  /** Reads from the caches and from the API server, for tests and logs. */
  readonly reads = { cached: 0, live: 0 };

  constructor(private readonly o: ClusterExtensionReconcilerOptions) {}

  /** The same served content (the same config objects, names and priorities) gives the same index. */
  private catalogIndex(catalogs: readonly ServedCatalog[]): CatalogIndex {
    const inputs = catalogs.map((c) => ({ name: c.name, priority: c.priority, config: c.config }));
    const same = this.index !== undefined && this.index.inputs.length === inputs.length && this.index.inputs.every((p, i) => p.name === inputs[i]?.name && p.priority === inputs[i]?.priority && p.config === inputs[i]?.config);
    if (!same || this.index === undefined) this.index = { inputs, index: new CatalogIndex(inputs) };
    return this.index.index;
  }

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const run = (): Promise<ReconcileResult | undefined> => this.reconcileLocked(req, ctx);
    return this.o.lock === undefined ? run() : this.o.lock.withLock(run, { signal: ctx.signal });
  }

  private async reconcileLocked(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const cached = await this.cachesCaughtUp();
    let ce: ClusterExtension;
    const fromCache = cached === undefined ? undefined : cached.extensions.get(req.name);
    if (fromCache !== undefined) {
      ce = structuredClone(fromCache);
    } else {
      try {
        ce = await this.o.client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: req.name });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }
    const installed = cached === undefined ? await this.readInstalledState() : this.cachedInstalledState(cached);
    for (const p of installed.problems) ctx.logger.warn({ problem: p }, 'installed state');
    const state: State = {
      ce,
      conditions: new Conditions(ce.status?.conditions, ce.metadata.generation),
      logger: ctx.logger,
      installed,
      owned: unitsNeededBy(installed, req.name).map((u) => u.object),
      chosen: [],
      notices: [],
      history: ce.status?.history,
      changes: undefined,
    };
    const steps: Step<State>[] = [
      { name: 'HandleFinalizer', run: (s) => this.handleFinalizer(s) },
      { name: 'Validate', run: (s) => this.validate(s) },
      { name: 'Tidy', run: (s) => this.tidy(s) },
      { name: 'Resolve', run: (s) => this.resolveBundles(s) },
      { name: 'CheckUpgradeable', run: (s) => this.checkUpgradeable(s) }, // issue 12 §4 (operator-conditions.ts)
      { name: 'Deploy', run: (s) => this.deploy(s) },
      { name: 'Report', run: (s) => this.report(s) },
    ];
    return runSteps(steps, state, ctx.logger);
  }

  /**
   * The caches, once they have seen everything this manager wrote (and read live) of both kinds;
   * undefined when they cannot be trusted now (see the file's header) and the API server must be read.
   */
  private async cachesCaughtUp(): Promise<ClusterExtensionReconcilerOptions['caches']> {
    const caches = this.o.caches;
    if (caches === undefined) return undefined;
    const held = this.o.lock?.acquisitions;
    if (this.mustList || held !== this.lockHeld) return undefined;
    const [bds, ces] = await Promise.all([
      caches.deployments.waitForResourceVersion(this.fresh.deployments, CACHE_CATCH_UP_MS),
      caches.extensions.waitForResourceVersion(this.fresh.extensions, CACHE_CATCH_UP_MS),
    ]);
    return bds && ces ? caches : undefined;
  }

  /** The installed state from the caches (copies: steps may change what they read). */
  private cachedInstalledState(caches: NonNullable<ClusterExtensionReconcilerOptions['caches']>): InstalledState {
    this.reads.cached++;
    return buildInstalledState(structuredClone(caches.deployments.list()), caches.extensions.list());
  }

  /** Every BundleDeployment and ClusterExtension, read now from the API server. */
  private async readInstalledState(): Promise<InstalledState> {
    this.lockHeld = this.o.lock?.acquisitions;
    this.mustList = false;
    this.reads.live++;
    const [bds, ces] = await Promise.all([
      this.o.client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'),
      this.o.client.list<ClusterExtension>(API_VERSION, 'ClusterExtension'),
    ]);
    // What the API server holds now, the caches must reach before they are read again.
    for (const bd of bds.items) this.wrote('deployments', bd);
    for (const ce of ces.items) this.wrote('extensions', ce);
    return buildInstalledState(bds.items, ces.items);
  }

  /** Remembers the resourceVersion a write answered (or a live read saw): the caches must reach it. */
  private wrote(kind: 'deployments' | 'extensions', obj: KubeObject | undefined): void {
    const rv = obj?.metadata.resourceVersion;
    if (rv === undefined || rv === '') return;
    const prev = this.fresh[kind];
    if (!/^[0-9]+$/.test(rv)) {
      this.mustList = true; // not comparable: the caches can never be shown to have caught up
      return;
    }
    if (prev === '' || BigInt(rv) > BigInt(prev)) this.fresh[kind] = rv;
  }

  private async writeStatus(s: State, extra: Record<string, unknown> = {}): Promise<void> {
    const prev = s.ce.status ?? {};
    const keep: Record<string, unknown> = {};
    if (prev.install !== undefined) keep.install = prev.install;
    if (prev.resolution !== undefined) keep.resolution = prev.resolution;
    if (s.history !== undefined) keep.history = s.history;
    this.wrote('extensions', await applyStatus(this.o.client, s.ce, { ...keep, ...extra, conditions: s.conditions.toArray(), observedGeneration: s.ce.metadata.generation }));
  }

  /** Applies and deletes what `changes` says, under the lock the caller holds. */
  private async write(s: State, changes: ExtensionChanges): Promise<BundleDeployment[]> {
    const applied: BundleDeployment[] = [];
    for (const body of changes.apply) {
      const bd = await this.o.client.apply<BundleDeployment>(body, { force: true });
      this.wrote('deployments', bd);
      applied.push(bd);
    }
    for (const name of changes.delete) {
      s.logger.info({ bundleDeployment: name }, 'removing a bundle no extension needs any more');
      this.mustList = true; // set before: a delete that fails half-way may still have deleted
      await this.o.client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
    }
    return applied;
  }

  private async handleFinalizer(s: State): Promise<StepOutcome> {
    if (!isDeleting(s.ce)) {
      if (await ensureFinalizer(this.o.client, s.ce, FINALIZER_CLEANUP)) this.wrote('extensions', s.ce);
      return CONTINUE;
    }
    // Let go of the whole set: what another extension still needs stays (and is handed to it);
    // the rest is deleted, and the BundleDeployments' own finalizers uninstall their objects.
    const changes = changesForRemoval(s.ce.metadata.name ?? '', s.installed);
    await this.write(s, changes);
    if (changes.delete.length > 0 || changes.waiting.length > 0) return stop({ requeueAfterMs: 2_000 });
    this.mustList = true; // the extension goes: a delete the caches cannot be checked against
    await removeFinalizer(this.o.client, s.ce, FINALIZER_CLEANUP);
    return stop();
  }

  private async validate(s: State): Promise<StepOutcome> {
    const problems = extensionSpecProblems(s.ce);
    if (problems.length === 0) return CONTINUE;
    s.conditions.set('Progressing', false, 'InvalidSpec', problems.join('; '));
    await this.writeStatus(s);
    return stop();
  }

  /** BundleDeployments that no existing extension needs (left by a crash or a forced delete) go. */
  private async tidy(s: State): Promise<StepOutcome> {
    const gone = orphans(s.installed);
    if (gone.length > 0) await this.write(s, { apply: [], delete: gone, waiting: [], deployments: new Map(), takenOver: [] });
    return CONTINUE;
  }

  private historyLimit(s: State): number {
    const n = s.ce.spec.resolutionHistoryLimit;
    return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : DEFAULT_HISTORY_LIMIT;
  }

  private record(s: State, catalogs: readonly ServedCatalog[], attempt: Omit<ResolutionAttempt, 'generation' | 'catalogs'>): void {
    s.history = recordResolution(
      s.history,
      { ...attempt, generation: s.ce.metadata.generation ?? 0, catalogs: catalogs.map((c) => ({ name: c.name, digest: c.digest })) },
      this.historyLimit(s),
    );
  }

  private async resolutionFailed(s: State, catalogs: readonly ServedCatalog[], message: string): Promise<void> {
    s.conditions.set('Progressing', true, 'Retrying', `resolution failed: ${message}`);
    if (s.conditions.get('Installed') === undefined) s.conditions.set('Installed', false, 'Failed', 'no bundle could be resolved');
    this.record(s, catalogs, { bundles: [], outcome: 'Failed', message });
    await this.writeStatus(s, { resolution: { bundles: [], explanation: message } });
  }

  private async resolveBundles(s: State): Promise<StepOutcome> {
    const cat = s.ce.spec.source.catalog;
    const me = s.ce.metadata.name ?? '';
    const loading = this.o.clusterCatalogs === undefined ? [] : catalogsStillLoading(this.o.clusterCatalogs(), this.o.registry, cat.selector);
    if (loading.length > 0) {
      // Catalogs coming in call every extension back (the registry's change listener); the requeue is a fallback.
      s.conditions.set('Progressing', true, 'Retrying', `waiting for ClusterCatalog${loading.length === 1 ? '' : 's'} ${loading.join(', ')} to serve content before resolving`);
      await this.writeStatus(s);
      return stop({ requeueAfterMs: 10_000 });
    }
    const catalogs = this.o.registry.list().filter((c) => matchesSelector(c, cat.selector));
    if (catalogs.length === 0) {
      s.conditions.set('Progressing', true, 'Retrying', 'no ClusterCatalog matching the selector is serving content yet');
      await this.writeStatus(s);
      return stop({ requeueAfterMs: 10_000 });
    }
    // A package is installed once per cluster: a second extension asking for it is refused.
    const unit = unitOf(s.installed, cat.packageName);
    const requester = unit === undefined ? undefined : requesterOf(unit);
    if (unit !== undefined && requester !== undefined && requester !== me) {
      await this.resolutionFailed(
        s,
        catalogs,
        `package ${cat.packageName} is already installed by extension ${requester} (BundleDeployment ${unit.bundleDeployment}, version ${unit.version}); a package is installed once per cluster`,
      );
      return stop({ requeueAfterMs: 60_000 });
    }
    try {
      const resolution = resolve({
        catalogs: this.catalogIndex(catalogs),
        installed: installedFacts(s.installed, me),
        requests: [
          {
            package: cat.packageName,
            ...(cat.channels === undefined ? {} : { channels: cat.channels }),
            ...(cat.version === undefined ? {} : { versionRange: cat.version }),
            upgradePolicy: cat.upgradeConstraintPolicy ?? 'CatalogProvided',
            // Keep the operator current: new catalog content offering an allowed upgrade is installed.
            preferUpgrade: true,
          },
        ],
        ...(this.o.clusterFacts === undefined ? {} : { cluster: await this.o.clusterFacts.get() }),
      });
      // The resolution holds everything installed; this extension's set is what its package needs.
      s.chosen = neededBundles(resolution.bundles, cat.packageName);
      s.notices = resolution.notices.filter((n) => s.chosen.some((b) => n.startsWith(`${b.package} ${b.version} `)));
      this.record(s, catalogs, { bundles: s.chosen.map((b) => ({ package: b.package, version: b.version, name: b.name })), outcome: 'Resolved' });
    } catch (err) {
      await this.resolutionFailed(s, catalogs, errorMessage(err));
      if (err instanceof ResolutionError) return stop({ requeueAfterMs: 60_000 });
      throw err;
    }
    return CONTINUE;
  }

  /**
   * issue 12 §4 (operator-conditions.ts): before any installed bundle is switched to another,
   * its operator may hold the switch back with Upgradeable=False; wait, and look again.
   */
  private async checkUpgradeable(s: State): Promise<StepOutcome> {
    // Every installed bundle counts, not only this extension's: its resolution may replace a shared one.
    // The installed state read at the start of this reconcile, under the lock: nothing changed it since.
    const installed = s.chosen.length === 0 ? [] : s.installed.units.map((u) => u.object);
    const blockers = await upgradeBlockers(this.o.client, replacedOperators(installed, s.chosen));
    if (blockers.length === 0) return CONTINUE;
    s.conditions.set('Progressing', true, 'UpgradeBlocked', blockers.map((b) => b.message).join('; '));
    await this.writeStatus(s);
    return stop({ requeueAfterMs: 10_000 });
  }

  private async deploy(s: State): Promise<StepOutcome> {
    const me = s.ce.metadata.name ?? '';
    const changes = changesForResolution(s.ce, s.installed, s.chosen);
    s.changes = changes;
    for (const pkg of changes.takenOver) s.logger.info({ package: pkg, bundleDeployment: changes.deployments.get(pkg) }, 'taking over an installed dependency in place');
    const applied = await this.write(s, changes);
    // What this extension needs now: what it needed, as just written, less what was deleted.
    // Known from the writes (under the lock), not listed again: each list of every
    // BundleDeployment costs the API server dearly when hundreds are installed.
    const byName = new Map(s.owned.map((bd) => [bd.metadata.name ?? '', bd]));
    for (const bd of applied) byName.set(bd.metadata.name ?? '', bd);
    for (const name of changes.delete) byName.delete(name);
    s.owned = [...byName.values()].filter((bd) => bd.metadata.labels?.[neededByLabel(me)] !== undefined);
    if (changes.waiting.length > 0) {
      s.conditions.set('Progressing', true, 'Waiting', changes.waiting.join('; '));
      if (s.conditions.get('Installed') === undefined) s.conditions.set('Installed', false, 'Installing', changes.waiting.join('; '));
      await this.writeStatus(s);
      return stop({ requeueAfterMs: 2_000 });
    }
    return CONTINUE;
  }

  /** The BundleDeployment that installs `pkg` for this extension, as last read. */
  private deploymentOf(s: State, pkg: string): BundleDeployment | undefined {
    const name = s.changes?.deployments.get(pkg);
    return s.owned.find((x) => x.metadata.name === name);
  }

  /** Bundles of the set still on their way, and those whose install failed (with why). */
  private progress(s: State): { waiting: string[]; failed: string[] } {
    const waiting: string[] = [];
    const failed: string[] = [];
    for (const b of s.chosen) {
      const bd = this.deploymentOf(s, b.package);
      const current = bd !== undefined && bd.status?.observedGeneration === bd.metadata.generation && bd.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION] === b.version;
      // A condition speaks for this version only when it was set at the BundleDeployment's
      // generation: Installed=True left from the version before (while the new one still fails
      // to unpack, say) is not this version installed.
      const now = (type: string): Condition | undefined => {
        const c = findCondition(bd?.status?.conditions, type);
        return current && c !== undefined && (c.observedGeneration === undefined || c.observedGeneration === bd?.metadata.generation) ? c : undefined;
      };
      const cond = now('Installed');
      const progressing = now('Progressing');
      if (cond?.status === 'True') continue;
      if (cond?.status === 'False' && cond.reason !== 'RolledBack') failed.push(`${b.name}: ${cond.message}`);
      else if (progressing?.status === 'True' && progressing.reason === 'Retrying') failed.push(`${b.name}: ${progressing.message}`);
      else waiting.push(b.name);
    }
    return { waiting, failed };
  }

  private async report(s: State): Promise<StepOutcome> {
    const main = s.ce.spec.source.catalog.packageName;
    const { waiting, failed } = this.progress(s);
    const chosenMain = s.chosen.find((b) => b.package === main);
    const mainBd = this.deploymentOf(s, main);
    const extra: Record<string, unknown> = {
      resolution: {
        bundles: s.chosen.map((b) => ({ name: b.name, package: b.package, version: b.version, image: b.image, catalog: b.catalog })),
        ...(s.notices.length > 0 ? { notices: s.notices } : {}),
      },
    };
    if (waiting.length === 0 && failed.length === 0 && chosenMain !== undefined) {
      const image = chosenMain.image !== '' ? chosenMain.image : (mainBd?.spec.source.image?.ref ?? '');
      const namespace = mainBd?.spec.installNamespace ?? s.ce.spec.namespace;
      extra.install = {
        bundle: { name: chosenMain.name, version: chosenMain.version, package: chosenMain.package, image, catalog: chosenMain.catalog },
        bundleDeployment: mainBd?.metadata.name ?? '',
        namespace,
      };
      s.conditions.set('Installed', true, 'Succeeded', this.installedMessage(s, chosenMain, namespace));
      s.conditions.set('Progressing', false, 'Succeeded', 'desired state reached');
    } else if (failed.length > 0) {
      if (findCondition(s.ce.status?.conditions, 'Installed')?.status !== 'True') s.conditions.set('Installed', false, 'Failed', failed.join('; '));
      s.conditions.set('Progressing', true, 'Retrying', failed.join('; '));
    } else {
      if (findCondition(s.ce.status?.conditions, 'Installed') === undefined) s.conditions.set('Installed', false, 'Installing', `installing ${waiting.join(', ')}`);
      s.conditions.set('Progressing', true, 'Installing', `waiting for ${waiting.join(', ')}`);
    }
    if (chosenMain !== undefined) this.reportDeprecations(s, chosenMain);
    await this.writeStatus(s, extra);
    // Each BundleDeployment's news calls this extension back; the requeue is only a fallback.
    return stop(waiting.length > 0 ? { requeueAfterMs: 30_000 } : undefined);
  }

  /** "installed X with 2 dependencies (1 shared with other extensions); it runs in namespace …". */
  private installedMessage(s: State, main: ChosenBundle, namespace: string): string {
    const me = s.ce.metadata.name ?? '';
    const deps = s.chosen.length - 1;
    const shared = s.chosen.filter((b) => b.package !== main.package && (unitOf(s.installed, b.package)?.needs.some((n) => n.extension !== me) ?? false)).length;
    const depWords = deps === 0 ? '' : ` with ${deps} ${deps === 1 ? 'dependency' : 'dependencies'}${shared > 0 ? ` (${shared} shared with other extensions)` : ''}`;
    const where = namespace === s.ce.spec.namespace ? '' : `; it runs in namespace ${namespace}, where it was installed as a dependency`;
    return `installed ${main.name}${depWords}${where}`;
  }

  private reportDeprecations(s: State, chosenMain: ChosenBundle): void {
    const served = this.o.registry.get(chosenMain.catalog);
    const d = served === undefined ? {} : deprecations(served.config, chosenMain.package, chosenMain.name, s.ce.spec.source.catalog.channels ?? []);
    const any = [d.package, d.channel, d.bundle].filter((x): x is string => x !== undefined);
    s.conditions.set('Deprecated', any.length > 0, any.length > 0 ? 'Deprecated' : 'NotDeprecated', any.length > 0 ? any.join('; ') : 'nothing chosen is deprecated');
    s.conditions.set('PackageDeprecated', d.package !== undefined, d.package !== undefined ? 'Deprecated' : 'NotDeprecated', d.package ?? '');
    s.conditions.set('ChannelDeprecated', d.channel !== undefined, d.channel !== undefined ? 'Deprecated' : 'NotDeprecated', d.channel ?? '');
    s.conditions.set('BundleDeprecated', d.bundle !== undefined, d.bundle !== undefined ? 'Deprecated' : 'NotDeprecated', d.bundle ?? '');
  }
}
