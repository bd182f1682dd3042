/**
 * A small cluster for the console's unit tests: fixtures on the one fake cluster
 * (kube/fake-cluster.test-helper.ts), read and written by a person. An OLM operator
 * (ClusterExtension `ext`, package `p`, its BundleDeployment and release with a Widget CRD and a
 * ConfigMap) and a Helm operator (HelmOperator `charts` serving Nginx, two Nginx releases), each
 * with custom resources in several states. `forbid` is the person's RBAC: the requests it names
 * are refused with the API server's 403, and SelfSubjectAccessReviews answer by the same rule.
 */
import { stringify } from 'yaml';
import { ANNOTATION_BUNDLE_VERSION, API_VERSION, LABEL_NEEDED_BY_PREFIX, LABEL_OWNER_KIND, LABEL_OWNER_NAME, LABEL_PACKAGE, type BundleDeployment, type ClusterExtension, type HelmOperator } from '../api/types.js';
import { ALL_CRDS } from '../api/crds.js';
import { FakeCluster, type FakeClient, type FakeRequest } from '../kube/fake-cluster.test-helper.js';
import { toManifest } from '../apply/release.js';
import { ReleaseStore } from '../apply/release-store.js';
import type { Condition, KubeObject } from '../kube/types.js';

/** RBAC's verb of a request: server-side apply and a status write are patches. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';
export type Forbid = (verb: Verb, kind: string, namespace: string | undefined) => boolean;

/** The person the console's tests run as. */
export const PERSON = 'system:serviceaccount:v:viewer';

const T = '2026-01-01T00:00:00Z';
const ready = (type: string, status: Condition['status'], reason = '', message = ''): Condition => ({ type, status, reason, message, lastTransitionTime: T });

export const widgetCrd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: { group: 'example.com', scope: 'Namespaced', names: { kind: 'Widget', plural: 'widgets' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
};

export const nginxCrd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'nginxes.charts.example.com', labels: { 'binnacle.dev/helm-operator': 'charts' } },
  spec: { group: 'charts.example.com', scope: 'Namespaced', names: { kind: 'Nginx', plural: 'nginxes' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
};

export const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'ns' }, data: { mode: 'fast' } };

/** The Helm chart's manifest as Helm leaves it: namespaced objects without a namespace. */
export const webManifest: KubeObject[] = [
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } },
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } },
];

export interface ConsoleCluster {
  cluster: FakeCluster;
  /** The person's client. */
  client: FakeClient;
  /** The person's requests so far (SelfSubjectAccessReviews aside: they ask, they do nothing), as `verb Kind name`. */
  calls: () => string[];
}

const rbacVerb = (req: FakeRequest): Verb | undefined => {
  if (req.verb === 'apply' || req.verb === 'status' || req.verb === 'dry-run') return 'patch';
  return req.verb === 'discover' ? undefined : req.verb;
};

export async function consoleCluster(forbid: Forbid = () => false): Promise<ConsoleCluster> {
  const cluster = new FakeCluster({ objects: ALL_CRDS });
  const base = cluster.client();
  const ce: ClusterExtension = {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: 'ext', generation: 2 },
    spec: { namespace: 'ns', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'p' } } },
    status: {
      observedGeneration: 2,
      conditions: [ready('Installed', 'True', 'Succeeded', 'installed p.v1.0.0'), ready('Progressing', 'False', 'Succeeded', '')],
      install: { bundle: { name: 'p.v1.0.0', version: '1.0.0', package: 'p', image: 'img', catalog: 'c' }, bundleDeployment: 'ext-p', namespace: 'ns' },
    },
  };
  const bd: BundleDeployment = {
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name: 'ext-p', labels: { [LABEL_PACKAGE]: 'p', [LABEL_OWNER_KIND]: 'ClusterExtension', [LABEL_OWNER_NAME]: 'ext', [`${LABEL_NEEDED_BY_PREFIX}ext`]: 'requested' }, annotations: { [ANNOTATION_BUNDLE_VERSION]: '1.0.0' } },
    spec: { source: { type: 'image', image: { ref: 'img' } }, format: 'registry+v1', installNamespace: 'ns' },
    status: { conditions: [ready('Installed', 'True')], appliedObjects: [{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com' }, { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: 'ns' }] },
  };
  const hop: HelmOperator = {
    apiVersion: API_VERSION,
    kind: 'HelmOperator',
    metadata: { name: 'charts', generation: 1 },
    spec: { chart: { oci: { ref: 'oci://r/nginx' } }, kinds: [{ group: 'charts.example.com', version: 'v1', kind: 'Nginx' }] },
    status: { observedGeneration: 1, conditions: [ready('Ready', 'True', 'Serving', 'serving Nginx with nginx 1.2.3')], chart: { name: 'nginx', version: '1.2.3', digest: 'd' }, kinds: [{ kind: 'Nginx', crd: 'nginxes.charts.example.com', schema: 'values.schema.json' }] },
  };
  for (const o of [ce, bd, hop, widgetCrd, nginxCrd, configMap]) cluster.put(o);
  cluster.put({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'ns' }, status: { conditions: [ready('Ready', 'True', 'Reconciled')] } });
  cluster.put({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2', namespace: 'ns' }, status: { conditions: [ready('Ready', 'False', 'Error', 'bad config'), ready('Degraded', 'True', 'BadConfig', 'bad config')] } });
  cluster.put({
    apiVersion: 'charts.example.com/v1',
    kind: 'Nginx',
    metadata: { name: 'web', namespace: 'apps', finalizers: ['helm.sdk.operatorframework.io/uninstall-release'] },
    spec: { replicas: 2 },
    status: { conditions: [ready('Deployed', 'True', 'InstallSuccessful', 'notes'), ready('ReleaseFailed', 'False', 'InstallError')], deployedRelease: { name: 'web', manifest: toManifest(webManifest) } },
  });
  cluster.put({ apiVersion: 'charts.example.com/v1', kind: 'Nginx', metadata: { name: 'broken', namespace: 'apps' }, status: { conditions: [ready('ReleaseFailed', 'True', 'InstallError', 'template: bad')] } });
  for (const o of webManifest) cluster.put({ ...o, metadata: { ...o.metadata, namespace: 'apps' } });

  const store = new ReleaseStore(base);
  const rel = { description: 'Install complete', firstDeployed: T, lastDeployed: T, config: {} };
  await store.create({ ...rel, name: 'ext-p', namespace: 'ns', version: 1, status: 'deployed', chart: { name: 'p', version: '1.0.0' }, manifest: toManifest([widgetCrd, { ...configMap, metadata: { name: 'cfg' } }]) }, { kind: 'BundleDeployment', name: 'ext-p' });
  await store.create({ ...rel, name: 'web', namespace: 'apps', version: 1, status: 'superseded', chart: { name: 'nginx', version: '1.2.2' }, manifest: stringify(webManifest[0]) }, { kind: 'Nginx', name: 'web' });
  await store.create({ ...rel, name: 'web', namespace: 'apps', version: 2, status: 'deployed', chart: { name: 'nginx', version: '1.2.3' }, manifest: toManifest(webManifest) }, { kind: 'Nginx', name: 'web' });

  // The person's RBAC: what `forbid` names is refused them (and reviewed as refused); everyone else may do anything.
  cluster.authorize = (req) => {
    const verb = rbacVerb(req);
    return req.identity !== PERSON || verb === undefined || !forbid(verb, req.kind, req.namespace === '' ? undefined : req.namespace);
  };
  const calls = (): string[] => cluster.log.filter((r) => r.identity === PERSON && r.kind !== 'SelfSubjectAccessReview').map((r) => `${r.verb} ${r.kind} ${r.name}`.trim());
  return { cluster, client: cluster.client({ user: PERSON }), calls };
}
