/**
 * `plan`: what an install or upgrade would do, before anything changes. Resolves against the
 * catalogs the cluster serves and what is installed, renders each chosen bundle as the
 * BundleDeployment controller would, and compares every object with the cluster through a
 * server-side apply dry run: created, changed (with the changed fields), unchanged, or deleted
 * because the new revision no longer has it. Given the ServiceAccount the install runs as, it
 * also lists what the account lacks (the BundleDeployment controller's own permission
 * preflight, by SubjectAccessReviews), and for every CRD the cluster already has, the applier's
 * CRD upgrade-safety verdict.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { checkCrdUpgrade } from '../apply/crd-safety.js';
import { makeLenient, type LenientObjects } from '../apply/leniency.js';
import { ReleaseStore } from '../apply/release-store.js';
import { parseManifest } from '../apply/release.js';
import type { ReleaseRevision } from '../apply/types.js';
import { stampOwnership } from '../apply/ownership.js';
import { switchedPaths, unionSwitchPatch, withLiveUnion } from '../apply/union-switch.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { OpenApiSchemas } from '../kube/openapi.js';
import { describeRef, findCondition, type KubeObject } from '../kube/types.js';
import { pullAndUnpack } from '../oci/index.js';
import { sha256Digest } from '../oci/digest.js';
import { canonicalJson } from '../util/canonical-json.js';
import { extensionRequest, neededBundles, resolve, type CatalogInput, type ChosenBundle, type UpgradePolicy } from '../resolve/index.js';
import { loadCatalog } from '../resolve/catalog-source.js';
import { API_VERSION, type BundleDeployment, type ClusterCatalog, type ClusterExtension } from '../api/types.js';
import { buildInstalledState, installedFacts, requesterOf, unitOf, type InstalledState } from '../installed/index.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { bundleDeploymentName } from '../api/names.js';
import { ClusterFactsSource } from '../installed/cluster-facts.js';
import { createRenderer, type RenderContext, type RenderedBundle, type Renderer } from '../render/index.js';
import { bundleWebhookCerts, webhookCertSecretName } from '../render/webhook-certs.js';
import { describeMissing, missingPermissions } from '../apply/preflight-permissions.js';

export interface PlanRequest {
  name: string;
  packageName: string;
  namespace: string;
  channels?: string[];
  version?: string;
  policy?: UpgradePolicy;
  watchNamespace?: string;
  config?: Record<string, unknown>;
  /** The ServiceAccount (in `namespace`) the install runs as: given, the plan lists what it lacks. */
  serviceAccount?: string;
  /** Where `serviceAccount` is, when not in `namespace`. */
  serviceAccountNamespace?: string;
}

export type ObjectAction = 'create' | 'update' | 'unchanged' | 'delete';

export interface ObjectPlan {
  action: ObjectAction;
  kind: string;
  name: string;
  namespace?: string;
  /** Field paths that would change (update only). */
  changes?: string[];
}

/** The CRD upgrade-safety verdict for a CRD the cluster already has. */
export interface CrdVerdict {
  crd: string;
  safe: boolean;
  /** Why the applier would refuse the change (rule and message), when not safe. */
  problems: { rule: string; message: string }[];
}

export interface BundlePlan {
  bundle: ChosenBundle;
  bundleDeployment: string;
  from?: string;
  objects: ObjectPlan[];
  /** For each CRD of the bundle that exists already. */
  crdSafety: CrdVerdict[];
  /** What the ServiceAccount lacks to install the bundle ("verb resource in namespace …"), when a ServiceAccount was given. */
  missingPermissions?: string[];
  /** The digest the bundle image was pulled by. */
  imageDigest: string;
  /** sha256 of the rendered objects (canonical JSON): what would be applied, whatever the cluster holds now. */
  manifestDigest: string;
}

export interface Plan {
  bundles: BundlePlan[];
  warnings: string[];
}

const VOLATILE_META = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp'];

function comparable(o: KubeObject | undefined): Record<string, unknown> {
  if (o === undefined) return {};
  const { status: _status, metadata, ...rest } = o;
  const meta = Object.fromEntries(Object.entries(metadata).filter(([k]) => !VOLATILE_META.includes(k)));
  return { ...rest, metadata: meta };
}

/** Leaf paths whose values differ. */
export function changedPaths(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedPaths(a[k], b[k], path === '' ? k : `${path}.${k}`));
  }
  return [path === '' ? '.' : path];
}

/** The same view of the cluster the controller resolves against: everything installed, anywhere. */
async function installedStateFor(client: KubeClient, req: PlanRequest): Promise<InstalledState> {
  const [bds, ces] = await Promise.all([client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'), client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')]);
  const state = buildInstalledState(bds.items, ces.items);
  const mainUnit = unitOf(state, req.packageName);
  const requester = mainUnit === undefined ? undefined : requesterOf(mainUnit);
  if (mainUnit !== undefined && requester !== undefined && requester !== req.name) {
    throw new BinnacleError('input', 'PACKAGE_INSTALLED', `package ${req.packageName} is already installed by extension ${requester} (BundleDeployment ${mainUnit.bundleDeployment}); a package is installed once per cluster`);
  }
  return state;
}

/** Where a bundle of the set is installed: an installed one (shared, or taken over) keeps its BundleDeployment and namespace. */
function targetOf(state: InstalledState, req: PlanRequest, pkg: string): { bdName: string; namespace: string } {
  const unit = unitOf(state, pkg);
  return { bdName: unit?.bundleDeployment ?? bundleDeploymentName(req.name, pkg), namespace: unit?.namespace ?? req.namespace };
}

/** Each object against the cluster (create, update with the changed fields, unchanged) and the CRD-safety verdict of each CRD that exists. */
/** The objects of the deployed revision that the new render (`seen`: kind/namespace/name) no longer has. */
export function deletions(current: Pick<ReleaseRevision, 'name' | 'namespace' | 'revision' | 'manifest'>, seen: ReadonlySet<string>): ObjectPlan[] {
  const out: ObjectPlan[] = [];
  for (const o of parseManifest(current.manifest, `release ${current.namespace}/${current.name} revision ${current.revision}`)) {
    const key = `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
    if (!seen.has(key)) out.push({ action: 'delete', kind: o.kind, name: o.metadata.name ?? '', ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }) });
  }
  return out;
}

/** Each rendered object against what is live: created, unchanged, or the fields a server dry run says would change. */
export async function compareWithCluster(client: KubeClient, rendered: readonly KubeObject[], bdName: string, namespace: string): Promise<{ objects: ObjectPlan[]; crdSafety: CrdVerdict[]; seen: Set<string> }> {
  const objects: ObjectPlan[] = [];
  const crdSafety: CrdVerdict[] = [];
  const seen = new Set<string>();
  for (const obj of rendered) {
    const key = `${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
    seen.add(key);
    const ns = obj.metadata.namespace;
    const base: ObjectPlan = { action: 'create', kind: obj.kind, name: obj.metadata.name ?? '', ...(ns === undefined ? {} : { namespace: ns }) };
    let live: KubeObject | undefined;
    try {
      live = await client.find({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '', namespace: ns });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (live === undefined) {
      objects.push(base);
      continue;
    }
    if (obj.kind === 'CustomResourceDefinition') {
      const problems = checkCrdUpgrade(live, obj).errors().map((p) => ({ rule: p.rule, message: p.message }));
      crdSafety.push({ crd: obj.metadata.name ?? '', safe: problems.length === 0, problems });
    }
    // Stamped as the applier stamps it, so ownership labels do not show up as changes.
    const stamped = stampOwnership(obj, { kind: 'BundleDeployment', name: bdName }, { name: bdName, namespace });
    // A strategy switch the applier makes first (apply/union-switch.ts): the dry run sees the rest, the switch is listed.
    const switched = unionSwitchPatch(live, stamped);
    const dry = await client.apply(withLiveUnion(stamped, switched === undefined ? undefined : live), { dryRun: true, force: true }).catch(() => undefined);
    const changes = dry === undefined ? ['(could not dry-run)'] : [...changedPaths(comparable(live), comparable(dry)), ...(switched === undefined ? [] : switchedPaths(switched))];
    objects.push(changes.length === 0 ? { ...base, action: 'unchanged' } : { ...base, action: 'update', changes });
  }
  return { objects, crdSafety, seen };
}

export async function plan(client: KubeClient, req: PlanRequest, opts: PlanOptions & { logger: Logger }): Promise<Plan> {
  const warnings: string[] = [];
  const catalogs = await reachableCatalogs(client, warnings);
  if (catalogs.length === 0) throw new BinnacleError('transient', 'NO_CATALOGS', 'no ClusterCatalog is serving content that this machine can reach');

  const state = await installedStateFor(client, req);
  const resolution = resolve({
    catalogs,
    installed: installedFacts(state, req.name),
    cluster: await new ClusterFactsSource(client, opts.logger).get(),
    requests: [extensionRequest({ ...req, upgradePolicy: req.policy })],
  });
  warnings.push(...resolution.warnings, ...resolution.notices);
  const planned = await planChosen(client, req, neededBundles(resolution.bundles, req.packageName), state, opts);
  return { bundles: planned.bundles, warnings: [...warnings, ...planned.warnings] };
}

/**
 * The plan of bundles already chosen (by `plan`'s resolution, or by the ClusterExtension
 * controller's, for an upgrade awaiting approval) against `state`, what is installed now.
 * Planning changes nothing through `client`: it reads, puts each object to a server-side dry
 * run, and asks SubjectAccessReviews; the render writes nothing (webhook certificates already
 * issued are read, never issued), so `client` need not be a dry-run view.
 */
export async function planChosen(client: KubeClient, req: PlanRequest, chosen: readonly ChosenBundle[], state: InstalledState, opts: PlanOptions): Promise<Plan> {
  const warnings: string[] = [];
  const store = new ReleaseStore(client);
  const schemas = new OpenApiSchemas(client);
  const bundles: BundlePlan[] = [];
  const ctx: BundlePlanContext = { client, req, state, store, schemas, cacheDir: opts.cacheDir, renderer: opts.renderer ?? createRenderer(), warnings };
  for (const b of chosen) bundles.push(await planBundle(ctx, b));
  return { bundles, warnings };
}

/** The catalogs of the serving ClusterCatalogs that this machine can load; the others and their problems become warnings. */
async function reachableCatalogs(client: KubeClient, warnings: string[]): Promise<CatalogInput[]> {
  const catalogs: CatalogInput[] = [];
  for (const cc of (await client.list<ClusterCatalog>(API_VERSION, 'ClusterCatalog')).items) {
    const base = cc.status?.urls?.base;
    if (findCondition(cc.status?.conditions, 'Serving')?.status !== 'True' || base === undefined) continue;
    try {
      const loaded = await loadCatalog(base, { name: cc.metadata.name ?? '', priority: cc.spec.priority ?? 0 });
      catalogs.push(loaded.catalog);
      warnings.push(...loaded.problems.map((p) => `catalog ${cc.metadata.name ?? ''}: ${p}`));
    } catch (err) {
      warnings.push(`catalog ${cc.metadata.name ?? ''} is not reachable at ${base}: ${errorMessage(err)} (is the manager running?)`);
    }
  }
  return catalogs;
}

/** What planning each chosen bundle shares; `warnings` collects the plan's warnings. */
interface BundlePlanContext {
  client: KubeClient;
  req: PlanRequest;
  state: InstalledState;
  store: ReleaseStore;
  schemas: OpenApiSchemas;
  cacheDir: string;
  renderer: Renderer;
  warnings: string[];
}

export interface PlanOptions {
  /** Where pulled bundle images are unpacked. */
  cacheDir: string;
  /** What bundles are rendered with (default: a renderer of the plan's own). */
  renderer?: Renderer;
}

/** One chosen bundle's plan: rendered as the BundleDeployment controller would, compared with the cluster and the deployed revision. */
async function planBundle(ctx: BundlePlanContext, chosen: ChosenBundle): Promise<BundlePlan> {
  const { client, req, store } = ctx;
  const { bdName, namespace } = targetOf(ctx.state, req, chosen.package);
  const { rendered, digest: imageDigest } = await renderChosen(ctx, chosen, bdName, namespace);
  // What the applier would apply: optional objects whose API is not served skipped, undeclared fields dropped.
  const lenient = await makeLenient(rendered.objects, { client, schemas: ctx.schemas });
  warnLeniency(ctx.warnings, chosen, lenient);
  const { objects, crdSafety, seen } = await compareWithCluster(client, lenient.objects, bdName, namespace);
  const current = (await store.history({ name: bdName, namespace })).filter((r) => r.status === 'deployed').pop();
  if (current !== undefined) objects.push(...deletions(current, seen));
  // As the BundleDeployment controller checks it: the rendered objects, release records in the install namespace.
  const missing = req.serviceAccount === undefined ? undefined : (await missingPermissions(client, { namespace: req.serviceAccountNamespace ?? req.namespace, name: req.serviceAccount }, rendered.objects, namespace)).map(describeMissing);
  const manifestDigest = sha256Digest(canonicalJson(rendered.objects));
  return { bundle: chosen, bundleDeployment: bdName, ...(current === undefined ? {} : { from: current.chart.version }), objects, crdSafety, ...(missing === undefined ? {} : { missingPermissions: missing }), imageDigest, manifestDigest };
}

/** Pulls the chosen bundle and renders it into `namespace` as BundleDeployment `bdName`; the request's watch namespace and config go to the requested package only. */
async function renderChosen(ctx: BundlePlanContext, chosen: ChosenBundle, bdName: string, namespace: string): Promise<{ rendered: RenderedBundle; digest: string }> {
  const { client, req, store } = ctx;
  const pulled = await pullAndUnpack(chosen.image, { cacheDir: join(ctx.cacheDir, 'images') });
  const isMain = chosen.package === req.packageName;
  const toRender: RenderContext = {
    dir: pulled.dir,
    name: bdName,
    spec: {
      source: { type: 'image', image: { ref: chosen.image } },
      format: 'registry+v1',
      installNamespace: namespace,
      ...(isMain && req.watchNamespace !== undefined ? { watchNamespace: req.watchNamespace } : {}),
      ...(isMain && req.config !== undefined ? { config: req.config } : {}),
    },
    digest: pulled.digest,
    client,
    revision: ((await store.history({ name: bdName, namespace })).at(-1)?.revision ?? 0) + 1,
    // The certificates already issued for this install, if any (read, never written); otherwise
    // a stand-in that says so, so that the plan (and its digest) is the same on every poll.
    certs: (await client.find({ apiVersion: 'v1', kind: 'Secret', namespace, name: webhookCertSecretName(bdName) })) === undefined
      ? { serving: {}, fallback: { caPem: '<issued at install>', certPem: '<issued at install>', keyPem: '<issued at install>' } }
      : await bundleWebhookCerts(pulled.dir, { format: 'registry+v1', installNamespace: namespace, owner: { name: bdName }, reader: client }),
  };
  const rendered = await ctx.renderer.bundle(toRender);
  return { rendered, digest: pulled.digest };
}

/** Warns of each object the applier would skip and each undeclared field it would drop or rename. */
function warnLeniency(warnings: string[], chosen: ChosenBundle, lenient: LenientObjects): void {
  for (const s of lenient.skipped) warnings.push(`${chosen.name}: ${describeRef(s.object)} would be skipped: ${s.reason}`);
  for (const d of lenient.dropped) warnings.push(`${chosen.name}: ${describeRef(d.object)}: ${d.path} is not declared by ${d.schema}; it would be ${d.renamedTo === undefined ? 'dropped' : `applied as ${d.renamedTo}`}`);
}
