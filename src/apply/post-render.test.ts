import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PostRenderer } from '../api/types.js';
import type { KubeObject } from '../kube/types.js';
import { postRender } from './post-render.js';

const deployment = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'team-a', labels },
  spec: { replicas: 1, template: { spec: { containers: [{ name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] }] } } },
});
const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'team-a', labels: {} }, spec: { ports: [{ port: 80 }] } };
const patches = (...ps: { patch: string; target?: Record<string, string> }[]): PostRenderer[] => [{ kustomize: { patches: ps } }];

test('a JSON Patch applies to every object its target selects (kind, name, group, version, namespace, labels), in order, and leaves the input as it was', () => {
  const objects = [deployment('web', { tier: 'front' }), deployment('db', { tier: 'back' }), service];
  const ops = `- op: add\n  path: /metadata/annotations\n  value: {patched: "yes"}\n- op: replace\n  path: /spec/replicas\n  value: 3\n- op: add\n  path: /spec/template/spec/containers/0/env/-\n  value: {name: B, value: "2"}\n`;
  const out = postRender(objects, patches({ patch: ops, target: { kind: 'Deployment', labelSelector: 'tier=front' } }));
  const web = out[0] as KubeObject & { spec: { replicas: number; template: { spec: { containers: { env: unknown[] }[] } } } };
  assert.deepEqual(web.metadata.annotations, { patched: 'yes' });
  assert.equal(web.spec.replicas, 3);
  assert.deepEqual(web.spec.template.spec.containers[0]?.env, [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]);
  assert.deepEqual(out[1], objects[1], 'not selected: unchanged');
  assert.deepEqual(out[2], service);
  assert.equal((objects[0]?.spec as { replicas: number }).replicas, 1, 'the input is not changed');
  for (const [target, hits] of [[{ group: 'apps', version: 'v1' }, 2], [{ group: '', kind: 'Service' }, 1], [{ name: 'db' }, 1], [{ namespace: 'team-a', labelSelector: 'tier' }, 2]] as const) {
    const got = postRender(objects, patches({ patch: '- op: add\n  path: /metadata/labels/hit\n  value: "1"\n', target }));
    assert.equal(got.filter((o) => o.metadata.labels?.hit === '1').length, hits, JSON.stringify(target));
  }
});

test('remove, move, copy and test, as RFC 6902 says; ~1 and ~0 in a path', () => {
  const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { 'a/b': 'x', 'c~d': 'y' } }, data: { one: '1', two: '2' } };
  const ops = [
    '- op: test\n  path: /metadata/annotations/a~1b\n  value: x',
    '- op: remove\n  path: /metadata/annotations/c~0d',
    '- op: move\n  from: /data/one\n  path: /data/uno',
    '- op: copy\n  from: /data/two\n  path: /data/dos',
  ].join('\n');
  const [out] = postRender([obj], patches({ patch: ops, target: { kind: 'ConfigMap' } }));
  assert.deepEqual(out?.metadata.annotations, { 'a/b': 'x' });
  assert.deepEqual(out?.data, { two: '2', uno: '1', dos: '2' });
});

test('an object patch without a target is a merge patch on the object it names: null removes, a list is replaced whole', () => {
  const merge = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    added: "yes"\nspec:\n  replicas: null\n  template:\n    spec:\n      containers:\n        - name: app\n          image: app:2\n';
  const [web, db] = postRender([deployment('web', { keep: 'me' }), deployment('db')], patches({ patch: merge }));
  assert.deepEqual(web?.metadata.labels, { keep: 'me', added: 'yes' });
  const spec = web?.spec as { replicas?: number; template: { spec: { containers: unknown[] } } };
  assert.equal(spec.replicas, undefined);
  assert.deepEqual(spec.template.spec.containers, [{ name: 'app', image: 'app:2' }], 'replaced whole (no env): RFC 7386');
  assert.deepEqual(db, deployment('db'));
});

test('every problem names the patch and why: not YAML, neither ops nor object, no target for ops, a bad op or pointer, a path not there, selecting nothing, an object unmade', () => {
  const objects = [deployment('web')];
  const cases: [string, Record<string, string> | undefined, RegExp][] = [
    ['- op: add\n  path: [', { kind: 'Deployment' }, /postRenderers\[0\]\.kustomize\.patches\[0\]\.patch: not YAML/],
    ['just a string', { kind: 'Deployment' }, /patches\[0\]\.patch: neither a list of JSON Patch operations nor an object/],
    ['- op: add\n  path: /metadata/labels/x\n  value: "1"\n', undefined, /patches\[0\]\.target: a JSON Patch needs a target/],
    ['- op: frobnicate\n  path: /x\n', { kind: 'Deployment' }, /patches\[0\]\.patch\[0\]: op must be one of add, remove/],
    ['- op: add\n  path: metadata\n  value: 1\n', { kind: 'Deployment' }, /patches\[0\]\.patch\[0\]\.path: not a JSON pointer: "metadata"/],
    ['- op: add\n  path: /x\n', { kind: 'Deployment' }, /patch\[0\]\.value: add needs a value/],
    ['- op: replace\n  path: /spec/nothing\n  value: 1\n', { kind: 'Deployment' }, /patch\[0\]: replace \/spec\/nothing on Deployment team-a\/web: nothing at nothing to replace/],
    ['- op: add\n  path: /spec/template/spec/containers/5\n  value: {}\n', { kind: 'Deployment' }, /index 5 is past the end of the list \(1 items\)/],
    ['- op: test\n  path: /spec/replicas\n  value: 2\n', { kind: 'Deployment' }, /test \/spec\/replicas on Deployment team-a\/web: the value is not 2/],
    ['- op: remove\n  path: /metadata/labels/x\n', { kind: 'StatefulSet' }, /patches\[0\]: selects none of the 1 rendered objects/],
    ['apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\n', undefined, /selects none of the 1 rendered objects/],
    ['- op: remove\n  path: /kind\n', { kind: 'Deployment' }, /Deployment team-a\/web is no longer a Kubernetes object after it/],
    ['- op: add\n  path: /metadata/__proto__/x\n  value: 1\n', { kind: 'Deployment' }, /patches\[0\]\.patch: holds a __proto__ key or path/],
    ['metadata:\n  __proto__: {x: 1}\n', { kind: 'Deployment' }, /holds a __proto__ key or path/],
  ];
  for (const [patch, target, want] of cases) {
    assert.throws(() => postRender(objects, patches(target === undefined ? { patch } : { patch, target })), (err: Error) => {
      assert.match(err.message, want, patch);
      assert.equal((err as { code?: string }).code, 'POST_RENDER');
      return true;
    });
  }
  // The second renderer's patch is named by its place.
  assert.throws(() => postRender(objects, [{}, { kustomize: { patches: [{ patch: '- op: add\n  path: /a\n  value: 1\n', target: { kind: 'Deployment' } }, { patch: 'x: [', target: { kind: 'Deployment' } }] } }]), /postRenderers\[1\]\.kustomize\.patches\[1\]\.patch: not YAML/);
});
