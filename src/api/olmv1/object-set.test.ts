import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../kube/types.js';
import { goJson } from '../../util/canonical-json.js';
import { effectiveCollisionProtection, observedPhasesChanged, phaseDigest, probeObject, type ProgressionProbe } from './object-set.js';

const cm = (extra: Partial<KubeObject> = {}, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', labels, generation: 2 }, data: { foo: 'foo' }, ...extra });
const byKind = (group: string, kind: string, ...assertions: ProgressionProbe['assertions'] & object): ProgressionProbe => ({ selector: { type: 'GroupKind', groupKind: { group, kind } }, assertions });

test('FieldValue: equal, different (boxcutter\'s message, values as JSON), missing, and a path through a non-object', () => {
  const probe = (fieldPath: string, value: string): ProgressionProbe[] => [byKind('', 'ConfigMap', { type: 'FieldValue', fieldValue: { fieldPath, value } })];
  assert.deepEqual(probeObject(probe('data.foo', 'foo'), cm()), { status: 'True', messages: ['value at key "data.foo" == "foo"'] });
  assert.deepEqual(probeObject(probe('data.foo', 'bar'), cm()), { status: 'False', messages: ['value at key "data.foo" != "bar"; expected: "bar" got: "foo"'] });
  assert.deepEqual(probeObject(probe('.data.gone.', 'x'), cm()), { status: 'False', messages: ['missing key: ".data.gone."'] });
  assert.deepEqual(probeObject(probe('data.foo.deeper', 'x'), cm()), { status: 'False', messages: ['error locating key "data.foo.deeper"; .data.foo.deeper accessor error: foo is of the type string, expected map[string]interface{}'] });
  assert.deepEqual(probeObject(probe('n.deeper', 'x'), cm({ n: 3 })).messages, ['error locating key "n.deeper"; .n.deeper accessor error: 3 is of the type int64, expected map[string]interface{}']);
  assert.deepEqual(probeObject(probe('gone.deeper', 'x'), cm({ gone: null })).messages, ['missing key: "gone.deeper"'], 'a null on the way is missing, as apimachinery reads it');
  assert.deepEqual(probeObject(probe('data', 'x'), cm()).messages, ['value at key "data" != "x"; expected: "x" got: {"foo":"foo"}']);
});

test('FieldsEqual and ConditionEqual say what boxcutter says', () => {
  const fe = [byKind('', 'ServiceAccount', { type: 'FieldsEqual', fieldsEqual: { fieldA: 'metadata.labels.foo', fieldB: 'metadata.labels.bar' } })];
  const sa = (labels: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 's', labels } });
  assert.deepEqual(probeObject(fe, sa({ foo: 'x', bar: 'x' })), { status: 'True', messages: ['"metadata.labels.foo" == "metadata.labels.bar"'] });
  assert.deepEqual(probeObject(fe, sa({ foo: 'x', bar: 'y' })), { status: 'False', messages: ['"metadata.labels.foo" != "metadata.labels.bar" expected: "x" got: "y"'] });
  assert.deepEqual(probeObject(fe, sa({ foo: 'x' })), { status: 'False', messages: ['"metadata.labels.bar" missing'] });

  const ready = [byKind('apps', 'Deployment', { type: 'ConditionEqual', conditionEqual: { type: 'Available', status: 'True' } })];
  const deploy = (status: unknown, generation = 1): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', generation }, status });
  assert.deepEqual(probeObject(ready, deploy({ conditions: [{ type: 'Available', status: 'True' }] })), { status: 'True', messages: ['.status.condition["Available"] is True'] });
  assert.deepEqual(probeObject(ready, deploy({ conditions: [{ type: 'Available', status: 'False' }] })), { status: 'False', messages: ['.status.condition["Available"] is False'] });
  assert.deepEqual(probeObject(ready, deploy({ conditions: [] })), { status: 'Unknown', messages: ['missing .status.condition["Available"]'] });
  assert.deepEqual(probeObject(ready, deploy({})), { status: 'Unknown', messages: ['missing .status.conditions'] });
  assert.deepEqual(probeObject(ready, deploy({ conditions: 'x' })), { status: 'Unknown', messages: ['malformed .status.conditions'] });
  assert.deepEqual(probeObject(ready, deploy({ conditions: [{ type: 'Available', status: 'True', observedGeneration: 1 }] }, 2)), { status: 'Unknown', messages: ['.status.condition["Available"] outdated'] });
  assert.deepEqual(probeObject(ready, deploy({ observedGeneration: 1, conditions: [{ type: 'Available', status: 'True' }] }, 2)), { status: 'Unknown', messages: ['.status outdated'] }, 'the status speaks for an older generation');
  assert.deepEqual(probeObject(ready, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', generation: 2 }, status: { observedGeneration: 1 } }), { status: 'Unknown', messages: ['.status outdated'] }, 'not picked, but its status is stale: not judged yet, as upstream');
});

test('selectors pick by group and kind or by labels (matchLabels and matchExpressions); an object no probe picks passes; Unknown outranks False', () => {
  const labelled: ProgressionProbe = { selector: { type: 'Label', label: { matchExpressions: [{ key: 'expkey', operator: 'In', values: ['yes'] }] } }, assertions: [{ type: 'FieldValue', fieldValue: { fieldPath: 'data.foo', value: 'bar' } }] };
  assert.equal(probeObject([labelled], cm({}, { expkey: 'no' })).status, 'True', 'not picked');
  assert.equal(probeObject([labelled], cm({}, { expkey: 'yes' })).status, 'False');
  assert.equal(probeObject([byKind('apps', 'ConfigMap', { type: 'FieldValue', fieldValue: { fieldPath: 'data.foo', value: 'bar' } })], cm()).status, 'True', 'another group');
  const both = [byKind('', 'ConfigMap', { type: 'FieldValue', fieldValue: { fieldPath: 'data.foo', value: 'bar' } }), byKind('', 'ConfigMap', { type: 'ConditionEqual', conditionEqual: { type: 'Ready', status: 'True' } })];
  assert.deepEqual(probeObject(both, cm()), { status: 'Unknown', messages: ['missing .status.conditions'] });
});

test("a phase's digest is operator-controller's: Go's json.Marshal of {name, objects} (keys in UTF-8 order, HTML-safe escapes, \\b and \\f), hashed", () => {
  // The object and the digest below from Go 1.26's encoding/json (a throwaway program: json.Unmarshal of this text, then
  // json.Marshal(map[string]any{"name": "phase-1", "objects": []any{obj}}) and sha256), as computePhaseDigest does.
  const raw = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","labels":{"b":"2","a":"1"}},"data":{"html":"<a href=\\"x&y\\">","nl":"line\\nnext\\ttab","uni":"é ü \\u2028 ☃","ctl":"\\u0001\\b\\f","\\uffff":"bmp-last","😀":"astral"},"n":{"int":3,"neg":-7,"float":1.5,"big":1e21,"small":0.0000001,"zero":0},"list":[true,false,null,"s"]}';
  const obj = JSON.parse(raw) as KubeObject;
  assert.equal(
    goJson({ name: 'phase-1', objects: [obj] }),
    '{"name":"phase-1","objects":[{"apiVersion":"v1","data":{"ctl":"\\u0001\\b\\f","html":"\\u003ca href=\\"x\\u0026y\\"\\u003e","nl":"line\\nnext\\ttab","uni":"é ü \\u2028 ☃","\uffff":"bmp-last","😀":"astral"},"kind":"ConfigMap","list":[true,false,null,"s"],"metadata":{"labels":{"a":"1","b":"2"},"name":"c","namespace":"ns"},"n":{"big":1e+21,"float":1.5,"int":3,"neg":-7,"small":1e-7,"zero":0}}]}',
  );
  assert.equal(phaseDigest('phase-1', [obj]), 'sha256:fdf6b0ee97cc4a520be2f556e5c9f167aa7aee40f170fd7b255ce4e589d583ab');
});

test('observed phases: the same digests pass; a changed one, or a different count, is named', () => {
  const a = [{ name: 'one', digest: 'sha256:1' }, { name: 'two', digest: 'sha256:2' }];
  assert.equal(observedPhasesChanged(a, a), undefined);
  assert.equal(
    observedPhasesChanged(a, [{ name: 'one', digest: 'sha256:1' }, { name: 'two', digest: 'sha256:9' }]),
    'resolved content of 1 phase(s) has changed: phase "two" (expected digest sha256:2, got sha256:9); a referenced object source may have been deleted and recreated with different content',
  );
  assert.equal(observedPhasesChanged(a, a.slice(0, 1)), 'number of phases has changed (expected 2 phases, got 1)');
});

test('collision protection: the innermost level set wins, Prevent when none is', () => {
  assert.equal(effectiveCollisionProtection(undefined, undefined, undefined), 'Prevent');
  assert.equal(effectiveCollisionProtection('None', undefined, undefined), 'None');
  assert.equal(effectiveCollisionProtection('None', 'IfNoController', undefined), 'IfNoController');
  assert.equal(effectiveCollisionProtection('None', 'IfNoController', 'Prevent'), 'Prevent');
});
