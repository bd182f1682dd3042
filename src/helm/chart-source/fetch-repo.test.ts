import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ChartIndexError, NoMatchingVersionError } from './errors.js';
import { fetchChart, listChartVersions } from './fetch.js';
import { chartArchive, freshCacheIn, isCode, send, sha256Hex, startServer, type TestServer } from './fixtures.test-helper.js';
import type { RepoChartRef } from './reference.js';

let base = '';
let repo: TestServer;
let mirror: TestServer;
/** What the /gz repository was asked, by request: the Accept-Encoding sent. */
const asked: [string, string | undefined][] = [];
const v1 = chartArchive('memcached', '7.0.1');
const v2 = chartArchive('memcached', '7.1.0');
const v3rc = chartArchive('memcached', '8.0.0-rc.1');
const liar = chartArchive('memcached', '7.2.0', {}, '9.9.9');
const big = chartArchive('memcached', '7.3.0', { 'files/blob.txt': 'x'.repeat(200_000) });

function index(entries: string): string {
  return `apiVersion: v1\nentries:\n${entries}\ngenerated: "2024-01-01T00:00:00Z"\n`;
}

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'chart-repo-'));
  mirror = await startServer(new Map([['/mirror/memcached-7.1.0.tgz', send(v2)]]));
  repo = await startServer(
    new Map([
      [
        '/stable/index.yaml',
        send(
          index(`  memcached:
  - {name: memcached, version: 7.0.1, urls: [charts/memcached-7.0.1.tgz], digest: ${sha256Hex(v1)}}
  - {name: memcached, version: 7.1.0, urls: ["${mirror.url}/mirror/memcached-7.1.0.tgz"], digest: ${sha256Hex(v2)}}
  - {name: memcached, version: 8.0.0-rc.1, urls: [/stable/charts/memcached-8.0.0-rc.1.tgz]}
  - {name: memcached, version: 6.0.0, urls: [charts/tampered.tgz], digest: ${sha256Hex(v1)}}
  - {name: memcached, version: 7.2.0, urls: [charts/liar.tgz]}
  - {name: memcached, version: 7.3.0, urls: [charts/big.tgz]}
  - {name: memcached, version: 5.0.0, urls: [charts/gone.tgz]}
  - {name: memcached, version: 5.1.0, urls: [charts/broken.tgz]}
  - {name: memcached, version: 5.2.0, urls: []}
  redis:
  - {name: redis, version: 1.0.0, urls: [redis.tgz]}`),
        ),
      ],
      ['/stable/charts/memcached-7.0.1.tgz', send(v1)],
      ['/stable/charts/memcached-8.0.0-rc.1.tgz', send(v3rc)],
      ['/stable/charts/tampered.tgz', send(chartArchive('memcached', '6.0.0'))],
      ['/stable/charts/liar.tgz', send(liar)],
      ['/stable/charts/big.tgz', send(big)],
      ['/stable/charts/broken.tgz', send('oops', 500)],
      ['/empty/index.yaml', send(index('  memcached:\n  - {name: memcached, version: 5.3.0, urls: [charts/empty.tgz]}'))],
      ['/empty/charts/empty.tgz', send('', 204)],
      ['/bad/index.yaml', send(index('  memcached:\n  - {version: 1.0.0, urls: oops}'))],
      ['/gz/index.yaml', (req, res) => {
        asked.push(['index', req.headers['accept-encoding']]);
        const text = index(`  memcached:\n  - {name: memcached, version: 7.0.1, urls: [charts/memcached-7.0.1.tgz], digest: ${sha256Hex(v1)}}`);
        // Gzipped only when asked, as a compressing web server does.
        if (req.headers['accept-encoding'] === undefined) res.writeHead(200).end(text);
        else res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(text));
      }],
      // Labelled gzip, as some servers label a .tgz: the archive is kept as sent, not decoded.
      ['/gz/charts/memcached-7.0.1.tgz', (req, res) => {
        asked.push(['archive', req.headers['accept-encoding']]);
        res.writeHead(200, { 'content-encoding': 'gzip' }).end(v1);
      }],
      ['/creds/index.yaml', send(index(`  memcached:\n  - {name: memcached, version: 7.1.0, urls: ["${mirror.url.replace('http://', 'http://reader:s3cret@')}/mirror/memcached-7.1.0.tgz"]}`))],
      // Bodies that begin and never end: the deadline stops the read.
      ['/stall/index.yaml', (_req, res) => void res.writeHead(200).write('apiVersion: v1\n')],
      ['/stall-archive/index.yaml', send(index('  memcached:\n  - {name: memcached, version: 7.0.1, urls: [charts/memcached-7.0.1.tgz]}'))],
      ['/stall-archive/charts/memcached-7.0.1.tgz', (_req, res) => void res.writeHead(200).write(v1.subarray(0, 64))],
      ['/private/index.yaml', (req, res) => {
        if (req.headers.authorization === `Basic ${Buffer.from('u:p').toString('base64')}`) {
          res.writeHead(200).end(index(`  memcached:\n  - {version: 7.1.0, urls: ["${mirror.url}/mirror/memcached-7.1.0.tgz"]}`));
        } else res.writeHead(401).end();
      }],
    ]),
  );
});

after(async () => {
  await repo.close();
  await mirror.close();
  await rm(base, { recursive: true, force: true });
});

const freshCache = (): Promise<string> => freshCacheIn(base);

const ref = (version?: string, path = '/stable'): RepoChartRef => ({ type: 'repo', url: `${repo.url}${path}`, chart: 'memcached', ...(version === undefined ? {} : { version }) });
const noAuth = { auth: () => undefined };

test('the highest stable version in range is fetched into the cache, relative URL resolved, bytes and digest intact', async () => {
  const cacheDir = await freshCache();
  const got = await fetchChart(ref('~7.0'), { cacheDir, ...noAuth });
  assert.equal(got.version, '7.0.1');
  assert.equal(got.name, 'memcached');
  assert.equal(got.appVersion, '1.6');
  assert.equal(got.kind, 'archive');
  assert.equal(got.digest, `sha256:${sha256Hex(v1)}`);
  assert.equal(got.source, `${repo.url}/stable/charts/memcached-7.0.1.tgz`);
  assert.equal(got.path, join(cacheDir, 'charts', 'sha256', `${sha256Hex(v1)}.tgz`));
  assert.deepEqual(await readFile(got.path), v1);
  // Cached by its digest: the second fetch reads the index again, but not the archive.
  const before = repo.hits.get('/stable/charts/memcached-7.0.1.tgz');
  const again = await fetchChart(ref('7.0.1'), { cacheDir, ...noAuth });
  assert.equal(again.path, got.path);
  assert.equal(repo.hits.get('/stable/charts/memcached-7.0.1.tgz'), before);
  // Work files are gone.
  assert.deepEqual(await readdir(join(cacheDir, 'tmp')), []);
});

test('neither the index nor the archive is asked for gzipped, as Helm\'s getter; an archive labelled gzip is kept as sent', async () => {
  const got = await fetchChart(ref('7.0.1', '/gz'), { cacheDir: await freshCache(), ...noAuth });
  assert.equal(got.digest, `sha256:${sha256Hex(v1)}`);
  assert.deepEqual(await readFile(got.path), v1);
  assert.deepEqual(asked, [['index', undefined], ['archive', undefined]]);
});

test('no range means the highest stable version; an absolute URL on another host works; prereleases need a prerelease range', async () => {
  const cacheDir = await freshCache();
  assert.equal((await fetchChart(ref(), { cacheDir, ...noAuth })).version, '7.3.0');
  const mirrored = await fetchChart(ref('>=7.1.0 <7.2.0'), { cacheDir, ...noAuth });
  assert.equal(mirrored.source, `${mirror.url}/mirror/memcached-7.1.0.tgz`);
  assert.deepEqual(await readFile(mirrored.path), v2);
  const rc = await fetchChart(ref('>=8.0.0-0'), { cacheDir, ...noAuth });
  assert.equal(rc.version, '8.0.0-rc.1');
});

test('no version in range: the error lists what exists', async () => {
  const cacheDir = await freshCache();
  await assert.rejects(fetchChart(ref('^9'), { cacheDir, ...noAuth }), (err: unknown) => {
    assert.ok(err instanceof NoMatchingVersionError);
    assert.equal(err.code, 'HELM_CHART_NO_VERSION');
    assert.deepEqual(err.available, ['8.0.0-rc.1', '7.3.0', '7.2.0', '7.1.0', '7.0.1', '6.0.0', '5.2.0', '5.1.0', '5.0.0']);
    assert.match(err.message, /memcached from http:\/\/127\.0\.0\.1:\d+\/stable \(version "\^9"\): no version matches "\^9"; available: 8\.0\.0-rc\.1, 7\.3\.0/);
    return true;
  });
});

test('a digest mismatch is refused and nothing of it stays in the cache', async () => {
  const cacheDir = await freshCache();
  await assert.rejects(fetchChart(ref('6.0.0'), { cacheDir, ...noAuth }), isCode('HELM_CHART_DIGEST_MISMATCH', /tampered\.tgz has digest sha256:[0-9a-f]{64}, but sha256:[0-9a-f]{64} was expected/));
  assert.deepEqual(await readdir(join(cacheDir, 'charts', 'sha256')).catch(() => []), []);
  assert.deepEqual(await readdir(join(cacheDir, 'tmp')), []);
});

test('an archive that is not the version the index promised is refused', async () => {
  await assert.rejects(fetchChart(ref('7.2.0'), { cacheDir: await freshCache(), ...noAuth }), isCode('HELM_CHART_MISMATCH', /promised memcached 7\.2\.0 .* holds memcached 9\.9\.9/));
});

test('size limits apply to archives and to the index', async () => {
  await assert.rejects(fetchChart(ref('7.3.0'), { cacheDir: await freshCache(), maxArchiveBytes: 50_000, ...noAuth }), isCode('HELM_CHART_TOO_LARGE'));
  await assert.rejects(fetchChart(ref('7.0.1'), { cacheDir: await freshCache(), maxIndexBytes: 100, ...noAuth }), isCode('HELM_CHART_TOO_LARGE', /index\.yaml/));
});

test('missing things are named: the index, the chart, the archive; other statuses and empty URL lists too', async () => {
  const cacheDir = await freshCache();
  await assert.rejects(fetchChart(ref('1', '/nothing-here'), { cacheDir, ...noAuth }), isCode('HELM_CHART_NOT_FOUND', /repository index .*\/nothing-here\/index\.yaml does not exist \(HTTP 404/));
  await assert.rejects(fetchChart({ ...ref(), chart: 'nginx' }, { cacheDir, ...noAuth }), isCode('HELM_CHART_NOT_FOUND', /no chart named "nginx" \(it lists: memcached, redis\)/));
  await assert.rejects(fetchChart(ref('5.0.0'), { cacheDir, ...noAuth }), isCode('HELM_CHART_NOT_FOUND', /chart archive .*gone\.tgz does not exist/));
  await assert.rejects(fetchChart(ref('5.1.0'), { cacheDir, ...noAuth }), isCode('HELM_CHART_HTTP', /HTTP 500/));
  await assert.rejects(fetchChart(ref('5.3.0', '/empty'), { cacheDir, ...noAuth }), isCode('HELM_CHART_HTTP', /empty\.tgz could not be fetched \(HTTP 204/));
  await assert.rejects(fetchChart(ref('5.2.0'), { cacheDir, ...noAuth }), (err: unknown) => err instanceof ChartIndexError && err.field === 'entries.memcached[8].urls');
});

test('a bad index names the field', async () => {
  await assert.rejects(fetchChart(ref(undefined, '/bad'), { cacheDir: await freshCache(), ...noAuth }), (err: unknown) => {
    assert.ok(err instanceof ChartIndexError);
    assert.equal(err.field, 'entries.memcached[0].urls');
    assert.match(err.message, /\/bad\/index\.yaml: entries\.memcached\[0\]\.urls: expected a list of URLs/);
    return true;
  });
});

test('an unreachable host is named', async () => {
  // A port that was free a moment ago: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0));
    });
  });
  await assert.rejects(
    fetchChart({ type: 'repo', url: `http://127.0.0.1:${port}/charts`, chart: 'x' }, { cacheDir: await freshCache(), ...noAuth }),
    isCode('HELM_CHART_UNREACHABLE', new RegExp(`cannot reach 127\\.0\\.0\\.1:${port} .*ECONNREFUSED`)),
  );
});

test('an index or an archive whose body stops coming fails at the deadline, in the one wording of a deadline', async () => {
  const host = new URL(repo.url).host.replace(/\./g, '\\.');
  await assert.rejects(
    fetchChart(ref(undefined, '/stall'), { cacheDir: await freshCache(), timeoutMs: 1000, ...noAuth }),
    isCode('HELM_CHART_UNREACHABLE', new RegExp(`reading http://${host}/stall/index\\.yaml failed: no answer from ${host} within 1 s$`)),
  );
  // Each request has its own deadline: a second is room for the index before the archive stalls.
  await assert.rejects(
    fetchChart(ref(undefined, '/stall-archive'), { cacheDir: await freshCache(), timeoutMs: 1000, ...noAuth }),
    isCode('HELM_CHART_UNREACHABLE', new RegExp(`reading http://${host}/stall-archive/charts/memcached-7\\.0\\.1\\.tgz failed: no answer from ${host} within 1 s$`)),
  );
});

test('an archive URL with credentials in it is refused by its field, the credentials not shown', async () => {
  await assert.rejects(fetchChart(ref(undefined, '/creds'), { cacheDir: await freshCache(), ...noAuth }), (err: unknown) => {
    assert.ok(err instanceof ChartIndexError, String(err));
    assert.equal(err.field, 'entries.memcached[0].urls[0]');
    assert.match(err.message, /"http:\/\/\*\*\*@127\.0\.0\.1:\d+\/mirror\/memcached-7\.1\.0\.tgz" has credentials in it, which are not sent/);
    assert.doesNotMatch(err.message, /s3cret|reader/);
    return true;
  });
});

test('repository credentials go to the repository origin only', async () => {
  const cacheDir = await freshCache();
  const privateRef = ref(undefined, '/private');
  await assert.rejects(fetchChart(privateRef, { cacheDir, ...noAuth }), isCode('HELM_CHART_DENIED', /HTTP 401/));
  const got = await fetchChart(privateRef, { cacheDir, auth: (host) => (host === new URL(repo.url).host ? { username: 'u', password: 'p' } : undefined) });
  assert.equal(got.version, '7.1.0');
  assert.equal(mirror.auth.get('/mirror/memcached-7.1.0.tgz'), undefined, 'credentials leaked to another origin');
});

test('listChartVersions gives every version, highest first', async () => {
  assert.deepEqual(await listChartVersions(ref('^7'), noAuth), ['8.0.0-rc.1', '7.3.0', '7.2.0', '7.1.0', '7.0.1', '6.0.0', '5.2.0', '5.1.0', '5.0.0']);
});
