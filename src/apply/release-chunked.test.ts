/**
 * operator-controller's chunked release records, as its own storage driver wrote them: the
 * fixture is recorded from helm-operator-plugins v0.9.1's `storage.NewChunkedSecrets` with
 * operator-controller v1.11's owner, chunk size and owner references
 * (hack/olmv1-history-fixture, `go run .`), not made by this code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { KubeObject } from '../kube/types.js';
import { CHUNKED_CHUNK_TYPE, revisionFromChunked } from './release-chunked.js';
import { chunkedRecordSecrets, chunkHash } from './release-chunked.test-helper.js';
import { parseManifest } from './release.js';

const fixture = JSON.parse(readFileSync(new URL('./testdata/olmv1-chunked-history.json', import.meta.url), 'utf8')) as KubeObject[];
const byName = new Map(fixture.map((s) => [s.metadata.name ?? '', s]));
const index = (n: number): KubeObject => {
  const s = byName.get(`sh.helm.release.v1.argocd.v${n}`);
  assert.ok(s !== undefined);
  return s;
};

test("operator-controller's records decode as Helm's: one revision in its index Secret, one spread over five chunk Secrets", async () => {
  const v1 = await revisionFromChunked(index(1), byName);
  assert.deepEqual([v1.name, v1.namespace, v1.revision, v1.status, v1.chart.name, v1.chart.version], ['argocd', 'argocd', 1, 'superseded', 'argocd-operator', '0.1.0']);
  const v2 = await revisionFromChunked(index(2), byName);
  assert.equal(fixture.filter((s) => s.type === CHUNKED_CHUNK_TYPE).length, 5, 'the fixture spans chunks');
  assert.deepEqual([v2.revision, v2.status, v2.chart.version, v2.description], [2, 'deployed', '0.2.0', 'Install complete']);
  const objects = parseManifest(v2.manifest, 'v2');
  assert.deepEqual(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`), ['ServiceAccount argocd/argocd-operator-controller-manager', 'Deployment argocd/argocd-operator-controller-manager']);
  assert.match(v2.manifest, /argocd-operator:v0\.2\.0/);
});

test('a chunked record that is not whole, not its own or too big is refused, naming the Secret and the field', async () => {
  const v2 = index(2);
  const names = JSON.parse(Buffer.from((v2.data as Record<string, string>).extraChunks ?? '', 'base64').toString()) as string[];
  const without = new Map(byName);
  without.delete(names[2] ?? '');
  await assert.rejects(revisionFromChunked(v2, without), new RegExp(`Secret olmv1-system/sh\\.helm\\.release\\.v1\\.argocd\\.v2: field data\\.extraChunks\\[2\\]: chunk Secret ${names[2] ?? ''} is missing`));
  // A chunk Secret of another record (its key label) is not taken, even under the right name.
  const foreign = new Map(byName);
  const c0 = byName.get(names[0] ?? '');
  assert.ok(c0 !== undefined);
  foreign.set(names[0] ?? '', { ...c0, metadata: { ...c0.metadata, labels: { ...c0.metadata.labels, key: 'sh.helm.release.v1.other.v1' } } });
  await assert.rejects(revisionFromChunked(v2, foreign), /field data\.extraChunks\[0\]: Secret .* is not a chunk of this record/);
  const many = { ...v2, data: { ...(v2.data as Record<string, string>), extraChunks: Buffer.from(JSON.stringify(Array.from({ length: 11 }, (_, i) => `c${i}`))).toString('base64') } };
  await assert.rejects(revisionFromChunked(many, byName), /field data\.extraChunks: 12 chunks, above the 11 operator-controller reads/);
  await assert.rejects(revisionFromChunked({ ...v2, type: 'Opaque' }, byName), /field type: Opaque is not operatorframework\.io\/index\.v1/);
  await assert.rejects(revisionFromChunked({ ...v2, data: { extraChunks: (v2.data as Record<string, string>).extraChunks ?? '' } }, byName), /field data\.chunk: missing/);
  await assert.rejects(revisionFromChunked({ ...v2, data: { ...(v2.data as Record<string, string>), extraChunks: Buffer.from('{"a":1}').toString('base64') } }, byName), /field data\.extraChunks: not a JSON list of Secret names/);
});

test('a gzip bomb in a chunk is refused within the bound a Helm record has, unread', async () => {
  const bomb = gzipSync(Buffer.alloc(48 * 1024 * 1024, 0x20)).toString('base64');
  const planted: KubeObject = { ...index(1), data: { chunk: bomb, extraChunks: Buffer.from('[]').toString('base64') } };
  await assert.rejects(revisionFromChunked(planted, byName), /sh\.helm\.release\.v1\.argocd\.v1: fields data\.chunk and data\.extraChunks: the record inflates to more than/);
});

test("the test helper writes records as the Go driver does: its chunk names are the driver's (FNV-64a, base32), and what it writes reads back", async () => {
  for (const s of fixture.filter((x) => x.type === CHUNKED_CHUNK_TYPE)) {
    const bytes = Buffer.from((s.data as Record<string, string>).chunk ?? '', 'base64');
    assert.equal(`${s.metadata.labels?.key ?? ''}-${chunkHash(bytes)}`, s.metadata.name);
  }
  const manifest = `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\ndata:\n  k: "${'x'.repeat(3000)}"\n`;
  const written = chunkedRecordSecrets(
    { name: 'ext', namespace: 'ns', version: 3, status: 'deployed', description: 'Upgrade complete', firstDeployed: '', lastDeployed: '', chart: { name: 'op', version: '1.2.3' }, config: {}, manifest: manifest + randomLines() },
    { namespace: 'olmv1-system', extension: { name: 'ext', uid: 'u' }, chunkSize: 256 },
  );
  assert.ok(written.length > 2, 'several chunks');
  const index = written[0];
  assert.ok(index !== undefined);
  assert.deepEqual(Object.keys(index.metadata.labels ?? {}).sort(), Object.keys(byName.get('sh.helm.release.v1.argocd.v2')?.metadata.labels ?? {}).sort(), "the Go driver's labels");
  const rev = await revisionFromChunked(index, new Map(written.map((s) => [s.metadata.name ?? '', s])));
  assert.deepEqual([rev.name, rev.revision, rev.status, rev.chart.version], ['ext', 3, 'deployed', '1.2.3']);
  assert.ok(rev.manifest.startsWith(manifest));
});

/** Text that does not compress, so that a record spans chunks. */
function randomLines(): string {
  return Array.from({ length: 40 }, () => `# ${randomBytes(24).toString('hex')}\n`).join('');
}
