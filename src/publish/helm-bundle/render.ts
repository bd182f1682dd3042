/**
 * What a chart creates, found by rendering it offline with its default values, twice:
 * - **generously**, with `.Capabilities.APIVersions` holding the APIs charts commonly test for
 *   (the Prometheus operator, OpenShift, cert-manager, Istio, Gateway API, …) and the chart's
 *   own CRDs, so templates guarded by `.Capabilities.APIVersions.Has` render too. Everything
 *   the operator might ever apply shows up here: RBAC and related images come from it;
 * - **plainly**, with Helm's default capabilities: what the chart creates whatever the cluster
 *   serves. Only these objects make dependencies, so an integration a chart turns on when an
 *   API is present never forces an operator for that API into the install.
 */
import semver from 'semver';
import type { HelmEngine, TemplateRequest } from '../../helm-engine/engine.js';
import { gvkOf, isKubeObject, type KubeObject } from '../../kube/types.js';
import { yamlPackage, yamlValue } from '../../util/yaml.js';
import type { CrdKind } from './resources.js';

/**
 * APIs charts commonly look for with `.Capabilities.APIVersions.Has`, as `group/version` and
 * `group/version/Kind` (charts test either form).
 */
const WELL_KNOWN_APIS: Record<string, readonly string[]> = {
  'monitoring.coreos.com/v1': ['Prometheus', 'PrometheusRule', 'ServiceMonitor', 'PodMonitor', 'Probe', 'Alertmanager', 'ThanosRuler'],
  'monitoring.coreos.com/v1alpha1': ['AlertmanagerConfig', 'ScrapeConfig', 'PrometheusAgent'],
  'route.openshift.io/v1': ['Route'],
  'image.openshift.io/v1': ['ImageStream'],
  'apps.openshift.io/v1': ['DeploymentConfig'],
  'build.openshift.io/v1': ['BuildConfig'],
  'security.openshift.io/v1': ['SecurityContextConstraints'],
  'console.openshift.io/v1': ['ConsoleLink', 'ConsolePlugin', 'ConsoleQuickStart', 'ConsoleYAMLSample'],
  'cert-manager.io/v1': ['Certificate', 'Issuer', 'ClusterIssuer'],
  'networking.istio.io/v1beta1': ['VirtualService', 'Gateway', 'DestinationRule', 'ServiceEntry'],
  'networking.istio.io/v1': ['VirtualService', 'Gateway', 'DestinationRule', 'ServiceEntry'],
  'security.istio.io/v1beta1': ['PeerAuthentication', 'AuthorizationPolicy'],
  'gateway.networking.k8s.io/v1': ['Gateway', 'GatewayClass', 'HTTPRoute', 'GRPCRoute'],
  'gateway.networking.k8s.io/v1beta1': ['Gateway', 'GatewayClass', 'HTTPRoute', 'ReferenceGrant'],
  'autoscaling.k8s.io/v1': ['VerticalPodAutoscaler'],
  'keda.sh/v1alpha1': ['ScaledObject', 'TriggerAuthentication'],
  'snapshot.storage.k8s.io/v1': ['VolumeSnapshot', 'VolumeSnapshotClass'],
  'external-secrets.io/v1beta1': ['ExternalSecret', 'SecretStore'],
  'grafana.integreatly.org/v1beta1': ['Grafana', 'GrafanaDashboard', 'GrafanaDatasource', 'GrafanaFolder'],
  'integreatly.org/v1alpha1': ['Grafana', 'GrafanaDashboard', 'GrafanaDataSource'],
};

/** `group/version` and `group/version/Kind` entries for the APIs above, the chart's CRDs and `extra`. */
export function generousApiVersions(chartCrds: Iterable<CrdKind>, extra: readonly string[] = []): string[] {
  const out = new Set<string>();
  for (const [gv, kinds] of Object.entries(WELL_KNOWN_APIS)) {
    out.add(gv);
    for (const k of kinds) out.add(`${gv}/${k}`);
  }
  for (const c of chartCrds) {
    for (const v of c.versions) {
      out.add(`${c.group}/${v}`);
      out.add(`${c.group}/${v}/${c.kind}`);
    }
  }
  for (const e of extra) out.add(e);
  return [...out].sort();
}

/** Kubernetes versions to render for, newest first (Helm's own default is old: v1.20). */
const KUBE_VERSIONS = Array.from({ length: 19 }, (_, i) => `1.${34 - i}.0`);

/**
 * The newest Kubernetes version the chart's `kubeVersion` allows (Helm refuses to render a
 * chart for a version outside it); the newest we know when the chart names none, undefined
 * when none fits (Helm then says why).
 */
export function kubeVersionFor(constraint: string | undefined): string | undefined {
  if (constraint === undefined || constraint.trim() === '') return `v${KUBE_VERSIONS[0] ?? '1.34.0'}`;
  // Helm's constraints (Masterminds) allow `v` prefixes and commas between comparators.
  const range = semver.validRange(constraint.replace(/,/g, ' ').replace(/\bv(?=\d)/g, ''), { includePrerelease: true, loose: true });
  if (range === null) return undefined;
  const hit = KUBE_VERSIONS.find((v) => semver.satisfies(v, range, { includePrerelease: true }));
  return hit === undefined ? undefined : `v${hit}`;
}

/** One object a render produced. */
export interface RenderedObject {
  object: KubeObject;
  /** The chart (path as `inspect` names it) whose render produced it. */
  chart: string;
}

/**
 * Kubernetes objects in Helm's output (`---` documents; comments and empty documents skipped);
 * an alias bomb is a YamlAliasError naming `where` and the document.
 */
export function objectsOf(text: string, where = 'rendered manifest'): KubeObject[] {
  const out: KubeObject[] = [];
  for (const [i, doc] of yamlPackage().parseAllDocuments(text).entries()) {
    const v = yamlValue(doc, `${where}: document ${i + 1}`);
    if (isKubeObject(v)) out.push(v);
    else if (typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Record<string, unknown>).kind === 'string') {
      // Helm allows a template without metadata; give it an empty one.
      const o = v as Record<string, unknown>;
      if (typeof o.apiVersion === 'string') out.push({ ...o, apiVersion: o.apiVersion, kind: String(o.kind), metadata: {} });
    }
  }
  return out;
}

/** The kinds CRDs declare (`crds/` files or rendered CustomResourceDefinitions). */
export function crdKindsOf(objects: readonly KubeObject[]): CrdKind[] {
  const out: CrdKind[] = [];
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition' || !o.apiVersion.startsWith('apiextensions.k8s.io/')) continue;
    const spec = typeof o.spec === 'object' && o.spec !== null ? (o.spec as Record<string, unknown>) : {};
    const names = typeof spec.names === 'object' && spec.names !== null ? (spec.names as Record<string, unknown>) : {};
    const group = typeof spec.group === 'string' ? spec.group : '';
    const kind = typeof names.kind === 'string' ? names.kind : '';
    if (group === '' || kind === '') continue;
    const versions = Array.isArray(spec.versions)
      ? spec.versions.map((v: unknown) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>).name : undefined)).filter((v): v is string => typeof v === 'string')
      : typeof spec.version === 'string'
        ? [spec.version]
        : [];
    out.push({ group, kind, plural: typeof names.plural === 'string' ? names.plural : kind.toLowerCase(), namespaced: spec.scope !== 'Cluster', versions });
  }
  return out;
}

export interface RenderTarget {
  /** The chart to render (directory or archive). */
  chart: string;
  /** Render one subchart on its own (dependency names or aliases, `a/b`). */
  subchart?: string;
  /** Names the chart in results (`pelorus/charts/exporters`). */
  name: string;
}

export interface ChartRenders {
  /** Objects of the generous render (RBAC, images). */
  generous: RenderedObject[];
  /** Objects of the plain render (dependencies). */
  plain: RenderedObject[];
  /** Kinds declared by CRDs in crds/ or in the templates. */
  crds: CrdKind[];
  /** Helm's output of the plain render, by target name (to check a packaged chart against). */
  plainOutput: Map<string, string>;
}

export interface RenderOptions {
  releaseName: string;
  namespace: string;
  kubeVersion?: string;
  /** More `--api-versions` for the generous render. */
  apiVersions?: readonly string[];
}

/** The request of the plain render, but for the chart. */
export function plainRequest(o: RenderOptions): Omit<TemplateRequest, 'chart'> {
  return { releaseName: o.releaseName, namespace: o.namespace, skipTests: true, ...(o.kubeVersion === undefined ? {} : { kubeVersion: o.kubeVersion }) };
}

/** Renders each target twice (see the file comment), hooks included and tests left out. */
export async function templateCharts(engine: HelmEngine, targets: readonly RenderTarget[], o: RenderOptions): Promise<ChartRenders> {
  const out: ChartRenders = { generous: [], plain: [], crds: [], plainOutput: new Map() };
  for (const t of targets) {
    const base = { ...plainRequest(o), chart: t.chart, ...(t.subchart === undefined ? {} : { subchart: t.subchart }) };
    const plain = await engine.render(base);
    out.plainOutput.set(t.name, plain.output);
    const plainObjects = objectsOf(plain.output, `${t.name}: rendered manifest`);
    const crds = crdKindsOf([...plain.crds.flatMap((f) => objectsOf(f.data, `${t.name}: ${f.name}`)), ...plainObjects]);
    const generous = await engine.render({ ...base, apiVersions: generousApiVersions(crds, o.apiVersions) });
    const generousObjects = objectsOf(generous.output, `${t.name}: rendered manifest (with the common APIs)`);
    const allCrds = [...crds, ...crdKindsOf([...generous.crds.flatMap((f) => objectsOf(f.data, `${t.name}: ${f.name}`)), ...generousObjects])];
    out.plain.push(...plainObjects.map((object) => ({ object, chart: t.name })));
    out.generous.push(...generousObjects.map((object) => ({ object, chart: t.name })));
    for (const c of allCrds) if (!out.crds.some((x) => x.group === c.group && x.kind === c.kind)) out.crds.push(c);
  }
  return out;
}

/** `group/Kind` of an object, the key the CRD map and the resource table use. */
export function groupKindOf(o: Pick<KubeObject, 'apiVersion' | 'kind'>): string {
  const { group, kind } = gvkOf(o);
  return `${group}/${kind}`;
}
