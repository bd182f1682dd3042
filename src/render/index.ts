/**
 * Render: a bundle directory by its format, a chart with values as a release, or a chart as
 * `helm template` prints it, each a named method of one Renderer (`createRenderer`). The
 * BundleDeployment controller, the Helm release reconciler, `plan`, `binnacle bundle render`,
 * `helm template`, `helm bundle` and `helm release` all render with one, so what the CLI prints is
 * what gets applied. A renderer is made once per process (the manager, `helm-operator run`, a CLI
 * command) and injected; it keeps its state (counts, and the Helm render cache in its caching
 * engine, helm-engine/engine-cache.ts) to itself: this module keeps none. Render writes nothing and needs
 * no dry-run client: what it needs from the cluster is read before it (the webhook certificates,
 * by the certificate port in webhook-certs.ts) or read during it (Helm's capabilities and
 * `lookup`, as the installing account). Every Helm render has the same bounds: values nested past
 * MAX_NESTING are refused by the caching engine, and the engine bounds each render in memory,
 * time and output. One renderer per bundle format, chosen by `spec.format`: registry+v1, plain,
 * and helm (Helm's own engine, through helm/chart-render.ts). Above bundle/ and helm/, below the
 * controllers, actions and CLI that use it.
 *
 * The BundleDeployment render path, call by call; every call goes down, none climbs back up
 * (held by controllers/bundle-deployment-render-path.test.ts):
 *
 *  1. `BundleDeploymentReconciler.certificates` (controllers/bundle-deployment.ts), before the
 *     release decision: `ports.webhookCerts` = `bundleWebhookCerts` (webhook-certs.ts) loads the
 *     bundle (bundle/), and for a registry+v1 bundle with webhooks `webhookCerts` reads the
 *     certificates' Secret as the installing account and adopts what it keeps (the CA with it),
 *     or issues new ones in memory (util/pki.ts). Nothing is written; the answer is data.
 *  2. `BundleDeploymentReconciler.render`: `ports.render(format, ctx)`, by default
 *     `Renderer.bundle(ctx)` of the renderer the manager injected (`ReleaseEngineOptions.renderer`).
 *     `ctx` is data (the unpacked tree, the spec, the certificates) and the install client.
 *  3. `renderBundle` (here): the format's renderer from `RENDERERS`, then the release's object limit.
 *  4. By format:
 *     - registry+v1: `renderRegistryV1` → bundle/ `loadBundleDir`, `convertRegistryV1` (serving
 *       certificates from the data, by `certProviderOf`), `ownNamespaceRoles`, `addOperatorCondition`; the
 *       certificates' Secret is added as an object of the release.
 *     - plain: `renderPlain` → bundle/ `loadPlainBundleDir`.
 *     - helm: `renderHelm` → helm/ `findChart`; `renderChartCached` → `CachingEngine.keyed` (a view
 *       keyed by the chart's digest and who looks up) → helm/chart-render.ts
 *       `renderChart` → the view's `render` → `CachingEngine.render`
 *       (helm-engine/engine-cache.ts): the cached answer, or Helm's engine's `render` (helm-engine/engine.ts).
 *  5. The rendered objects return to the reconciler (a return, not a call up), which checks them
 *     (`preflight`) and applies them (`apply`: the release engine's operations); the certificates'
 *     Secret is owned, pruned and deleted with the release like every other object.
 */
import { BundleLoadError, checkBundleConfig, olmv1ConfigMessage, supportedInstallModes, convertRegistryV1, crdToV1, ownNamespaceRoles, decodeOverrides, defaultWatchNamespaces, loadBundleDir, loadPlainBundleDir, type CertProvider, type DeploymentOverrides, type RegistryV1Bundle, type ServingCert } from '../bundle/index.js';
import { isKubeObject, type KubeObject } from '../kube/types.js';
import { addOperatorCondition } from '../bundle/operator-condition.js';
import type { BundleDeploymentSpec, BundleFormat } from '../api/types.js';
import type { ReleaseContent } from '../apply/types.js';
import type { IdentityClient } from '../kube/ports.js';
import type { ChartRender, ChartRenderInput } from '../helm/chart-render.js';
import type { HelmEngine, TemplateRequest, TemplateResult } from '../helm-engine/engine.js';
import { CachingEngine, checkValues, type RenderCacheLimits, type RenderCacheStats } from '../helm-engine/engine-cache.js';
import { InputError, TerminalError } from '../util/errors.js';
import { releaseLimits, ReleaseTooLargeError } from '../apply/limits.js';
import { PostRenderError } from '../apply/post-render.js';

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
   * Webhook serving certificates (made before render by the certificate port,
   * render/webhook-certs.ts), when the bundle has webhooks: data, never a callback.
   */
  certs?: WebhookCertData | undefined;
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

/**
 * The certificates a registry+v1 bundle's webhooks are served with, as data: each webhook
 * Service's certificate by its name, `fallback` for a Service not named; `secret`, when given, is
 * the Secret that keeps them, rendered as an object of the release (owned, pruned and deleted
 * like every other).
 */
export interface WebhookCertData {
  serving: Readonly<Record<string, ServingCert>>;
  fallback: ServingCert;
  secret?: KubeObject | undefined;
}

/** One format's renderer: the context, and the caching engine a chart is rendered on. */
export type BundleRenderer = (ctx: RenderContext, engine: CachingEngine) => Promise<RenderedBundle>;

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
  const olm = olmv1Config(ctx, bundle);
  const targets = olm?.watchNamespaces ?? watchNamespacesOf(ctx, bundle);
  const decoded = olm === undefined ? configOverrides(ctx) : olm.overrides;
  const certs = bundle.csv.webhooks.length > 0 ? ctx.certs : undefined;
  if (bundle.csv.webhooks.length > 0 && certs === undefined) throw new TerminalError('InvalidBundle', `bundle ${bundle.name} has webhooks, and no serving certificates were made for them`);
  const certProvider = certs === undefined ? undefined : certProviderOf(certs);
  const plain = convertRegistryV1(bundle, {
    installNamespace: ns,
    watchNamespaces: targets,
    ...(decoded === undefined ? {} : { overrides: decoded.overrides }),
    ...(certProvider === undefined ? {} : { certProvider }),
  });
  // The operator's own namespace gets its namespaced permissions too, as OLM v0 gives them (convert.ts ownNamespaceRoles).
  const converted = dropOrphanConversions(moveRemovedApis([...plain.objects, ...ownNamespaceRoles(bundle, ns, plain)].filter(isKubeObject)), bundle);
  // issue 12 §4: the operator's OperatorCondition, its RBAC and OPERATOR_CONDITION_NAME, as OLM gives them.
  const objects = addOperatorCondition(bundle, ns, converted);
  // The certificates' Secret is an object of the release: owned, pruned and deleted like the rest.
  if (certs?.secret !== undefined) objects.push(certs.secret);
  return {
    objects: ctx.spec.olmv1Owner === undefined ? objects : objects.map((o) => withOlmv1OwnerLabels(o, ctx.spec.olmv1Owner ?? '')),
    chart: { name: bundle.packageName !== '' ? bundle.packageName : ctx.name, version: bundle.csv.version !== '' ? bundle.csv.version : '0.0.0', appVersion: bundle.csv.version, description: bundle.name },
  };
}

/** OLM v1's owner labels (operator-controller's Helm post-renderer adds them to every object it installs). */
export const OLMV1_OWNER_KIND_LABEL = 'olm.operatorframework.io/owner-kind';
export const OLMV1_OWNER_NAME_LABEL = 'olm.operatorframework.io/owner-name';

/**
 * `obj` with OLM v1's owner labels naming the ClusterExtension `name`. Informational: Binnacle's
 * own ownership labels, stamped at apply (apply/ownership.ts), are the ones every ownership check reads.
 */
export function withOlmv1OwnerLabels(obj: KubeObject, name: string): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, labels: { ...(obj.metadata.labels ?? {}), [OLMV1_OWNER_KIND_LABEL]: 'ClusterExtension', [OLMV1_OWNER_NAME_LABEL]: name } } };
}

/** The namespaces the operator watches: as the spec says, else what its install modes allow without asking. */
function watchNamespacesOf(ctx: RenderContext, bundle: RegistryV1Bundle): string[] {
  const watch = ctx.spec.watchNamespaces ?? (ctx.spec.watchNamespace === undefined ? undefined : [ctx.spec.watchNamespace]);
  const targets = watch ?? defaultWatchNamespaces(bundle, ctx.spec.installNamespace);
  if (targets === undefined) {
    throw new TerminalError('UnsupportedInstallMode', `bundle ${bundle.name} supports no install mode Binnacle can pick on its own; set spec.watchNamespace`);
  }
  return targets;
}

/**
 * OLM v1's bundle configuration (spec.bundleConfig), checked against the bundle's install modes
 * with OLM v1's rules and words (bundle/bundle-config.ts): the namespaces watched and the
 * deployment overrides; undefined when the spec has none. A refused one is terminal,
 * `InvalidConfiguration`, until the spec changes.
 */
function olmv1Config(ctx: RenderContext, bundle: RegistryV1Bundle): { watchNamespaces: string[]; overrides: { overrides: DeploymentOverrides } | undefined } | undefined {
  const cfg = ctx.spec.bundleConfig;
  if (cfg === undefined) return undefined;
  const checked = checkBundleConfig(supportedInstallModes(bundle), ctx.spec.installNamespace, cfg);
  if (!checked.ok) throw new TerminalError('InvalidConfiguration', olmv1ConfigMessage(checked.errors));
  if (checked.deploymentConfig === undefined) return { watchNamespaces: checked.watchNamespaces, overrides: undefined };
  const decoded = decodeOverrides(checked.deploymentConfig, 'deploymentConfig');
  const bad = decoded.problems.filter((p) => p.severity === 'error');
  if (bad.length > 0) throw new TerminalError('InvalidConfiguration', `invalid ClusterExtension configuration: invalid deploymentConfig: ${bad.map((p) => `${p.field ?? 'deploymentConfig'}: ${p.message}`).join('; ')}`);
  return { watchNamespaces: checked.watchNamespaces, overrides: { overrides: decoded.overrides } };
}

/** The deployment overrides: given decoded, or read from spec.config (which must be valid). */
function configOverrides(ctx: RenderContext): { overrides: DeploymentOverrides } | undefined {
  const decoded = ctx.overrides !== undefined ? { overrides: ctx.overrides, problems: [] } : ctx.spec.config === undefined ? undefined : decodeOverrides(ctx.spec.config, 'spec.config');
  const badConfig = decoded?.problems.filter((p) => p.severity === 'error') ?? [];
  if (badConfig.length > 0) throw new TerminalError('InvalidConfig', badConfig.map((p) => `${p.field ?? 'spec.config'}: ${p.message}`).join('; '));
  return decoded;
}

/** The converter's provider over certificates given as data. */
function certProviderOf(certs: WebhookCertData): CertProvider {
  return { servingCert: ({ serviceName }) => certs.serving[serviceName] ?? certs.fallback };
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

const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  'Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'PersistentVolume', 'StorageClass', 'PriorityClass',
  'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'APIService', 'Node', 'IngressClass', 'RuntimeClass',
  'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'CSIDriver',
]);

/** Cluster-scoped kinds get no namespace; everything else defaults to the install namespace. */
function namespacedGuess(kind: string): boolean {
  return !CLUSTER_SCOPED.has(kind);
}

/** A Helm chart (the unpacked content is a chart, or holds one): rendered by Helm's own engine. */
async function renderHelm(ctx: RenderContext, engine: CachingEngine): Promise<RenderedBundle> {
  const { findChart } = await import('../helm/index.js');
  const { HelmError } = await import('../helm-engine/errors.js');
  const values = ctx.spec.values ?? {};
  try {
    const input: ChartRenderInput = {
      chart: findChart(ctx.dir),
      chartDigest: ctx.digest,
      release: { name: ctx.spec.releaseName ?? ctx.name, namespace: ctx.spec.installNamespace },
      values,
      revision: ctx.revision,
      ...(ctx.client === undefined ? {} : { client: ctx.client }),
      ...(ctx.spec.crdPolicy === undefined ? {} : { crdPolicy: ctx.spec.crdPolicy }),
      limits: releaseLimits(ctx.spec.limits),
      ...(ctx.spec.postRenderers === undefined ? {} : { postRenderers: ctx.spec.postRenderers }),
    };
    const rel = await renderChartCached(engine, input, ctx.actingAs);
    return { objects: moveRemovedApis(rel.objects), chart: rel.chart, helm: { content: rel.content, inputDigest: rel.inputDigest, values } };
  } catch (err) {
    // Helm refused the chart or its values: the same input fails the same way every time.
    if (err instanceof HelmError && err.phase !== 'internal') throw new TerminalError('InvalidChart', err.message, { cause: err });
    if (err instanceof PostRenderError) throw new TerminalError('PostRenderFailed', `spec.${err.message}`, { cause: err });
    throw err;
  }
}

export const RENDERERS: ReadonlyMap<BundleFormat, BundleRenderer> = new Map<BundleFormat, BundleRenderer>([
  ['registry+v1', renderRegistryV1],
  ['plain', renderPlain],
  ['helm', renderHelm],
]);

/** `ctx.spec.format`'s renderer, or InvalidSpec for a format there is none of; a bundle's objects past the release's limits are refused (a chart's are, before they are parsed). */
async function renderBundle(ctx: RenderContext, engine: CachingEngine): Promise<RenderedBundle> {
  const renderer = RENDERERS.get(ctx.spec.format);
  if (renderer === undefined) throw new TerminalError('InvalidSpec', `spec.format: unknown format "${ctx.spec.format}" (one of ${[...RENDERERS.keys()].join(', ')})`);
  const rendered = await renderer(ctx, engine);
  const limits = releaseLimits(ctx.spec.limits);
  if (rendered.objects.length > limits.maxObjects) {
    throw new ReleaseTooLargeError(`bundle ${ctx.name}: it renders ${rendered.objects.length} objects, above this release's limit of ${limits.maxObjects} (spec.limits.maxObjects); nothing of it is applied`);
  }
  return rendered;
}


/**
 * The renderer: what every caller renders with, one per process (the manager, `helm-operator
 * run`, a CLI command) and injected where something renders, so that its cache is its own and no
 * module keeps state. Its methods are the three things there are to render; each calls only down
 * (bundle/, helm/chart-render.ts, the caching engine over Helm's engine) and writes nothing.
 */
export interface Renderer {
  /** A bundle directory by its format (`spec.format`): what a BundleDeployment applies, `plan` compares, `binnacle bundle render` prints. */
  bundle(ctx: RenderContext): Promise<RenderedBundle>;
  /** A chart with values as a release, what an install applies (`input.engine` is this renderer's); `actingAs`: who `input.client` acts as, so that renders for different identities never share a cache entry. */
  chart(input: ChartRenderInput, actingAs?: string): Promise<ChartRender>;
  /** A chart as `helm template` prints it (never cached). */
  template(req: TemplateRequest): Promise<TemplateResult>;
  /** The caching engine, for code below src/render that takes an engine (helm bundle, helm release read RBAC and CRDs from Helm's release). */
  readonly engine: CachingEngine;
  /** How often each method was called, and the engine's cache counts (for tests and metrics). */
  stats(): RendererStats;
}

export interface RendererStats {
  calls: { bundle: number; chart: number; template: number };
  cache: RenderCacheStats;
}

export interface RendererOptions {
  /** Helm's engine (default: the process's shared one, loaded on first use). */
  engine?: HelmEngine;
  /** The render cache's bounds (default helm-engine/engine-cache.ts's). */
  cacheLimits?: RenderCacheLimits;
}

/** A renderer with its own caching engine (see Renderer). */
export function createRenderer(o: RendererOptions = {}): Renderer {
  const engine = new CachingEngine(o.engine ?? defaultEngine, o.cacheLimits);
  const calls = { bundle: 0, chart: 0, template: 0 };
  return {
    engine,
    bundle: (ctx) => {
      calls.bundle++;
      return renderBundle(ctx, engine);
    },
    chart: (input, actingAs) => {
      calls.chart++;
      return renderChartCached(engine, input, actingAs);
    },
    template: (req) => {
      calls.template++;
      return engine.template(req);
    },
    stats: () => ({ calls: { ...calls }, cache: engine.stats().cache }),
  };
}

async function defaultEngine(): Promise<HelmEngine> {
  return (await import('../helm-engine/engine.js')).helmEngine();
}

/** A chart as a release, Helm's answer from the cache when the same input was rendered before: down into chart-render.ts, which renders on the caching engine's view keyed by this input. */
async function renderChartCached(engine: CachingEngine, input: ChartRenderInput, actingAs: string | undefined): Promise<ChartRender> {
  checkValues(input.values);
  const { renderChart } = await import('../helm/index.js');
  // What `lookup` may read is part of who reads: a render confined to some namespaces is never served from an unconfined one.
  const confined = input.lookupNamespaces === undefined ? '' : ` confined to ${[...new Set(input.lookupNamespaces)].sort().join(',')}`;
  const keyed = engine.keyed({ chartDigest: input.chartDigest, lookupAs: actingAs === undefined ? undefined : `${actingAs}${confined}`, lookupClient: input.client });
  return renderChart({ ...input, engine: keyed });
}
