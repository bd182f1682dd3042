/**
 * A chart + values → what the applier takes: the objects of Helm's manifest (plus the chart's
 * crds/ CRDs under a policy), the release content Helm would store (chart, manifest, hooks,
 * notes), and the input digest that says whether anything changed. This is the one seam
 * between Helm and the install engine: the same applier, pruning, CRD safety, health and
 * release records serve every bundle format.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sharedChart } from '../apply/chart-intern.js';
import type { ChartInfo, ReleaseContent, ReleaseHook } from '../apply/types.js';
import type { Capabilities as ClusterCapabilities, ObjectReader, RawRequester } from '../kube/ports.js';
import { isKubeObject, type KubeObject } from '../kube/types.js';
import { inputDigestOf } from '../util/canonical-json.js';
import { checkRenderLimits, DEFAULT_RELEASE_LIMITS, releaseTooLarge } from '../apply/limits.js';
import { postRender } from '../apply/post-render.js';
import { manifestDocuments, toManifest } from '../apply/release.js';
import type { PostRenderer, ReleaseLimits } from '../api/types.js';

export { inputDigestOf };
import { BinnacleError, InputError } from '../util/errors.js';
import { YamlAliasError, yamlPackage, yamlValue } from '../util/yaml.js';
import { helmEngine, type HelmEngine, type LookupTransport, type TemplateRequest, type RenderResult } from '../helm-engine/engine.js';
import { HelmLimitError } from '../helm-engine/errors.js';
import { confinedLookup } from '../helm-engine/lookup-gate.js';

/** What to do with a chart's crds/ (Flux's `crds` policy): Helm itself only creates them. */
export type CrdPolicy = 'Skip' | 'Create' | 'CreateReplace';

export interface ChartRenderInput {
  /** A chart directory or `.tgz`. */
  chart: string;
  /** Serve one subchart of it (dependency names or aliases, `a/b`). */
  subchart?: string;
  /** Digest of the chart's source (archive or tree), part of the input digest. */
  chartDigest: string;
  release: { name: string; namespace: string };
  values: Record<string, unknown>;
  /** Dotted-key values set on top (helm's --set; a Helm operator's overrideValues). */
  set?: string[];
  /** The revision this render becomes (1 = install). */
  revision: number;
  /** The cluster: capabilities from its discovery, `lookup` through it. Offline without. */
  client?: ClusterCapabilities & RawRequester & Pick<ObjectReader, 'find'>;
  crdPolicy?: CrdPolicy;
  engine?: HelmEngine;
  /** How much the release may hold; checked on Helm's output before it is parsed. Default apply/limits.ts's. */
  limits?: Required<ReleaseLimits>;
  /** Patches applied to the rendered manifest's objects (apply/post-render.ts); part of the input digest. */
  postRenderers?: PostRenderer[];
  /** Namespaces `lookup` may read namespaced resources in (helm-engine/lookup-gate.ts confinedLookup); any the identity may read when absent. */
  lookupNamespaces?: readonly string[];
}

export interface ChartRender {
  objects: KubeObject[];
  content: ReleaseContent;
  chart: ChartInfo;
  inputDigest: string;
  /** Helm's rendered notes. */
  notes: string;
  /** The values as Helm merged them (what `helm get values` shows). */
  values: Record<string, unknown>;
}

/** `dir` is a chart, or holds exactly one chart (directory or `.tgz`): its path. */
export function findChart(dir: string): string {
  if (existsSync(join(dir, 'Chart.yaml'))) return dir;
  const entries = readdirSync(dir, { withFileTypes: true }).filter((e) => !e.name.startsWith('.'));
  const candidates = [
    ...entries.filter((e) => e.isFile() && /\.tgz$|\.tar\.gz$/.test(e.name)).map((e) => join(dir, e.name)),
    ...entries.filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'Chart.yaml'))).map((e) => join(dir, e.name)),
  ];
  if (candidates.length === 1 && candidates[0] !== undefined) return candidates[0];
  throw new InputError(
    'HELM_NO_CHART',
    candidates.length === 0 ? 'no Helm chart here: expected Chart.yaml, one chart directory or one .tgz archive' : `more than one chart here: ${candidates.map((c) => c.slice(dir.length + 1)).join(', ')}`,
    { file: dir },
  );
}

interface Capabilities {
  kubeVersion: string;
  apiVersions: string[];
}

/** The cluster's `.Capabilities` (the client keeps them briefly: a render asks for them each time). */
async function capabilitiesOf(client: NonNullable<ChartRenderInput['client']>): Promise<Capabilities> {
  const [kubeVersion, apiVersions] = await Promise.all([client.serverVersion(), client.apiVersionSet()]);
  return { kubeVersion, apiVersions };
}


/** The objects of Helm's output or of a crds/ file; `where` names it in errors. */
export function objectsOf(text: string, where: string): KubeObject[] {
  const out: KubeObject[] = [];
  yamlPackage().parseAllDocuments(text).forEach((doc, i) => {
    const o = objectOfDocument(doc, where, i + 1);
    if (o !== undefined) out.push(o);
  });
  return out;
}

/** One document of Helm's output as an object (nothing for an empty one); HELM_MANIFEST_YAML or HELM_MANIFEST_OBJECT naming it otherwise. */
function objectOfDocument(doc: ReturnType<ReturnType<typeof yamlPackage>['parseAllDocuments']>[number], where: string, n: number): KubeObject | undefined {
  if (!('errors' in doc)) return undefined;
  if (doc.errors.length > 0) throw new InputError('HELM_MANIFEST_YAML', `document ${n}: ${doc.errors[0]?.message ?? 'invalid YAML'}`, { file: where });
  // Aliases as Helm (Go's YAML) reads them: many are fine, an alias bomb is refused.
  let value: unknown;
  try {
    value = yamlValue(doc, where);
  } catch (err) {
    if (err instanceof YamlAliasError) throw new InputError('HELM_MANIFEST_YAML', `document ${n}: ${err.reason}`, { file: where, cause: err });
    throw err;
  }
  if (value === null || value === undefined) return undefined;
  if (!isKubeObject(value)) throw new InputError('HELM_MANIFEST_OBJECT', `document ${n} is not a Kubernetes object (apiVersion, kind and metadata are required)`, { file: where });
  return value;
}

/**
 * objectsOf document by document, letting other work run every few milliseconds: a release's
 * render is bounded (apply/limits.ts), but thousands of objects still take seconds to read,
 * longer than a leader may go without renewing its Lease.
 */
export async function objectsOfAsync(text: string, where: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  const yaml = yamlPackage();
  let n = 0;
  let slice = performance.now();
  for (const part of manifestDocuments(text)) {
    for (const doc of yaml.parseAllDocuments(part)) {
      const o = objectOfDocument(doc, where, ++n);
      if (o !== undefined) out.push(o);
    }
    if (performance.now() - slice > 8) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
  }
  return out;
}

/**
 * What a render would be made from, as a digest, without rendering: a caller whose deployed
 * revision has this digest need not render at all (rendering a chart that generates keys
 * costs seconds; an operator looks at every CR every reconcile period).
 */
export async function chartInputDigest(input: ChartRenderInput): Promise<string> {
  const caps = input.client === undefined ? undefined : await capabilitiesOf(input.client);
  return digestOf(input, caps);
}

function digestOf(input: ChartRenderInput, caps: Capabilities | undefined): string {
  return inputDigestOf({
    chart: input.chartDigest,
    subchart: input.subchart ?? '',
    values: input.values,
    set: input.set ?? [],
    release: input.release,
    kubeVersion: caps?.kubeVersion ?? '',
    apis: caps === undefined ? '' : createHash('sha256').update(caps.apiVersions.join('\n')).digest('hex'),
    crdPolicy: input.crdPolicy ?? 'Create',
    // Only when there are some: the digest of every release without them stays as it was.
    ...(input.postRenderers === undefined || input.postRenderers.length === 0 ? {} : { postRenderers: input.postRenderers }),
  });
}

/** Renders the chart as Helm would for this revision and shapes it for the applier. */
export async function renderChart(input: ChartRenderInput): Promise<ChartRender> {
  const engine = input.engine ?? helmEngine();
  const caps = input.client === undefined ? undefined : await capabilitiesOf(input.client);
  const limits = input.limits ?? DEFAULT_RELEASE_LIMITS;
  const where = `release ${input.release.namespace}/${input.release.name}`;
  let res: RenderResult;
  try {
    res = await engine.render({ ...renderRequestOf(input, caps), limits });
  } catch (err) {
    // Found by the engine where it rendered: nothing of the render came over.
    if (err instanceof HelmLimitError) throw releaseTooLarge(err.limit, err.size, limits, where);
    throw err;
  }
  const rel = res.release;
  const manifest = rel.manifest;
  const hooks: ReleaseHook[] = (rel.hooks ?? []).map((h) => ({ ...h, events: [...h.events] }));
  if (typeof manifest !== 'string') throw new BinnacleError('internal', 'HELM_RELEASE', 'Helm answered a release without a manifest');
  // Counted again, as the host sees it, before anything is parsed (an engine that did not check).
  checkRenderLimits([manifest, ...res.crds.map((f) => f.data), ...hooks.map((h) => h.manifest)], limits, where);
  let objects = await objectsOfAsync(manifest, `${rel.chart.metadata.name}: rendered manifest`);
  let recorded = manifest;
  if (input.postRenderers !== undefined && input.postRenderers.length > 0) {
    // The record keeps what is applied (a repair, a rollback and an uninstall read it), as Helm's
    // release keeps its post-renderer's output; counted again, since a patch can add.
    objects = postRender(objects, input.postRenderers);
    recorded = toManifest(objects);
    checkRenderLimits([recorded, ...res.crds.map((f) => f.data), ...hooks.map((h) => h.manifest)], limits, where);
  }
  const crds = await chartCrds(res.crds, input.crdPolicy ?? 'Create', input.client, rel.chart.metadata.name);
  const chart = chartInfoOf(rel.chart.metadata);
  const notes = rel.info.notes ?? '';
  return {
    objects: [...crds, ...objects],
    content: { chart: sharedChart(rel.chart as unknown as Record<string, unknown>), manifest: recorded, hooks, ...(notes === '' ? {} : { notes }) },
    chart,
    notes,
    values: rel.config ?? {},
    inputDigest: digestOf(input, caps),
  };
}

/** What to ask Helm's engine for: the input, with the cluster's capabilities and `lookup` when there is a cluster. */
function renderRequestOf(input: ChartRenderInput, caps: Capabilities | undefined): TemplateRequest {
  const client = input.client;
  const raw: LookupTransport | undefined = client === undefined ? undefined : (method, path, body) => client.rawRequest(method, path, body);
  const lookup = raw === undefined || input.lookupNamespaces === undefined ? raw : confinedLookup(raw, new Set(input.lookupNamespaces));
  return {
    chart: input.chart,
    releaseName: input.release.name,
    namespace: input.release.namespace,
    values: input.values,
    ...(input.set === undefined || input.set.length === 0 ? {} : { set: input.set }),
    ...(input.subchart === undefined ? {} : { subchart: input.subchart }),
    revision: input.revision,
    ...(caps === undefined ? {} : { kubeVersion: caps.kubeVersion, clusterApiVersions: caps.apiVersions }),
    ...(lookup === undefined ? {} : { lookup }),
  };
}

/** The CRDs of the chart's crds/ files to apply under `policy`. */
async function chartCrds(files: RenderResult['crds'], policy: CrdPolicy, client: ChartRenderInput['client'], chartName: string): Promise<KubeObject[]> {
  const crds: KubeObject[] = [];
  if (policy === 'Skip') return crds;
  for (const f of files) {
    for (const crd of await objectsOfAsync(f.data, `${chartName}/${f.name}`)) {
      // Create: only CRDs the cluster lacks, as `helm install` does; CreateReplace: all.
      if (policy === 'Create' && client !== undefined && (await client.find({ apiVersion: crd.apiVersion, kind: crd.kind, name: crd.metadata.name ?? '' })) !== undefined) continue;
      crds.push(crd);
    }
  }
  return crds;
}

/** The chart's name and version, with its appVersion and description when it has them. */
function chartInfoOf(meta: RenderResult['release']['chart']['metadata']): ChartInfo {
  const chart: ChartInfo = { name: meta.name, version: meta.version };
  if (typeof meta.appVersion === 'string' && meta.appVersion !== '') chart.appVersion = meta.appVersion;
  if (typeof meta.description === 'string' && meta.description !== '') chart.description = meta.description;
  return chart;
}
