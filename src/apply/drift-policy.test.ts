import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { appliesField, driftSpecProblems, handoverObject, ignoredPointers, parsePointer, valueAt, withoutPointers } from './drift-policy.js';

const deployment = (labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'op', namespace: 'ops', labels },
  spec: { replicas: 1, template: { spec: { containers: [{ name: 'manager', image: 'op:1', args: ['--a'] }, { name: 'proxy', image: 'proxy:1' }] } } },
});

describe('parsePointer (RFC 6901)', () => {
  it('splits and unescapes; refuses what is not a pointer', () => {
    assert.deepEqual(parsePointer('/spec/replicas'), ['spec', 'replicas']);
    assert.deepEqual(parsePointer('/metadata/annotations/cert-manager.io~1inject-ca-from'), ['metadata', 'annotations', 'cert-manager.io/inject-ca-from']);
    assert.deepEqual(parsePointer('/a~0b'), ['a~b']);
    assert.equal(parsePointer('spec/replicas'), undefined);
    assert.equal(parsePointer('/a~2'), undefined);
  });
});

describe('driftSpecProblems: each problem names its field', () => {
  it('accepts a good spec and none', () => {
    assert.deepEqual(driftSpecProblems(undefined, 'spec.drift'), []);
    assert.deepEqual(driftSpecProblems({ mode: 'Warn', ignore: [{ paths: ['/spec/replicas'], target: { group: 'apps', kind: 'Deployment', labelSelector: { matchLabels: { app: 'op' } } } }] }, 'spec.drift'), []);
  });

  it('refuses a bad mode, a missing or bad pointer and a malformed target', () => {
    assert.deepEqual(driftSpecProblems({ mode: 'Enabled', ignore: [{ paths: [] }, { paths: ['spec.replicas'] }, { paths: ['/x'], target: { kind: 3, labelSelector: { matchLabels: { a: 1 } } } }] }, 'spec.drift'), [
      'spec.drift.mode: must be one of Repair, Warn, Off (got "Enabled")',
      'spec.drift.ignore[0].paths: at least one JSON pointer is required',
      'spec.drift.ignore[1].paths[0]: "spec.replicas" is not a JSON pointer (RFC 6901: starts with "/", "~" only as ~0 or ~1)',
      'spec.drift.ignore[2].target.kind: must be a string',
      'spec.drift.ignore[2].target.labelSelector: must be {matchLabels: {key: value}}',
    ]);
    assert.deepEqual(driftSpecProblems('Warn', 'spec.drift'), ['spec.drift: must be an object']);
  });

  it('refuses to ignore the object’s identity or the marks that say it is the release’s', () => {
    const paths = ['/metadata/name', '/kind', '/metadata/labels', '/metadata/labels/binnacle.dev~1owner-name', '/metadata/annotations/meta.helm.sh~1release-name', '/metadata/ownerReferences/0', '/metadata/labels/app'];
    const problems = driftSpecProblems({ ignore: [{ paths }] }, 'spec.drift');
    assert.equal(problems.length, 6, problems.join('\n'));
    assert.match(problems[3] ?? '', /^spec\.drift\.ignore\[0\]\.paths\[3\]: \/metadata\/labels\/binnacle.dev~1owner-name cannot be ignored: it would include the ownership labels/);
  });
});

describe('ignoredPointers: targets', () => {
  it('a rule applies to the objects its target names', () => {
    const spec = {
      ignore: [
        { paths: ['/spec/replicas'], target: { kind: 'Deployment', labelSelector: { matchLabels: { scaled: 'yes' } } } },
        { paths: ['/data/x'], target: { kind: 'ConfigMap' } },
        { paths: ['/spec/paused'], target: { group: 'batch' } },
        { paths: ['/metadata/annotations/a', '/metadata/name'] },
      ],
    };
    assert.deepEqual(ignoredPointers(deployment({ scaled: 'yes' }), spec), [['spec', 'replicas'], ['metadata', 'annotations', 'a']]);
    assert.deepEqual(ignoredPointers(deployment(), spec), [['metadata', 'annotations', 'a']]);
    assert.deepEqual(ignoredPointers(deployment(), { ignore: [{ paths: ['/spec/replicas'], target: { name: 'op', namespace: 'other' } }] }), []);
    assert.deepEqual(ignoredPointers(deployment(), undefined), []);
  });
});

describe('withoutPointers and valueAt', () => {
  it('removes map fields and list items, leaves the rest and the original untouched', () => {
    const d = deployment();
    const out = withoutPointers(d, [['spec', 'replicas'], ['spec', 'template', 'spec', 'containers', '1'], ['spec', 'template', 'spec', 'containers', '0', 'args'], ['spec', 'nothing', 'here']]);
    assert.deepEqual(out.spec, { template: { spec: { containers: [{ name: 'manager', image: 'op:1' }] } } });
    assert.equal(valueAt(d, ['spec', 'replicas']), 1);
    assert.equal(valueAt(d, ['spec', 'template', 'spec', 'containers', '1', 'image']), 'proxy:1');
    assert.equal(valueAt(d, ['spec', 'template', 'spec', 'containers', '7']), undefined);
    assert.equal(valueAt(d, ['__proto__']), undefined);
  });
});

describe('field ownership and handover', () => {
  const live: KubeObject = {
    ...deployment(),
    metadata: {
      name: 'op',
      namespace: 'ops',
      managedFields: [
        { manager: 'binnacle', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"manager"}': { 'f:image': {}, 'f:args': {} } } } } } } },
        { manager: 'kube-controller-manager', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"proxy"}': { 'f:image': {} } } } } } } },
      ],
    },
  };

  it('appliesField follows maps, keyed list items and atomic lists, only for the manager’s applies', () => {
    assert.equal(appliesField(live, 'binnacle', ['spec', 'replicas']), true);
    assert.equal(appliesField(live, 'binnacle', ['spec', 'template', 'spec', 'containers', '0', 'image']), true);
    assert.equal(appliesField(live, 'binnacle', ['spec', 'template', 'spec', 'containers', '0', 'args', '0']), true);
    assert.equal(appliesField(live, 'binnacle', ['spec', 'template', 'spec', 'containers', '1', 'image']), false);
    assert.equal(appliesField(live, 'kube-controller-manager', ['spec', 'template', 'spec', 'containers', '1', 'image']), false, 'an Update is not an applied configuration');
    assert.equal(appliesField(live, 'binnacle', ['spec', 'paused']), false);
  });

  it('handoverObject sets only the field, with the object’s identity and the list item’s name', () => {
    assert.deepEqual(handoverObject(live, ['spec', 'replicas']), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'op', namespace: 'ops' }, spec: { replicas: 1 } });
    assert.deepEqual(handoverObject(live, ['spec', 'template', 'spec', 'containers', '0', 'image'])?.spec, { template: { spec: { containers: [{ name: 'manager', image: 'op:1' }] } } });
    const annotated: KubeObject = { ...live, metadata: { ...live.metadata, annotations: { a: '1', b: '2' } } };
    assert.deepEqual(handoverObject(annotated, ['metadata', 'annotations', 'a'])?.metadata, { annotations: { a: '1' }, name: 'op', namespace: 'ops' });
    assert.equal(handoverObject(live, ['spec', 'paused']), undefined);
  });
});
