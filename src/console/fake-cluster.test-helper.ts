/**
 * A small cluster for the console's unit tests, on the applier's FakeCluster: an OLM operator
 * (ClusterExtension `ext`, package `p`, its BundleDeployment and release with a Widget CRD and a
 * ConfigMap) and a Helm operator (HelmOperator `charts` serving Nginx, two Nginx releases), each
 * with custom resources in several states. `forbid` turns chosen requests into RBAC's 403, and
 * SelfSubjectAccessReviews answer by the same rule.
 */
import { stringify } from 'yaml';
import { ANNOTATION_BUNDLE_VERSION, API_VERSION, LABEL_NEEDED_BY_PREFIX, LABEL_OWNER_KIND, LABEL_OWNER_NAME, LABEL_PACKAGE, type BundleDeployment, type ClusterExtension, type HelmOperator } from '../api/types.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { toManifest } from '../apply/release.js';
import { ReleaseStore } from '../apply/release-store.js';
import type { KubeClient } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';

export type Verb = 'get' | 'list' | 'create' | 'patch' | 'delete';
export type Forbid = (verb: Verb, kind: string, namespace: string | undefined) => boolean;

const T = '2026-01-01T00:00:00Z';
const ready = (type: string, status: string, reason = '', message = ''): Record<string, string> => ({ type, status, reason, message, lastTransitionTime: T });

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
  client: KubeClient;
  /** Calls made, as `verb Kind name`. */
  calls: string[];
}

function forbidden(verb: Verb, kind: string, name: string): KubeApiError {
  const resource = `${kind.toLowerCase()}s`;
  return new KubeApiError(403, 'Forbidden', `${resource} "${name}" is forbidden: User "system:serviceaccount:v:viewer" cannot ${verb} resource "${resource}" in API group "" in the namespace "x"`);
}

/** RFC 7386 merge patch: objects merge, null removes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) Reflect.deleteProperty(out, k);
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export async function consoleCluster(forbid: Forbid = () => false): Promise<ConsoleCluster> {
  const cluster = new FakeCluster();
  const base = cluster.client();
  const calls: string[] = [];
  const ce: ClusterExtension = {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: 'ext', generation: 2 },
    spec: { namespace: 'ns', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'p' } } },
    status: {
      observedGeneration: 2,
      conditions: [ready('Installed', 'True', 'Succeeded', 'installed p.v1.0.0') as never, ready('Progressing', 'False', 'Succeeded', '') as never],
      install: { bundle: { name: 'p.v1.0.0', version: '1.0.0', package: 'p', image: 'img', catalog: 'c' }, bundleDeployment: 'ext-p', namespace: 'ns' },
    },
  };
  const bd: BundleDeployment = {
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name: 'ext-p', labels: { [LABEL_PACKAGE]: 'p', [LABEL_OWNER_KIND]: 'ClusterExtension', [LABEL_OWNER_NAME]: 'ext', [`${LABEL_NEEDED_BY_PREFIX}ext`]: 'requested' }, annotations: { [ANNOTATION_BUNDLE_VERSION]: '1.0.0' } },
    spec: { source: { type: 'image', image: { ref: 'img' } }, format: 'registry+v1', installNamespace: 'ns' },
    status: { conditions: [ready('Installed', 'True') as never], appliedObjects: [{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com' }, { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: 'ns' }] },
  };
  const hop: HelmOperator = {
    apiVersion: API_VERSION,
    kind: 'HelmOperator',
    metadata: { name: 'charts', generation: 1 },
    spec: { chart: { oci: { ref: 'oci://r/nginx' } }, kinds: [{ group: 'charts.example.com', version: 'v1', kind: 'Nginx' }] },
    status: { observedGeneration: 1, conditions: [ready('Ready', 'True', 'Serving', 'serving Nginx with nginx 1.2.3') as never], chart: { name: 'nginx', version: '1.2.3', digest: 'd' }, kinds: [{ kind: 'Nginx', crd: 'nginxes.charts.example.com', schema: 'values.schema.json' }] },
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

  const check = (verb: Verb, kind: string, namespace: string | undefined, name: string): void => {
    calls.push(`${verb} ${kind} ${name}`.trim());
    if (forbid(verb, kind, namespace)) throw forbidden(verb, kind, name);
  };
  const client = {
    ...base,
    close: () => undefined,
    get: async (ref: ObjectRef): Promise<KubeObject> => {
      check('get', ref.kind, ref.namespace, ref.name);
      const o = await base.find(ref);
      if (o === undefined) throw new KubeApiError(404, 'NotFound', `${ref.kind.toLowerCase()}s "${ref.name}" not found`);
      return o;
    },
    find: async (ref: ObjectRef): Promise<KubeObject | undefined> => {
      check('get', ref.kind, ref.namespace, ref.name);
      return base.find(ref);
    },
    list: async (apiVersion: string, kind: string, opts: { namespace?: string; labelSelector?: string } = {}) => {
      check('list', kind, opts.namespace, '');
      return base.list(apiVersion, kind, opts);
    },
    create: async (obj: KubeObject): Promise<KubeObject> => {
      if (obj.kind === 'SelfSubjectAccessReview') {
        const a = (obj.spec as { resourceAttributes: { verb: Verb; group: string; resource: string; namespace?: string } }).resourceAttributes;
        const kind = { widgets: 'Widget', nginxes: 'Nginx' }[a.resource] ?? a.resource;
        return { ...obj, status: { allowed: !forbid(a.verb, kind, a.namespace) } };
      }
      check('create', obj.kind, obj.metadata.namespace, obj.metadata.name ?? '');
      return base.create(obj);
    },
    patch: async (ref: ObjectRef, patch: unknown): Promise<KubeObject> => {
      check('patch', ref.kind, ref.namespace, ref.name);
      const o = await base.find(ref);
      if (o === undefined) throw new KubeApiError(404, 'NotFound', `${ref.kind.toLowerCase()}s "${ref.name}" not found`);
      const patched = mergePatch(o, patch) as KubeObject;
      await base.update(patched);
      return patched;
    },
    delete: async (ref: ObjectRef): Promise<boolean> => {
      check('delete', ref.kind, ref.namespace, ref.name);
      return base.delete(ref);
    },
  } as unknown as KubeClient;
  return { cluster, client, calls };
}
