/**
 * The manager's metrics as operator-controller's and catalogd's are served (install-self runs it
 * so): over HTTPS, only to callers whose bearer token the API server authenticates (TokenReview)
 * and whose RBAC allows `get` on /metrics (SubjectAccessReview), the probes apart on plain HTTP
 * for the kubelet, and every HTTPS server (metrics and the catalog API) under OLM v1's TLS
 * profile flags. The real `binnacle manager` process on the e2e control plane; the tokens are
 * real ServiceAccount tokens, bound or not to install-self's metrics-reader ClusterRole.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions } from 'node:tls';
import type { KubeClient } from '../../src/kube/client.js';
import { METRICS_READER_ROLE, selfManifests } from '../../src/self/manifests.js';
import { createCertificateAuthority, issueCertificate } from '../../src/util/pki.js';
import { servedFingerprint } from '../../src/util/tls-peer.test-helper.js';
import { freePorts } from '../../src/util/ports.js';
import { e2eClient, e2eKubeconfig, eventually, kubectl, uniqueName } from './env.js';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');
const ns = uniqueName('metrics-tls');
const readerBinding = `${ns}-reader`;
let client: KubeClient;
let work: string;
let proc: ChildProcess;
let stderr = '';
let ports: { metrics: number; probes: number; catalog: number };
let metricsCa: Awaited<ReturnType<typeof createCertificateAuthority>>;
let metricsCerts: string;

/** GET over HTTPS, certificate not checked (self-signed, as the scenarios' client does); status and body. */
function httpsGet(port: number, path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });
}

/** A TLS handshake; the protocol negotiated, or undefined when the server refused it. */
function handshake(port: number, options: ConnectionOptions): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options }, () => {
      resolve(s.getProtocol() ?? '');
      s.end();
    });
    s.on('error', () => resolve(undefined));
  });
}

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-metrics-tls-'));
  ports = await freePorts(['metrics', 'probes', 'catalog']);
  const ca = await createCertificateAuthority('metrics-tls-e2e');
  const leaf = await issueCertificate(ca, { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
  await writeFile(join(work, 'tls.crt'), leaf.certPem);
  await writeFile(join(work, 'tls.key'), leaf.keyPem);
  // The metrics certificate mounted as a Secret would be (--metrics-cert-dir), renewed by a test below.
  metricsCa = await createCertificateAuthority('metrics-tls-e2e-metrics');
  metricsCerts = join(work, 'metrics-certs');
  await mkdir(metricsCerts);
  const first = await issueCertificate(metricsCa, { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
  await writeFile(join(metricsCerts, 'tls.crt'), first.certPem);
  await writeFile(join(metricsCerts, 'tls.key'), first.keyPem);
  // install-self's ClusterRole (the same object), and two ServiceAccounts: one bound to it, one not.
  const role = selfManifests({ namespace: 'binnacle-system', image: 'unused' }).find((o) => o.kind === 'ClusterRole' && o.metadata.name === METRICS_READER_ROLE);
  assert.ok(role !== undefined, `install-self makes the ClusterRole ${METRICS_READER_ROLE}`);
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await client.apply(role);
  for (const sa of ['reader', 'stranger']) await client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: ns } });
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: readerBinding },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: METRICS_READER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
  });
  proc = spawn(
    process.execPath,
    [
      '--import', 'tsx', MAIN, 'manager', '--kubeconfig', e2eKubeconfig(), '--data-dir', join(work, 'data'),
      '--metrics-bind-address', `127.0.0.1:${ports.metrics}`, '--metrics-secure', '--metrics-require-rbac', '--metrics-cert-dir', metricsCerts,
      '--health-probe-bind-address', `127.0.0.1:${ports.probes}`,
      '--catalog-bind-address', `127.0.0.1:${ports.catalog}`, '--catalog-tls-cert', join(work, 'tls.crt'), '--catalog-tls-key', join(work, 'tls.key'),
      '--tls-profile=custom', '--tls-custom-version=TLSv1.3',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, KUBECONFIG: '' } },
  );
  proc.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  await eventually('the manager is ready on its probe address (plain HTTP)', async () => {
    if (proc.exitCode !== null) throw new Error(`the manager exited ${proc.exitCode}: ${stderr}`);
    const res = await fetch(`http://127.0.0.1:${ports.probes}/readyz`).catch(() => undefined);
    await res?.body?.cancel();
    return res?.status === 200 ? true : undefined;
  }, 120_000);
});

after(async () => {
  // Gone before the next file on this lane starts a manager of its own.
  if (proc !== undefined && proc.exitCode === null) {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
    proc.kill('SIGKILL');
  }
  await kubectl('delete', 'clusterrole', METRICS_READER_ROLE, '--ignore-not-found').catch(() => undefined);
  await kubectl('delete', 'clusterrolebinding', readerBinding, '--ignore-not-found').catch(() => undefined);
  await kubectl('delete', 'namespace', ns, '--ignore-not-found', '--wait=false').catch(() => undefined);
  client?.close();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

test('probes answer on their own plain address, and only there: the metrics address serves no /readyz', async () => {
  const healthz = await fetch(`http://127.0.0.1:${ports.probes}/healthz`);
  assert.equal(healthz.status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${ports.probes}/metrics`)).status, 404, 'no metrics on the probe address');
  assert.equal((await httpsGet(ports.metrics, '/readyz', 'x')).status, 404, 'no probes on the metrics address');
});

test('/metrics over HTTPS: no token 401, a token the API server does not know 401, a ServiceAccount without the role 403, one bound to install-self\'s metrics-reader role gets Prometheus metrics', async () => {
  assert.equal((await httpsGet(ports.metrics, '/metrics')).status, 401);
  assert.equal((await httpsGet(ports.metrics, '/metrics', 'not-a-token')).status, 401);
  const stranger = (await kubectl('create', 'token', 'stranger', '-n', ns)).trim();
  const denied = await httpsGet(ports.metrics, '/metrics', stranger);
  assert.equal(denied.status, 403, denied.body);
  assert.doesNotMatch(denied.body, /binnacle_/, 'nothing of the metrics leaks to a refused caller');
  const reader = (await kubectl('create', 'token', 'reader', '-n', ns)).trim();
  const ok = await eventually('the reader is allowed (RBAC caches settle)', async () => {
    const r = await httpsGet(ports.metrics, '/metrics', reader);
    return r.status === 200 ? r : undefined;
  }, 30_000);
  assert.match(ok.body, /^# TYPE binnacle_process_\w+ \w+$/m, 'Prometheus text with the manager\'s own metrics');
  assert.match(ok.body, /^# TYPE binnacle_reconcile_total counter$/m);
});

test('--tls-profile=custom --tls-custom-version=TLSv1.3 holds on both HTTPS servers: TLS 1.3 accepted, a client whose highest version is 1.2 refused', async () => {
  for (const [server, port] of [['metrics', ports.metrics], ['catalog API', ports.catalog]] as const) {
    assert.equal(await handshake(port, { minVersion: 'TLSv1.3' }), 'TLSv1.3', `${server}: TLS 1.3`);
    assert.equal(await handshake(port, { maxVersion: 'TLSv1.2' }), undefined, `${server}: TLS 1.2 refused`);
  }
  assert.equal(proc.exitCode, null, `the manager still runs: ${stderr}`);
});

test('bad TLS and metrics flags stop the manager before it starts, one line naming the flag', async () => {
  const cases: [string[], RegExp][] = [
    [['--metrics-require-rbac'], /^error: --metrics-require-rbac needs --metrics-secure/m],
    [['--tls-profile=custom', '--tls-custom-ciphers=TLS_NOPE'], /^error: --tls-custom-ciphers: unknown cipher "TLS_NOPE"/m],
    [['--tls-custom-version=TLSv1.3'], /^error: --tls-custom-version: only used with --tls-profile=custom \(the profile is intermediate\)/m],
    [['--metrics-secure', '--metrics-cert-dir', '/nonexistent-binnacle-certs'], /^error: --metrics-cert-dir \/nonexistent-binnacle-certs: tls\.crt and tls\.key not found there/m],
  ];
  for (const [flags, message] of cases) {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'manager', '--kubeconfig', e2eKubeconfig(), '--metrics-bind-address', '127.0.0.1:0', ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    // A flag check that let the manager start would leave it running: bounded, and killed then.
    const bound = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(bound);
    assert.notEqual(code, 0, flags.join(' '));
    assert.match(err, message, err);
    assert.doesNotMatch(err, /^\s+at /m, 'no stack trace');
  }
});

test('a renewed certificate in --metrics-cert-dir is served to new connections without a restart, under the same TLS profile (a pair read once would expire under a long-running manager)', async () => {
  const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;
  assert.equal(await servedFingerprint(ports.metrics), fingerprint(await readFile(join(metricsCerts, 'tls.crt'), 'utf8')), 'the mounted certificate is served');
  const renewed = await issueCertificate(metricsCa, { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
  // Each file replaced at once, key first, as a renewal that never shows a half-written file.
  for (const [name, pem] of [['tls.key', renewed.keyPem], ['tls.crt', renewed.certPem]] as const) {
    await writeFile(join(metricsCerts, `${name}.new`), pem);
    await rename(join(metricsCerts, `${name}.new`), join(metricsCerts, name));
  }
  await eventually('the renewed certificate is served', async () => ((await servedFingerprint(ports.metrics)) === fingerprint(renewed.certPem) ? true : undefined), 60_000);
  assert.equal(await handshake(ports.metrics, { maxVersion: 'TLSv1.2' }), undefined, 'the TLS profile holds after the renewal: TLS 1.2 refused');
  assert.equal(await handshake(ports.metrics, { minVersion: 'TLSv1.3' }), 'TLSv1.3');
  assert.match(stderr, /serving the renewed certificate/, 'the manager says it took the renewed pair');
  assert.equal(proc.exitCode, null, `the manager still runs: ${stderr}`);
});
