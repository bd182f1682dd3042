/**
 * The one render function, `render`: a bundle directory by its format, a chart with values as
 * a release, or a chart as `helm template` prints it. The BundleDeployment controller, the Helm
 * release reconciler, `plan`, `binnacle bundle render`, `helm template` and `helm release` all
 * call it, so what the CLI prints is what gets applied, and every Helm render goes through one
 * cache (cache.ts: Helm's answer by chart digest, values and release; bounded) and the same
 * bounds: values nested past MAX_NESTING are refused here, and the engine bounds each render in
 * memory, time and output. One renderer per bundle format, chosen by `spec.format`:
 * registry+v1, plain, and helm (Helm's own engine, through helm/chart-release.ts). Above bundle/
 * and helm/, below the controllers, actions and CLI that use it.
 */
import { BundleLoadError, convertRegistryV1, crdToV1, decodeOverrides, defaultWatchNamespaces, loadBundleDir, loadPlainBundleDir, type CertProvider, type DeploymentOverrides, type RegistryV1Bundle } from '../bundle/index.js';
import { isKubeObject, type KubeObject } from '../kube/types.js';
import { addOperatorCondition } from '../bundle/operator-condition.js';
import type { BundleDeploymentSpec, BundleFormat } from '../api/types.js';
import { sharedChart } from '../apply/chart-intern.js';
import type { ReleaseContent } from '../apply/types.js';
import type { IdentityClient } from '../kube/ports.js';
import type { ChartRelease, ChartReleaseInput } from '../helm/chart-release.js';
import type { HelmEngine, RenderRequest, RenderResult, TemplateResult } from '../helm-engine/engine.js';
import type { HelmChart } from '../helm-engine/release-types.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';
import { InputError, TerminalError } from '../util/errors.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { RenderCache, type RenderCacheStats } from './cache.js';
import { releaseLimits, ReleaseTooLargeError } from '../apply/limits.js';

export interface RenderedBundle {
  objects: KubeObject[];
  chart: { name: string; version: string; appVersion?: string; description?: string };
  /** Format helm: what Helm's release stores, and what it was made from. */
  helm?: { content: ReleaseContent; inputDigest: string; values: Record<string, unknown> };
}

export interface RenderContext {
  dir: string;
  spec: BundleDeploymentSpec;
  /** Name of the BundleDeployment, for messages and defaults. */
  name: string;
  /**
   * Webhook serving certificates (made before render: render/webhook-certs.ts), when the bundle
   * has webhooks; `secret`, when given, is the Secret that keeps them, rendered as an object of the release.
   */
  certs?: { provider: CertProvider; secret?: KubeObject } | undefined;
  /** Digest of the unpacked content. */
  digest: string;
  /** The cluster (as the installing account), for Helm's capabilities and `lookup`; offline without (`lookup` answers empty). */
  client?: IdentityClient;
  /** A package-manifest bundle's package name (its directory does not say). */
  packageName?: string;
  /** Deployment overrides already decoded (the CLI reads them from a file); else from `spec.config`. */
  overrides?: DeploymentOverrides;
  /** The revision an apply would make next (Helm templates see it as .Release.Revision). */
  revision: number;
  /** Who `client` acts as (`lookup` reads as it), so that renders for different identities never share a cache entry. */
  actingAs?: string;
}

export type BundleRenderer = (ctx: RenderContext) => Promise<RenderedBundle>;

/**
 * API versions Kubernetes removed whose replacement has the same schema: an old bundle's
 * object is moved to the served version instead of failing the install (e.g. many 2021
 * bundles ship `rbac.authorization.k8s.io/v1beta1` ClusterRoles, removed in 1.22).
 */
const LOSSLESS_API_MOVES: ReadonlyMap<string, string> = new Map([
  ['rbac.authorization.k8s.io/v1beta1', 'rbac.authorization.k8s.io/v1'],
  ['rbac.authorization.k8s.io/v1alpha1', 'rbac.authorization.k8s.io/v1'],
  ['scheduling.k8s.io/v1beta1', 'scheduling.k8s.io/v1'],
  ['coordination.k8s.io/v1beta1', 'coordination.k8s.io/v1'],
]);

export function moveRemovedApis(objects: KubeObject[]): KubeObject[] {
  return objects.map((o) => {
    const to = LOSSLESS_API_MOVES.get(o.apiVersion);
    return to === undefined ? o : { ...o, apiVersion: to };
  });
}

/**
 * A CRD that asks for a conversion webhook its CSV never defines points at a service nobody
 * runs, with a placeholder caBundle the API server rejects (the CRD never becomes
 * Established). With a single version nothing ever needs converting, so the conversion is
 * dropped; with several, the bundle cannot work and says so.
 */
export function dropOrphanConversions(objects: KubeObject[], bundle: RegistryV1Bundle): KubeObject[] {
  const wired = new Set(bundle.csv.webhooks.filter((w) => w.type === 'ConversionWebhook').flatMap((w) => w.conversionCRDs));
  return objects.map((o) => {
    if (o.kind !== 'CustomResourceDefinition' || wired.has(o.metadata.name ?? '')) return o;
    const spec = (o.spec ?? {}) as { conversion?: { strategy?: string }; versions?: unknown[] };
    if (spec.conversion?.strategy !== 'Webhook') return o;
    if ((spec.versions?.length ?? 0) > 1) {
      throw new TerminalError('InvalidBundle', `CRD ${o.metadata.name ?? ''} needs a conversion webhook between its ${spec.versions?.length ?? 0} versions, but CSV ${bundle.name} defines no ConversionWebhook for it`);
    }
    return { ...o, spec: { ...spec, conversion: { strategy: 'None' } } };
  });
}

async function renderRegistryV1(ctx: RenderContext): Promise<RenderedBundle> {
  const bundle = await loadBundleDir(ctx.dir, ctx.packageName === undefined ? {} : { packageName: ctx.packageName });
  const ns = ctx.spec.installNamespace;
  const watch = ctx.spec.watchNamespaces ?? (ctx.spec.watchNamespace === undefined ? undefined : [ctx.spec.watchNamespace]);
  const targets = watch ?? defaultWatchNamespaces(bundle, ns);
  if (targets === undefined) {
    throw new TerminalError('UnsupportedInstallMode', `bundle ${bundle.name} supports no install mode Binnacle can pick on its own; set spec.watchNamespace`);
  }
  const decoded = ctx.overrides !== undefined ? { overrides: ctx.overrides, problems: [] } : ctx.spec.config === undefined ? undefined : decodeOverrides(ctx.spec.config, 'spec.config');
  const badConfig = decoded?.problems.filter((p) => p.severity === 'error') ?? [];
  if (badConfig.length > 0) throw new TerminalError('InvalidConfig', badConfig.map((p) => `${p.field ?? 'spec.config'}: ${p.message}`).join('; '));
  const certs = bundle.csv.webhooks.length > 0 ? ctx.certs : undefined;
  if (bundle.csv.webhooks.length > 0 && certs === undefined) throw new TerminalError('InvalidBundle', `bundle ${bundle.name} has webhooks, and no serving certificates were made for them`);
  const certProvider = certs?.provider;
  const plain = convertRegistryV1(bundle, {
    installNamespace: ns,
    watchNamespaces: targets,
    ...(decoded === undefined ? {} : { overrides: decoded.overrides }),
    ...(certProvider === undefined ? {} : { certProvider }),
  });
  const converted = dropOrphanConversions(moveRemovedApis(plain.objects.filter(isKubeObject)), bundle);
  // issue 12 §4: the operator's OperatorCondition, its RBAC and OPERATOR_CONDITION_NAME, as OLM gives them.
  const objects = addOperatorCondition(bundle, ns, converted);
  // The certificates' Secret is an object of the release: owned, pruned and deleted like the rest.
  if (certs?.secret !== undefined) objects.push(certs.secret);
  return {
    objects,
    chart: { name: bundle.packageName !== '' ? bundle.packageName : ctx.name, version: bundle.csv.version !== '' ? bundle.csv.version : '0.0.0', appVersion: bundle.csv.version, description: bundle.name },
  };
}

/** A plain bundle: every manifest under `manifests/` (or the root when there is none), read by bundle/plain.ts. */
async function renderPlain(ctx: RenderContext): Promise<RenderedBundle> {
  let loaded;
  try {
    loaded = await loadPlainBundleDir(ctx.dir);
  } catch (e) {
    if (e instanceof BundleLoadError && e.problems[0]?.rule === 'bundle.empty') throw new TerminalError('EmptyBundle', 'plain bundle has no manifests');
    throw e;
  }
  const objects: KubeObject[] = [];
  for (const o of loaded.objects) {
    const value: unknown = o.object;
    if (!isKubeObject(value)) throw new InputError('PLAIN_BUNDLE_OBJECT', `document ${o.index + 1} is not a Kubernetes object (apiVersion, kind and metadata are required)`, { file: o.file });
    if (value.metadata.namespace === undefined && namespacedGuess(value.kind)) value.metadata.namespace = ctx.spec.installNamespace;
    objects.push(value);
  }
  return { objects: moveRemovedApis(objects).map(servedCrd), chart: { name: ctx.name, version: '0.0.0' } };
}

/** A CRD as the API server accepts it: v1, with a structural schema when that loses nothing (else CrdSchemaError). */
function servedCrd(o: KubeObject): KubeObject {
  if (o.kind !== 'CustomResourceDefinition') return o;
  const v1 = crdToV1(o);
  return isKubeObject(v1) ? v1 : o;
}

const CLUSTER_SCOPED = new Set([
  'Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'PersistentVolume', 'StorageClass', 'PriorityClass',
  'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'APIService', 'Node', 'IngressClass', 'RuntimeClass',
  'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'CSIDriver',
]);

/** Cluster-scoped kinds get no namespace; everything else defaults to the install namespace. */
function namespacedGuess(kind: string): boolean {
  return !CLUSTER_SCOPED.has(kind);
}

/** A Helm chart (the unpacked content is a chart, or holds one): rendered by Helm's own engine. */
async function renderHelm(ctx: RenderContext): Promise<RenderedBundle> {
  const { findChart } = await import('../helm/index.js');
  const { HelmError } = await import('../helm-engine/errors.js');
  const values = ctx.spec.values ?? {};
  try {
    const input: ChartReleaseInput = {
      chart: findChart(ctx.dir),
      chartDigest: ctx.digest,
      release: { name: ctx.spec.releaseName ?? ctx.name, namespace: ctx.spec.installNamespace },
      values,
      revision: ctx.revision,
      ...(ctx.client === undefined ? {} : { client: ctx.client }),
      ...(ctx.spec.crdPolicy === undefined ? {} : { crdPolicy: ctx.spec.crdPolicy }),
      limits: releaseLimits(ctx.spec.limits),
    };
    const rel = await renderChart(input, ctx.actingAs);
    return { objects: moveRemovedApis(rel.objects), chart: rel.chart, helm: { content: rel.content, inputDigest: rel.inputDigest, values } };
  } catch (err) {
    // Helm refused the chart or its values: the same input fails the same way every time.
    if (err instanceof HelmError && err.phase !== 'internal') throw new TerminalError('InvalidChart', err.message, { cause: err });
    throw err;
  }
}

export const RENDERERS: ReadonlyMap<BundleFormat, BundleRenderer> = new Map<BundleFormat, BundleRenderer>([
  ['registry+v1', renderRegistryV1],
  ['plain', renderPlain],
  ['helm', renderHelm],
]);

/** `ctx.spec.format`'s renderer, or InvalidSpec for a format there is none of; a bundle's objects past the release's limits are refused (a chart's are, before they are parsed). */
async function renderBundle(ctx: RenderContext): Promise<RenderedBundle> {
  const renderer = RENDERERS.get(ctx.spec.format);
  if (renderer === undefined) throw new TerminalError('InvalidSpec', `spec.format: unknown format "${ctx.spec.format}" (one of ${[...RENDERERS.keys()].join(', ')})`);
  const rendered = await renderer(ctx);
  const limits = releaseLimits(ctx.spec.limits);
  if (rendered.objects.length > limits.maxObjects) {
    throw new ReleaseTooLargeError(`bundle ${ctx.name}: it renders ${rendered.objects.length} objects, above this release's limit of ${limits.maxObjects} (spec.limits.maxObjects); nothing of it is applied`);
  }
  return rendered;
}

/**
 * What to render: a bundle directory by its format; a chart with values as a release (what an
 * install applies); Helm's release object itself (`helm`: what `helm bundle` and `helm release`
 * read RBAC and CRDs from); or a chart as `helm template` prints it. A Helm render whose chart
 * has a digest is answered from the cache when the same input was rendered before.
 */
export type RenderInput =
  | { bundle: RenderContext }
  | { chart: ChartReleaseInput; /** Who `chart.client` acts as (see RenderContext.actingAs). */ actingAs?: string }
  | { helm: RenderRequest; engine?: HelmEngine; chartDigest?: string; actingAs?: string }
  | { template: RenderRequest; engine?: HelmEngine };

const calls = { bundle: 0, chart: 0, helm: 0, template: 0 };
const helmCache = new RenderCache<RenderResult>();

/** How often each kind of input was rendered, and the cache's counts (for tests and metrics). */
export function renderStats(): { calls: typeof calls; cache: RenderCacheStats } {
  return { calls: { ...calls }, cache: helmCache.stats() };
}

/** The one render function (see the top of this file). */
export function render(input: { bundle: RenderContext }): Promise<RenderedBundle>;
export function render(input: { chart: ChartReleaseInput; actingAs?: string }): Promise<ChartRelease>;
export function render(input: { helm: RenderRequest; engine?: HelmEngine; chartDigest?: string; actingAs?: string }): Promise<RenderResult>;
export function render(input: { template: RenderRequest; engine?: HelmEngine }): Promise<TemplateResult>;
export async function render(input: RenderInput): Promise<RenderedBundle | ChartRelease | RenderResult | TemplateResult> {
  if ('bundle' in input) {
    calls.bundle++;
    return renderBundle(input.bundle);
  }
  if ('chart' in input) {
    calls.chart++;
    return renderChart(input.chart, input.actingAs);
  }
  const engine = input.engine ?? (await defaultEngine());
  if ('helm' in input) {
    calls.helm++;
    return renderHelmRelease(engine, input.helm, input.chartDigest ?? '', input.actingAs);
  }
  calls.template++;
  return engine.template(input.template);
}

/**
 * An engine whose renders and templates go through `render` (counted, bounded, cached by
 * `chartDigest` when given), for code below src/render that takes an engine (publish/helm-bundle, publish/helm-release).
 */
export function renderingEngine(base?: HelmEngine, chartDigest?: string): HelmEngine {
  const engine = async (): Promise<HelmEngine> => base ?? (await defaultEngine());
  return {
    render: async (req) => render({ helm: req, engine: await engine(), ...(chartDigest === undefined ? {} : { chartDigest }) }),
    template: async (req) => render({ template: req, engine: await engine() }),
    inspect: async (chart) => (await engine()).inspect(chart),
    threads: () => base?.threads() ?? 0,
    memory: () => base?.memory() ?? { bytes: 0, recycled: 0 },
    close: async () => (await engine()).close(),
  };
}

async function defaultEngine(): Promise<HelmEngine> {
  return (await import('../helm-engine/engine.js')).helmEngine();
}

/** A chart as a release, Helm's answer from the cache when the same input was rendered before. */
async function renderChart(input: ChartReleaseInput, actingAs: string | undefined): Promise<ChartRelease> {
  checkValues(input.values);
  const { renderChartRelease } = await import('../helm/index.js');
  const engine = input.engine ?? (await defaultEngine());
  const cached: HelmEngine = { ...renderingEngine(engine), render: (req) => renderHelmRelease(engine, req, input.chartDigest, actingAs, input.client) };
  return renderChartRelease({ ...input, engine: cached });
}

/** Walkers (merging, hashing, the engine's JSON) must not meet values deeper than they can follow. */
function checkValues(values: Record<string, unknown> | undefined): void {
  if (nestsDeeperThan(values)) throw new InputError('HELM_VALUES_TOO_DEEP', `nests deeper than ${MAX_NESTING} levels`, { field: 'values' });
}

/** Helm's release for `req`: from the cache under the chart's digest, the request and who looks up; rendered and kept otherwise. */
async function renderHelmRelease(engine: HelmEngine, req: RenderRequest, chartDigest: string, actingAs: string | undefined, client?: object): Promise<RenderResult> {
  checkValues(req.values);
  // No digest says what the chart holds: nothing to key a cache entry by.
  if (chartDigest === '') return engine.render(req);
  const who = req.lookup === undefined ? '' : (actingAs ?? `client ${clientId(client ?? req.lookup)}`);
  const key = renderKey(req, chartDigest, who);
  const hit = helmCache.get(key);
  if (hit !== undefined) return copyOf(hit);
  const rendered = await engine.render(req);
  const res: RenderResult = { ...rendered, release: { ...rendered.release, chart: sharedChart(rendered.release.chart as unknown as Record<string, unknown>) as unknown as HelmChart } };
  const copy = copyOf(res);
  // The chart is shared with every record of it (chart-intern), so an entry costs the rest of the answer.
  helmCache.set(key, copy, JSON.stringify({ ...copy, release: { ...copy.release, chart: null } }).length);
  return res;
}

/** A deep copy of a render's answer that shares its chart (a shared chart is never changed). */
function copyOf(res: RenderResult): RenderResult {
  const { chart, ...release } = res.release;
  const copy = structuredClone({ ...res, release });
  return { ...copy, release: { ...copy.release, chart } };
}

/** Everything Helm's answer depends on: the chart by digest (not by path), the request, and who `lookup` reads as. */
function renderKey(req: RenderRequest, chartDigest: string, lookupAs: string): string {
  const { lookup: _lookup, chart: _path, ...request } = req;
  return createHash('sha256').update(canonicalJson({ chartDigest, request, lookupAs })).digest('hex');
}

const clientIds = new WeakMap<object, number>();
let nextClientId = 0;

/** A client object's number: renders that looked up through different clients of unknown identity never share an entry. */
function clientId(client: object): number {
  let id = clientIds.get(client);
  if (id === undefined) {
    id = ++nextClientId;
    clientIds.set(client, id);
  }
  return id;
}

/** Empties the render cache (tests). */
export function clearRenderCache(): void {
  helmCache.clear();
}
