/**
 * From a Helm chart to an installable operator in one step (`binnacle helm bundle`): a
 * `registry+v1` bundle whose operator is Binnacle's Helm operator serving one custom resource
 * kind per chart or subchart, with nothing to build. The bundle has:
 * - one owned CRD per kind, its `spec` schema from the chart's values.schema.json or
 *   values.yaml (`helm/schema`), and an `alm-examples` resource whose spec is the defaults;
 * - RBAC derived from what the charts render (rbac.ts), `olm.gvk` dependencies for custom
 *   resources the charts create but do not define (dependencies.ts), `relatedImages`;
 * - the operator's Deployment, running `binnacle helm-operator run` from Binnacle's image,
 *   with the charts and watches.yaml in a ConfigMap (operator.ts).
 * Subchart kinds are packaged as charts of their own (the HelmOperator API serves them the
 * same way: rendered as a root chart, with their own values). The bundle is written by the
 * bundle writer (`generateBundle`) and must pass the bundle validators before this returns.
 *
 * Steps: Chart → Kinds → CRDs → Render → Package → Derive → Write → Validate.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { generateBundle, validateBundleDir } from '../../bundle/index.js';
import { BINNACLE_VERSION } from '../../api/version.js';
import type { JsonObject } from '../../bundle/decode.js';
import { isRecord } from '../../util/object.js';
import { isValidImageReference } from '../../oci/reference.js';
import type { GroupVersionKind, KubeObject } from '../../kube/types.js';
import { InputError, UsageError, ValidationError, ValidationResult, errorMessage, type Problem } from '../../util/errors.js';
import { readYaml } from '../../util/yaml.js';
import { helmEngine, HelmError, type ChartDescription, type HelmEngine, type TemplateRequest } from '../../helm-engine/engine.js';
import { crdForChart, pluralForKind, valuesSchema } from '../../helm/schema/index.js';
import { chartDirectory, dependencyPath, subchartSource, type ChartSource } from './chart-dir.js';
import { csvBase } from './csv-base.js';
import { dependenciesFile, requiredApis, type NotRequired } from './dependencies.js';
import { containerImages, relatedImages, type RelatedImage } from './images.js';
import { operatorObjects } from './operator.js';
import { packageChartDir } from './package-chart.js';
import { operatorRbac, type OperatorRbac, type PolicyRule } from './rbac.js';
import { kubeVersionFor, objectsOf, plainRequest, templateCharts, type ChartRenders, type RenderOptions, type RenderTarget } from './render.js';

export { PLATFORM_APIS, platformApi, type PlatformApis } from './platform-apis.js';
export { operatorRbac, mergeRules, allows, APPLY_VERBS, type PolicyRule, type OperatorRbac } from './rbac.js';
export { requiredApis, type RequiredApis, type NotRequired } from './dependencies.js';
export { filesOfConfigMap, watchesFile, MOUNT_PATH, WATCHES_KEY } from './operator.js';
export { packageChartDir, chartFiles } from './package-chart.js';
export { parseHelmignore, type IgnoreRules } from './helmignore.js';
export { resourceFor, BUILTIN_GROUPS, type ResourceInfo, type CrdKind } from './resources.js';
export { simpleLowerBound } from './csv-base.js';

export interface HelmBundleOptions {
  /** A chart directory or `.tgz`. */
  chart: string;
  /** `--kind` values: `Kind` (the chart) or `Kind=charts/sub` (a subchart). */
  kinds: readonly string[];
  outputDir: string;
  /** The bundle's version; the chart's when absent. */
  version?: string;
  /** API group of the kinds; `<chart>.helm.binnacle.dev` when absent. */
  group?: string;
  /** API version of the kinds; `v1alpha1` when absent. */
  crdVersion?: string;
  /** Package name; the chart's name when absent. */
  packageName?: string;
  /** The operator image (Binnacle's); `ghcr.io/binnacle-dev/binnacle:<version>` when absent. */
  image?: string;
  channels?: readonly string[];
  defaultChannel?: string;
  /** More `--api-versions` for the render RBAC and images come from. */
  apiVersions?: readonly string[];
  kubeVersion?: string;
  /** An icon file (png, jpeg, gif, svg) for the CSV. */
  icon?: string;
  replaces?: string;
  skipRange?: string;
  engine?: HelmEngine;
}

export interface BundleKind extends GroupVersionKind {
  plural: string;
  /** The chart serving it, as `inspect` names it (`pelorus/charts/exporters`). */
  chart: string;
  /** Its archive in the operator's ConfigMap (`charts/<archive>` next to watches.yaml). */
  archive: string;
  schemaSource: 'values.schema.json' | 'values.yaml';
  schemaWarnings: Problem[];
}

export interface HelmBundleResult {
  dir: string;
  csvName: string;
  packageName: string;
  version: string;
  image: string;
  kinds: BundleKind[];
  required: GroupVersionKind[];
  notRequired: NotRequired[];
  rbac: OperatorRbac;
  relatedImages: RelatedImage[];
  files: string[];
  /** What could not be carried over, and assumptions made. */
  notes: string[];
  /** The bundle validators' report (warnings only: errors make this function throw). */
  validation: ValidationResult;
}

const KIND_NAME = /^[A-Z][A-Za-z0-9]*$/;
/** The namespace charts are rendered into here; nothing real is ever called that. */
const RELEASE_NAMESPACE = 'release-namespace';
/** A ConfigMap holds 1 MiB; leave room for watches.yaml and metadata. */
const MAX_CONFIGMAP_BYTES = 1024 * 1024 - 16 * 1024;

/** A DNS label from a chart name: `My_Chart` → `my-chart`. */
export function dnsLabel(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 50) || 'chart';
}

interface KindPlan {
  spec: string;
  kind: string;
  desc: ChartDescription;
  /** Dependency path for a subchart kind. */
  subchart?: string[];
  archive: string;
}

/** The chart and the names everything else is built from. */
interface Chart {
  /** The chart directory (CHART itself, or the unpacked archive). */
  dir: string;
  root: ChartDescription;
  charts: ChartDescription[];
  packageName: string;
  group: string;
  crdVersion: string;
  version: string;
  image: string;
}

async function loadChart(o: HelmBundleOptions, engine: HelmEngine, work: string): Promise<Chart> {
  const dir = await chartDirectory(o.chart, work);
  let charts: ChartDescription[];
  try {
    charts = await engine.inspect(dir);
  } catch (err) {
    if (err instanceof HelmError) throw new InputError('HELM_BUNDLE_CHART', `Helm cannot load the chart: ${err.message}`, { file: o.chart, cause: err });
    throw err;
  }
  const root = charts[0];
  if (root === undefined) throw new InputError('HELM_BUNDLE_CHART', 'Helm found no chart', { file: o.chart });
  if (root.metadata.type === 'library') throw new InputError('HELM_BUNDLE_CHART', 'a library chart renders nothing and cannot be installed', { file: dir === o.chart ? join(dir, 'Chart.yaml') : o.chart });
  const image = o.image ?? `ghcr.io/binnacle-dev/binnacle:${BINNACLE_VERSION}`;
  if (!isValidImageReference(image)) throw new UsageError(`--image ${image}: not a valid image reference`);
  return {
    dir,
    root,
    charts,
    packageName: o.packageName ?? dnsLabel(root.metadata.name),
    group: o.group ?? `${dnsLabel(root.metadata.name)}.helm.binnacle.dev`,
    crdVersion: o.crdVersion ?? 'v1alpha1',
    version: o.version ?? root.metadata.version,
    image,
  };
}

/** One `--kind` flag: the kind, and the subchart's dependency path when it names one. */
interface KindFlag {
  spec: string;
  kind: string;
  subchart?: string[];
}

/** Checks the `--kind` flags before anything is loaded. */
function parseKindFlags(kinds: readonly string[]): KindFlag[] {
  if (kinds.length === 0) throw new UsageError('--kind is required: name the custom resource kind the chart serves (e.g. --kind Pelorus)');
  const seen = new Set<string>();
  return kinds.map((spec) => {
    const eq = spec.indexOf('=');
    const kind = eq < 0 ? spec : spec.slice(0, eq);
    const path = eq < 0 ? undefined : spec.slice(eq + 1);
    if (!KIND_NAME.test(kind)) {
      const suggestion = `${kind.charAt(0).toUpperCase()}${kind.slice(1)}`.replace(/[^A-Za-z0-9]/g, '');
      throw new UsageError(`--kind ${spec}: ${JSON.stringify(kind)} is not a valid Kind name: it must start with an upper-case letter and hold only letters and digits${suggestion === '' ? '' : ` (e.g. ${suggestion})`}`);
    }
    if (seen.has(kind)) throw new UsageError(`--kind ${spec}: kind ${kind} is given twice`);
    seen.add(kind);
    if (path === undefined) return { spec, kind };
    const subchart = dependencyPath(path);
    if (subchart === undefined) throw new UsageError(`--kind ${spec}: ${JSON.stringify(path)} is not a subchart path such as charts/exporters (or charts/a/charts/b)`);
    return { spec, kind, subchart };
  });
}

/** The file errors about the chart's dependencies name: its Chart.yaml, or the archive. */
function chartFile(o: HelmBundleOptions, c: Chart): string {
  return c.dir === o.chart ? join(o.chart, 'Chart.yaml') : o.chart;
}

/** Each kind with the chart (or subchart) that serves it. */
function planKinds(o: HelmBundleOptions, c: Chart, flags: readonly KindFlag[]): KindPlan[] {
  return flags.map(({ spec, kind, subchart }) => {
    if (subchart === undefined) return { spec, kind, desc: c.root, archive: `${dnsLabel(c.root.metadata.name)}.tgz` };
    const desc = c.charts.find((d) => d.path === [c.root.path, ...subchart.map((x) => `charts/${x}`)].join('/')) ?? byAlias(c, subchart);
    if (desc === undefined) {
      const have = c.charts.filter((d) => d.path.startsWith(`${c.root.path}/charts/`)).map((d) => d.path.slice(c.root.path.length + 1));
      throw new InputError('HELM_BUNDLE_SUBCHART', `--kind ${spec}: the chart has no subchart ${subchart.join('/')} (it has: ${have.length === 0 ? 'none' : have.join(', ')})`, { file: chartFile(o, c) });
    }
    if (desc.metadata.type === 'library') throw new InputError('HELM_BUNDLE_SUBCHART', `--kind ${spec}: ${desc.path} is a library chart, which renders nothing`, { file: chartFile(o, c) });
    return { spec, kind, desc, subchart, archive: `${dnsLabel(c.root.metadata.name)}-${subchart.map(dnsLabel).join('-')}.tgz` };
  });
}

/** A subchart named by an alias its parent gives it (one level at a time). */
function byAlias(c: Chart, deps: readonly string[]): ChartDescription | undefined {
  let current: ChartDescription | undefined = c.root;
  for (const d of deps) {
    if (current === undefined) return undefined;
    const parent: ChartDescription = current;
    const name = parent.metadata.dependencies?.find((x) => x.alias === d)?.name ?? d;
    current = c.charts.find((x) => x.path === `${parent.path}/charts/${name}`);
  }
  return current;
}

function buildCrds(c: Chart, plans: readonly KindPlan[]): { kinds: BundleKind[]; crds: KubeObject[] } {
  const kinds: BundleKind[] = [];
  const crds: KubeObject[] = [];
  for (const p of plans) {
    const schema = valuesSchema({ valuesYaml: p.desc.valuesYaml ?? '', ...(p.desc.schema === undefined || p.desc.schema === '' ? {} : { schemaJson: p.desc.schema }), chartName: p.desc.path });
    const plural = pluralForKind(p.kind);
    if (kinds.some((k) => k.plural === plural)) throw new UsageError(`--kind ${p.spec}: its plural ${plural} is the same as another kind's`);
    try {
      crds.push(
        crdForChart({
          group: c.group,
          version: c.crdVersion,
          kind: p.kind,
          plural,
          scope: 'Namespaced',
          spec: schema.schema,
          description: `${p.kind}: a Helm release of ${p.desc.metadata.name}; its spec is the chart's values.`,
        }),
      );
    } catch (err) {
      if (err instanceof InputError && err.field === 'group') throw new UsageError(`--group ${c.group}: ${err.message}`);
      if (err instanceof InputError && err.field === 'version') throw new UsageError(`--crd-version ${c.crdVersion}: ${err.message}`);
      throw err;
    }
    kinds.push({ group: c.group, version: c.crdVersion, kind: p.kind, plural, chart: p.desc.path, archive: p.archive, schemaSource: schema.source, schemaWarnings: schema.warnings });
  }
  return { kinds, crds };
}

function renderOptions(o: HelmBundleOptions, c: Chart, plans: readonly KindPlan[]): RenderOptions {
  const kubeVersion = o.kubeVersion ?? kubeVersionFor(c.root.metadata.kubeVersion);
  return {
    releaseName: `${plans[0]?.kind.toLowerCase() ?? 'release'}-sample`,
    namespace: RELEASE_NAMESPACE,
    ...(kubeVersion === undefined ? {} : { kubeVersion }),
    ...(o.apiVersions === undefined ? {} : { apiVersions: o.apiVersions }),
  };
}

async function render(o: HelmBundleOptions, engine: HelmEngine, c: Chart, plans: readonly KindPlan[]): Promise<ChartRenders> {
  const targets = new Map<string, RenderTarget>();
  for (const p of plans) targets.set(p.archive, { chart: c.dir, name: p.desc.path, ...(p.subchart === undefined ? {} : { subchart: p.subchart.join('/') }) });
  try {
    return await templateCharts(engine, [...targets.values()], renderOptions(o, c, plans));
  } catch (err) {
    if (err instanceof HelmError) throw new InputError('HELM_BUNDLE_RENDER', `Helm cannot render the chart with its default values: ${err.message}`, { file: o.chart, cause: err });
    throw err;
  }
}

/** The templates that produced output, in order (`# Source:` lines of Helm's output). */
const sources = (output: string): string[] => output.split('\n').filter((l) => l.startsWith('# Source: '));

/**
 * Whether the archive renders as the chart did (`output`). A chart whose templates draw random
 * values (`randAlphaNum`, generated certificates) never renders the same twice; for it the
 * loaded chart (templates, files, values, schema) and the templates that rendered are compared.
 */
async function rendersAlike(engine: HelmEngine, chartRequest: TemplateRequest, archive: string, output: string | undefined): Promise<boolean> {
  const { subchart: _subchart, ...request } = chartRequest;
  const fromArchive = await engine.render({ ...request, chart: archive });
  if (fromArchive.output === output) return true;
  const again = await engine.render(chartRequest);
  if (again.output === output) return false;
  return JSON.stringify(again.release.chart) === JSON.stringify(fromArchive.release.chart) && sources(again.output).join('\n') === sources(fromArchive.output).join('\n');
}

/** Each kind's chart as an archive, checked to render exactly as the chart it came from. */
async function packageCharts(o: HelmBundleOptions, engine: HelmEngine, c: Chart, plans: readonly KindPlan[], renders: ChartRenders, work: string): Promise<Map<string, Buffer>> {
  const archives = new Map<string, Buffer>();
  for (const p of plans) {
    if (archives.has(p.archive)) continue;
    let source: ChartSource = { type: 'dir', dir: c.dir };
    if (p.subchart !== undefined) {
      try {
        source = await subchartSource(engine, c.dir, p.subchart, work);
      } catch (err) {
        throw new InputError('HELM_BUNDLE_SUBCHART', `--kind ${p.spec}: ${errorMessage(err)}`, { file: chartFile(o, c), cause: err });
      }
    }
    const bytes = source.type === 'archive' ? await readFile(source.file) : await packageChartDir(source.dir, p.desc.metadata.name);
    const file = join(work, p.archive);
    await writeFile(file, bytes);
    if (!(await rendersAlike(engine, { ...plainRequest(renderOptions(o, c, plans)), chart: c.dir, ...(p.subchart === undefined ? {} : { subchart: p.subchart.join('/') }) }, file, renders.plainOutput.get(p.desc.path)))) {
      throw new InputError('HELM_BUNDLE_PACKAGE', `the packaged chart ${p.archive} renders differently from ${p.desc.path} (check .helmignore)`, { file: o.chart });
    }
    archives.set(p.archive, bytes);
  }
  const size = [...archives.values()].reduce((n, b) => n + Math.ceil(b.length / 3) * 4, 0);
  if (size > MAX_CONFIGMAP_BYTES) {
    throw new InputError('HELM_BUNDLE_TOO_LARGE', `the packaged charts take ${Math.round(size / 1024)} KiB in base64, more than one ConfigMap holds (1 MiB)`, { file: o.chart });
  }
  return archives;
}

interface Derived {
  rbac: OperatorRbac;
  required: GroupVersionKind[];
  notRequired: NotRequired[];
  images: RelatedImage[];
  /** Input of the bundle writer besides the base CSV. */
  objects: KubeObject[];
  csv: JsonObject;
  dependencies?: string;
  minKubeVersion?: string;
}

async function readIcon(file: string | undefined): Promise<{ data: Buffer; mediatype: string } | undefined> {
  if (file === undefined) return undefined;
  const ext = file.toLowerCase().split('.').pop() ?? '';
  const mediatype = ({ png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', svg: 'image/svg+xml' } as Record<string, string>)[ext];
  if (mediatype === undefined) throw new UsageError(`--icon ${file}: expected a .png, .jpg, .gif or .svg file`);
  const data = await readFile(file).catch((err: unknown) => {
    throw new InputError('HELM_BUNDLE_ICON', `cannot read the icon: ${errorMessage(err)}`, { file });
  });
  return { data, mediatype };
}

/** RBAC, dependencies, images, the operator and the base CSV, from the renders. */
async function derive(o: HelmBundleOptions, c: Chart, plans: readonly KindPlan[], built: { kinds: BundleKind[]; crds: KubeObject[] }, renders: ChartRenders, archives: ReadonlyMap<string, Buffer>, notes: string[]): Promise<Derived> {
  const rbac = operatorRbac({ objects: renders.generous, namespace: RELEASE_NAMESPACE, chartCrds: renders.crds, own: built.kinds });
  if (rbac.guessed.length > 0) notes.push(`resource names and scope guessed (namespaced; not built in, no CRD in the chart) for: ${rbac.guessed.join(', ')}`);
  const deps = requiredApis(renders.plain, renders.crds, built.kinds);
  const all = containerImages(renders.generous.map((r) => r.object));
  const invalid = all.filter((i) => !isValidImageReference(i));
  if (invalid.length > 0) notes.push(`left out of relatedImages, not valid image references: ${invalid.join(', ')}`);
  const images = relatedImages({ name: 'helm-operator', image: c.image }, all.filter((i) => isValidImageReference(i)));
  const op = operatorObjects({ packageName: c.packageName, image: c.image, kinds: built.kinds, archives });
  const icon = await readIcon(o.icon);
  const base = csvBase({
    chart: c.root,
    packageName: c.packageName,
    version: c.version,
    image: c.image,
    kinds: built.kinds.map((k) => ({ kind: k.kind, chart: k.chart })),
    relatedImages: images,
    ...(icon === undefined ? {} : { icon }),
    ...(o.replaces === undefined ? {} : { replaces: o.replaces }),
    ...(o.skipRange === undefined ? {} : { skipRange: o.skipRange }),
  });
  notes.push(...base.notes);
  const sa = op.serviceAccountName;
  // Roles bound to the operator's ServiceAccount: the writer folds them into the CSV.
  const bound = (kind: 'Role' | 'ClusterRole', rules: readonly PolicyRule[]): KubeObject[] =>
    rules.length === 0
      ? []
      : [
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: { name: sa }, rules },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: `${kind}Binding`,
            metadata: { name: sa },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: sa },
            subjects: [{ kind: 'ServiceAccount', name: sa }],
          },
        ];
  // One example per kind, its spec the defaults: what the writer puts in alm-examples.
  const samples: KubeObject[] = plans.map((p) => ({ apiVersion: `${c.group}/${c.crdVersion}`, kind: p.kind, metadata: { name: `${p.kind.toLowerCase()}-sample` }, spec: p.desc.values }));
  return {
    rbac,
    required: deps.required,
    notRequired: deps.notRequired,
    images,
    objects: [...built.crds, op.deployment, op.configMap, ...bound('Role', rbac.permissions), ...bound('ClusterRole', rbac.clusterPermissions), ...samples],
    csv: base.csv,
    ...(deps.required.length === 0 ? {} : { dependencies: stringify(dependenciesFile(deps.required), { lineWidth: 0 }) }),
    ...(base.minKubeVersion === undefined ? {} : { minKubeVersion: base.minKubeVersion }),
  };
}

/** Writes the bundle through the bundle writer, then what it does not write itself. */
async function write(o: HelmBundleOptions, c: Chart, d: Derived, work: string, notes: string[]): Promise<string[]> {
  const input = join(work, 'input');
  await mkdir(input, { recursive: true });
  await writeFile(join(input, 'csv.yaml'), stringify(d.csv, { lineWidth: 0 }));
  await writeFile(join(input, 'objects.yaml'), d.objects.map((x) => stringify(x, { lineWidth: 0 })).join('---\n'));
  // The bundle owns manifests/ and metadata/ of the output: what an earlier run left there goes.
  await rm(join(o.outputDir, 'manifests'), { recursive: true, force: true });
  await rm(join(o.outputDir, 'metadata'), { recursive: true, force: true });
  const generated = await generateBundle({
    inputDir: input,
    outputDir: o.outputDir,
    packageName: c.packageName,
    version: c.version,
    channels: [...(o.channels ?? ['alpha'])],
    ...(o.defaultChannel === undefined ? {} : { defaultChannel: o.defaultChannel }),
  }).catch((err: unknown) => {
    if (err instanceof InputError && err.field === 'version' && o.version === undefined) {
      throw new UsageError(`the chart's version ${c.version} is not a semantic version a CSV accepts; pass --version`);
    }
    throw err;
  });
  notes.push(...generated.skipped.map((x) => `not in the bundle: ${x.kind} ${x.name}: ${x.reason}`));
  // The writer defaults minKubeVersion; a CSV says only what the chart says.
  const csvFile = join(o.outputDir, 'manifests', `${c.packageName}.clusterserviceversion.yaml`);
  const csv = readYaml(await readFile(csvFile, 'utf8'), csvFile);
  if (isRecord(csv) && isRecord(csv.spec)) {
    if (d.minKubeVersion === undefined) delete csv.spec.minKubeVersion;
    else csv.spec.minKubeVersion = d.minKubeVersion;
    await writeFile(csvFile, stringify(csv, { lineWidth: 0, aliasDuplicateObjects: false }));
  }
  const files = [...generated.files];
  if (d.dependencies !== undefined) {
    await writeFile(join(o.outputDir, 'metadata', 'dependencies.yaml'), d.dependencies);
    files.push('metadata/dependencies.yaml');
  }
  return files.sort();
}

/** Writes the operator bundle for a chart; throws when the bundle validators find errors. */
export async function helmBundle(o: HelmBundleOptions): Promise<HelmBundleResult> {
  const engine = o.engine ?? helmEngine();
  const work = await mkdtemp(join(tmpdir(), 'binnacle-helm-bundle-'));
  const notes: string[] = [];
  try {
    const flags = parseKindFlags(o.kinds);
    const chart = await loadChart(o, engine, work);
    const plans = planKinds(o, chart, flags);
    const built = buildCrds(chart, plans);
    const renders = await render(o, engine, chart, plans);
    const archives = await packageCharts(o, engine, chart, plans, renders, work);
    const derived = await derive(o, chart, plans, built, renders, archives, notes);
    const files = await write(o, chart, derived, work, notes);
    const { result, bundle } = await validateBundleDir(o.outputDir);
    if (!result.ok) throw new ValidationError(result);
    return {
      dir: o.outputDir,
      csvName: bundle?.name ?? `${chart.packageName}.v${chart.version}`,
      packageName: chart.packageName,
      version: chart.version,
      image: chart.image,
      kinds: built.kinds,
      required: derived.required,
      notRequired: derived.notRequired,
      rbac: derived.rbac,
      relatedImages: derived.images,
      files,
      notes,
      validation: result,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The objects of one rendered YAML stream (for tests and the e2e). */
export { objectsOf };
