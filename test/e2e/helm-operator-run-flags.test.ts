/**
 * `helm-operator run` started with operator-sdk's scaffolded manager arguments (ports moved to
 * free ones, the lease's namespace given, as outside a Pod it must be): probes answer, and the
 * metrics endpoint is HTTPS and RBAC-checked against the real API server: no token 401, a
 * ServiceAccount without the right 403, the reader's 200 with resource_created_at_seconds for
 * the CR. The full operator-sdk sample e2e lives elsewhere; this one is the flags and the server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import { createCertificateAuthority, issueCertificate } from '../../src/util/pki.js';
import { servedFingerprint } from '../../src/util/tls-peer.test-helper.js';
import { e2eClient, e2eKubeconfig, eventually, kubectl, uniqueName } from './env.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BINNACLE = join(ROOT, 'bin', 'binnacle.js');
const GROUP = 'flags.helm.binnacle.dev';

function get(url: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // The certificate is self-signed, made at the operator's start: what a scraper with insecureSkipVerify sees.
    const req = request(url, { rejectUnauthorized: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function getPlain(url: string): Promise<number> {
  return fetch(url).then((r) => r.status);
}

describe('helm-operator run with the scaffold arguments', () => {
  let client: KubeClient;
  let work: string;
  let operator: ChildProcess | undefined;
  let log = '';
  const ns = uniqueName('hor-flags');

  before(async () => {
    client = await e2eClient();
    work = await mkdtemp(join(tmpdir(), 'hor-flags-'));
    await mkdir(join(work, 'helm-charts', 'memcached', 'templates'), { recursive: true });
    await writeFile(join(work, 'helm-charts', 'memcached', 'Chart.yaml'), 'apiVersion: v2\nname: memcached\nversion: 0.1.0\n');
    await writeFile(join(work, 'helm-charts', 'memcached', 'templates', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata: {}\n');
    await writeFile(join(work, 'watches.yaml'), stringify([{ group: GROUP, version: 'v1alpha1', kind: 'Memcached', chart: 'helm-charts/memcached' }]));
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `memcacheds.${GROUP}` },
      spec: { group: GROUP, names: { kind: 'Memcached', plural: 'memcacheds', singular: 'memcached', listKind: 'MemcachedList' }, scope: 'Namespaced', versions: [{ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    };
    const reader = `${ns}-metrics-reader`;
    const objects = [
      crd,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'reader', namespace: ns } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'stranger', namespace: ns } },
      // What operator-sdk scaffolds as config/rbac/metrics_reader_role.yaml.
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: reader }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: reader }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: reader }, subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }] },
    ];
    await writeFile(join(work, 'objects.yaml'), objects.map((o) => stringify(o)).join('---\n'));
    await kubectl('apply', '-f', join(work, 'objects.yaml'));
    await kubectl('wait', '--for=condition=Established', `crd/memcacheds.${GROUP}`, '--timeout=60s');
  });

  after(async () => {
    // The CR goes while its operator runs, so its uninstall finalizer does not hold the CRD the
    // next file on this lane may wait for; by hand if the operator cannot (stopped by a failure).
    const cr = { apiVersion: `${GROUP}/v1alpha1`, kind: 'Memcached', namespace: ns, name: 'memcached-sample' };
    await client.delete(cr).catch(() => undefined);
    await eventually('the Memcached uninstalled by its operator', async () => ((await client.find(cr).catch(() => undefined)) === undefined ? true : undefined), 60_000, 500).catch(async () => {
      await client.patch(cr, { metadata: { finalizers: null } }).catch(() => undefined);
    });
    operator?.kill('SIGTERM');
    await kubectl('delete', '-f', join(work, 'objects.yaml'), '--ignore-not-found', '--wait=false').catch(() => undefined);
    await rm(work, { recursive: true, force: true });
    client.close();
  });

  test('probes answer; /metrics is 401 without a token, 403 without the right, 200 with resource_created_at_seconds for the reader', async () => {
    // The image's entry point, then the manager container's arguments after manager_metrics_patch.yaml (ports moved).
    const args = ['helm-operator', 'run', '--watches-file=./watches.yaml', '--metrics-require-rbac', '--metrics-secure', '--metrics-bind-address=127.0.0.1:0', '--leader-elect', `--leader-election-id=${ns}`, '--health-probe-bind-address=127.0.0.1:0', `--leader-election-namespace=${ns}`, '--kubeconfig', e2eKubeconfig()];
    // A certificate mounted where controller-runtime's metrics server looks ($TMPDIR/k8s-metrics-server/serving-certs), as a Secret volume would put it.
    const ca = await createCertificateAuthority('hor-flags-metrics');
    const certDir = join(work, 'tmp', 'k8s-metrics-server', 'serving-certs');
    await mkdir(certDir, { recursive: true });
    const first = await issueCertificate(ca, { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
    await writeFile(join(certDir, 'tls.crt'), first.certPem);
    await writeFile(join(certDir, 'tls.key'), first.keyPem);
    operator = spawn(process.execPath, [BINNACLE, ...args], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WATCH_NAMESPACE: ns, TMPDIR: join(work, 'tmp') } });
    operator.stdout?.on('data', (d: Buffer) => (log += d.toString()));
    operator.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    const urlOf = (name: string): string | undefined => {
      for (const line of log.split('\n')) {
        if (!line.includes(`"msg":"serving ${name}"`)) continue;
        const rec = JSON.parse(line) as { url?: string };
        return rec.url;
      }
      return undefined;
    };
    const probes = await eventually('the probe server', () => Promise.resolve(urlOf('health probes')), 60_000);
    const metrics = await eventually('the metrics server', () => Promise.resolve(urlOf('metrics')), 60_000);
    assert.match(metrics, /^https:/);
    assert.equal(await getPlain(`${probes}/healthz`), 200);
    await eventually('/readyz 200', async () => ((await getPlain(`${probes}/readyz`)) === 200 ? true : undefined), 60_000);
    await eventually('the leader lease', () => Promise.resolve(log.includes('serving Helm operator kinds') ? true : undefined), 60_000);

    await client.create({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Memcached', metadata: { name: 'memcached-sample', namespace: ns }, spec: { size: 1 } });
    const readerToken = (await kubectl('create', 'token', 'reader', '-n', ns)).trim();
    const strangerToken = (await kubectl('create', 'token', 'stranger', '-n', ns)).trim();
    assert.equal((await get(`${metrics}/metrics`)).status, 401);
    assert.equal((await get(`${metrics}/metrics`, 'not-a-token')).status, 401);
    assert.equal((await get(`${metrics}/metrics`, strangerToken)).status, 403);
    const ok = await eventually(
      'resource_created_at_seconds for the CR',
      async () => {
        const r = await get(`${metrics}/metrics`, readerToken);
        assert.equal(r.status, 200, r.body);
        return r.body.includes(`resource_created_at_seconds{group="${GROUP}",kind="Memcached",name="memcached-sample",namespace="${ns}",version="v1alpha1"}`) ? r.body : undefined;
      },
      60_000,
    );
    // controller-runtime's names (the reconcile counts themselves are unit-tested: a render may still be running here).
    assert.match(ok, /workqueue_adds_total\{name="helm-memcached-[^"]*",controller="helm-memcached-[^"]*"\} [1-9]/, 'the CR was queued');
    assert.match(ok, /controller_runtime_max_concurrent_reconciles\{controller="helm-memcached-[^"]*"\} [1-9]/);
    assert.match(ok, /# TYPE controller_runtime_reconcile_total counter/);
    assert.match(ok, /helm_operator_build_info\{/);

    // The mounted certificate is served, and a renewal of it is served without a restart.
    const port = Number(new URL(metrics).port);
    assert.equal(await servedFingerprint(port), new X509Certificate(first.certPem).fingerprint256, 'the mounted certificate, not a self-signed one');
    const renewed = await issueCertificate(ca, { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
    for (const [name, pem] of [['tls.key', renewed.keyPem], ['tls.crt', renewed.certPem]] as const) {
      await writeFile(join(certDir, `${name}.new`), pem);
      await rename(join(certDir, `${name}.new`), join(certDir, name));
    }
    await eventually('the renewed certificate is served', async () => ((await servedFingerprint(port)) === new X509Certificate(renewed.certPem).fingerprint256 ? true : undefined), 60_000);
    assert.equal((await get(`${metrics}/metrics`, readerToken)).status, 200, 'metrics still served after the renewal');
  });
});
