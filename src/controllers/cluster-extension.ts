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
 * Nothing else does: the finalizer is added before the lock and the status written after it.
 * How the installed state is read (caches that have caught up with this manager's own writes,
 * or the API server) is `installed-state-reader.ts`.
 *
 * Steps: HandleFinalizer → Validate → Tidy → Catalogs → Resolve → CheckUpgradeable → Approve →
 * Deploy → Report. Approve holds a change back until its plan is approved, under
 * `spec.upgradeApproval: Manual` (`upgrade-approval.ts`). Steps change only the reconcile's state (and the BundleDeployments, through the
 * writer port); status is written once, at the end, and only when it changed. Everything the
 * steps reach outside is a port (catalogs, resolver, cluster facts, OperatorConditions, the
 * installed-state view, the BundleDeployment writer, the clock), so each branch is unit-tested
 * with in-memory fakes (`cluster-extension-reconcile.test.ts`).
 */
import { matchesSelector, type CatalogSelector as ApiCatalogSelector } from '../api/catalog-selector.js';
import type { Logger } from 'pino';
import type { DeclarativeConfig } from '../catalog/index.js';
import type { ObjectReader, ObjectWriter, StatusWriter } from '../kube/ports.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { findCondition, type Condition, type KubeObject } from '../kube/types.js';
import { CatalogIndex, extensionRequest, neededBundles, resolve, ResolutionError, type CatalogInput, type ChosenBundle, type ClusterFacts, type Resolution, type ResolveInput } from '../resolve/index.js';
import { ANNOTATION_BUNDLE_VERSION, API_VERSION, FINALIZER_CLEANUP, LABEL_PACKAGE, type BundleDeployment, type ClusterExtension, type ClusterExtensionStatus, type ResolutionRecord } from '../api/types.js';
import { installedFacts, neededByLabel, requesterOf, unitOf, unitsNeededBy, type InstalledState } from '../installed/index.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { driftSpecProblems } from '../apply/index.js';
import { bundleDeploymentName, MAX_DERIVED_NAME } from '../api/names.js';
import { olmv1TwinOf } from '../api/olmv1/twin.js';
import { formatReference, parseReference, withDigest } from '../oci/reference.js';
import type { CatalogRegistry, ServedCatalog } from './catalog-registry.js';
import { applyStatus, Conditions, CONTINUE, methodSteps, ensureFinalizer, isDeleting, removeFinalizer, reconcileSteps, sameStatus, stop, type StepOutcome } from './common.js';
import { changesForRemoval, changesForResolution, orphans, takeOverProblem, type ExtensionChanges } from './extension-changes.js';
import { CachedInstalledStateReader, type InstalledCaches, type InstalledStateLock, type InstalledStateView } from './installed-state-reader.js';
import { replacedOperators, upgradeBlockers, type InstalledOperator, type UpgradeBlocker } from './operator-conditions.js';
import { approvalNeeded, approvedDigest, decideApproval, type ExtensionPlanInput, type PlannedChange } from './upgrade-approval.js';
import { DEFAULT_HISTORY_LIMIT, recordResolution, type ResolutionAttempt } from './resolution-history.js';

export { ANNOTATION_BUNDLE_NAME, ANNOTATION_BUNDLE_VERSION, ANNOTATION_CATALOG } from '../api/types.js';
export type { InstalledCaches, InstalledStateLock, InstalledStateView, KindCache } from './installed-state-reader.js';

type CatalogSelector = ApiCatalogSelector | undefined;

/** The served catalogs, as resolution reads them. */
export interface CatalogAccess {
  /** Every catalog serving content now. */
  served(): ServedCatalog[];
  get(name: string): ServedCatalog | undefined;
  /** ClusterCatalogs `selector` may draw from that have not served content yet (`catalogsStillLoading`). */
  stillLoading(selector: CatalogSelector): string[];
}

/** Creates, updates and deletes the BundleDeployments of a resolution set. */
export interface BundleDeploymentWriter {
  /** Server-side apply of a complete body; answers the object as written. */
  apply(body: BundleDeployment): Promise<BundleDeployment>;
  delete(name: string): Promise<void>;
}

/** Everything the steps reach outside the reconcile's state. The defaults are the real ones. */
export interface ClusterExtensionPorts {
  catalogs: CatalogAccess;
  /** The resolver (`src/resolve`), over an index of the served catalogs the reconciler keeps. */
  resolve(input: ResolveInput): Resolution;
  /** The cluster's version facts; undefined: cluster constraints are reported, not enforced. */
  clusterFacts(): Promise<ClusterFacts | undefined>;
  /** The operators among `replaced` that hold back their upgrade (OperatorCondition `Upgradeable=False`). */
  upgradeBlockers(replaced: readonly InstalledOperator[]): Promise<UpgradeBlocker[]>;
  /** The extension and everything installed, as fresh as this manager's own writes. */
  installed: InstalledStateView;
  deployments: BundleDeploymentWriter;
  /**
   * The plan of a change awaiting approval (`upgrade-approval.ts`): the manager gives
   * `extensionPlanner`, `binnacle plan`'s own planning on a dry-run view of its client. Without
   * one, a change held for approval fails with NO_PLANNER.
   */
  planChange(input: ExtensionPlanInput): Promise<PlannedChange>;
  /** The digest an image reference points to now (a registry's answer); asked only under Manual approval. */
  resolveDigest(image: string): Promise<string>;
  clock(): Date;
}

/**
 * What the reconciler and its default ports ask of the cluster: the extensions and
 * BundleDeployments read (and OperatorConditions listed), the BundleDeployments applied and
 * deleted, the extension's finalizer patched and its status written.
 */
export type ClusterExtensionClient = Pick<ObjectReader, 'get' | 'list'> & Pick<ObjectWriter, 'apply' | 'delete' | 'patch'> & Pick<StatusWriter, 'applyStatus'>;

export interface ClusterExtensionReconcilerOptions {
  /** Reads and writes the extension (finalizer, status); the default ports use it for the rest. */
  client: ClusterExtensionClient;
  /** The served catalogs the default `catalogs` port reads; required unless `ports.catalogs` is given. */
  registry?: CatalogRegistry;
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
  caches?: InstalledCaches;
  ports?: Partial<ClusterExtensionPorts>;
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

/** What makes a ClusterExtension's spec unusable as written (taken as the API server hands it over, unchecked), each as `field: reason`. */
export function extensionSpecProblems(ce: KubeObject): string[] {
  const spec = ce.spec as Partial<ClusterExtension['spec']> | undefined;
  const problems: string[] = [];
  const missing = (v: unknown): boolean => typeof v !== 'string' || v === '';
  if ((ce.metadata.name ?? '').length > MAX_DERIVED_NAME) problems.push(`metadata.name: at most ${MAX_DERIVED_NAME} characters (it names Helm releases and labels)`);
  if (missing(spec?.namespace)) problems.push('spec.namespace: required');
  if (missing(spec?.serviceAccount?.name)) problems.push('spec.serviceAccount.name: required');
  if (spec?.source?.sourceType !== 'Catalog') problems.push('spec.source.sourceType: must be Catalog');
  if (missing(spec?.source?.catalog?.packageName)) problems.push('spec.source.catalog.packageName: required');
  // Free-form, so the API server keeps it up to 10,000 levels deep (util/nesting.ts says why Binnacle does not).
  for (const field of ['config', 'bundleConfig'] as const) if (nestsDeeperThan(spec?.install?.[field])) problems.push(`spec.install.${field}: nests deeper than ${MAX_NESTING} levels`);
  problems.push(...driftSpecProblems(spec?.drift, 'spec.drift'));
  return problems;
}

/**
 * OLM v1 refuses to choose between catalogs of the same priority that both offer the package
 * (resolve/catalog.go: `found bundles for package … in multiple catalogs with the same priority`);
 * Binnacle's own extensions choose (the catalogs' content being the same bundle). For the twin of
 * an OLM v1 ClusterExtension only: the chosen bundle of the requested package, newly chosen, also
 * offered by another selected catalog of the same priority, is refused, naming the catalogs.
 * Narrower than OLM v1 (which also refuses when the other catalog offers a different matching
 * bundle): only the same bundle offered twice counts here.
 */
export function olmv1Ambiguity(ce: ClusterExtension, chosen: readonly ChosenBundle[], catalogs: readonly Pick<ServedCatalog, 'name' | 'priority' | 'config'>[]): { message: string; catalogs: string[] } | undefined {
  if (olmv1TwinOf(ce) === undefined) return undefined;
  const main = chosen.find((b) => b.package === ce.spec.source.catalog.packageName);
  if (main === undefined || main.installed) return undefined;
  const priority = catalogs.find((c) => c.name === main.catalog)?.priority ?? 0;
  const offering = catalogs.filter((c) => (c.priority ?? 0) === priority && c.config.bundles.some((b) => b.package === main.package && b.name === main.name)).map((c) => c.name);
  if (offering.length < 2) return undefined;
  const names = [...new Set(offering)].sort();
  return {
    message: `bundle ${main.name} of package ${main.package} is offered by ClusterCatalogs ${names.join(', ')} at the same priority ${priority}; OLM v1 refuses to choose between them: raise one catalog's spec.priority or narrow spec.source.catalog.selector to one`,
    catalogs: names,
  };
}

/**
 * operator-controller's fallback (clusterextension_reconcile_steps.go `handleResolutionError`):
 * when no ClusterCatalog matching the selector is left, an extension with its package installed
 * and no other version asked for keeps what it has installed, and its other spec changes are
 * still applied. For the twin of an OLM v1 ClusterExtension only (Binnacle's own wait for a
 * catalog). The kept set: every bundle the extension needs, as its BundleDeployments install them.
 */
export function olmv1Fallback(ce: ClusterExtension, installed: InstalledState): ChosenBundle[] | undefined {
  if (olmv1TwinOf(ce) === undefined) return undefined;
  const me = ce.metadata.name ?? '';
  const units = unitsNeededBy(installed, me).filter((u) => u.state === 'installed');
  const main = units.find((u) => u.package === ce.spec.source.catalog.packageName);
  const version = ce.spec.source.catalog.version;
  if (main === undefined || (version !== undefined && version !== '' && version !== main.version)) return undefined;
  return units.map((u) => ({
    name: u.bundleName ?? `${u.package}.v${u.version}`,
    package: u.package,
    version: u.version,
    image: u.object.spec.source.image?.ref ?? '',
    catalog: u.catalog ?? '',
    installed: true,
    dependsOn: [],
    provides: u.provides,
  }));
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

/** What the steps of one reconcile share; they change it, and the status is written from it once. */
interface State {
  ce: ClusterExtension;
  conditions: Conditions;
  logger: Logger;
  installed: InstalledState;
  /** The BundleDeployments this extension needs. */
  owned: BundleDeployment[];
  /** The served catalogs its selector draws from. */
  catalogs: ServedCatalog[];
  /** No catalog left to resolve against: the installed set is kept as it is (olmv1Fallback). */
  fallback?: boolean;
  /** This extension's resolution set, in install order. */
  chosen: ChosenBundle[];
  notices: string[];
  changes: ExtensionChanges | undefined;
  /** `status` besides conditions, as this reconcile leaves it. */
  status: Pick<ClusterExtensionStatus, 'install' | 'resolution' | 'history' | 'pendingPlan'>;
  /** False while the extension is being deleted: status stays as it was unless a step fails. */
  writeStatus: boolean;
  /** Set by the lock's section: the status is written after it (reconcile). */
  statusDue?: boolean;
  /** Set by the lock's section: the extension's set is gone, and its finalizer goes after it. */
  letGo?: boolean;
}

/** The catalog access of a registry and the ClusterCatalogs an informer holds. */
function registryAccess(registry: CatalogRegistry, clusterCatalogs: (() => readonly KubeObject[]) | undefined): CatalogAccess {
  return {
    served: () => registry.list(),
    get: (name) => registry.get(name),
    stillLoading: (selector) => (clusterCatalogs === undefined ? [] : catalogsStillLoading(clusterCatalogs(), registry, selector)),
  };
}

/** The default ports: the registry, the resolver, OperatorConditions and BundleDeployments through `client`, the wall clock. */
function defaultPorts(o: ClusterExtensionReconcilerOptions, catalogs: CatalogAccess): ClusterExtensionPorts {
  const client = o.client;
  return {
    catalogs,
    resolve,
    clusterFacts: async () => (o.clusterFacts === undefined ? undefined : o.clusterFacts.get()),
    upgradeBlockers: (replaced) => upgradeBlockers(client, replaced),
    installed: new CachedInstalledStateReader({ client, lock: o.lock, caches: o.caches }),
    deployments: {
      apply: (body) => client.apply<BundleDeployment>(body, { force: true }),
      delete: async (name) => {
        await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
      },
    },
    planChange: () => Promise.reject(new BinnacleError('terminal', 'NO_PLANNER', 'a change held for approval needs its plan, and this reconciler was made without a planner (ports.planChange)')),
    resolveDigest: async (image) => (await new (await import('../oci/index.js')).RegistryClient().resolveImage(image)).digest,
    clock: () => new Date(),
  };
}

/** The status fields this reconciler writes, from what an extension holds now. */
function writtenStatus(status: ClusterExtensionStatus | undefined): Record<string, unknown> {
  return { install: status?.install, resolution: status?.resolution, history: status?.history, pendingPlan: status?.pendingPlan, conditions: status?.conditions ?? [], observedGeneration: status?.observedGeneration };
}

export class ClusterExtensionReconciler implements Reconciler {
  /** The index of the catalogs last resolved against: rebuilding it for every extension costs more than solving. */
  private index: { inputs: CatalogInput[]; index: CatalogIndex } | undefined;
  private readonly ports: ClusterExtensionPorts;

  constructor(private readonly o: ClusterExtensionReconcilerOptions) {
    const catalogs = o.ports?.catalogs ?? (o.registry === undefined ? undefined : registryAccess(o.registry, o.clusterCatalogs));
    if (catalogs === undefined) throw new TypeError('ClusterExtensionReconciler: give a registry or ports.catalogs');
    this.ports = { ...defaultPorts(o, catalogs), ...o.ports };
  }

  /** The same served content (the same config objects, names and priorities) gives the same index. */
  private catalogIndex(catalogs: readonly ServedCatalog[]): CatalogIndex {
    const inputs = catalogs.map((c) => ({ name: c.name, priority: c.priority, config: c.config }));
    const same = this.index !== undefined && this.index.inputs.length === inputs.length && this.index.inputs.every((p, i) => p.name === inputs[i]?.name && p.priority === inputs[i]?.priority && p.config === inputs[i]?.config);
    if (!same || this.index === undefined) this.index = { inputs, index: new CatalogIndex(inputs) };
    return this.index.index;
  }

  /**
   * Only what reads and changes the installed state holds the lock: its sections run one at a
   * time, across every extension, so each API call in them is paid by all the extensions
   * waiting. The finalizer (first reconcile) is added before it and the status written after
   * it: no other extension's resolution reads either (installed/view.ts reads extensions'
   * specs and deletion marks only).
   */
  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    await this.finalizerBeforeLock(req.name, ctx.logger);
    let held: State | undefined;
    let result: ReconcileResult | undefined;
    const run = (): Promise<ReconcileResult | undefined> =>
      this.reconcileLocked(req, ctx, (s) => {
        held = s;
      });
    try {
      result = this.o.lock === undefined ? await run() : await this.o.lock.withLock(run, { signal: ctx.signal });
    } catch (err) {
      // A failed reconcile's status still says why; its write failing does not hide the error.
      if (held?.statusDue === true) await this.writeStatus(held).catch((writeErr: unknown) => ctx.logger.warn({ err: errorMessage(writeErr) }, 'cannot write status'));
      throw err;
    }
    const after: State | undefined = held;
    if (after?.statusDue === true) await this.writeStatus(after);
    if (after?.letGo === true) await removeFinalizer(this.o.client, after.ce, FINALIZER_CLEANUP);
    return result;
  }

  /**
   * A live extension seen in the cache without the finalizer gets it, before the lock is waited
   * for. Only a head start: any failure (a stale copy refused as a conflict, gone, forbidden, the
   * API server down) is left to the reconcile in the lock, which adds it again and reports what
   * fails in the extension's status, as an error escaping here would not.
   */
  private async finalizerBeforeLock(name: string, logger: ReconcileContext['logger']): Promise<void> {
    const cached = this.o.caches?.extensions.get(name);
    if (cached === undefined || isDeleting(cached) || cached.metadata.finalizers?.includes(FINALIZER_CLEANUP) === true) return;
    const ce = structuredClone(cached);
    try {
      if (await ensureFinalizer(this.o.client, ce, FINALIZER_CLEANUP)) this.ports.installed.wrote('extensions', ce);
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err)) logger.debug({ err: errorMessage(err) }, 'finalizer not added before the lock; the locked reconcile adds it');
    }
  }

  private async reconcileLocked(req: ReconcileRequest, ctx: ReconcileContext, hold: (s: State) => void): Promise<ReconcileResult | undefined> {
    const read = await this.ports.installed.read(req.name);
    if (read === undefined) return undefined;
    const { extension: ce, installed } = read;
    for (const p of installed.problems) ctx.logger.warn({ problem: p }, 'installed state');
    const state: State = {
      ce,
      conditions: new Conditions(ce.status?.conditions, ce.metadata.generation),
      logger: ctx.logger,
      installed,
      owned: unitsNeededBy(installed, req.name).map((u) => u.object),
      catalogs: [],
      chosen: [],
      notices: [],
      changes: undefined,
      status: { ...(ce.status?.install === undefined ? {} : { install: ce.status.install }), ...(ce.status?.resolution === undefined ? {} : { resolution: ce.status.resolution }), ...(ce.status?.history === undefined ? {} : { history: ce.status.history }), ...(ce.status?.pendingPlan === undefined ? {} : { pendingPlan: ce.status.pendingPlan }) },
      writeStatus: true,
    };
    hold(state);
    // checkUpgradeable: issue 12 §4 (operator-conditions.ts); approve: issue 31 §1 (upgrade-approval.ts).
    const steps = methodSteps<State, ClusterExtensionReconciler>(this, ['handleFinalizer', 'validate', 'tidy', 'catalogs', 'resolve', 'checkUpgradeable', 'approve', 'deploy', 'report']);
    return reconcileSteps(steps, state, ctx.logger, {
      // Written once the lock is let go (reconcile above).
      write: (s) => {
        s.statusDue = true;
        return Promise.resolve();
      },
      // Anything a step did not expect: said in status (while deleting too), then retried with backoff.
      onError: (s, err) => {
        s.conditions.set('Progressing', true, 'Retrying', errorMessage(err));
        s.writeStatus = true;
      },
    });
  }

  /** The one status write of a reconcile; none when nothing in it changed. */
  private async writeStatus(s: State): Promise<void> {
    const status = { ...s.status, conditions: s.conditions.toArray(), observedGeneration: s.ce.metadata.generation };
    if (sameStatus(writtenStatus(status), writtenStatus(s.ce.status))) return;
    this.ports.installed.wrote('extensions', await applyStatus(this.o.client, s.ce, status));
  }

  /** Applies and deletes what `changes` says, under the lock the caller holds. */
  private async write(s: State, changes: Pick<ExtensionChanges, 'apply' | 'delete'>): Promise<BundleDeployment[]> {
    const applied: BundleDeployment[] = [];
    for (const body of changes.apply) {
      const bd = await this.ports.deployments.apply(body);
      this.ports.installed.wrote('deployments', bd);
      applied.push(bd);
    }
    for (const name of changes.delete) {
      s.logger.info({ bundleDeployment: name }, 'removing a bundle no extension needs any more');
      this.ports.installed.deleting();
      await this.ports.deployments.delete(name);
    }
    return applied;
  }

  /** Not deleting: the finalizer is there. Deleting: let go of the whole set, then of the extension. */
  async handleFinalizer(s: State): Promise<StepOutcome> {
    if (!isDeleting(s.ce)) {
      if (await ensureFinalizer(this.o.client, s.ce, FINALIZER_CLEANUP)) this.ports.installed.wrote('extensions', s.ce);
      return CONTINUE;
    }
    // Status stays as it was while the set is let go (and is gone with the extension after).
    s.writeStatus = false;
    // What another extension still needs stays (and is handed to it); the rest is deleted, and
    // the BundleDeployments' own finalizers uninstall their objects.
    const changes = changesForRemoval(s.ce.metadata.name ?? '', s.installed);
    await this.write(s, changes);
    if (changes.delete.length > 0 || changes.waiting.length > 0) return stop({ requeueAfterMs: 2_000 });
    // Its set is gone: the extension goes, after the lock. Nothing installed changes with it,
    // and while a cache still holds it, it reads as being deleted, which it is.
    s.letGo = true;
    return stop();
  }

  validate(s: State): Promise<StepOutcome> {
    const problems = extensionSpecProblems(s.ce);
    if (problems.length === 0) return Promise.resolve(CONTINUE);
    s.conditions.set('Progressing', false, 'InvalidSpec', problems.join('; '));
    return Promise.resolve(stop());
  }

  /** BundleDeployments that no existing extension needs (left by a crash or a forced delete) go. */
  async tidy(s: State): Promise<StepOutcome> {
    const gone = orphans(s.installed);
    if (gone.length > 0) await this.write(s, { apply: [], delete: gone });
    return CONTINUE;
  }

  /** The served catalogs the selector draws from; none yet, or one still loading, is waited for. */
  catalogs(s: State): Promise<StepOutcome> {
    const selector = s.ce.spec.source.catalog.selector;
    const loading = this.ports.catalogs.stillLoading(selector);
    if (loading.length > 0) {
      // Catalogs coming in call every extension back (the registry's change listener); the requeue is a fallback.
      s.conditions.set('Progressing', true, 'Retrying', `waiting for ClusterCatalog${loading.length === 1 ? '' : 's'} ${loading.join(', ')} to serve content before resolving`);
      return Promise.resolve(stop({ requeueAfterMs: 10_000 }));
    }
    s.catalogs = this.ports.catalogs.served().filter((c) => matchesSelector(c, selector));
    if (s.catalogs.length > 0) return Promise.resolve(CONTINUE);
    const kept = olmv1Fallback(s.ce, s.installed);
    if (kept !== undefined) {
      s.logger.info({ bundles: kept.map((b) => b.name) }, 'no ClusterCatalog matches: keeping the installed bundles (OLM v1 fallback)');
      s.chosen = kept;
      s.fallback = true;
      return Promise.resolve(CONTINUE);
    }
    s.conditions.set('Progressing', true, 'Retrying', 'no ClusterCatalog matching the selector is serving content yet');
    return Promise.resolve(stop({ requeueAfterMs: 10_000 }));
  }

  private historyLimit(s: State): number {
    const n = s.ce.spec.resolutionHistoryLimit;
    return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : DEFAULT_HISTORY_LIMIT;
  }

  private record(s: State, attempt: Omit<ResolutionAttempt, 'generation' | 'catalogs'>): void {
    const history: ResolutionRecord[] = recordResolution(
      s.status.history,
      { ...attempt, generation: s.ce.metadata.generation ?? 0, catalogs: s.catalogs.map((c) => ({ name: c.name, digest: c.digest })) },
      this.historyLimit(s),
      this.ports.clock(),
    );
    s.status.history = history;
  }

  private resolutionFailed(s: State, message: string, why: { requestUnmatched?: boolean; ambiguousCatalogs?: string[] } = {}): void {
    s.conditions.set('Progressing', true, 'Retrying', `resolution failed: ${message}`);
    if (s.conditions.get('Installed') === undefined) s.conditions.set('Installed', false, 'Failed', 'no bundle could be resolved');
    this.record(s, { bundles: [], outcome: 'Failed', message });
    s.status.resolution = { bundles: [], explanation: message, ...(why.requestUnmatched === true ? { requestUnmatched: true } : {}), ...(why.ambiguousCatalogs === undefined ? {} : { ambiguousCatalogs: why.ambiguousCatalogs }) };
  }

  /** This extension's resolution set: its package and what it needs, against the catalogs and everything installed. */
  async resolve(s: State): Promise<StepOutcome> {
    if (s.fallback === true) return CONTINUE;
    const cat = s.ce.spec.source.catalog;
    const me = s.ce.metadata.name ?? '';
    // A package is installed once per cluster: a second extension asking for it is refused.
    const unit = unitOf(s.installed, cat.packageName);
    const requester = unit === undefined ? undefined : requesterOf(unit);
    if (unit !== undefined && requester !== undefined && requester !== me) {
      this.resolutionFailed(s, `package ${cat.packageName} is already installed by extension ${requester} (BundleDeployment ${unit.bundleDeployment}, version ${unit.version}); a package is installed once per cluster`);
      return stop({ requeueAfterMs: 60_000 });
    }
    // Another extension's dependency, requested: taken over only by an extension that could install it so itself.
    const takeOver = unit !== undefined && requester === undefined && unit.bundleDeployment !== bundleDeploymentName(me, cat.packageName) ? takeOverProblem(s.ce, unit) : undefined;
    if (takeOver !== undefined) {
      this.resolutionFailed(s, takeOver);
      return stop({ requeueAfterMs: 60_000 });
    }
    try {
      const cluster = await this.ports.clusterFacts();
      const resolution = this.ports.resolve({
        catalogs: this.catalogIndex(s.catalogs),
        installed: installedFacts(s.installed, me),
        // Keep the operator current: new catalog content offering an allowed upgrade is installed.
        requests: [extensionRequest({ ...cat, upgradePolicy: cat.upgradeConstraintPolicy })],
        ...(cluster === undefined ? {} : { cluster }),
      });
      // The resolution holds everything installed; this extension's set is what its package needs.
      s.chosen = neededBundles(resolution.bundles, cat.packageName);
      const ambiguous = olmv1Ambiguity(s.ce, s.chosen, s.catalogs);
      if (ambiguous !== undefined) {
        this.resolutionFailed(s, ambiguous.message, { ambiguousCatalogs: ambiguous.catalogs });
        return stop({ requeueAfterMs: 60_000 });
      }
      s.notices = resolution.notices.filter((n) => s.chosen.some((b) => n.startsWith(`${b.package} ${b.version} `)));
      this.record(s, { bundles: s.chosen.map((b) => ({ package: b.package, version: b.version, name: b.name })), outcome: 'Resolved' });
      return CONTINUE;
    } catch (err) {
      // No bundle of the requested package fits the request at all (OLM v1's "no bundles found for package …").
      const unmatched = err instanceof ResolutionError && err.facts.some((f) => f.kind === 'request' && f.package === cat.packageName && f.candidates.length === 0);
      this.resolutionFailed(s, errorMessage(err), { requestUnmatched: unmatched });
      if (err instanceof ResolutionError) return stop({ requeueAfterMs: 60_000 });
      // Not the catalogs' verdict (the cluster's facts unread, the solver's budget): status says so; retried with backoff.
      s.logger.warn({ err: errorMessage(err) }, 'resolution failed');
      return stop({ failed: true });
    }
  }

  /**
   * issue 12 §4 (operator-conditions.ts): before any installed bundle is switched to another,
   * its operator may hold the switch back with Upgradeable=False; wait, and look again.
   */
  async checkUpgradeable(s: State): Promise<StepOutcome> {
    // Every installed bundle counts, not only this extension's: its resolution may replace a shared one.
    // The installed state read at the start of this reconcile, under the lock: nothing changed it since.
    const installed = s.chosen.length === 0 ? [] : s.installed.units.map((u) => u.object);
    const blockers = await this.ports.upgradeBlockers(replacedOperators(installed, s.chosen));
    if (blockers.length === 0) return CONTINUE;
    s.conditions.set('Progressing', true, 'UpgradeBlocked', blockers.map((b) => b.message).join('; '));
    return stop({ requeueAfterMs: 10_000 });
  }

  /**
   * issue 31 §1 (upgrade-approval.ts): under Manual approval, a change of the set waits until
   * the digest of its plan is approved; meanwhile what is installed keeps running and status
   * shows the plan. The approval of a plan superseded before it was applied lets nothing through.
   */
  async approve(s: State): Promise<StepOutcome> {
    const manual = s.ce.spec.upgradeApproval === 'Manual' || s.ce.spec.install?.approval === 'Manual';
    // What an approval let through stays pinned to the digests its plan showed: a catalog's tag
    // that moves afterwards is a new plan, not new content under the approved one.
    const pinned = manual ? pinnedImages(s.owned) : new Map<string, string>();
    const moved = manual ? await this.movedTags(s, pinned) : [];
    const change = approvalNeeded(s.ce, s.installed, s.chosen) ?? (moved.length > 0 ? 'upgrade' : undefined);
    if (change === undefined) {
      delete s.status.pendingPlan;
      s.chosen = s.chosen.map((b) => ({ ...b, image: pinned.get(bundleKey(b)) ?? b.image }));
      return CONTINUE;
    }
    const planned = await this.ports.planChange({ extension: s.ce, chosen: s.chosen, installed: s.installed });
    const main = s.chosen.find((b) => b.package === s.ce.spec.source.catalog.packageName);
    const decision = decideApproval({
      planned,
      approved: approvedDigest(s.ce),
      previous: s.ce.status?.pendingPlan,
      now: this.ports.clock(),
      what: `${change === 'install' ? 'the install of' : 'the upgrade to'} ${main?.name ?? s.chosen.map((b) => b.name).join(', ')}`,
      approveCommand: `binnacle approve ${s.ce.metadata.name ?? ''}`,
    });
    if (decision.approved) {
      s.logger.info({ digest: planned.digest }, 'approved plan: applying it');
      delete s.status.pendingPlan;
      // The BundleDeployments name each image by the digest the approved plan showed.
      s.chosen = s.chosen.map((b) => ({ ...b, image: pinnedRef(b, planned) }));
      return CONTINUE;
    }
    s.status.pendingPlan = decision.pending;
    s.conditions.set('Progressing', true, 'AwaitingApproval', decision.message);
    if (change === 'install') s.conditions.set('Installed', false, 'AwaitingApproval', decision.message);
    // An approval (an annotation) and new catalog content call the extension back; the requeue is a fallback.
    return stop({ requeueAfterMs: 300_000 });
  }

  /** The chosen bundles whose catalog reference now points elsewhere than the digest their BundleDeployment was pinned to. */
  private async movedTags(s: State, pinned: ReadonlyMap<string, string>): Promise<string[]> {
    const moved: string[] = [];
    for (const b of s.chosen) {
      const ref = pinned.get(bundleKey(b));
      if (ref === undefined || b.image === '' || b.image.includes('@')) continue;
      const now = await this.ports.resolveDigest(b.image);
      if (!ref.endsWith(`@${now}`)) moved.push(`${b.image} now points to ${now}`);
    }
    if (moved.length > 0) s.logger.info({ moved }, 'a catalog image moved since its plan was approved: a new plan');
    return moved;
  }

  /** The BundleDeployments of the resolution set, created or updated; what the extension no longer needs is let go. */
  async deploy(s: State): Promise<StepOutcome> {
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
    if (changes.waiting.length === 0) return CONTINUE;
    s.conditions.set('Progressing', true, 'Waiting', changes.waiting.join('; '));
    if (s.conditions.get('Installed') === undefined) s.conditions.set('Installed', false, 'Installing', changes.waiting.join('; '));
    return stop({ requeueAfterMs: 2_000 });
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
      // Rolled back: the revision before runs (Installed=True in the BundleDeployment's words), not this version.
      if (cond?.status === 'True' && cond.reason === 'RolledBack') failed.push(`${b.name}: ${cond.message}`);
      else if (cond?.status === 'True') continue;
      else if (cond?.status === 'False') failed.push(`${b.name}: ${cond.message}`);
      else if (progressing?.status === 'True' && progressing.reason === 'Retrying') failed.push(`${b.name}: ${progressing.message}`);
      else waiting.push(b.name);
    }
    return { waiting, failed };
  }

  /**
   * The extension's configuration refused by its bundle (OLM v1's rules, `install.bundleConfig`),
   * in the BundleDeployment's words: terminal until the extension's spec changes.
   */
  private invalidConfiguration(s: State): string | undefined {
    for (const b of s.chosen) {
      const bd = this.deploymentOf(s, b.package);
      if (bd === undefined || bd.status?.observedGeneration !== bd.metadata.generation) continue;
      const c = findCondition(bd.status?.conditions, 'Progressing');
      if (c?.status === 'False' && c.reason === 'InvalidConfiguration' && (c.observedGeneration === undefined || c.observedGeneration === bd.metadata.generation)) return c.message;
    }
    return undefined;
  }

  /** Where the resolution set stands, from its BundleDeployments' own status. */
  report(s: State): Promise<StepOutcome> {
    const main = s.ce.spec.source.catalog.packageName;
    const { waiting, failed } = this.progress(s);
    const chosenMain = s.chosen.find((b) => b.package === main);
    s.status.resolution = {
      bundles: s.chosen.map((b) => ({ name: b.name, package: b.package, version: b.version, image: b.image, catalog: b.catalog })),
      ...(s.notices.length > 0 ? { notices: s.notices } : {}),
    };
    if (waiting.length === 0 && failed.length === 0 && chosenMain !== undefined) {
      this.reportInstalled(s, chosenMain, this.deploymentOf(s, main));
    } else if (failed.length > 0) {
      if (findCondition(s.ce.status?.conditions, 'Installed')?.status !== 'True') s.conditions.set('Installed', false, 'Failed', failed.join('; '));
      // Terminal, in the BundleDeployment's own words (OLM v1's): retrying cannot fix a configuration.
      const invalidConfiguration = this.invalidConfiguration(s);
      if (invalidConfiguration !== undefined) s.conditions.set('Progressing', false, 'InvalidConfiguration', invalidConfiguration);
      else s.conditions.set('Progressing', true, 'Retrying', failed.join('; '));
    } else {
      if (findCondition(s.ce.status?.conditions, 'Installed') === undefined) s.conditions.set('Installed', false, 'Installing', `installing ${waiting.join(', ')}`);
      s.conditions.set('Progressing', true, 'Installing', `waiting for ${waiting.join(', ')}`);
    }
    if (chosenMain !== undefined) this.reportDeprecations(s, chosenMain);
    // Each BundleDeployment's news calls this extension back; the requeue is only a fallback.
    return Promise.resolve(stop(waiting.length > 0 ? { requeueAfterMs: 30_000 } : undefined));
  }

  /** Everything installed: the requested bundle, where it runs, and Installed with Progressing done. */
  private reportInstalled(s: State, chosenMain: ChosenBundle, mainBd: BundleDeployment | undefined): void {
    const image = chosenMain.image !== '' ? chosenMain.image : (mainBd?.spec.source.image?.ref ?? '');
    const namespace = mainBd?.spec.installNamespace ?? s.ce.spec.namespace;
    s.status.install = {
      bundle: { name: chosenMain.name, version: chosenMain.version, package: chosenMain.package, image, catalog: chosenMain.catalog },
      bundleDeployment: mainBd?.metadata.name ?? '',
      namespace,
    };
    s.conditions.set('Installed', true, 'Succeeded', this.installedMessage(s, chosenMain, namespace));
    s.conditions.set('Progressing', false, 'Succeeded', 'desired state reached');
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
    const served = this.ports.catalogs.get(chosenMain.catalog);
    const d = served === undefined ? {} : deprecations(served.config, chosenMain.package, chosenMain.name, s.ce.spec.source.catalog.channels ?? []);
    const any = [d.package, d.channel, d.bundle].filter((x): x is string => x !== undefined);
    s.conditions.set('Deprecated', any.length > 0, any.length > 0 ? 'Deprecated' : 'NotDeprecated', any.length > 0 ? any.join('; ') : 'nothing chosen is deprecated');
    s.conditions.set('PackageDeprecated', d.package !== undefined, d.package !== undefined ? 'Deprecated' : 'NotDeprecated', d.package ?? '');
    s.conditions.set('ChannelDeprecated', d.channel !== undefined, d.channel !== undefined ? 'Deprecated' : 'NotDeprecated', d.channel ?? '');
    s.conditions.set('BundleDeprecated', d.bundle !== undefined, d.bundle !== undefined ? 'Deprecated' : 'NotDeprecated', d.bundle ?? '');
  }
}

/** A chosen bundle by package and version: what one pinned BundleDeployment installs. */
function bundleKey(b: { package: string; version: string }): string {
  return `${b.package}@${b.version}`;
}

/** The image references the extension's BundleDeployments are pinned to by digest, by the bundle they install. */
function pinnedImages(owned: readonly BundleDeployment[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const bd of owned) {
    const ref = bd.spec.source.image?.ref;
    const pkg = bd.metadata.labels?.[LABEL_PACKAGE];
    const version = bd.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION];
    if (ref === undefined || !ref.includes('@sha256:') || pkg === undefined || version === undefined) continue;
    out.set(bundleKey({ package: pkg, version }), ref);
  }
  return out;
}

/** `b`'s image by the digest the approved plan pulled it by. */
function pinnedRef(b: ChosenBundle, planned: PlannedChange): string {
  const change = planned.changes.find((c) => c.name === b.name);
  if (change?.digest === undefined || change.digest === '' || b.image === '' || b.image.startsWith('configmaps://')) return b.image;
  return formatReference(withDigest(parseReference(b.image), change.digest));
}
