import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BinnacleError } from '../util/errors.js';
import { deleteOrder, parseRecord, planPrune, recordConfigMap, RECORD_LABEL, RECORD_NAME, type InstallRecord, type RecordedObject } from './record.js';

const NS = 'binnacle-system';
const obj = (kind: string, name: string, namespace?: string, apiVersion = 'v1'): RecordedObject => ({ apiVersion, kind, name, ...(namespace === undefined ? {} : { namespace }) });
const record = (objects: RecordedObject[], extra: Partial<InstallRecord> = {}): InstallRecord => ({ namespace: NS, image: 'example.com/binnacle@sha256:00', phase: 'installed', objects, prune: [], ...extra });
const names = (xs: readonly RecordedObject[]): string[] => xs.map((x) => `${x.kind} ${x.namespace === undefined ? '' : `${x.namespace}/`}${x.name}`);

const base = [
  obj('Namespace', NS),
  obj('CustomResourceDefinition', 'clusterextensions.binnacle.dev', undefined, 'apiextensions.k8s.io/v1'),
  obj('ServiceAccount', 'binnacle-manager', NS),
  obj('ClusterRole', 'binnacle-manager', undefined, 'rbac.authorization.k8s.io/v1'),
  obj('Deployment', 'binnacle-manager', NS, 'apps/v1'),
];

test('a record survives its ConfigMap: version, image, phase, objects and what is left to prune', () => {
  const r = record(base, { version: '0.0.1', prune: [obj('ClusterRole', 'old', undefined, 'rbac.authorization.k8s.io/v1')] });
  const cm = recordConfigMap(r);
  assert.equal(cm.metadata.name, RECORD_NAME);
  assert.equal(cm.metadata.namespace, NS);
  assert.equal(cm.metadata.labels?.[RECORD_LABEL], 'true');
  assert.equal(cm.metadata.labels?.['app.kubernetes.io/part-of'], 'binnacle');
  assert.deepEqual(parseRecord(cm), r);
  const plain = record(base);
  const noVersion = recordConfigMap(plain);
  assert.equal((noVersion.data as Record<string, string>).version, undefined, 'no version key for a binary\'s own manifests');
  assert.deepEqual(parseRecord(noVersion), plain);
});

test('a damaged record is an error naming the ConfigMap, every problem and what to do', () => {
  const cm = recordConfigMap(record(base));
  const data = cm.data as Record<string, string>;
  const broken = { ...cm, data: { ...data, phase: 'done', image: '', objects: `${data.objects ?? ''}{"kind":"Role"}\nnot json\n` } };
  assert.throws(
    () => parseRecord(broken),
    (err: unknown) => {
      assert.ok(err instanceof BinnacleError);
      assert.equal(err.code, 'SELF_RECORD_INVALID');
      assert.match(err.message, /ConfigMap binnacle-system\/binnacle-install-record is not a readable install record/);
      assert.match(err.message, /data\.image/);
      assert.match(err.message, /data\.phase.*"done"/);
      assert.match(err.message, /line 6: expected \{"apiVersion","kind","name"/);
      assert.match(err.message, /line 7 is not JSON/);
      assert.match(err.message, /kubectl delete configmap -n binnacle-system binnacle-install-record/);
      return true;
    },
  );
});

test('planPrune: what the earlier set had and the next lacks, in the order to delete, each once', () => {
  const older = record([...base, obj('ClusterRole', 'binnacle-legacy', undefined, 'rbac.authorization.k8s.io/v1'), obj('CustomResourceDefinition', 'legacies.binnacle.dev', undefined, 'apiextensions.k8s.io/v1'), obj('Service', 'old-metrics', NS)], {
    prune: [obj('Role', 'ancient', NS, 'rbac.authorization.k8s.io/v1'), obj('Service', 'old-metrics', NS)],
  });
  assert.deepEqual(names(planPrune([older], base, NS)), ['Service binnacle-system/old-metrics', 'Role binnacle-system/ancient', 'ClusterRole binnacle-legacy', 'CustomResourceDefinition legacies.binnacle.dev']);
  assert.deepEqual(planPrune([record(base)], base, NS), [], 'the same set prunes nothing');
  assert.deepEqual(planPrune([], base, NS), [], 'no record (an install older than records) prunes nothing');
});

test('planPrune matches objects by group, kind, namespace and name, not API version', () => {
  const older = record([obj('Namespace', NS), obj('CustomResourceDefinition', 'x.binnacle.dev', undefined, 'apiextensions.k8s.io/v1beta1'), obj('Role', 'r', NS, 'rbac.authorization.k8s.io/v1beta1')]);
  const next = [obj('Namespace', NS), obj('CustomResourceDefinition', 'x.binnacle.dev', undefined, 'apiextensions.k8s.io/v1'), obj('Role', 'r', 'elsewhere', 'rbac.authorization.k8s.io/v1')];
  assert.deepEqual(names(planPrune([older], next, NS)), ['Role binnacle-system/r'], 'the Role in another namespace is another object');
});

test('planPrune never prunes the target namespace nor a record; a namespace the installation moved from goes last', () => {
  const there = record([obj('Namespace', 'old-ns'), obj('ServiceAccount', 'binnacle-manager', 'old-ns'), obj('ConfigMap', RECORD_NAME, 'old-ns')], { namespace: 'old-ns' });
  const here = record([obj('Namespace', NS), obj('Deployment', 'binnacle-manager', NS, 'apps/v1')]);
  const next = [obj('ServiceAccount', 'binnacle-manager', NS)];
  assert.deepEqual(names(planPrune([here, there], next, NS)), ['Deployment binnacle-system/binnacle-manager', 'ServiceAccount old-ns/binnacle-manager', 'Namespace old-ns']);
});

test('deleteOrder: the manager first, RBAC after what uses it, CRDs late, namespaces last; stable otherwise', () => {
  const xs = [obj('Namespace', 'n'), obj('CustomResourceDefinition', 'c'), obj('ClusterRole', 'cr'), obj('Widget', 'w'), obj('Service', 's1', 'n'), obj('Deployment', 'd', 'n'), obj('Service', 's2', 'n')];
  assert.deepEqual(
    deleteOrder(xs).map((x) => x.name),
    ['d', 's1', 's2', 'w', 'cr', 'c', 'n'],
  );
});
