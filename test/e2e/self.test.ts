/**
 * Binnacle inside the cluster: `install-self` twice (the second changes nothing), a
 * half-installed state named by `status-self` and repaired by `install-self`; then the manager
 * runs as a Pod would — its identity a token from the TokenRequest API for the ServiceAccount
 * install-self created, the cluster CA and KUBERNETES_SERVICE_HOST/PORT, nothing else — and an
 * operator installs through it (the proof that the ClusterRole is enough), while the account
 * may not create workloads, read Secrets or impersonate groups itself (no more than enough);
 * `uninstall-self` refuses while the extension is installed, and `--force` removes both.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION, type ClusterExtension } from '../../src/api/types.js';
import { publishPackages } from '../../src/publish/packages.js';
import type { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { findCondition, managedFieldsOf, type KubeObject } from '../../src/kube/types.js';
import { adminInstaller, e2eClient, e2eKubeconfig, e2eRegistry, eventually, uniqueName } from './env.js';
import { CORPUS } from './operators.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'binnacle.js');
const NS = 'binnacle-system';
const SA = 'binnacle-manager';

let client: KubeClient;
let work: string;
let manager: ChildProcess | undefined;

async function binnacle(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args, '--kubeconfig', e2eKubeconfig()], { env: { ...process.env, BINNACLE_FROM_SOURCE: '1' }, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function managerLog(): string {
  try {
    return readFileSync(join(work, 'manager.log'), 'utf8').split('\n').slice(-40).join('\n');
  } catch {
    return '(no manager log)';
  }
}

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-self-'));
});

after(async () => {
  if (manager !== undefined && manager.exitCode === null) {
    manager.kill('SIGTERM');
    await new Promise((r) => manager?.once('exit', r));
  }
  await binnacle('uninstall-self', '--force', '--timeout', '30');
  client.close();
  await rm(work, { recursive: true, force: true });
});

describe('install-self', () => {
  test('installs, changes nothing the second time, repairs a half-installed state, and upgrades an install made before the Recreate strategy', async () => {
    const first = await binnacle('install-self', '--image', 'registry.example/binnacle:e2e', '-o', 'json');
    assert.equal(first.code, 0, first.stderr);
    const r1 = JSON.parse(first.stdout) as { objects: { kind: string; name: string; state: string }[] };
    assert.ok(r1.objects.some((o) => o.kind === 'ClusterRole' && o.state === 'created'));
    const second = await binnacle('install-self', '--image', 'registry.example/binnacle:e2e', '-o', 'json');
    assert.equal(second.code, 0, second.stderr);
    const r2 = JSON.parse(second.stdout) as { objects: { kind: string; name: string; state: string }[] };
    assert.deepEqual(r2.objects.filter((o) => o.state !== 'unchanged' && o.state !== 'skipped'), [], 'the second install changes nothing');

    const st = await binnacle('status-self', '-o', 'json');
    assert.equal(st.code, 0, st.stderr);
    assert.equal((JSON.parse(st.stdout) as { state: string }).state, 'installed');
    const deployment = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: SA });
    const container = (deployment.spec as { template: { spec: { containers: { image: string; args: string[]; readinessProbe?: unknown; livenessProbe?: unknown }[] } } }).template.spec.containers[0];
    assert.equal(container?.image, 'registry.example/binnacle:e2e');
    assert.ok(container?.args.includes('--leader-elect'));
    assert.ok(container?.readinessProbe !== undefined && container.livenessProbe !== undefined);
    await client.get({ apiVersion: 'v1', kind: 'Service', namespace: NS, name: 'binnacle-catalogs' });

    // Half-installed: the ClusterRole deleted by hand.
    await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: SA });
    const partial = await binnacle('status-self');
    assert.equal(partial.code, 1);
    assert.match(partial.stderr, /half-installed \(missing ClusterRole binnacle-manager\): run `binnacle install-self`/);
    const repair = await binnacle('install-self', '--image', 'registry.example/binnacle:e2e');
    assert.equal(repair.code, 0, repair.stderr);
    assert.match(repair.stderr, /re-created ClusterRole binnacle-manager/);

    // An install made before the manager rolled out with Recreate: its Deployment applied without a
    // strategy, so the API server filled in RollingUpdate's rollingUpdate, which no apply holds.
    const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: SA };
    const live = await client.get(ref);
    const { strategy: _strategy, ...specWithout } = live.spec as Record<string, unknown>;
    await client.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: SA, namespace: NS, labels: live.metadata.labels ?? {} }, spec: specWithout }, { force: true });
    const strategyOf = async (): Promise<unknown> => ((await client.get(ref)).spec as { strategy?: unknown }).strategy;
    assert.deepEqual(await strategyOf(), { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } }, 'as an older install left it');
    const upgrade = await binnacle('install-self', '--image', 'registry.example/binnacle:e2e');
    assert.equal(upgrade.code, 0, upgrade.stderr);
    assert.deepEqual(await strategyOf(), { type: 'Recreate' });
    // The switch's own field manager handed its hold to Binnacle's apply, which alone holds the type.
    const entries = managedFieldsOf(await client.get(ref));
    const holders = entries.filter((e) => JSON.stringify(e.fieldsV1 ?? {}).includes('"f:strategy":{"f:type"')).map((e) => [e.manager, e.operation]);
    assert.deepEqual(holders, [['binnacle', 'Apply']], JSON.stringify(entries.map((e) => e.manager)));
  });

  test("an operator installs through the manager running with a Pod's identity", async () => {
    // The files and environment a Pod of the Deployment would get.
    const tokenReview = await client.rawRequest(
      'POST',
      `/api/v1/namespaces/${NS}/serviceaccounts/${SA}/token`,
      JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } }),
    );
    assert.equal(tokenReview.status, 201, tokenReview.body);
    const token = (JSON.parse(tokenReview.body) as { status: { token: string } }).status.token;
    const kc = loadKubeConfig({ kubeconfig: e2eKubeconfig() });
    const cluster = kc.getCurrentCluster();
    const ca = cluster?.caData !== undefined ? Buffer.from(cluster.caData, 'base64').toString() : readFileSync(cluster?.caFile ?? '', 'utf8');
    const server = new URL(cluster?.server ?? '');
    const saDir = join(work, 'serviceaccount');
    await mkdir(saDir, { recursive: true });
    await writeFile(join(saDir, 'token'), token);
    await writeFile(join(saDir, 'ca.crt'), ca);
    await writeFile(join(saDir, 'namespace'), NS);
    const home = join(work, 'home');
    await mkdir(home, { recursive: true });
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: home, BINNACLE_FROM_SOURCE: '1', BINNACLE_SERVICEACCOUNT_DIR: saDir, KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port };
    const log = createWriteStream(join(work, 'manager.log'));
    manager = spawn(
      process.execPath,
      [BIN, 'manager', '--leader-elect', `--leader-election-namespace=${NS}`, '--metrics-bind-address=127.0.0.1:0', '--catalog-bind-address=127.0.0.1:0', `--data-dir=${join(work, 'data')}`, '--health-timeout=120'],
      { env, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    manager.stdout?.pipe(log);
    manager.stderr?.pipe(log);
    await eventually('the manager leads', async () => {
      if (manager?.exitCode !== null) throw new Error(`the manager exited:\n${managerLog()}`);
      const lease = await client.find({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: NS, name: SA });
      return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity !== undefined ? true : undefined;
    }, 120_000);

    // No more than enough: the manager itself may not create workloads, read Secrets or claim groups.
    for (const attrs of [
      { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'default' },
      { verb: 'get', group: '', resource: 'secrets', namespace: 'kube-system' },
      { verb: 'impersonate', group: '', resource: 'groups', name: 'system:masters' },
      { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
    ]) {
      const review = await client.create<KubeObject & { status?: { allowed?: boolean } }>({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: { user: `system:serviceaccount:${NS}:${SA}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'], resourceAttributes: attrs },
      });
      assert.notEqual(review.status?.allowed, true, `the manager may not ${attrs.verb} ${attrs.resource}`);
    }

    const catalogName = uniqueName('self');
    const published = await publishPackages({
      packages: [join(CORPUS, 'poison-pill-operator')],
      registry: e2eRegistry(),
      repository: catalogName,
      select: (cfg) => new Set(cfg.bundles.filter((b) => JSON.stringify(b.properties).includes('"version":"0.0.6"')).map((b) => b.name)),
    });
    await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
    const ns = uniqueName('self-op');
    await adminInstaller(client, ns);
    const name = uniqueName('self-op');
    await client.apply({
      apiVersion: API_VERSION,
      kind: 'ClusterExtension',
      metadata: { name },
      spec: { namespace: ns, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', version: '0.0.6', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } } },
    });
    try {
      await eventually(
        `${name} installed`,
        async () => {
          const ce = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
          return ce.status?.observedGeneration === ce.metadata.generation && findCondition(ce.status?.conditions, 'Installed')?.status === 'True' && findCondition(ce.status?.conditions, 'Progressing')?.status === 'False' ? ce : undefined;
        },
        240_000,
        1000,
      );
    } catch (err) {
      const ce = await client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
      const conds = (ce?.status?.conditions ?? []).map((c) => `  ${c.type}=${c.status} ${c.reason}: ${c.message}`).join('\n');
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${conds}\nmanager log:\n${managerLog()}`, { cause: err });
    }
    assert.doesNotMatch(readFileSync(join(work, 'manager.log'), 'utf8'), /forbidden/i, 'the manager was never refused');

    // uninstall-self refuses while the extension is installed, and lists it…
    const refused = await binnacle('uninstall-self');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`ClusterExtension ${name}`));
    assert.match(refused.stderr, /--force/);
    await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: SA });

    // …and --force uninstalls the extension (through the running manager), then Binnacle.
    const forced = await binnacle('uninstall-self', '--force', '--timeout', '180');
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stderr, new RegExp(`removed ClusterExtension ${name}`));
    assert.deepEqual((await client.list('apps/v1', 'Deployment', { namespace: ns })).items.map((d) => d.metadata.name), [], `the operator's Deployment went with its extension; manager log:\n${managerLog()}`);
    assert.equal(await client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'clusterextensions.binnacle.dev' }), undefined);
    assert.equal(await client.find({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: SA }), undefined);
    const status = await binnacle('status-self');
    assert.equal(status.code, 1);
    assert.match(status.stderr, /not installed in this cluster: run `binnacle install-self`/);
    await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${ns}-installer` });
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  });
});
