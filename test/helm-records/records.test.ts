/**
 * Helm 4 reads the records Binnacle writes today (issue 46): the revision record Secrets are made
 * afresh by Binnacle's one encoder (make-fixtures.ts, through Helm's engine), and Helm 4's own
 * Secrets storage driver and actions (`helm list`, `history`, `get`, `status`; records_test.go, a
 * Go module pinned to helm.sh/helm/v4 v4.3.1) read them. The fresh records must also be the ones
 * kept in testdata/, so `go test` run by hand there reads what Binnacle writes, not an old copy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';

const run = promisify(execFile);

/** A record Secret as read: its metadata, and its release decoded as Helm's driver does (base64 twice, gzip, JSON): gzip's bytes may differ between zlib versions. */
async function readRecord(file: string): Promise<unknown> {
  const secret = JSON.parse(await readFile(file, 'utf8')) as { metadata: unknown; data: { release: string } };
  const release = JSON.parse(gunzipSync(Buffer.from(Buffer.from(secret.data.release, 'base64').toString(), 'base64')).toString()) as unknown;
  return { metadata: secret.metadata, release };
}
const HERE = import.meta.dirname;

test('Helm 4 lists, reads the history, values, manifest, hooks, notes and status of the records Binnacle writes', { timeout: 900_000 }, async () => {
  const work = await mkdtemp(path.join(tmpdir(), 'binnacle-helm-records-'));
  try {
    for (const f of ['go.mod', 'go.sum', 'records_test.go']) await copyFile(path.join(HERE, f), path.join(work, f));
    const out = path.join(work, 'testdata');
    await mkdir(out);
    await run(process.execPath, ['--import', 'tsx', path.join(HERE, 'make-fixtures.ts')], { env: { ...process.env, BINNACLE_RECORDS_OUT: out }, maxBuffer: 1 << 24 });
    const made = (await readdir(out)).sort();
    assert.deepEqual(made, (await readdir(path.join(HERE, 'testdata'))).sort());
    for (const f of made) assert.deepEqual(await readRecord(path.join(out, f)), await readRecord(path.join(HERE, 'testdata', f)), `testdata/${f} is what Binnacle writes now (npx tsx test/helm-records/make-fixtures.ts)`);
    // -trimpath and no cgo, as hack/build-tools.sh builds the witness helm from the same module:
    // Helm's packages come from Go's build cache (about 30 s here, not 5 minutes compiling them again).
    const go = await run('go', ['test', '-trimpath', '-count=1', '-v', './...'], { cwd: work, env: { ...process.env, GOWORK: 'off', GOFLAGS: '-mod=readonly', CGO_ENABLED: '0' }, maxBuffer: 1 << 24 });
    for (const name of ['TestList', 'TestHistory', 'TestGet', 'TestStatus']) assert.match(go.stdout, new RegExp(`--- PASS: ${name}\\b`), go.stdout);
    assert.match(go.stdout, /^ok\s/m);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
