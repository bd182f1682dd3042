import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { closeServer, createSafeServer, listenOn, useCertificate } from '../util/http-server.js';
import { createCertificateAuthority, issueCertificate } from '../util/pki.js';
import { withTempDir } from '../util/temp-dir.test-helper.js';
import { servedFingerprint } from '../util/tls-peer.test-helper.js';
import { watchTlsPair } from './tls-reload.js';

/** Replaces `file` at once, as the kubelet swaps a mounted Secret (a poll never sees it half written). */
async function put(file: string, text: string): Promise<void> {
  await writeFile(`${file}.new`, text);
  await rename(`${file}.new`, file);
}

async function until(what: string, ok: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`never: ${what}`);
}

test('a renewed certificate written over the served files is served to new connections without a restart; files that cannot be used are said once and the certificate in use is kept', async () => {
  const ca = await createCertificateAuthority('test-ca');
  const issue = (): ReturnType<typeof issueCertificate> => issueCertificate(ca, { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
  const a = await issue();
  const b = await issue();
  const c = await issue();
  const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;
  const warnings: string[] = [];
  const infos: string[] = [];
  // A real logger whose lines are kept: what the watcher said, by level.
  const logger = pino({ level: 'info' }, {
    write: (line: string) => {
      const { level, msg } = JSON.parse(line) as { level: number; msg: string };
      (level >= 40 ? warnings : infos).push(msg);
    },
  });
  await withTempDir('tls-reload-', async (dir) => {
    const files = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
    await writeFile(files.cert, a.certPem);
    await writeFile(files.key, a.keyPem);
    const server = createSafeServer((_req, res) => void res.end('ok'), { name: 'test', tls: a });
    const url = await listenOn(server, '127.0.0.1', 0);
    const port = Number(new URL(url).port);
    const stop = watchTlsPair({ files, flags: { cert: '--cert', key: '--key' }, current: a, logger, intervalMs: 10 }, (pair) => useCertificate(server, pair));
    try {
      assert.equal(await servedFingerprint(port), fingerprint(a.certPem));
      await put(files.cert, b.certPem);
      await put(files.key, b.keyPem);
      await until('the renewed certificate is served', async () => (await servedFingerprint(port)) === fingerprint(b.certPem));
      assert.deepEqual(infos, ['serving the renewed certificate']);

      // A certificate whose key is not there yet (a Secret half swapped, or a wrong one): refused, b kept.
      await put(files.cert, c.certPem);
      await until('the mismatched pair is refused', () => warnings.length > 0);
      assert.equal(await servedFingerprint(port), fingerprint(b.certPem));
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(warnings, ['the certificate files changed but cannot be used; still serving the previous certificate'], 'said once, not at every poll');
      await put(files.key, c.keyPem);
      await until('the completed pair is served', async () => (await servedFingerprint(port)) === fingerprint(c.certPem));
    } finally {
      stop();
      await closeServer(server);
    }
  });
  assert.throws(() => useCertificate(createSafeServer((_req, res) => void res.end(''), { name: 'plain' }), a), /plain HTTP server/);
});
