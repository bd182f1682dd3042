/**
 * renderChart turns Helm's output into objects: YAML that Helm (Go) accepts is accepted.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHelmEngine } from '../helm-engine/engine.js';
import { bombObject, BOMB_REASON_IN_OBJECT, manyAliasesObject } from '../util/yaml.test-helper.js';
import { objectsOf, renderChart } from './chart-render.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';

const engine = createHelmEngine();
after(() => engine.close());

// The YAML library's default of 100 aliases threw a ReferenceError out of the render, for a
// manifest that Helm itself renders and installs.
test('a manifest with many YAML aliases, which Helm accepts, becomes objects', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'chart-aliases-'));
  try {
    await mkdir(join(dir, 'templates'));
    await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: aliases\nversion: 0.1.0\n');
    const list = Array.from({ length: 150 }, () => '*a').join(', ');
    await writeFile(join(dir, 'templates', 'cm.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many\n  labels: &a {app: x}\ndata:\n  release: {{ .Release.Name }}\nspare: [${list}]\n`);
    const r = await renderChart({ chart: dir, chartDigest: 'sha256:test', release: { name: 'r', namespace: 'ns' }, values: {}, revision: 1, engine });
    assert.deepEqual(
      r.objects.map((o) => `${o.kind}/${o.metadata.name ?? ''}`),
      ['ConfigMap/many'],
    );
    assert.equal((r.objects[0] as { spare?: unknown[] }).spare?.length, 150);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('objectsOf: more than 10,000 aliases, which Helm accepts, are read; an alias bomb is HELM_MANIFEST_YAML naming the manifest and document', () => {
  const objects = objectsOf(`---\n${manyAliasesObject('many', 12_000)}`, 'c: rendered manifest');
  assert.equal((objects[0] as { aliases?: unknown[] }).aliases?.length, 12_000);
  assert.throws(() => objectsOf(`---\n${manyAliasesObject()}---\n${bombObject()}`, 'c: rendered manifest'), {
    code: 'HELM_MANIFEST_YAML',
    message: `c: rendered manifest: document 2: ${BOMB_REASON_IN_OBJECT}`,
  });
});

test('lookup reaches the cluster client with GETs only, and what it reads is rendered', { timeout: 120_000 }, async () => {
  const cluster = new FakeCluster({ objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', uid: 'uid-from-client' } }] });
  const client = cluster.client();
  const calls = cluster.raw;
  const r = await renderChart({ chart: join(import.meta.dirname, '..', 'helm-engine', 'testdata', 'lookup'), chartDigest: 'sha256:test', release: { name: 'r', namespace: 'ns' }, values: {}, revision: 1, engine, client });
  assert.equal((r.objects[0] as { data?: Record<string, string> }).data?.uid, 'uid-from-client');
  assert.ok(calls.length > 0);
  assert.deepEqual(calls.filter((c) => c.method !== 'GET'), [], 'only GETs reach the client');
});

test("lookup confined to the release's namespaces: another namespace's Secret is refused (the render fails, naming why); unconfined it is read", { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'chart-confined-lookup-'));
  try {
    await mkdir(join(dir, 'templates'));
    await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: peek\nversion: 0.1.0\n');
    await writeFile(join(dir, 'templates', 'cm.yaml'), '{{- $s := lookup "v1" "Secret" "team-b" "db" }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: peek\ndata:\n  stolen: {{ dig "data" "password" "none" $s | quote }}\n');
    const cluster = new FakeCluster({ objects: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'team-b' }, data: { password: 'c2VjcmV0' } }] });
    const input = { chart: dir, chartDigest: 'sha256:test', release: { name: 'r', namespace: 'team-a' }, values: {}, revision: 1, engine, client: cluster.client() };
    assert.deepEqual((await renderChart(input)).objects[0]?.data, { stolen: 'c2VjcmV0' }, 'unconfined: the identity reads it');
    await assert.rejects(renderChart({ ...input, lookupNamespaces: ['team-a'] }), /lookup of \/api\/v1\/namespaces\/team-b\/secrets\/db was refused: this release reads namespaced resources in team-a only/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('post-renderers patch the rendered objects, the record keeps what is applied, and they are in the input digest only when set', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'chart-post-render-'));
  try {
    await mkdir(join(dir, 'templates'));
    await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: post\nversion: 0.1.0\n');
    await writeFile(join(dir, 'templates', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  a: "1"\n');
    const input = { chart: dir, chartDigest: 'sha256:test', release: { name: 'r', namespace: 'ns' }, values: {}, revision: 1, engine };
    const postRenderers = [{ kustomize: { patches: [{ target: { kind: 'ConfigMap' }, patch: '- op: add\n  path: /data/b\n  value: "2"\n' }] } }];
    const plain = await renderChart(input);
    const patched = await renderChart({ ...input, postRenderers });
    assert.deepEqual(plain.objects[0]?.data, { a: '1' });
    assert.deepEqual(patched.objects[0]?.data, { a: '1', b: '2' });
    assert.deepEqual(objectsOf(patched.content.manifest, 'record')[0]?.data, { a: '1', b: '2' }, 'the record keeps the patched object');
    assert.doesNotMatch(plain.content.manifest, /b: "?2/);
    assert.notEqual(patched.inputDigest, plain.inputDigest);
    assert.equal((await renderChart({ ...input, postRenderers: [] })).inputDigest, plain.inputDigest, 'none set: the digest as before');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
