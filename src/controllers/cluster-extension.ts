/**
 * ClusterExtension reconciler (operator-controller's role, with dependency resolution back):
 * resolve the requested package against the served ClusterCatalogs and what is installed,
 * then keep one BundleDeployment per chosen bundle — dependencies included, grouped as one
 * resolution set and removed together when no longer needed — and report `Installed`,
 * `Progressing`, `Deprecated`, the installed bundle, and the explanation when nothing fits.
 *
 * Steps: HandleFinalizer → Validate → Resolve → Deploy → Report.
 */
import type { Logger } from 'pino';
import type { DeclarativeConfig } from '../catalog/index.js';
import type { KubeClient } from '../kube/client.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import { findCondition } from '../kube/types.js';
import { resolve, ResolutionError, type ChosenBundle, type InstalledBundle } from '../resolve/index.js';
import {
  API_VERSION,
  FINALIZER_CLEANUP,
  LABEL_OWNER_KIND,
  LABEL_OWNER_NAME,
  LABEL_PACKAGE,
  LABEL_RESOLUTION_SET,
  type BundleDeployment,
  type ClusterExtension,
} from '../api/types.js';
import { errorMessage } from '../util/errors.js';
import { boundedName, MAX_DERIVED_NAME } from '../api/names.js';
import type { CatalogRegistry, ServedCatalog } from './catalog-registry.js';
import { applyStatus, Conditions, CONTINUE, ensureFinalizer, isDeleting, removeFinalizer, runSteps, stop, type Step, type StepOutcome } from './common.js';
import { replacedOperators, upgradeBlockers } from './operator-conditions.js';

export const ANNOTATION_BUNDLE_NAME = 'binnacle.dev/bundle-name';
export const ANNOTATION_BUNDLE_VERSION = 'binnacle.dev/bundle-version';
export const ANNOTATION_CATALOG = 'binnacle.dev/catalog';
const OWNER_KIND = 'ClusterExtension';

export interface ClusterExtensionReconcilerOptions {
  client: KubeClient;
  registry: CatalogRegistry;
}

interface State {
  ce: ClusterExtension;
  conditions: Conditions;
  logger: Logger;
  owned: BundleDeployment[];
  chosen: ChosenBundle[];
}

/** A stable BundleDeployment name per (extension, package): upgrades pivot the same object. */
export function bundleDeploymentName(extension: string, pkg: string): string {
  // It is also the Helm release name and a label value: bounded to 53 characters.
  return boundedName(extension === pkg ? extension : `${extension}-${pkg}`);
}

function matchesSelector(c: ServedCatalog, selector: { matchLabels?: Record<string, string> } | undefined): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => c.labels[k] === v || (k === 'olm.operatorframework.io/metadata.name' && c.name === v));
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
  constructor(private readonly o: ClusterExtensionReconcilerOptions) {}

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let ce: ClusterExtension;
    try {
      ce = await this.o.client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: req.name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const owned = (
      await this.o.client.list<BundleDeployment>(API_VERSION, 'BundleDeployment', { labelSelector: `${LABEL_OWNER_KIND}=${OWNER_KIND},${LABEL_OWNER_NAME}=${req.name}` })
    ).items;
    const state: State = { ce, conditions: new Conditions(ce.status?.conditions, ce.metadata.generation), logger: ctx.logger, owned, chosen: [] };
    const steps: Step<State>[] = [
      { name: 'HandleFinalizer', run: (s) => this.handleFinalizer(s) },
      { name: 'Validate', run: (s) => this.validate(s) },
      { name: 'Resolve', run: (s) => this.resolveBundles(s) },
      { name: 'CheckUpgradeable', run: (s) => this.checkUpgradeable(s) }, // issue 12 §4 (operator-conditions.ts)
      { name: 'Deploy', run: (s) => this.deploy(s) },
      { name: 'Report', run: (s) => this.report(s) },
    ];
    return runSteps(steps, state, ctx.logger);
  }

  private async writeStatus(s: State, extra: Record<string, unknown> = {}): Promise<void> {
    const prev = s.ce.status ?? {};
    const keep: Record<string, unknown> = {};
    if (prev.install !== undefined) keep.install = prev.install;
    if (prev.resolution !== undefined) keep.resolution = prev.resolution;
    await applyStatus(this.o.client, s.ce, { ...keep, ...extra, conditions: s.conditions.toArray(), observedGeneration: s.ce.metadata.generation });
  }

  private async handleFinalizer(s: State): Promise<StepOutcome> {
    if (!isDeleting(s.ce)) {
      await ensureFinalizer(this.o.client, s.ce, FINALIZER_CLEANUP);
      return CONTINUE;
    }
    // Remove the whole resolution set; the BundleDeployments' own finalizers uninstall their objects.
    for (const bd of s.owned) {
      if (bd.metadata.deletionTimestamp === undefined) await this.o.client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: bd.metadata.name ?? '' });
    }
    if (s.owned.length > 0) return stop({ requeueAfterMs: 2_000 });
    await removeFinalizer(this.o.client, s.ce, FINALIZER_CLEANUP);
    return stop();
  }

  private async validate(s: State): Promise<StepOutcome> {
    const spec = s.ce.spec as Partial<ClusterExtension['spec']> | undefined;
    const problems: string[] = [];
    if ((s.ce.metadata.name ?? '').length > MAX_DERIVED_NAME) problems.push(`metadata.name: at most ${MAX_DERIVED_NAME} characters (it names Helm releases and labels)`);
    if (typeof spec?.namespace !== 'string' || spec.namespace === '') problems.push('spec.namespace: required');
    if (typeof spec?.serviceAccount?.name !== 'string' || spec.serviceAccount.name === '') problems.push('spec.serviceAccount.name: required');
    if (spec?.source?.sourceType !== 'Catalog') problems.push('spec.source.sourceType: must be Catalog');
    if (typeof spec?.source?.catalog?.packageName !== 'string' || spec.source.catalog.packageName === '') problems.push('spec.source.catalog.packageName: required');
    if (problems.length === 0) return CONTINUE;
    s.conditions.set('Progressing', false, 'InvalidSpec', problems.join('; '));
    await this.writeStatus(s);
    return stop();
  }

  private installedBundles(s: State): InstalledBundle[] {
    const out: InstalledBundle[] = [];
    for (const bd of s.owned) {
      const installed = findCondition(bd.status?.conditions, 'Installed');
      const pkg = bd.metadata.labels?.[LABEL_PACKAGE];
      const version = bd.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION];
      if (installed?.status === 'True' && pkg !== undefined && version !== undefined) out.push({ package: pkg, version });
    }
    return out;
  }

  private async resolveBundles(s: State): Promise<StepOutcome> {
    const cat = s.ce.spec.source.catalog;
    const catalogs = this.o.registry.list().filter((c) => matchesSelector(c, cat.selector));
    if (catalogs.length === 0) {
      s.conditions.set('Progressing', true, 'Retrying', 'no ClusterCatalog matching the selector is serving content yet');
      await this.writeStatus(s);
      return stop({ requeueAfterMs: 10_000 });
    }
    try {
      const resolution = resolve({
        catalogs: catalogs.map((c) => ({ name: c.name, priority: c.priority, config: c.config })),
        installed: this.installedBundles(s),
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
      });
      s.chosen = resolution.bundles;
    } catch (err) {
      const message = errorMessage(err);
      s.conditions.set('Progressing', true, 'Retrying', `resolution failed: ${message}`);
      if (s.conditions.get('Installed') === undefined) s.conditions.set('Installed', false, 'Failed', 'no bundle could be resolved');
      await this.writeStatus(s, { resolution: { bundles: [], explanation: message } });
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
    const installed = s.chosen.length === 0 ? [] : (await this.o.client.list<BundleDeployment>(API_VERSION, 'BundleDeployment')).items;
    const blockers = await upgradeBlockers(this.o.client, replacedOperators(installed, s.chosen));
    if (blockers.length === 0) return CONTINUE;
    s.conditions.set('Progressing', true, 'UpgradeBlocked', blockers.map((b) => b.message).join('; '));
    await this.writeStatus(s);
    return stop({ requeueAfterMs: 10_000 });
  }

  private async deploy(s: State): Promise<StepOutcome> {
    const ceName = s.ce.metadata.name ?? '';
    const main = s.ce.spec.source.catalog.packageName;
    const desired = new Set<string>();
    for (const b of s.chosen) {
      const name = bundleDeploymentName(ceName, b.package);
      desired.add(name);
      const isMain = b.package === main;
      const install = s.ce.spec.install ?? {};
      const spec: BundleDeployment['spec'] = {
        source: { type: 'image', image: { ref: b.image } },
        format: 'registry+v1',
        installNamespace: s.ce.spec.namespace,
        serviceAccount: { name: s.ce.spec.serviceAccount.name },
        releaseName: name,
      };
      if (isMain && install.watchNamespace !== undefined) spec.watchNamespace = install.watchNamespace;
      if (isMain && install.watchNamespaces !== undefined) spec.watchNamespaces = install.watchNamespaces;
      if (isMain && install.config !== undefined) spec.config = install.config;
      if (install.adoptExisting !== undefined) spec.adoptExisting = install.adoptExisting;
      if (install.autoRollback !== undefined) spec.autoRollback = install.autoRollback;
      await this.o.client.apply(
        {
          apiVersion: API_VERSION,
          kind: 'BundleDeployment',
          metadata: {
            name,
            labels: { [LABEL_OWNER_KIND]: OWNER_KIND, [LABEL_OWNER_NAME]: ceName, [LABEL_RESOLUTION_SET]: ceName, [LABEL_PACKAGE]: b.package },
            annotations: { [ANNOTATION_BUNDLE_NAME]: b.name, [ANNOTATION_BUNDLE_VERSION]: b.version, [ANNOTATION_CATALOG]: b.catalog },
            ownerReferences: [{ apiVersion: API_VERSION, kind: OWNER_KIND, name: ceName, uid: s.ce.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
          },
          spec,
        },
        { force: true },
      );
    }
    // Dependencies nobody needs any more leave together with their objects.
    for (const bd of s.owned) {
      const name = bd.metadata.name ?? '';
      if (!desired.has(name) && bd.metadata.deletionTimestamp === undefined) {
        s.logger.info({ bundleDeployment: name }, 'removing a bundle the resolution no longer needs');
        await this.o.client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
      }
    }
    s.owned = (
      await this.o.client.list<BundleDeployment>(API_VERSION, 'BundleDeployment', { labelSelector: `${LABEL_OWNER_KIND}=${OWNER_KIND},${LABEL_OWNER_NAME}=${ceName}` })
    ).items;
    return CONTINUE;
  }

  private async report(s: State): Promise<StepOutcome> {
    const ceName = s.ce.metadata.name ?? '';
    const main = s.ce.spec.source.catalog.packageName;
    const waiting: string[] = [];
    const failed: string[] = [];
    for (const b of s.chosen) {
      const bd = s.owned.find((x) => x.metadata.name === bundleDeploymentName(ceName, b.package));
      const cond = findCondition(bd?.status?.conditions, 'Installed');
      const current = bd !== undefined && bd.status?.observedGeneration === bd.metadata.generation && bd.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION] === b.version;
      if (!current || cond?.status !== 'True') {
        if (current && cond?.status === 'False' && cond.reason !== 'RolledBack') failed.push(`${b.name}: ${cond.message}`);
        else waiting.push(b.name);
      }
    }
    const chosenMain = s.chosen.find((b) => b.package === main);
    const extra: Record<string, unknown> = {
      resolution: { bundles: s.chosen.map((b) => ({ name: b.name, package: b.package, version: b.version, image: b.image, catalog: b.catalog })) },
    };
    if (waiting.length === 0 && failed.length === 0 && chosenMain !== undefined) {
      extra.install = { bundle: { name: chosenMain.name, version: chosenMain.version, package: chosenMain.package, image: chosenMain.image, catalog: chosenMain.catalog } };
      s.conditions.set('Installed', true, 'Succeeded', `installed ${chosenMain.name}${s.chosen.length > 1 ? ` with ${s.chosen.length - 1} dependencies` : ''}`);
      s.conditions.set('Progressing', false, 'Succeeded', 'desired state reached');
    } else if (failed.length > 0) {
      if (findCondition(s.ce.status?.conditions, 'Installed')?.status !== 'True') s.conditions.set('Installed', false, 'Failed', failed.join('; '));
      s.conditions.set('Progressing', true, 'Retrying', failed.join('; '));
    } else {
      if (findCondition(s.ce.status?.conditions, 'Installed') === undefined) s.conditions.set('Installed', false, 'Installing', `installing ${waiting.join(', ')}`);
      s.conditions.set('Progressing', true, 'Installing', `waiting for ${waiting.join(', ')}`);
    }
    if (chosenMain !== undefined) {
      const served = this.o.registry.get(chosenMain.catalog);
      const d = served === undefined ? {} : deprecations(served.config, main, chosenMain.name, s.ce.spec.source.catalog.channels ?? []);
      const any = [d.package, d.channel, d.bundle].filter((x): x is string => x !== undefined);
      s.conditions.set('Deprecated', any.length > 0, any.length > 0 ? 'Deprecated' : 'NotDeprecated', any.length > 0 ? any.join('; ') : 'nothing chosen is deprecated');
      s.conditions.set('PackageDeprecated', d.package !== undefined, d.package !== undefined ? 'Deprecated' : 'NotDeprecated', d.package ?? '');
      s.conditions.set('ChannelDeprecated', d.channel !== undefined, d.channel !== undefined ? 'Deprecated' : 'NotDeprecated', d.channel ?? '');
      s.conditions.set('BundleDeprecated', d.bundle !== undefined, d.bundle !== undefined ? 'Deprecated' : 'NotDeprecated', d.bundle ?? '');
    }
    await this.writeStatus(s, extra);
    return stop(waiting.length > 0 ? { requeueAfterMs: 5_000 } : undefined);
  }
}
