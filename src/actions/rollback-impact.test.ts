import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { customResourcesImpact, describeRollback, fieldsLeftBehind, fieldsSet } from './rollback-impact.js';

/** A CRD whose spec has `props`; `open` keeps unknown fields at spec, as a chart's open values do. */
function crd(props: Record<string, unknown>, open: boolean): KubeObject {
  const spec = { type: 'object', properties: props, ...(open ? { 'x-kubernetes-preserve-unknown-fields': true } : {}) };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'beacons.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { kind: 'Beacon', plural: 'beacons' }, versions: [{ name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }] },
  };
}

const V1 = { message: { type: 'string' }, service: { type: 'object', properties: { port: { type: 'integer' } } }, hosts: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } } };
const V2 = { ...V1, greeting: { type: 'string' }, service: { type: 'object', properties: { port: { type: 'integer' }, type: { type: 'string' } } }, hosts: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, tls: { type: 'boolean' } } } } };

function cr(namespace: string, name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'example.com/v1alpha1', kind: 'Beacon', metadata: { namespace, name }, spec };
}

describe('rollback impact on custom resources', () => {
  it('finds the fields only the live CRD declares: kept where the older schema keeps unknown fields, pruned where it does not', () => {
    assert.deepEqual(fieldsLeftBehind(crd(V2, true), crd(V1, true)), [
      { path: '.spec.service.type', fate: 'pruned' },
      { path: '.spec.hosts[*].tls', fate: 'pruned' },
      { path: '.spec.greeting', fate: 'kept' },
    ]);
    assert.deepEqual(fieldsLeftBehind(crd(V2, false), crd(V1, false)).find((f) => f.path === '.spec.greeting'), { path: '.spec.greeting', fate: 'pruned' });
    assert.deepEqual(fieldsLeftBehind(crd(V1, true), crd(V2, true)), [], 'going forward leaves nothing behind');
  });

  it('tells which fields a resource sets, through lists too', () => {
    const fields = fieldsLeftBehind(crd(V2, true), crd(V1, true));
    assert.deepEqual(fieldsSet(cr('a', 'x', { greeting: 'hi', hosts: [{ name: 'h' }, { name: 'i', tls: true }] }), fields), ['.spec.hosts[*].tls', '.spec.greeting']);
    assert.deepEqual(fieldsSet(cr('a', 'y', { message: 'm', service: { port: 1 } }), fields), []);
  });

  it('lists the resources written against the newer version, in every namespace, and says what happens to them', async () => {
    const live = crd({ ...V1, greeting: { type: 'string' } }, true);
    const cluster = new FakeCluster({ objects: [live, cr('team-a', 'one', { greeting: 'hi' }), cr('team-b', 'two', { message: 'plain' }), cr('team-b', 'three', { greeting: 'yo' })] });
    const client = cluster.client();
    const impact = await customResourcesImpact(client, live, crd(V1, true));
    assert.deepEqual(cluster.log.map((r) => `${r.verb} ${r.apiVersion} ${r.kind} ${r.namespace}`), ['list example.com/v1alpha1 Beacon '], 'one list, across namespaces');
    assert.deepEqual(impact?.resources, [
      { namespace: 'team-a', name: 'one', fields: ['.spec.greeting'] },
      { namespace: 'team-b', name: 'three', fields: ['.spec.greeting'] },
    ]);
    const text = describeRollback('1.1.0', '1.0.0', impact === undefined ? [] : [impact]).join('\n');
    assert.match(text, /Beacon \(beacons\.example\.com\): 1\.0\.0 does not declare spec\.greeting, which 1\.1\.0 added; 2 custom resources written against 1\.1\.0 set them: team-a\/one \(spec\.greeting\), team-b\/three \(spec\.greeting\)/);
    assert.match(text, /spec\.greeting: kept in storage .* 1\.0\.0 does not act on them/);
    assert.doesNotMatch(text, /refuses/);
  });

  it('says a rollback that would prune values is refused', () => {
    const text = describeRollback('2.0.0', '1.0.0', [{ crd: 'beacons.example.com', kind: 'Beacon', fields: [{ path: '.spec.service.type', fate: 'pruned' }], resources: [] }]).join('\n');
    assert.match(text, /no custom resource sets them/);
    assert.match(text, /spec\.service\.type: 1\.0\.0's schema would prune them .* CRD upgrade safety refuses this rollback \(crd\.field-removed\)/);
  });

  it('no fields left behind: nothing is listed', async () => {
    const cluster = new FakeCluster({ objects: [crd(V1, true), cr('team-a', 'one', { message: 'm' })] });
    assert.equal(await customResourcesImpact(cluster.client(), crd(V1, true), crd(V1, true)), undefined);
    assert.deepEqual(cluster.log, [], 'the cluster was not asked');
  });
});
