/**
 * bench/install: time from ClusterExtension creation to Installed=True for a 20-object bundle,
 * beside `kubectl apply --server-side` of the same objects plus waiting for the Deployment
 * (the floor) in the same run; then 100 ClusterExtensions at once beside 100 kubectl applies at
 * once (its floor); the manager's peak memory; and its API requests per extension (a reconcile
 * storm shows there). Runs on its own local cluster (`bench-install`), which it takes down at the end.
 *
 * usage: npx tsx bench/install.ts [--many 100] [--rounds 3]
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { clusterDown, clusterUp } from '../src/cluster/index.js';
import { freePort } from '../src/cluster/ports.js';
import { publishPackages } from '../src/catalog/publish.js';
import { loadKubeConfig } from '../src/kube/config.js';
import { KubeClient } from '../src/kube/client.js';
import { findCondition } from '../src/kube/types.js';
import { API_VERSION, type ClusterExtension } from '../src/api/types.js';
import { convertRegistryV1, loadBundleDir } from '../src/bundle/index.js';

const run = promisify(execFile);
const args = process.argv.slice(2);
const arg = (n: string, d: number): number => (args.includes(`--${n}`) ? Number(args[args.indexOf(`--${n}`) + 1]) : d);
const MANY = arg('many', 100);
const ROUNDS = arg('rounds', 3);
const ROOT = join(import.meta.dirname, '..');
const logger = pino({ level: 'warn' });

/** A registry+v1 bundle that converts to 20 namespaced objects (OwnNamespace, no CRDs). */
async function writeBundle(dir: string): Promise<string> {
  const pkg = join(dir, 'bench-op');
  const b = join(pkg, '1.0.0');
  await mkdir(join(b, 'manifests'), { recursive: true });
  await mkdir(join(b, 'metadata'), { recursive: true });
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'bench-op.v1.0.0', annotations: { 'alm-examples': '[]' } },
    spec: {
      displayName: 'Bench Operator',
      version: '1.0.0',
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: false },
      ],
      install: {
        strategy: 'deployment',
        spec: {
          permissions: [{ serviceAccountName: 'bench-op', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] }],
          deployments: [
            {
              name: 'bench-op',
              spec: {
                replicas: 1,
                selector: { matchLabels: { app: 'bench-op' } },
                template: { metadata: { labels: { app: 'bench-op' } }, spec: { serviceAccountName: 'bench-op', containers: [{ name: 'manager', image: 'registry.example/bench-op:1.0.0' }] } },
              },
            },
          ],
        },
      },
    },
  };
  await writeFile(join(b, 'manifests', 'bench-op.clusterserviceversion.yaml'), stringify(csv));
  for (let i = 0; i < 12; i++) await writeFile(join(b, 'manifests', `config-${i}.yaml`), stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `bench-config-${i}` }, data: { index: String(i) } }));
  for (let i = 0; i < 4; i++) {
    await writeFile(join(b, 'manifests', `svc-${i}.yaml`), stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: `bench-svc-${i}` }, spec: { selector: { app: 'bench-op' }, ports: [{ port: 8080 + i }] } }));
  }
  await writeFile(
    join(b, 'metadata', 'annotations.yaml'),
    stringify({
      annotations: {
        'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
        'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
        'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
        'operators.operatorframework.io.bundle.package.v1': 'bench-op',
        'operators.operatorframework.io.bundle.channels.v1': 'stable',
        'operators.operatorframework.io.bundle.channel.default.v1': 'stable',
      },
    }),
  );
  return pkg;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/** The manager's API request count so far, from its /metrics. */
async function apiRequests(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(/^binnacle_rest_client_requests_total\{[^}]*\} (\d+(?:\.\d+)?)$/gm)) total += Number(m[1]);
  return total;
}

async function installed(client: KubeClient, name: string): Promise<boolean> {
  const ce = await client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  return findCondition(ce?.status?.conditions, 'Installed')?.status === 'True' && findCondition(ce?.status?.conditions, 'Progressing')?.status === 'False';
}

async function namespaceWithInstaller(client: KubeClient, ns: string): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'installer', namespace: ns } });
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'installer-admin', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: ns }],
  });
}

function extension(name: string, ns: string): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name },
    spec: { namespace: ns, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'bench-op' } } },
  };
}

const work = await mkdtemp(join(tmpdir(), 'binnacle-bench-install-'));
const up = await clusterUp({ name: 'bench-install', logger, progress: () => undefined });
const kubectlEnv = { ...process.env, KUBECONFIG: up.kubeconfig, PATH: `${join(ROOT, '.cache', 'bin')}:${process.env.PATH ?? ''}` };
const client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
const pkgDir = await writeBundle(work);
const published = await publishPackages({ packages: [pkgDir], registry: up.registry, repository: 'bench' });

// The floor: the same 20 objects with kubectl apply --server-side, then wait for the Deployment.
const bundle = await loadBundleDir(join(pkgDir, '1.0.0'));
const floor: number[] = [];
let objectCount = 0;
for (let r = 0; r < ROUNDS; r++) {
  const ns = `floor-${r}`;
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const objects = convertRegistryV1(bundle, { installNamespace: ns, watchNamespaces: [ns] }).objects;
  objectCount = objects.length;
  const file = join(work, `floor-${r}.yaml`);
  await writeFile(file, objects.map((o) => stringify(o)).join('---\n'));
  const t0 = performance.now();
  await run('kubectl', ['apply', '--server-side', '-f', file], { env: kubectlEnv });
  await run('kubectl', ['-n', ns, 'wait', 'deployment/bench-op', '--for=condition=Available', '--timeout=120s'], { env: kubectlEnv });
  floor.push(performance.now() - t0);
}

// The floor of the many case: the same objects for MANY namespaces, all applied with kubectl
// apply --server-side at once, then waiting until every Deployment is Available.
const manyObjects: string[] = [];
for (let i = 0; i < MANY; i++) {
  const ns = `floor-many-${i}`;
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const file = join(work, `${ns}.yaml`);
  await writeFile(file, convertRegistryV1(bundle, { installNamespace: ns, watchNamespaces: [ns] }).objects.map((o) => stringify(o)).join('---\n'));
  manyObjects.push(file);
}
const tf = performance.now();
await Promise.all(manyObjects.map((file) => run('kubectl', ['apply', '--server-side', '-f', file], { env: kubectlEnv })));
await Promise.all(Array.from({ length: MANY }, (_, i) => run('kubectl', ['-n', `floor-many-${i}`, 'wait', 'deployment/bench-op', '--for=condition=Available', '--timeout=600s'], { env: kubectlEnv })));
const manyFloorMs = performance.now() - tf;

// The manager as its own process, so its memory and request count can be read.
const metricsPort = await freePort();
const mgr = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'manager', '--kubeconfig', up.kubeconfig, '--data-dir', join(work, 'data'), '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--catalog-bind-address', '127.0.0.1:0', '--workers', '8'], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, BINNACLE_LOG_LEVEL: 'warn' },
});
const peakRss = async (): Promise<number> => {
  const status = await readFile(`/proc/${mgr.pid ?? 0}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
};
await sleep(3000);
await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'bench' }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
for (;;) {
  const c = await client.find({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: 'bench' });
  if (findCondition((c?.status as { conditions?: [] } | undefined)?.conditions, 'Serving')?.status === 'True') break;
  await sleep(100);
}

const single: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const ns = `single-${r}`;
  await namespaceWithInstaller(client, ns);
  const t0 = performance.now();
  await client.apply(extension(`single-${r}`, ns) as never);
  while (!(await installed(client, `single-${r}`))) await sleep(50);
  single.push(performance.now() - t0);
}

for (let i = 0; i < MANY; i++) await namespaceWithInstaller(client, `many-${i}`);
const requestsBefore = await apiRequests(metricsPort);
const t1 = performance.now();
await Promise.all(Array.from({ length: MANY }, (_, i) => client.apply(extension(`many-${i}`, `many-${i}`) as never)));
let done = 0;
while (done < MANY) {
  const list = await client.list<ClusterExtension>(API_VERSION, 'ClusterExtension');
  done = list.items.filter((ce) => ce.metadata.name?.startsWith('many-') === true && findCondition(ce.status?.conditions, 'Installed')?.status === 'True').length;
  if (done < MANY) await sleep(250);
}
const manyMs = performance.now() - t1;
const requestsPerExtension = ((await apiRequests(metricsPort)) - requestsBefore) / MANY;
const rss = await peakRss();
const exited = new Promise((resolve) => mgr.once('exit', resolve));
mgr.kill('SIGTERM');
await exited;
client.close();
await clusterDown({ name: 'bench-install', logger });
await rm(work, { recursive: true, force: true });

const f = (n: number): string => (n / 1000).toFixed(2);
console.log(`bundle: ${objectCount} objects (registry+v1, OwnNamespace)`);
console.log(`kubectl apply --server-side + wait Available (floor), ${ROUNDS} rounds: p50 ${f(pct(floor, 50))} s`);
console.log(`ClusterExtension created → Installed=True,      ${ROUNDS} rounds: p50 ${f(pct(single, 50))} s`);
console.log(`ratio (binnacle / floor) at p50: ${(pct(single, 50) / pct(floor, 50)).toFixed(2)}x`);
console.log(`${MANY} ClusterExtensions at once → all Installed: ${f(manyMs)} s (${(manyMs / MANY).toFixed(0)} ms each on average)`);
console.log(`${MANY} namespaces with kubectl apply --server-side at once + wait Available (floor): ${f(manyFloorMs)} s`);
console.log(`ratio (binnacle / floor), ${MANY} at once: ${(manyMs / manyFloorMs).toFixed(2)}x (goal ≤ 2x: ${manyMs / manyFloorMs <= 2 ? 'met' : 'NOT met'})`);
console.log(`manager peak memory (VmHWM): ${rss.toFixed(0)} MiB (goal < 200 MiB: ${rss < 200 ? 'met' : 'NOT met'})`);
console.log(`API requests per extension while ${MANY} installed (binnacle_rest_client_requests_total): ${requestsPerExtension.toFixed(1)}`);
