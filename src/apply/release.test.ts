import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { BinnacleError } from '../util/errors.js';
import type { KubeObject } from '../kube/types.js';
import { bombObject, BOMB_REASON_IN_OBJECT, manyAliasesObject } from '../util/yaml.test-helper.js';
import { decodeRevisionRecord, OWNER_GENERATION_LABEL, parseManifest, releaseLabels, revisionRecordSecret, revisionRecordSecretName, revisionFromSecret, toManifest, type ReleaseRecordInput } from './release.js';

// Written by the real helm v3.22 (`helm install tiny ./chart` then `helm upgrade --set greeting=yo`).
const fixture: unknown = JSON.parse(readFileSync(new URL('./testdata/helm-release-v2.secret.json', import.meta.url), 'utf8'));

test('decodes a release Secret written by the real helm binary', () => {
  const rev = revisionFromSecret(fixture);
  assert.equal(rev.name, 'tiny');
  assert.equal(rev.namespace, 'default');
  assert.equal(rev.revision, 2);
  assert.equal(rev.status, 'deployed');
  assert.equal(rev.description, 'Upgrade complete');
  assert.deepEqual(rev.chart, { name: 'tiny', version: '0.1.0', appVersion: '1.2.3', description: "A tiny chart for Binnacle's release decoder test" });
  assert.deepEqual(rev.config, { greeting: 'yo' });
  assert.match(rev.firstDeployed, /^2026-11-22T15:56:58\./);
  assert.equal(rev.owner, undefined, 'helm wrote it: no Binnacle owner');
  const objects = parseManifest(rev.manifest, 'fixture');
  assert.deepEqual(objects, [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tiny-cm' }, data: { greeting: 'yo' } }]);
});

const input: ReleaseRecordInput = {
  name: 'op',
  namespace: 'ops',
  version: 3,
  status: 'superseded',
  description: 'Upgrade complete',
  firstDeployed: '2026-01-02T03:04:05.678Z',
  lastDeployed: '2026-01-03T03:04:05.678Z',
  chart: { name: 'op', version: '1.2.3', appVersion: '4.5' },
  config: { replicas: 2 },
  manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
};

test('our Secret has helm\'s name, type and labels, and the release double-base64 gzipped JSON', () => {
  const now = new Date('2026-01-03T03:04:05Z');
  const s = revisionRecordSecret(input, { kind: 'ClusterExtension', name: 'op' }, now, 'created');
  assert.equal(s.metadata.name, 'sh.helm.release.v1.op.v3');
  assert.equal(revisionRecordSecretName('op', 3), s.metadata.name);
  assert.equal(s.type, 'helm.sh/release.v1');
  assert.deepEqual(s.metadata.labels, {
    'binnacle.dev/owner-kind': 'ClusterExtension',
    'binnacle.dev/owner-name': 'op',
    name: 'op',
    owner: 'helm',
    status: 'superseded',
    version: '3',
    createdAt: String(now.getTime() / 1000),
  });
  assert.deepEqual(releaseLabels(s), { 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'op' });
  // Unwrap it by hand the way helm does: base64 (Secret data) → base64 → gzip → JSON.
  const data = (s.data as { release: string }).release;
  const gz = Buffer.from(Buffer.from(data, 'base64').toString('utf8'), 'base64');
  assert.deepEqual([...gz.subarray(0, 3)], [0x1f, 0x8b, 0x08]);
  const json = JSON.parse(gunzipSync(gz).toString('utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(json), ['name', 'info', 'chart', 'config', 'manifest', 'version', 'namespace', 'apply_method']);
  assert.equal(json.apply_method, 'ssa', 'applied server-side, as Helm 4 records it');
  assert.deepEqual(json.info, { first_deployed: input.firstDeployed, last_deployed: input.lastDeployed, deleted: '', description: 'Upgrade complete', status: 'superseded' });
  assert.deepEqual((json.chart as { metadata: unknown }).metadata, { name: 'op', version: '1.2.3', apiVersion: 'v2', appVersion: '4.5' });
});

test("the owner's own values go after Helm's members (Helm's decoder ignores one it does not know) and come back; a record without them reads without them; a value not a map is dropped", () => {
  const ownerValues = { replicaCount: 1, podLabels: { a: 'b' } };
  const s = revisionRecordSecret({ ...input, ownerValues }, { kind: 'Pushgateway', name: 'op', namespace: 'ops' }, new Date(), 'created');
  const json = JSON.parse(gunzipSync(Buffer.from(Buffer.from((s.data as { release: string }).release, 'base64').toString(), 'base64')).toString('utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(json).slice(-2), ['apply_method', 'binnacle_owner_values']);
  assert.deepEqual(revisionFromSecret(s).ownerValues, ownerValues);
  assert.equal('ownerValues' in revisionFromSecret(revisionRecordSecret(input, { kind: 'ClusterExtension', name: 'op' }, new Date(), 'created')), false);
  const notMap = Buffer.from(gzipSync(JSON.stringify({ ...json, binnacle_owner_values: ['not', 'a', 'map'] }))).toString('base64');
  assert.equal(revisionFromSecret({ ...s, data: { release: Buffer.from(notMap).toString('base64') } }).ownerValues, undefined);
});

test('a record round-trips through the Secret', () => {
  const s = revisionRecordSecret(input, { kind: 'ClusterExtension', name: 'op' }, new Date(), 'modified');
  assert.ok(s.metadata.labels?.modifiedAt !== undefined);
  const rev = revisionFromSecret(s);
  assert.deepEqual(rev, {
    name: 'op',
    namespace: 'ops',
    revision: 3,
    status: 'superseded',
    description: 'Upgrade complete',
    firstDeployed: input.firstDeployed,
    lastDeployed: input.lastDeployed,
    chart: input.chart,
    config: input.config,
    manifest: input.manifest,
    owner: { kind: 'ClusterExtension', name: 'op' },
  });
});

test('decodeRevisionRecord also reads plain (not gzipped) records, as helm does', () => {
  const plain = Buffer.from(JSON.stringify({ name: 'x', version: 1 })).toString('base64');
  assert.deepEqual(decodeRevisionRecord(plain), { name: 'x', version: 1 });
});

test('bad records give errors naming the Secret and field, never a crash', () => {
  const bad = (data: unknown): BinnacleError => {
    try {
      revisionFromSecret({ metadata: { name: 'sh.helm.release.v1.x.v1', namespace: 'ns' }, data });
    } catch (err) {
      assert.ok(err instanceof BinnacleError);
      return err;
    }
    assert.fail('expected an error');
  };
  const missing = bad({});
  assert.equal(missing.code, 'RELEASE_DECODE');
  assert.match(missing.message, /Secret ns\/sh\.helm\.release\.v1\.x\.v1: field data\.release is missing/);
  const garbage = bad({ release: Buffer.from(Buffer.from([0x1f, 0x8b, 0x08, 1, 2, 3]).toString('base64')).toString('base64') });
  assert.match(garbage.message, /field data\.release: not a Helm release record/);
  const noInfo = bad({ release: Buffer.from(Buffer.from('{"name":"x"}').toString('base64')).toString('base64') });
  assert.match(noInfo.message, /has no info or version/);
});

test('manifests round-trip and carry helm-style Source headers', () => {
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } },
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' }, spec: { replicas: 1 } },
  ];
  const text = toManifest(objects);
  assert.match(text, /^---\n# Source: binnacle\/namespace\/ns\.yaml\napiVersion: v1\n/);
  assert.match(text, /# Source: binnacle\/deployment\/ns\/d\.yaml/);
  assert.deepEqual(parseManifest(text, 'r'), objects);
  assert.deepEqual(parseManifest('', 'r'), []);
  assert.throws(() => parseManifest('---\n- a list\n', 'release ns/x revision 2'), /release ns\/x revision 2: manifest document 1 is not a Kubernetes object/);
  assert.throws(() => parseManifest('a: [unclosed\n', 'r'), (err: unknown) => err instanceof BinnacleError && err.code === 'RELEASE_MANIFEST');
});

test('a stored manifest with more than 100 YAML aliases is read; an alias bomb is RELEASE_MANIFEST naming the revision and document', () => {
  const objects = parseManifest(`---\n${manyAliasesObject('one')}---\n${manyAliasesObject('two', 500)}`, 'release ns/x revision 3');
  assert.deepEqual(objects.map((o) => [o.metadata.name, (o as { aliases?: unknown[] }).aliases?.length]), [['one', 150], ['two', 500]]);
  assert.throws(() => parseManifest(`---\n${manyAliasesObject('one')}---\n${bombObject()}`, 'release ns/x revision 3'), (err: unknown) => {
    assert.ok(err instanceof BinnacleError);
    assert.equal(err.code, 'RELEASE_MANIFEST');
    assert.equal(err.message, `release ns/x revision 3: manifest document 2: ${BOMB_REASON_IN_OBJECT}`);
    return true;
  });
});

test('parseManifestAsync reads a manifest as parseManifest does, document by document: indented markers stay in their scalar, empty documents are skipped, errors name the document', async () => {
  const { parseManifest, parseManifestAsync, manifestDocuments } = await import('./release.js');
  const manifest = [
    '# Source: x/a.yaml',
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  inner: |\n    ---\n    nested: doc\n',
    '---',
    '---\n# Source: x/b.yaml',
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n',
    '--- # a comment after the marker',
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: c\n',
  ].join('\n');
  assert.deepEqual(await parseManifestAsync(manifest, 'm'), parseManifest(manifest, 'm'));
  assert.deepEqual((await parseManifestAsync(manifest, 'm')).map((o) => o.metadata.name), ['a', 'b', 'c']);
  assert.equal(manifestDocuments(manifest).length, 3);
  await assert.rejects(parseManifestAsync('---\nkind: X\n---\nnot: [closed\n', 'rev 2'), /rev 2: manifest document 1 is not a Kubernetes object/);
  await assert.rejects(parseManifestAsync('---\napiVersion: v1\nkind: A\nmetadata: {}\n---\nnot: [closed\n', 'rev 2'), /rev 2: manifest document 2: /);
});

test("a revision's owner generation rides on a label, and only a positive integer is read back", () => {
  const input: ReleaseRecordInput = { name: 'pg', namespace: 'team-a', version: 3, status: 'failed', description: 'x', firstDeployed: '', lastDeployed: '', chart: { name: 'pg', version: '1.0.0' }, config: {}, manifest: '', ownerGeneration: 7 };
  const secret = revisionRecordSecret(input, { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' }, new Date(0), 'created');
  assert.equal(secret.metadata.labels?.[OWNER_GENERATION_LABEL], '7');
  assert.equal(revisionFromSecret(secret).ownerGeneration, 7);
  for (const bad of ['-1', '0', '1.5', '1e400', 'seven', '']) {
    const edited: KubeObject = { ...secret, metadata: { ...secret.metadata, labels: { ...secret.metadata.labels, [OWNER_GENERATION_LABEL]: bad } } };
    assert.equal(revisionFromSecret(edited).ownerGeneration, undefined, bad);
  }
});
