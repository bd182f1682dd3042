/**
 * bench/install: time from ClusterExtension creation to Installed=True for a 20-object bundle,
 * beside `kubectl apply --server-side` of the same objects plus waiting for the Deployment
 * (the floor) in the same run; then 100 ClusterExtensions at once beside 100 kubectl applies at
 * once (its floor); the manager's peak memory; and its API requests per extension (a reconcile
 * storm shows there). Runs on its own local cluster (`bench-install`, or `--cluster NAME` when
 * helpers work side by side), which it takes down at the end.
 *
 * Measured 2026-11-24 evening on the shared 2-core machine, two runs of `--many 100 --rounds 1`
 * while other builds and browser tests ran (so wall times are noisy; the floor runs in the same run):
 *   100 at once 58.4 s vs floor 46.6 s = 1.25x, peak RSS 185 MiB, 186 requests/extension
 *   100 at once 73.6 s vs floor 47.5 s = 1.55x, peak RSS 171 MiB, 192 requests/extension
 *   (in the morning: 4.22x-4.57x, 268-286 MiB, 267-305 requests/extension; in between came the
 *   preflight's fewer SubjectAccessReviews and the bundled kubeconfig reader). SubjectAccessReviews are still
 *   the largest share (56-58 per extension), then a GET and a PATCH per applied object.
 *
 * usage: npx tsx bench/install.ts [--many 100] [--rounds 3] [--cluster bench-install] [--cpu-prof DIR] [--tsx] [--plain-node]
 *   --plain-node: the manager without the image's Node flags and allocator settings (default: NODE_FLAGS and MALLOC_ENV of src/self/image.ts, as the image runs it)
 *   --cpu-prof DIR: the manager writes a V8 CPU profile into DIR when it stops
 *   --tsx: run the manager from src/ through the TypeScript loader (default: bin/binnacle.js after npm run build, as it ships)
 *   --source DIR: run the manager from another checkout's src/ (DIR/cli/main.ts), to compare revisions in one sitting
 *   (e.g. `git archive REV src | tar -x -C .cache/rev`, then `--source .cache/rev/src`)
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { clusterDown, clusterUp } from '../src/cluster/index.js';
import { freePort } from '../src/util/ports.js';
import { publishPackages } from '../src/publish/packages.js';
import { loadKubeConfig } from '../src/kube/config.js';
import { KubeClient } from '../src/kube/client.js';
import { findCondition } from '../src/kube/types.js';
import { API_VERSION, type ClusterExtension } from '../src/api/types.js';
import { convertRegistryV1, loadBundleDir } from '../src/bundle/index.js';
import { judged, startRun } from './lib/results.js';
import { mallocEnv, NODE_FLAGS } from '../src/self/image.js';
import type { InstallSummary } from './lib/summaries.js';

const run = promisify(execFile);
const args = process.argv.slice(2);
const arg = (n: string, d: number): number => (args.includes(`--${n}`) ? Number(args[args.indexOf(`--${n}`) + 1]) : d);
const MANY = arg('many', 100);
const ROUNDS = arg('rounds', 3);
const CPU_PROF = args.includes('--cpu-prof') ? args[args.indexOf('--cpu-prof') + 1] : undefined;
const SOURCE = args.includes('--source') ? args[args.indexOf('--source') + 1] : undefined;
const FROM_SOURCE = args.includes('--tsx');
const CLUSTER = args.includes('--cluster') ? (args[args.indexOf('--cluster') + 1] ?? 'bench-install') : 'bench-install';
const ROOT = join(import.meta.dirname, '..');
const logger = pino({ level: 'warn' });
const recorder = startRun('install');
/**
 * Node's flags for the manager: by default the image's (src/self/image.ts), as the manager runs in
 * a cluster; `--plain-node` none, as `binnacle manager` runs from a shell. Without
 * --optimize-for-size Node 24's V8 widens the young generation to 128 MB under load (Node 20's
 * to 32): the manager peaked at 300 MiB on Node 24.22.3 against 177 MiB on Node 20.20.2.
 */
const MANAGER_NODE_FLAGS: readonly string[] = args.includes('--plain-node') ? [] : NODE_FLAGS;

/** bin/binnacle.js after `npm run build` (a few seconds), so that it is this checkout's code as it ships: the bundle in dist/cli-bundle/. */
async function builtEntry(): Promise<string> {
  progress('building dist/ (npm run build) to run the manager as it ships ...');
  await run('npm', ['run', 'build', '--silent'], { cwd: ROOT });
  return join(ROOT, 'bin', 'binnacle.js');
}

/**
 * A registry+v1 bundle that converts to 20 namespaced objects (OwnNamespace, no CRDs), in a
 * package of its own: a package is installed once per cluster, so each extension asks for its own
 * (the objects are the same in each).
 */
async function writeBundle(dir: string, name: string): Promise<string> {
  const pkg = join(dir, name);
  const b = join(pkg, '1.0.0');
  await mkdir(join(b, 'manifests'), { recursive: true });
  await mkdir(join(b, 'metadata'), { recursive: true });
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: `${name}.v1.0.0`, annotations: { 'alm-examples': '[]' } },
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
        'operators.operatorframework.io.bundle.package.v1': name,
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

/** The manager's counters so far, from its /metrics: each series of `names` by its labels. */
async function counters(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = new Map<string, number>();
  const names = ['binnacle_rest_client_requests_total', 'binnacle_rest_client_requests_by_resource_total', 'binnacle_reconcile_total'];
  for (const m of text.matchAll(/^(\w+)(\{[^}]*\})? (\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/gm)) {
    if (names.includes(m[1] ?? '')) out.set(`${m[1] ?? ''}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

/** What grew between two readings, per series whose name starts with `prefix`, the label set as key. */
function grown(before: Map<string, number>, after: Map<string, number>, prefix: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (k.startsWith(`${prefix}{`)) out.set(k.slice(prefix.length), v - (before.get(k) ?? 0));
  return out;
}

const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

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
  // The OperatorCondition of each bundle is written with the installer's permissions too; `admin` does not cover it.
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'installer-operatorconditions', namespace: ns },
    rules: [{ apiGroups: ['operators.coreos.com'], resources: ['operatorconditions', 'operatorconditions/status'], verbs: ['*'] }],
  });
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'installer-operatorconditions', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'installer-operatorconditions' },
    subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: ns }],
  });
}

function extension(name: string, ns: string, pkg: string): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name },
    spec: { namespace: ns, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: pkg } } },
  };
}

const work = await mkdtemp(join(tmpdir(), 'binnacle-bench-install-'));
const up = await clusterUp({ name: CLUSTER, logger, progress: () => undefined });
const kubectlEnv = { ...process.env, KUBECONFIG: up.kubeconfig, PATH: `${join(ROOT, '.cache', 'bin')}:${process.env.PATH ?? ''}` };
const client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
const progress = (msg: string): void => void process.stderr.write(`[bench/install] ${msg}\n`);
let mgr: ChildProcess | undefined;
/** Figures, filled in as the run goes. */
const fig = { objectCount: 0, manyFloorMs: 0, manyMs: 0, requestsPerExtension: 0, rss: 0, readyRss: 0, installedRss: 0, byResource: new Map<string, number>(), reconciles: new Map<string, number>() };
const floor: number[] = [];
const single: number[] = [];
// Whatever happens, the manager is stopped and the cluster taken down.
try {
  const singlePkgs = Array.from({ length: ROUNDS }, (_, r) => `bench-op-single-${r}`);
  const manyPkgs = Array.from({ length: MANY }, (_, i) => `bench-op-${i}`);
  const pkgDirs: string[] = [];
  for (const name of [...singlePkgs, ...manyPkgs]) pkgDirs.push(await writeBundle(work, name));
  const pkgDir = pkgDirs[0] ?? '';
  const published = await publishPackages({ packages: pkgDirs, registry: up.registry, repository: 'bench' });

  // The floor: the same 20 objects with kubectl apply --server-side, then wait for the Deployment.
  const bundle = await loadBundleDir(join(pkgDir, '1.0.0'));
  for (let r = 0; r < ROUNDS; r++) {
    const ns = `floor-${r}`;
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const objects = convertRegistryV1(bundle, { installNamespace: ns, watchNamespaces: [ns] }).objects;
    fig.objectCount = objects.length;
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
  fig.manyFloorMs = performance.now() - tf;
  progress(`floor: ${MANY} namespaces applied and Available in ${(fig.manyFloorMs / 1000).toFixed(2)} s`);

  // The manager as its own process, so its memory and request count can be read.
  const metricsPort = await freePort();
  // As it ships (compiled JavaScript, dist/): the TypeScript loader alone costs tens of MiB.
  const entry = SOURCE !== undefined ? ['--import', 'tsx', join(SOURCE, 'cli', 'main.ts')] : FROM_SOURCE ? ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts')] : [await builtEntry()];
  mgr = spawn(process.execPath, [...MANAGER_NODE_FLAGS, ...(CPU_PROF === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', CPU_PROF]), ...entry, 'manager', '--kubeconfig', up.kubeconfig, '--data-dir', join(work, 'data'), '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--catalog-bind-address', '127.0.0.1:0', '--workers', '8'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, BINNACLE_LOG_LEVEL: 'warn', ...(MANAGER_NODE_FLAGS.length === 0 ? {} : mallocEnv()) },
  });
  const pid = mgr.pid ?? 0;
  const memory = async (field: 'VmHWM' | 'VmRSS'): Promise<number> => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
  };
  const peakRss = (): Promise<number> => memory('VmHWM');
  // Ready once its CRDs are installed and its informers have synced.
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => undefined);
    if (res?.status === 200) break;
    if (mgr.exitCode !== null) throw new Error(`the manager exited with ${mgr.exitCode}`);
    await sleep(100);
  }
  fig.readyRss = await memory('VmRSS');
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'bench' }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
  for (;;) {
    const c = await client.find({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: 'bench' });
    if (findCondition((c?.status as { conditions?: [] } | undefined)?.conditions, 'Serving')?.status === 'True') break;
    await sleep(100);
  }

  for (let r = 0; r < ROUNDS; r++) {
    const ns = `single-${r}`;
    await namespaceWithInstaller(client, ns);
    const t0 = performance.now();
    await client.apply(extension(`single-${r}`, ns, singlePkgs[r] ?? '') as never);
    while (!(await installed(client, `single-${r}`))) {
      if (performance.now() - t0 > 300_000) throw new Error(`single-${r} not Installed after 300 s`);
      await sleep(50);
    }
    single.push(performance.now() - t0);
  }
  progress(`single installs: ${single.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s`);

  for (let i = 0; i < MANY; i++) await namespaceWithInstaller(client, `many-${i}`);
  const before = await counters(metricsPort);
  const t1 = performance.now();
  await Promise.all(Array.from({ length: MANY }, (_, i) => client.apply(extension(`many-${i}`, `many-${i}`, manyPkgs[i] ?? '') as never)));
  let done = 0;
  while (done < MANY) {
    const list = await client.list<ClusterExtension>(API_VERSION, 'ClusterExtension');
    done = list.items.filter((ce) => ce.metadata.name?.startsWith('many-') === true && findCondition(ce.status?.conditions, 'Installed')?.status === 'True').length;
    if (done < MANY) {
      if (performance.now() - t1 > 1_200_000) throw new Error(`${done} of ${MANY} Installed after 1200 s`);
      if (mgr.exitCode !== null) throw new Error(`the manager exited with ${mgr.exitCode}`);
      await sleep(250);
    }
  }
  fig.manyMs = performance.now() - t1;
  const after = await counters(metricsPort);
  fig.requestsPerExtension = sum(grown(before, after, 'binnacle_rest_client_requests_total')) / MANY;
  fig.byResource = grown(before, after, 'binnacle_rest_client_requests_by_resource_total');
  fig.reconciles = grown(before, after, 'binnacle_reconcile_total');
  fig.rss = await peakRss();
  fig.installedRss = await memory('VmRSS');
} finally {
  if (mgr !== undefined && mgr.exitCode === null) {
    const m = mgr;
    const exited = new Promise((resolve) => m.once('exit', resolve));
    m.kill('SIGTERM');
    await exited;
  }
  client.close();
  await clusterDown({ name: CLUSTER, logger });
  await rm(work, { recursive: true, force: true });
}

const f = (n: number): string => (n / 1000).toFixed(2);
console.log(`bundle: ${fig.objectCount} objects (registry+v1, OwnNamespace)`);
console.log(`kubectl apply --server-side + wait Available (floor), ${ROUNDS} rounds: p50 ${f(pct(floor, 50))} s`);
console.log(`ClusterExtension created → Installed=True,      ${ROUNDS} rounds: p50 ${f(pct(single, 50))} s`);
console.log(`ratio (binnacle / floor) at p50: ${(pct(single, 50) / pct(floor, 50)).toFixed(2)}x`);
console.log(`${MANY} ClusterExtensions at once → all Installed: ${f(fig.manyMs)} s (${(fig.manyMs / MANY).toFixed(0)} ms each on average)`);
console.log(`${MANY} namespaces with kubectl apply --server-side at once + wait Available (floor): ${f(fig.manyFloorMs)} s`);
console.log(`ratio (binnacle / floor), ${MANY} at once: ${(fig.manyMs / fig.manyFloorMs).toFixed(2)}x (goal ≤ 2x: ${fig.manyMs / fig.manyFloorMs <= 2 ? 'met' : 'NOT met'})`);
console.log(`manager peak memory (VmHWM): ${fig.rss.toFixed(0)} MiB (goal < 200 MiB: ${fig.rss < 200 ? 'met' : 'NOT met'})`);
console.log(`  manager resident memory (VmRSS): ${fig.readyRss.toFixed(0)} MiB when ready (nothing installed), ${fig.installedRss.toFixed(0)} MiB with ${MANY + ROUNDS} extensions installed`);
console.log(`API requests per extension while ${MANY} installed (binnacle_rest_client_requests_total): ${fig.requestsPerExtension.toFixed(1)}`);
const top = [...fig.byResource].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]).slice(0, 12);
console.log(`  of which, per extension: ${top.map(([k, n]) => `${k.replace(/\{verb="(\w+)",resource="([^"]+)"\}/, '$1 $2')} ${(n / MANY).toFixed(1)}`).join(', ')}`);
const recs = [...fig.reconciles].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
console.log(`reconciles per extension: ${recs.map(([k, n]) => `${k.replace(/\{controller="(\w+)",result="(\w+)"\}/, '$1 $2')} ${(n / MANY).toFixed(1)}`).join(', ')}`);
const manyRatio = fig.manyMs / fig.manyFloorMs;
recorder.save({
  settings: {
    bench: { rounds: ROUNDS, many: MANY, objects: fig.objectCount, cluster: CLUSTER, bundle: 'registry+v1, OwnNamespace, 20 objects, a package of its own per extension' },
    binnacle: {
      what: 'binnacle manager (its own process) installing ClusterExtensions from a ClusterCatalog',
      entry: SOURCE !== undefined ? `--source ${SOURCE}` : FROM_SOURCE ? 'src/cli/main.ts through tsx' : 'bin/binnacle.js after npm run build',
      managerArgs: ['--workers', '8'],
      nodeFlags: MANAGER_NODE_FLAGS,
      cpuProfile: CPU_PROF !== undefined,
    },
    reference: { what: 'kubectl apply --server-side of the same objects, then kubectl wait for the Deployment to be Available (the floor)', kubectl: '.cache/bin/kubectl' },
  },
  rounds: [{ singleMs: single, floorMs: floor, manyMs: fig.manyMs, manyFloorMs: fig.manyFloorMs }],
  summary: {
    objects: fig.objectCount,
    single: { p50Ms: pct(single, 50), floorP50Ms: pct(floor, 50), ratio: pct(single, 50) / pct(floor, 50) },
    many: { n: MANY, ms: fig.manyMs, floorMs: fig.manyFloorMs, ratio: manyRatio },
    memory: { peakMiB: fig.rss, readyRssMiB: fig.readyRss, installedRssMiB: fig.installedRss },
    requestsPerExtension: fig.requestsPerExtension,
    requestsByResource: Object.fromEntries([...fig.byResource].filter(([, n]) => n > 0).map(([k, n]) => [k, n / MANY])),
    reconcilesPerExtension: Object.fromEntries(recs.map(([k, n]) => [k, n / MANY])),
  } satisfies InstallSummary,
  goals: [
    judged(`${MANY} ClusterExtensions at once within 2x of the kubectl floor`, manyRatio <= 2, `${manyRatio.toFixed(2)}x`),
    judged('manager peak memory (VmHWM) < 200 MiB', fig.rss < 200, `${fig.rss.toFixed(0)} MiB`),
  ],
});
