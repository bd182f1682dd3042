/**
 * Binnacle's `helm` BundleDeployments beside Flux's helm-controller and source-controller, side
 * by side on this machine against the local control plane: N releases of the podinfo chart, each
 * in its own namespace, with the same values. Each figure is a ratio Binnacle / Flux measured in
 * the same run.
 *
 * Flux: helm-controller v1.6.4 (the latest v1.6 patch the Go module proxy serves; v1.6.5 and
 * later were refused on 2026-12-04) and source-controller v1.9.0 (the version helm-controller
 * v1.6.4's go.mod requires of github.com/fluxcd/source-controller/api), both built from the proxy
 * by hack/bench-tools/flux/build.sh into .cache/bench-bin/ (their `./api` replaces dropped for
 * the published api modules), their CRDs applied from the module sources (config/crd/bases).
 * Each release is an OCIRepository (the chart's OCI artifact, layer
 * `application/vnd.cncf.helm.chart.content.v1.tar+gzip`, copied) and a HelmRelease whose
 * `chartRef` names it, created at once. source-controller stores artifacts under a fresh
 * directory each round and serves them on a free loopback port (`--storage-addr` and
 * `--storage-adv-addr` the same, so helm-controller fetches from it); both run with leader
 * election off and their metrics and probe ports on free loopback ports; both act as the
 * controllers themselves (no `serviceAccountName`), as Flux does by default.
 *
 * Binnacle: `binnacle manager` (as the image runs it: `node --optimize-for-size bin/binnacle.js
 * manager`), with a fresh --data-dir each round; each release a `format: helm` BundleDeployment
 * (same values, release name podinfo, the release's namespace as installNamespace, no
 * spec.serviceAccount: the manager acts as itself, as Flux's controllers do), whose `image`
 * source names the very artifact Flux pulls (`helm push`'s, src/oci/pull.ts unpacks its chart
 * layer). (Results stored before a4e2feb pushed the chart's files a second time as an image for
 * Binnacle: a BundleDeployment could not read the helm push artifact then.)
 *
 * The chart: podinfo's, from the Go module github.com/stefanprodan/podinfo at PODINFO_VERSION
 * (charts/podinfo, chart version 6.9.2), packaged with helm and pushed with `helm push` to the
 * cluster's registry (bench-flux/podinfo:6.9.2).
 *
 * Each round, each side alone (the order alternates round by round): N fresh namespaces; its
 * own ServiceAccount(s) bound to cluster-admin, whose tokens the processes' kubeconfigs hold (so
 * the audit log tells their requests apart: Flux's two controllers have one each, summed); the
 * processes started and waited for until their /readyz answers (Binnacle's CRDs are installed by
 * the manager as it starts); then the N releases' objects created at once. Time runs from the
 * first create until every HelmRelease is Ready=True (Flux) or every BundleDeployment is
 * Installed=True (Binnacle), each at its current generation: both wait for the release's
 * objects to be ready (helm-controller's kstatus wait, Binnacle's health check; kwok's fake node
 * runs the Pods). CPU seconds over that span, every process of the side and its children (the
 * native Helm engine is Binnacle's child); peak RSS is the sum of each process's VmHWM (and its
 * children's), sampled while it runs; API requests are counted from the audit log once the
 * processes have stopped (a watch is logged when it ends), so they include start-up. Then the
 * processes stop, the finalizers go and the namespaces are deleted; the next side starts once
 * they are gone.
 *
 * Settings: `--modes defaults,matched` (both by default). `defaults`: each side as it ships
 * (helm-controller --concurrent 4, source-controller --concurrent 2; Binnacle --workers 4, its
 * manager's "max concurrent reconciles": `binnacle manager` has no --max-concurrent-reconciles,
 * its `--workers` is workers per controller). `matched`: helm-controller `--concurrent=K` and
 * Binnacle `--workers=K` (K = `--matched`, default 8); source-controller stays at its default.
 * Client rate limits stay each side's default in both: Flux's controllers 50 QPS, burst 300
 * (fluxcd/pkg/runtime's --kube-api-qps/--kube-api-burst); Binnacle none (--kube-api-qps -1,
 * src/cli/flags.ts). `--binnacle-args` / `--flux-args` append flags (space-separated) to the
 * manager / to both Flux controllers. The stored result (bench/lib/results.ts) records each
 * side's command lines.
 *
 * Goals (the issue's): at N = 1,000, Binnacle no slower and no larger (peak RSS) than
 * helm-controller + source-controller at matched concurrency, and faster at defaults. At smaller
 * N the figures are reported, not judged.
 *
 * usage: npm run bench -- flux --releases 10[,100] [--rounds N] [--modes defaults,matched] [--matched K]
 *        [--only binnacle|flux] [--phase-timeout-s S] [--binnacle-args '...'] [--flux-args '...']
 *        [--binnacle PATH/bin/binnacle.js]   (another build, measured as it is)
 * The cluster: `binnacle cluster up --name BINNACLE_BENCH_CLUSTER` (default `flux`), its audit log on.
 */
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { parse, stringify } from 'yaml';
import { clusterUp, countAuditRequestsInFile } from '../src/cluster/index.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfig } from '../src/kube/config.js';
import type { KubeObject } from '../src/kube/types.js';
import { MALLOC_ENV, mallocEnv, NODE_FLAGS } from '../src/self/image.js';
import { freePort } from '../src/util/ports.js';
import { arg, cpuSeconds, ROOT, run, spawnLogged, stopChild, treePeakSampler, waitHttpOk } from './lib/helm-operator.js';
import { judged, spread, startRun, type GoalVerdict, type SideSettings, type Spread } from './lib/results.js';
import type { FluxFigures, FluxSummary } from './lib/summaries.js';

/** Before anything is built or started: the load average the result records is the machine's own. */
const recorder = startRun('flux');

const PODINFO_MODULE = 'github.com/stefanprodan/podinfo';
/** The newest podinfo the proxy serves as a module (its tags are v6, without a /v6 module path: a pseudo-version); charts/podinfo is chart 6.9.2. */
const PODINFO_VERSION = 'v1.8.1-0.20250910200901-e86405a8674e';
const VALUES = { replicaCount: 1, logLevel: 'info' };
const RELEASE = 'podinfo';
const CLUSTER = process.env.BINNACLE_BENCH_CLUSTER ?? 'flux';
const IDENTITY_NS = 'binnacle-bench';
const WORK = path.join(ROOT, '.cache', 'bench-flux');
const KUBECTL = path.join(ROOT, '.cache', 'bin', 'kubectl');
const HELM = path.join(ROOT, '.cache', 'bin', 'helm');
const CLEANUP_TIMEOUT_MS = 600_000;
const ROUND_LABEL = 'bench.binnacle.dev/flux-round';

const words = (v: string | undefined): string[] => (v ?? '').split(/\s+/).filter((w) => w !== '');
const RELEASES = (arg('--releases') ?? '10').split(',').map((n) => Number(n)).filter((n) => Number.isSafeInteger(n) && n > 0);
const ROUNDS_ARG = arg('--rounds') === undefined ? undefined : Math.max(1, Number(arg('--rounds')) || 1);
/** `--rounds N`, else 3 at N ≤ 100 (medians and spread) and 1 above. */
const roundsAt = (n: number): number => ROUNDS_ARG ?? (n <= 100 ? 3 : 1);
const MODES = (arg('--modes') ?? 'defaults,matched').split(',').filter((m): m is Mode => m === 'defaults' || m === 'matched');
const MATCHED = Number(arg('--matched') ?? 8);
if (!(MATCHED > 0) || !Number.isSafeInteger(MATCHED)) throw new Error(`--matched ${arg('--matched')}: give the reconciles both sides run at once, e.g. --matched 8`);
const ONLY = arg('--only');
if (ONLY !== undefined && ONLY !== 'binnacle' && ONLY !== 'flux') throw new Error(`--only ${ONLY}: binnacle or flux`);
const PHASE_TIMEOUT_S = arg('--phase-timeout-s') === undefined ? undefined : Number(arg('--phase-timeout-s'));
const readyTimeoutMs = (n: number): number => (PHASE_TIMEOUT_S !== undefined && PHASE_TIMEOUT_S > 0 ? PHASE_TIMEOUT_S * 1000 : Math.max(600_000, n * 2_000));
const BINNACLE_EXTRA = words(arg('--binnacle-args'));
const FLUX_EXTRA = words(arg('--flux-args'));
const BINNACLE_ENTRY = path.resolve(arg('--binnacle') ?? path.join(ROOT, 'bin', 'binnacle.js'));

type Mode = 'defaults' | 'matched';
type Side = 'binnacle' | 'flux';

/** One side's round: the figures compared. */
interface Sample {
  /** Releases Ready / Installed when the wait ended (N unless it timed out). */
  ready: number;
  readyMs: number;
  peakMib: number;
  cpuS: number;
  requests: number;
  /** Requests by process (Flux: source-controller and helm-controller), by verb. */
  requestsBy: Record<string, Record<string, number>>;
  /** From the processes' start until every /readyz answered. */
  startMs: number;
}

interface FluxBuild {
  helmController: { version: string; bin: string };
  sourceController: { version: string; bin: string };
  crdDirs: string[];
}

/** hack/bench-tools/flux/build.sh: builds (when missing) and names both controllers and their CRD folders. */
function buildFlux(): FluxBuild {
  const out = run('bash', [path.join(ROOT, 'hack', 'bench-tools', 'flux', 'build.sh')]).split('\n');
  const line = (what: string): string[] => {
    const l = out.find((x) => x.startsWith(`${what} `));
    if (l === undefined) throw new Error(`hack/bench-tools/flux/build.sh printed no "${what}" line:\n${out.join('\n')}`);
    return l.split(' ').slice(1);
  };
  const [hv = '', hb = ''] = line('helm-controller');
  const [sv = '', sb = ''] = line('source-controller');
  return { helmController: { version: hv, bin: hb }, sourceController: { version: sv, bin: sb }, crdDirs: line('crds') };
}

/** podinfo's chart from the Go module proxy: a writable copy under WORK. */
function podinfoChart(): string {
  const json = run('go', ['mod', 'download', '-json', `${PODINFO_MODULE}@${PODINFO_VERSION}`], WORK);
  const dir = (JSON.parse(json) as { Dir: string }).Dir;
  const chart = path.join(WORK, 'podinfo-chart', 'podinfo');
  rmSync(path.join(WORK, 'podinfo-chart'), { recursive: true, force: true });
  cpSync(path.join(dir, 'charts', 'podinfo'), chart, { recursive: true });
  return chart;
}

/** The chart as `helm push` makes it: what both sides pull (Flux's OCIRepository, Binnacle's image source). */
function pushChart(chart: string, registry: string, kubeconfig: string): { oci: string; tag: string; image: string } {
  const { version } = parse(readFileSync(path.join(chart, 'Chart.yaml'), 'utf8')) as { version: string };
  const out = path.join(WORK, 'packages');
  mkdirSync(out, { recursive: true });
  const line = run(HELM, ['package', chart, '-d', out]);
  const tgz = line.slice(line.lastIndexOf(':') + 1).trim();
  run(HELM, ['push', tgz, `oci://${registry}/bench-flux`, '--plain-http', '--kubeconfig', kubeconfig]);
  return { oci: `oci://${registry}/bench-flux/podinfo`, tag: version, image: `${registry}/bench-flux/podinfo:${version}` };
}


/** A kubeconfig for a ServiceAccount of its own, bound to cluster-admin: the audit log's user for it is returned beside the file. */
async function identity(client: KubeClient, adminKubeconfig: string, name: string): Promise<{ kubeconfig: string; user: string }> {
  await client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: IDENTITY_NS } });
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${IDENTITY_NS}-${name}`, labels: { [ROUND_LABEL]: 'identity' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name, namespace: IDENTITY_NS }],
  });
  const token = run(KUBECTL, ['--kubeconfig', adminKubeconfig, 'create', 'token', name, '-n', IDENTITY_NS, '--duration', '24h']);
  const admin = parse(readFileSync(adminKubeconfig, 'utf8')) as { clusters: { cluster: unknown }[] };
  const kubeconfig = path.join(WORK, 'identities', `${name}.kubeconfig`);
  mkdirSync(path.dirname(kubeconfig), { recursive: true });
  writeFileSync(
    kubeconfig,
    stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'bench', cluster: admin.clusters[0]?.cluster }], users: [{ name, user: { token } }], contexts: [{ name: 'bench', context: { cluster: 'bench', user: name } }], 'current-context': 'bench' }),
    { mode: 0o600 },
  );
  return { kubeconfig, user: `system:serviceaccount:${IDENTITY_NS}:${name}` };
}

/** A process of a side, its log kept under WORK/logs and its tail for errors. */
interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  readyz: string;
  exited: () => string | undefined;
}

function startProc(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, readyz: string, logFile: string): Proc {
  const { child, pid, exited } = spawnLogged(name, cmd, args, { cwd: WORK, env, logFile, tailChars: 3000 });
  return { name, child, pid, readyz, exited };
}

async function waitReady(procs: Proc[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const p of procs) await waitHttpOk(p.name, p.readyz, p.exited, Math.max(0, deadline - Date.now()));
}

async function stopProcs(procs: Proc[]): Promise<void> {
  await Promise.all(procs.map((p) => stopChild(p.child)));
}

interface Condition {
  type: string;
  status: string;
  message?: string;
}
type WithStatus = KubeObject & { status?: { conditions?: Condition[]; observedGeneration?: number } };

/** Objects of the round that have reached `type`=True at their current generation. */
function countReady(items: WithStatus[], type: string): number {
  return items.filter((o) => o.status?.observedGeneration === o.metadata.generation && o.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true).length;
}

function pollIntervalMs(n: number): number {
  return n >= 500 ? 1_000 : n > 10 ? 250 : 100;
}

/** Settings of one side in one mode: its processes' command lines. */
interface SideCommand {
  procs: { name: string; cmd: string; args: string[]; env: Record<string, string> }[];
  concurrency: string;
}

function fluxCommand(build: FluxBuild, mode: Mode, ports: Record<string, number>, storage: string): SideCommand {
  const common = ['--enable-leader-election=false', '--watch-all-namespaces=true', '--log-level=info', '--log-encoding=json'];
  return {
    procs: [
      {
        name: 'source-controller',
        cmd: build.sourceController.bin,
        args: [...common, `--storage-path=${storage}`, `--storage-addr=127.0.0.1:${ports.storage}`, `--storage-adv-addr=127.0.0.1:${ports.storage}`, `--metrics-addr=127.0.0.1:${ports.sourceMetrics}`, `--health-addr=127.0.0.1:${ports.sourceHealth}`, ...FLUX_EXTRA],
        env: { RUNTIME_NAMESPACE: IDENTITY_NS },
      },
      {
        name: 'helm-controller',
        cmd: build.helmController.bin,
        args: [...common, `--metrics-addr=127.0.0.1:${ports.helmMetrics}`, `--health-addr=127.0.0.1:${ports.helmHealth}`, ...(mode === 'matched' ? [`--concurrent=${MATCHED}`] : []), ...FLUX_EXTRA],
        env: { RUNTIME_NAMESPACE: IDENTITY_NS },
      },
    ],
    concurrency: mode === 'matched' ? `helm-controller --concurrent=${MATCHED}; source-controller its default (--concurrent=2)` : 'defaults: helm-controller --concurrent=4, source-controller --concurrent=2',
  };
}

function binnacleCommand(mode: Mode, ports: Record<string, number>, dataDir: string): SideCommand {
  return {
    procs: [
      {
        name: 'binnacle-manager',
        cmd: process.execPath,
        // The manager's flags as the image gives them (src/self/image.ts), then the entry.
        args: [...NODE_FLAGS, BINNACLE_ENTRY, 'manager', '--metrics-bind-address', `127.0.0.1:${ports.metrics}`, '--catalog-bind-address', '127.0.0.1:0', '--data-dir', dataDir, ...(mode === 'matched' ? ['--workers', String(MATCHED)] : []), ...BINNACLE_EXTRA],
        // The allocator settings the image gives it (src/self/image.ts MALLOC_ENV).
        env: mallocEnv(),
      },
    ],
    concurrency: mode === 'matched' ? `--workers ${MATCHED} (workers per controller: the BundleDeployment controller's concurrent reconciles)` : 'its default: --workers 4',
  };
}

/** Stored for the result: command lines relative to the repository. */
const commandsSeen = new Map<string, SideCommand>();
const rel = (a: string): string => (path.isAbsolute(a) ? path.relative(ROOT, a) : a.replace(`${ROOT}/`, ''));

interface Env {
  client: KubeClient;
  adminKubeconfig: string;
  auditLog: string;
  chart: { oci: string; tag: string; image: string };
  build: FluxBuild | undefined;
}

function fluxObjects(ns: string, tag: string, chart: Env['chart']): KubeObject[] {
  const labels = { [ROUND_LABEL]: tag };
  return [
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'OCIRepository',
      metadata: { name: RELEASE, namespace: ns, labels },
      spec: { interval: '10m', url: chart.oci, ref: { tag: chart.tag }, insecure: true, layerSelector: { mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip', operation: 'copy' } },
    },
    {
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: RELEASE, namespace: ns, labels },
      spec: { interval: '10m', chartRef: { kind: 'OCIRepository', name: RELEASE }, values: VALUES },
    },
  ];
}

function binnacleObject(ns: string, tag: string, i: number, chart: Env['chart']): KubeObject {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'BundleDeployment',
    metadata: { name: `flux-bench-${tag}-${i}`, labels: { [ROUND_LABEL]: tag } },
    spec: { source: { type: 'image', image: { ref: chart.image, insecure: true } }, format: 'helm', installNamespace: ns, releaseName: RELEASE, values: VALUES },
  };
}

async function readyCount(client: KubeClient, side: Side, tag: string): Promise<{ ready: number; stuck: string | undefined }> {
  const items =
    side === 'flux'
      ? (await client.list<WithStatus>('helm.toolkit.fluxcd.io/v2', 'HelmRelease', { labelSelector: `${ROUND_LABEL}=${tag}` })).items
      : (await client.list<WithStatus>('binnacle.dev/v1alpha1', 'BundleDeployment', { labelSelector: `${ROUND_LABEL}=${tag}` })).items;
  const type = side === 'flux' ? 'Ready' : 'Installed';
  const ready = countReady(items, type);
  const notReady = items.find((o) => o.status?.conditions?.some((c) => c.type === type && c.status === 'True') !== true);
  const c = notReady?.status?.conditions?.find((x) => x.type === type);
  return { ready, stuck: notReady === undefined ? undefined : `${notReady.metadata.namespace ?? ''}/${notReady.metadata.name ?? ''}: ${type}=${c?.status ?? 'none'} ${c?.message ?? ''}` };
}

/** Removes the round's objects (finalizers first: the controllers have stopped) and namespaces, and waits until they are gone. */
async function cleanUp(client: KubeClient, tag: string, namespaces: string[]): Promise<void> {
  const sel = { labelSelector: `${ROUND_LABEL}=${tag}` };
  for (const [apiVersion, kind] of [
    ['helm.toolkit.fluxcd.io/v2', 'HelmRelease'],
    ['source.toolkit.fluxcd.io/v1', 'OCIRepository'],
    ['binnacle.dev/v1alpha1', 'BundleDeployment'],
  ] as const) {
    const items = await client.list(apiVersion, kind, sel).then((l) => l.items, () => [] as KubeObject[]);
    await Promise.all(
      items.map(async (o) => {
        const ref = { apiVersion, kind, name: o.metadata.name ?? '', ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }) };
        await client.patch(ref, { metadata: { finalizers: null } }, 'merge').catch(() => undefined);
        await client.delete(ref).catch(() => undefined);
      }),
    );
  }
  await Promise.all(namespaces.map((ns) => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined)));
  const deadline = Date.now() + CLEANUP_TIMEOUT_MS;
  for (;;) {
    const left = (await Promise.all(namespaces.map((ns) => client.find({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined)))).filter((x) => x !== undefined);
    if (left.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${left.length} namespaces of round ${tag} still there after ${CLEANUP_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

async function measure(side: Side, mode: Mode, n: number, round: number, e: Env): Promise<Sample> {
  const { client } = e;
  const tag = `${side === 'flux' ? 'f' : 'b'}${mode === 'matched' ? 'm' : 'd'}${n}-${round}-${Date.now().toString(36)}`;
  const namespaces = Array.from({ length: n }, (_, i) => `flux-bench-${tag}-${i}`);
  await Promise.all(namespaces.map((ns) => client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [ROUND_LABEL]: tag } } })));
  const logs = path.join(WORK, 'logs');
  mkdirSync(logs, { recursive: true });
  const scratch = mkdtempSync(path.join(WORK, `${tag}-`));
  let ids: { name: string; kubeconfig: string; user: string }[];
  let cmd: SideCommand;
  if (side === 'flux') {
    if (e.build === undefined) throw new Error('Flux was not built');
    const ports = { storage: await freePort(), sourceMetrics: await freePort(), sourceHealth: await freePort(), helmMetrics: await freePort(), helmHealth: await freePort() };
    cmd = fluxCommand(e.build, mode, ports, path.join(scratch, 'storage'));
    ids = [
      { name: 'source-controller', ...(await identity(client, e.adminKubeconfig, `flux-source-${tag}`)) },
      { name: 'helm-controller', ...(await identity(client, e.adminKubeconfig, `flux-helm-${tag}`)) },
    ];
    mkdirSync(path.join(scratch, 'storage'), { recursive: true });
  } else {
    const ports = { metrics: await freePort() };
    cmd = binnacleCommand(mode, ports, path.join(scratch, 'data'));
    ids = [{ name: 'binnacle-manager', ...(await identity(client, e.adminKubeconfig, `binnacle-${tag}`)) }];
  }
  commandsSeen.set(`${side}/${mode}`, cmd);
  const auditFrom = statSync(e.auditLog).size;
  const started = Date.now();
  const procs = cmd.procs.map((p, i) => {
    const kubeconfig = ids[i]?.kubeconfig ?? '';
    const env = { ...process.env, ...p.env, KUBECONFIG: kubeconfig, HOME: scratch, NODE_OPTIONS: '' };
    const health = side === 'flux' ? p.args.find((a) => a.startsWith('--health-addr='))?.slice('--health-addr='.length) : p.args[p.args.indexOf('--metrics-bind-address') + 1];
    return startProc(p.name, p.cmd, p.args, env, `http://${health ?? ''}/readyz`, path.join(logs, `${tag}-${p.name}.log`));
  });
  const peaks = procs.map((p) => treePeakSampler(p.pid));
  let sample: Omit<Sample, 'requests' | 'requestsBy'>;
  try {
    await waitReady(procs);
    const startMs = Date.now() - started;
    const cpu0 = procs.reduce((s, p) => s + cpuSeconds(p.pid), 0);
    const t0 = Date.now();
    if (side === 'flux') {
      await Promise.all(namespaces.flatMap((ns) => fluxObjects(ns, tag, e.chart).map((o) => client.create(o))));
    } else {
      await Promise.all(namespaces.map((ns, i) => client.create(binnacleObject(ns, tag, i, e.chart))));
    }
    const deadline = t0 + readyTimeoutMs(n);
    let got = { ready: 0, stuck: undefined as string | undefined };
    for (;;) {
      for (const p of procs) {
        const gone = p.exited();
        if (gone !== undefined) throw new Error(gone);
      }
      got = await readyCount(client, side, tag);
      if (got.ready >= n || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, pollIntervalMs(n)));
    }
    const readyMs = Date.now() - t0;
    const cpuS = procs.reduce((s, p) => s + cpuSeconds(p.pid), 0) - cpu0;
    if (got.ready < n) console.log(`  ${side} (${mode}) N=${n}: ${got.ready} of ${n} ready after ${(readyMs / 1000).toFixed(0)} s; one not: ${got.stuck ?? '?'}`);
    sample = { ready: got.ready, readyMs, peakMib: peaks.reduce((s, p) => s + p.peakMib(), 0), cpuS, startMs };
  } finally {
    for (const p of peaks) p.stop();
    await stopProcs(procs);
    await cleanUp(client, tag, namespaces);
    rmSync(scratch, { recursive: true, force: true });
  }
  await new Promise((r) => setTimeout(r, 1_000)); // the audit backend writes the closed watches
  if (statSync(e.auditLog).size < auditFrom) throw new Error(`the audit log ${e.auditLog} was rotated during the run: its requests cannot be counted`);
  const counts = countAuditRequestsInFile(e.auditLog, auditFrom, new Set(ids.map((x) => x.user)));
  const requestsBy: Record<string, Record<string, number>> = {};
  let requests = 0;
  for (const id of ids) {
    const byVerb = Object.fromEntries(counts.get(id.user) ?? new Map<string, number>());
    requestsBy[id.name] = byVerb;
    requests += Object.values(byVerb).reduce((a, b) => a + b, 0);
  }
  return { ...sample, requests, requestsBy };
}

function summary(xs: Sample[]): FluxFigures {
  return {
    rounds: xs.length,
    ready: Math.min(...xs.map((x) => x.ready)),
    readyMs: spread(xs.map((x) => x.readyMs)),
    peakMib: spread(xs.map((x) => x.peakMib)),
    cpuS: spread(xs.map((x) => x.cpuS)),
    requests: spread(xs.map((x) => x.requests)),
    startMs: spread(xs.map((x) => x.startMs)),
  };
}

const ratioValue = (a: number, b: number): number => (b > 0 ? a / b : NaN);
const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a');
function withSpread(x: Spread, f: (v: number) => string): string {
  return x.n > 1 && x.min !== x.max ? `${f(x.median)} (${f(x.min)}-${f(x.max)})` : f(x.median);
}
function row(n: number, mode: Mode, label: string, s: FluxFigures): string {
  const sec = (ms: number): string => (ms / 1000).toFixed(1);
  const time = s.ready >= n ? `${withSpread(s.readyMs, sec)} s` : `>${sec(s.readyMs.median)} s (${s.ready})`;
  return `${String(n).padStart(5)} ${mode.padEnd(9)} ${label.padEnd(10)} ${time.padStart(22)} ${`${withSpread(s.peakMib, (v) => v.toFixed(0))} MiB`.padStart(20)} ${`${withSpread(s.cpuS, (v) => v.toFixed(1))} s`.padStart(22)} ${withSpread(s.requests, (v) => v.toFixed(0)).padStart(20)} ${`${withSpread(s.startMs, sec)} s`.padStart(18)}`;
}

/** The issue's goals: judged at N ≥ 1,000 only; smaller N are reported. */
function goalsFor(n: number, mode: Mode, b: FluxFigures, f: FluxFigures): GoalVerdict[] {
  if (n < 1000) return [];
  const at = `N=${n} ${mode === 'matched' ? `matched concurrency (${MATCHED})` : 'defaults'}`;
  const time = `${(b.readyMs.median / 1000).toFixed(1)} s against ${(f.readyMs.median / 1000).toFixed(1)} s${f.ready < n ? ` (a lower bound: ${f.ready} of ${n})` : ''}`;
  if (mode === 'defaults') return [judged(`${at}: time to all Installed < Flux's time to all Ready`, b.ready >= n && b.readyMs.median < f.readyMs.median, time)];
  return [
    judged(`${at}: time to all Installed <= Flux's time to all Ready`, b.ready >= n && b.readyMs.median <= f.readyMs.median, time),
    judged(`${at}: peak RSS <= helm-controller + source-controller`, b.peakMib.median <= f.peakMib.median, `${b.peakMib.median.toFixed(0)} MiB against ${f.peakMib.median.toFixed(0)} MiB`),
  ];
}
const verdictText = (g: GoalVerdict): string => `${g.goal}: ${g.verdict === 'met' ? 'met' : g.verdict === 'not-met' ? 'NOT met' : 'not compared'}${g.detail === undefined ? '' : ` (${g.detail})`}`;

// ---- the run ----
mkdirSync(WORK, { recursive: true });
const sides: Side[] = ONLY === 'binnacle' ? ['binnacle'] : ONLY === 'flux' ? ['flux'] : ['flux', 'binnacle'];
if (sides.includes('binnacle') && arg('--binnacle') === undefined) run('npm', ['run', 'build']); // the commit the result names is the code measured
const build = sides.includes('flux') ? buildFlux() : undefined;
if (build !== undefined) console.log(`Flux: helm-controller ${build.helmController.version} and source-controller ${build.sourceController.version} (the version helm-controller's go.mod requires of source-controller/api), built from the Go module proxy (hack/bench-tools/flux/build.sh)`);
const up = await clusterUp({ name: CLUSTER, audit: true, logger: pino({ level: 'warn' }), progress: () => undefined });
if (up.auditLog === undefined) throw new Error(`cluster ${CLUSTER} has no audit log`);
const client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: IDENTITY_NS } });
if (build !== undefined) {
  for (const dir of build.crdDirs) run(KUBECTL, ['--kubeconfig', up.kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', dir]);
  run(KUBECTL, ['--kubeconfig', up.kubeconfig, 'wait', '--for=condition=Established', '--timeout=60s', 'crd/helmreleases.helm.toolkit.fluxcd.io', 'crd/ocirepositories.source.toolkit.fluxcd.io']);
}
const chartDir = podinfoChart();
const chart = pushChart(chartDir, up.registry, up.kubeconfig);
console.log(`podinfo: ${PODINFO_MODULE}@${PODINFO_VERSION} charts/podinfo, chart ${chart.tag}; Flux pulls ${chart.oci}:${chart.tag} (helm push), Binnacle ${chart.image} (the same artifact)`);
// An interrupted run leaves its namespaces behind; gone before anything is measured.
const leftover = (await client.list('v1', 'Namespace', { labelSelector: ROUND_LABEL })).items;
for (const tag of new Set(leftover.map((ns) => ns.metadata.labels?.[ROUND_LABEL] ?? ''))) {
  console.log(`removing what an interrupted run (${tag}) left behind`);
  await cleanUp(client, tag, leftover.filter((ns) => ns.metadata.labels?.[ROUND_LABEL] === tag).map((ns) => ns.metadata.name ?? ''));
}
const env: Env = { client, adminKubeconfig: up.kubeconfig, auditLog: up.auditLog, chart, build };

console.log(`N releases of podinfo ${chart.tag}, one a namespace, created at once until all Ready (Flux HelmRelease) / Installed (Binnacle BundleDeployment); values ${JSON.stringify(VALUES)}; medians of ${ROUNDS_ARG === undefined ? '3 rounds at N <= 100, 1 above' : `${ROUNDS_ARG} round(s)`}, spread (min-max) in brackets`);
console.log(`client rate limits: Flux's controllers 50 QPS, burst 300 (their default); Binnacle none (its default)${BINNACLE_EXTRA.length + FLUX_EXTRA.length > 0 ? `; extra flags: binnacle ${BINNACLE_EXTRA.join(' ')} flux ${FLUX_EXTRA.join(' ')}` : ''}`);
console.log(`${'N'.padStart(5)} ${'mode'.padEnd(9)} ${'side'.padEnd(10)} ${'to all Ready'.padStart(22)} ${'peak RSS (sum)'.padStart(20)} ${'CPU'.padStart(22)} ${'API requests'.padStart(20)} ${'start to ready'.padStart(18)}`);
const goals: GoalVerdict[] = [];
const allRounds: ({ n: number; mode: Mode; side: Side; round: number } & Sample)[] = [];
const figures: FluxSummary['figures'] = [];
for (const n of RELEASES) {
  for (const mode of MODES) {
    const results = new Map<Side, Sample[]>();
    for (let round = 0; round < roundsAt(n); round++) {
      // The order alternates: neither side always runs on a cluster the other just cleaned up after.
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const s = await measure(side, mode, n, round, env);
        results.set(side, [...(results.get(side) ?? []), s]);
        allRounds.push({ n, mode, side, round, ...s });
        if (process.env.BENCH_VERBOSE !== undefined) console.log(`  ${side} ${mode} N=${n} round ${round}: ${(s.readyMs / 1000).toFixed(1)} s, ${s.peakMib.toFixed(0)} MiB, ${s.cpuS.toFixed(1)} s CPU, ${s.requests} requests ${JSON.stringify(s.requestsBy)}`);
      }
    }
    const at: FluxSummary['figures'][number] = { n, mode, concurrency: mode === 'matched' ? MATCHED : null, sides: {}, ratios: null };
    figures.push(at);
    for (const side of sides) {
      const f = summary(results.get(side) ?? []);
      at.sides[side] = f;
      console.log(row(n, mode, side, f));
    }
    const b = at.sides.binnacle;
    const f = at.sides.flux;
    if (b === undefined || f === undefined) continue;
    at.ratios = { readyTime: ratioValue(b.readyMs.median, f.readyMs.median), peakRss: ratioValue(b.peakMib.median, f.peakMib.median), cpu: ratioValue(b.cpuS.median, f.cpuS.median), requests: ratioValue(b.requests.median, f.requests.median) };
    console.log(`${String(n).padStart(5)} ${mode.padEnd(9)} binnacle / flux: time ${ratio(b.readyMs.median, f.readyMs.median)}, peak RSS ${ratio(b.peakMib.median, f.peakMib.median)}, CPU ${ratio(b.cpuS.median, f.cpuS.median)}, API requests ${ratio(b.requests.median, f.requests.median)}${b.ready < n || f.ready < n ? ` (not all ready: binnacle ${b.ready}, flux ${f.ready} of ${n})` : ''}`);
    goals.push(...goalsFor(n, mode, b, f));
  }
}
if (goals.length === 0) console.log("goals: judged at N = 1,000 only (Binnacle no slower and no larger than helm-controller + source-controller at matched concurrency, faster at defaults); here reported, not judged");
for (const g of goals) console.log(`goal ${verdictText(g)}`);
client.close();

function sideSettings(side: Side): SideSettings {
  const modes: Record<string, { concurrency: string; commands: string[][]; env: Record<string, string> }> = {};
  for (const m of MODES) {
    const c = commandsSeen.get(`${side}/${m}`);
    if (c === undefined) continue;
    modes[m] = { concurrency: c.concurrency, commands: c.procs.map((p) => [rel(p.cmd === process.execPath ? 'node' : p.cmd), ...p.args.map(rel)]), env: Object.fromEntries(c.procs.flatMap((p) => Object.entries(p.env))) };
  }
  if (side === 'flux') {
    return {
      what: `Flux helm-controller ${build?.helmController.version ?? '?'} + source-controller ${build?.sourceController.version ?? '?'} (hack/bench-tools/flux/build.sh, from the Go module proxy)`,
      objects: 'per release: OCIRepository (source.toolkit.fluxcd.io/v1, insecure, layerSelector helm chart content, copy) + HelmRelease (helm.toolkit.fluxcd.io/v2, chartRef OCIRepository), interval 10m, no serviceAccountName',
      chart: `${chart.oci}:${chart.tag}`,
      clientRateLimit: "each controller's default: --kube-api-qps 50, --kube-api-burst 300 (fluxcd/pkg/runtime)",
      readiness: 'HelmRelease Ready=True at its generation (helm-controller waits for the release objects with kstatus, its default)',
      extraArgs: FLUX_EXTRA,
      modes,
    };
  }
  return {
    what: `binnacle manager (node ${NODE_FLAGS.join(' ')} bin/binnacle.js manager, with ${MALLOC_ENV.join(' ')}, as the image runs it)`,
    entry: rel(BINNACLE_ENTRY),
    objects: 'per release: BundleDeployment (binnacle.dev/v1alpha1, format helm, image source, releaseName podinfo, no serviceAccount: acts as the manager)',
    chart: `${chart.image} (the helm push artifact Flux pulls)`,
    clientRateLimit: 'none, its default (--kube-api-qps -1)',
    readiness: 'BundleDeployment Installed=True at its generation (after its health check, --health-timeout 120s default)',
    extraArgs: BINNACLE_EXTRA,
    modes,
  };
}
recorder.save({
  settings: {
    bench: { releases: RELEASES, rounds: ROUNDS_ARG ?? 'auto: 3 at N <= 100, 1 above', modes: MODES, matchedConcurrency: MATCHED, only: ONLY ?? null, cluster: CLUSTER, podinfo: `${PODINFO_MODULE}@${PODINFO_VERSION} charts/podinfo (chart ${chart.tag})`, values: VALUES, namespacePerRelease: true, phaseTimeoutS: PHASE_TIMEOUT_S ?? 'default (max(600 s, 2 s a release))' },
    binnacle: sides.includes('binnacle') ? sideSettings('binnacle') : { what: 'not run' },
    reference: sides.includes('flux') ? sideSettings('flux') : { what: 'not run' },
  },
  rounds: allRounds,
  summary: { figures } satisfies FluxSummary,
  goals,
});
if (existsSync(path.join(WORK, 'podinfo-chart'))) rmSync(path.join(WORK, 'podinfo-chart'), { recursive: true, force: true });
