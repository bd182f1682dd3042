import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli as cli } from '../in-process.test-helper.js';
import { catalog, chain, requiresPackage } from '../../resolve/fixtures.test-helper.js';

function fbcLines(): string {
  const c = catalog('demo', [chain('prometheus', ['0.22.2', '0.27.0']), chain('etcd', ['0.9.4'], () => [requiresPackage('prometheus', '>=0.20.0')]), chain('app', ['1.0.0'], () => [requiresPackage('prometheus', '>=2.0.0')])]);
  return [...c.config.packages, ...c.config.channels, ...c.config.bundles].map((x) => JSON.stringify(x)).join('\n') + '\n';
}

const dir = mkdtempSync(path.join(tmpdir(), 'binnacle-resolve-'));
writeFileSync(path.join(dir, 'catalog.json'), fbcLines());

test('resolve prints bundles in install order as JSON', async () => {
  const r = await cli(['resolve', '--catalog', dir, '--package', 'etcd', '-o', 'json']);
  assert.equal(r.code, 0, r.err);
  const v = JSON.parse(r.out) as { resolved: boolean; bundles: { name: string; catalog: string; image: string }[] };
  assert.equal(v.resolved, true);
  assert.deepEqual(v.bundles.map((b) => b.name), ['prometheus.v0.27.0', 'etcd.v0.9.4']);
  assert.equal(v.bundles[0]?.image, 'quay.io/test/prometheus-bundle:v0.27.0');
});

test('an unsatisfiable request prints the explanation and exits 1', async () => {
  const r = await cli(['resolve', '--catalog', dir, '--package', 'app', '-o', 'json']);
  assert.equal(r.code, 1);
  const v = JSON.parse(r.out) as { resolved: boolean; explanation: string[] };
  assert.equal(v.resolved, false);
  assert.ok(v.explanation.includes('app 1.0.0 requires package prometheus >=2.0.0; the catalogs offer only 0.22.2 and 0.27.0'));
});

test('--version is the range, --all-packages covers every package, usage errors exit 2', async () => {
  const r = await cli(['resolve', '--catalog', dir, '--package', 'prometheus', '--version', '<0.27', '-o', 'json']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /prometheus\.v0\.22\.2/);
  const all = await cli(['resolve', '--catalog', dir, '--all-packages', '-o', 'json']);
  const v = JSON.parse(all.out) as { packages: { package: string; resolved: boolean }[] };
  assert.deepEqual(v.packages.map((p) => `${p.package}:${p.resolved}`), ['app:false', 'etcd:true', 'prometheus:true']);
  assert.equal((await cli(['resolve', '--package', 'x'])).code, 2);
  assert.equal((await cli(['resolve', '--catalog', dir, '--package', 'x', '--policy', 'Whatever'])).code, 2);
  const missing = await cli(['resolve', '--catalog', path.join(dir, 'nope'), '--package', 'x']);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /no such file or directory/);
});

test('a catalog server URL is read from /api/v1/all', async () => {
  const body = fbcLines();
  const server = createServer((req, res) => {
    if (req.url === '/api/v1/all') res.end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  try {
    const r = await cli(['resolve', '--catalog', `http://127.0.0.1:${port}`, '--package', 'etcd', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /"catalog": "127\.0\.0\.1:\d+"/);
    const bad = await cli(['resolve', '--catalog', `http://127.0.0.1:${port}/x`, '--package', 'etcd']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /answered 404/);
  } finally {
    server.close();
  }
});
