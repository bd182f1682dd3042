import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createCertificateAuthority, issueCertificate } from '../util/pki.js';
import { FakeCluster } from './fake-cluster.test-helper.js';
import { MetricsAuthorizer } from './metrics-auth.js';
import { ControllerMetrics, ResourceCreatedMetric } from './metrics.js';
import { metricsServingCertificate, parseBindAddress, startEndpointServer } from './probe-server.js';

const logger = pino({ level: 'silent' });

interface Answer {
  status: number;
  body: string;
}

function get(url: string, o: { path?: string; method?: string; token?: string; ca?: string } = {}): Promise<Answer> {
  const u = new URL(o.path ?? '/', url);
  const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, { method: o.method ?? 'GET', headers: o.token === undefined ? {} : { authorization: `Bearer ${o.token}` }, ...(o.ca === undefined ? {} : { ca: o.ca }) });
  return new Promise((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends raw bytes and answers the status line the server sent back. */
function raw(url: string, text: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => s.end(text));
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('close', () => resolve(got.split('\r\n')[0] ?? ''));
    // Node 24's server answers a request it refuses (431) and closes with our bytes still unread,
    // which the kernel turns into a reset: the answer came first, and it is what is checked.
    s.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' && got.startsWith('HTTP/') ? resolve(got.split('\r\n')[0] ?? '') : reject(err)));
  });
}

/** An API server that knows the reader's token (may read metrics) and a stranger's. */
const api = new FakeCluster();
api.tokens.set('reader-token', { username: 'reader' });
api.tokens.set('stranger-token', { username: 'stranger' });
api.reviewAccess = (r) => r.user === 'reader';
const reviewer = api.client();

describe('the probe and metrics server', () => {
  it('answers /healthz at once and /readyz only when ready; it serves no metrics where only probes are asked for', async () => {
    let ready = false;
    const s = await startEndpointServer({ name: 'probes', address: '127.0.0.1:0', logger, probes: { ready: () => ready } });
    try {
      assert.equal((await get(s.url, { path: '/healthz' })).status, 200);
      assert.equal((await get(s.url, { path: '/readyz' })).status, 503);
      ready = true;
      assert.deepEqual(await get(s.url, { path: '/readyz' }), { status: 200, body: 'ok' });
      assert.equal((await get(s.url, { path: '/metrics' })).status, 404);
    } finally {
      await s.close();
    }
  });

  it('survives what an attacker sends: bad targets 400, other methods 405, garbage 400, and still answers', async () => {
    const s = await startEndpointServer({ name: 'probes', address: '127.0.0.1:0', logger, probes: { ready: () => true }, metrics: new Registry() });
    try {
      assert.equal((await get(s.url, { path: '/%E0%A4%A' })).status, 400);
      assert.equal((await get(s.url, { path: '/metrics', method: 'POST' })).status, 405);
      assert.match(await raw(s.url, 'NOT HTTP AT ALL\r\n\r\n'), /^HTTP\/1\.1 400/);
      assert.match(await raw(s.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`), /^HTTP\/1\.1 431/);
      assert.equal((await get(s.url, { path: '/healthz' })).status, 200);
    } finally {
      await s.close();
    }
  });

  it('serves metrics over HTTPS with a self-signed certificate, behind TokenReview and SubjectAccessReview: 401, 403, 200', async () => {
    const registry = new Registry();
    const metrics = new ControllerMetrics(registry, 'controller-runtime');
    metrics.observe('memcached-controller', 'success', 0.2);
    metrics.observe('memcached-controller', 'requeue', 0.1);
    metrics.observe('memcached-controller', 'terminal', 0.1);
    metrics.setDepth('memcached-controller', 2);
    const created = new ResourceCreatedMetric(registry);
    const cr = { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: 'memcached-sample', namespace: 'default', creationTimestamp: '2026-11-26T10:00:00Z' } };
    created.set(cr);
    const cert = await metricsServingCertificate(join(tmpdir(), 'no-such-dir-for-binnacle'));
    assert.equal(cert.source, 'self-signed');
    assert.equal(cert.mountedFrom, undefined, 'nothing to read again');
    const s = await startEndpointServer({ name: 'metrics', address: '127.0.0.1:0', logger, metrics: registry, tls: cert, auth: new MetricsAuthorizer({ client: reviewer }) });
    try {
      assert.match(s.url, /^https:/);
      assert.equal((await get(s.url, { path: '/metrics', ca: cert.certPem })).status, 401);
      assert.equal((await get(s.url, { path: '/metrics', ca: cert.certPem, token: 'forged' })).status, 401);
      assert.deepEqual(await get(s.url, { path: '/metrics', ca: cert.certPem, token: 'stranger-token' }), { status: 403, body: 'Authorization denied for user stranger\n' });
      const ok = await get(s.url, { path: '/metrics', ca: cert.certPem, token: 'reader-token' });
      assert.equal(ok.status, 200);
      const at = Date.parse('2026-11-26T10:00:00Z') / 1000;
      assert.ok(ok.body.includes(`resource_created_at_seconds{group="cache.example.com",kind="Memcached",name="memcached-sample",namespace="default",version="v1alpha1"} ${at}`), ok.body);
      assert.match(ok.body, /controller_runtime_reconcile_total\{controller="memcached-controller",result="success"\} 1/);
      assert.match(ok.body, /controller_runtime_reconcile_total\{controller="memcached-controller",result="requeue_after"\} 1/);
      assert.match(ok.body, /controller_runtime_reconcile_total\{controller="memcached-controller",result="error"\} 1/);
      assert.match(ok.body, /controller_runtime_reconcile_errors_total\{controller="memcached-controller"\} 1/);
      assert.match(ok.body, /controller_runtime_terminal_reconcile_errors_total\{controller="memcached-controller"\} 1/);
      assert.match(ok.body, /controller_runtime_reconcile_time_seconds_count\{controller="memcached-controller"\} 3/);
      assert.match(ok.body, /workqueue_depth\{name="memcached-controller",controller="memcached-controller"\} 2/);
      // A deleted CR leaves the gauge.
      created.delete(cr);
      assert.ok(!(await get(s.url, { path: '/metrics', ca: cert.certPem, token: 'reader-token' })).body.includes('resource_created_at_seconds{'));
      // Plain HTTP to the TLS port gets no metrics.
      assert.doesNotMatch(await raw(s.url.replace('https:', 'http:'), 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'), /200/);
    } finally {
      await s.close();
    }
  });

  it('serves the certificate mounted where controller-runtime looks (tls.crt and tls.key) instead', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metrics-certs-'));
    try {
      const ca = await createCertificateAuthority('mounted-ca');
      const leaf = await issueCertificate(ca, { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'tls.crt'), leaf.certPem);
      writeFileSync(join(dir, 'tls.key'), leaf.keyPem);
      const cert = await metricsServingCertificate(dir);
      assert.equal(cert.source, 'mounted');
      assert.deepEqual(cert.mountedFrom, { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') }, 'the files a renewal is read from');
      const s = await startEndpointServer({ name: 'metrics', address: '127.0.0.1:0', logger, metrics: new Registry(), tls: cert });
      try {
        assert.equal((await get(s.url, { path: '/metrics', ca: ca.certPem })).status, 200, 'trusted through the mounted CA');
      } finally {
        await s.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads controller-runtime's bind addresses: \":8080\" is every interface, [::1]:x an IPv6 host", () => {
    assert.deepEqual(parseBindAddress(':8080'), { host: undefined, port: 8080 });
    assert.deepEqual(parseBindAddress(':8080', '127.0.0.1'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseBindAddress('0.0.0.0:8443'), { host: '0.0.0.0', port: 8443 });
    assert.deepEqual(parseBindAddress('[::1]:9'), { host: '::1', port: 9 });
    assert.throws(() => parseBindAddress(':http'), /the port must be a number/);
    assert.throws(() => parseBindAddress(':70000'), /the port must be a number/);
  });
});
