/**
 * `binnacle helm-operator run` beside operator-sdk's own helm-operator (v1.42.3) at N custom
 * resources (issue 29 §1), each figure as a ratio to helm-operator measured in the same run:
 * time until every CR is `Deployed`; time for a change to every CR (an upgrade) to land; peak
 * and steady resident memory; CPU seconds to converge and while idle; API requests the
 * operator made (the API server's audit log, filtered by the operator's user). Goals: time to
 * converge and to upgrade at or below helm-operator's at every N; peak memory at or below its
 * at N ≥ 100 and within the scaffold's 128 MiB at N ≤ 10; idle CPU and API requests at or
 * below its. Each goal is printed as met or NOT met. Manager mode (below) is judged the same, save
 * that at N ≤ 10 its peak is held to the memory request install-self gives the manager's
 * Deployment (src/self/manifests.ts), not to a single helm-operator's scaffold: it is the whole
 * of Binnacle in one process (catalogs, installs, every HelmOperator).
 *
 * Charts: operator-sdk's memcached sample (its watches.yaml, CRD and sample CR), and a larger
 * corpus chart, grafana's loki-distributed (102 templates, 18 namespaced objects), served as
 * kind LokiDistributed from a generated project (.cache/bench-helm-operator/loki).
 *
 * For each chart, N and operator, one at a time against the local control plane (`binnacle
 * cluster up --name BINNACLE_E2E_CLUSTER --audit`, default `scale`): 10 fresh namespaces; a
 * ServiceAccount of its own bound to cluster-admin, whose token the operator's kubeconfig
 * holds (so the audit log tells its requests apart); the operator started watching every
 * namespace, IDLE_MS to start, then N CRs spread round-robin over the namespaces and created at
 * once. Converge time runs from the first create until every CR's `Deployed` is True (one list
 * every 50 ms up to 10 CRs, a quarter second up to 500, a second above). Then every CR's replica count is changed at once, and upgrade time runs
 * until every release has a deployed revision 2 (its Helm release Secret). The operator then
 * runs --idle-ms longer (default a minute): idle CPU over that span, steady RSS at its end.
 * Peak RSS is VmHWM (worker threads included), each process of the tree's summed (an upper bound:
 * their peaks need not coincide); each side also runs in a memory cgroup of its own
 * (bench/lib/cgroup.ts): its usage peak (the kernel's count of the tree at its worst moment, what
 * a container's limit is enforced on, page cache included, which a limit reclaims first) and its
 * working set (usage less inactive file cache, what `kubectl top` shows and the kubelet evicts
 * on; sampled every 250 ms), on which the 128 MiB goal is judged. Each side runs from a private
 * copy of its binary with the page cache emptied before it starts, so that its binary's pages
 * are charged to it (spawnInCgroup says why). `--memory-limit-mib M` holds both sides to M as a
 * container's limit would, counts OOM kills and judges whether each converges inside it (the
 * working-set goal is then not compared: the limit bounds it). API requests are counted from the audit log
 * once the operator has stopped (a watch is logged when it ends). Idle CPU and steady RSS are
 * measured only once the operator has converged (every CR Deployed and upgraded): one that has
 * not, the phase having timed out, is reported "not converged" and its idle CPU is not compared
 * (it was still working). Rounds: `--rounds N`, else 3 at N ≤ 100 and 1 above; the figures are
 * medians, with their spread (smallest to largest) beside them. The CRs' finalizers are
 * removed after the operator stops, so their namespaces go; the next operator starts once they
 * are gone (it watches every namespace: CRs still being deleted would be its work).
 *
 * Where Binnacle's memory goes (measured 2026-11-27 with /proc/PID/smaps sampled at the peak and heap
 * snapshots taken there): the Node process ~100-115 MiB, the native Helm engine (its child) ~20-30 MiB.
 * Of Node's: ~40 MiB is the node binary's own code resident (file-backed; a bare `node` has 34), V8
 * heap pages ~50 MiB, ~17 MiB malloc. Node goes from ~70 MiB idle to ~100 MiB with one loki CR
 * (the reconcile's modules loaded and compiled, once); what is above that scales with the
 * reconciles in flight. Four changes took the peak down: `--optimize-for-size` (~15 MiB); no optimizing compiler in
 * helm-operator run (`--no-opt`, src/publish/helm-bundle/operator.ts: TurboFan's compile zones were most
 * of the peak; loki-distributed at 10 CRs 169 → 149 MiB, memcached at 100 CRs 140 → 123 MiB);
 * one shared chart object per distinct chart in release records and renders
 * (src/apply/chart-intern.ts: at 10 loki CRs the heap held 80 copies of its 100 templates; 183-197
 * → 169 MiB); and GOGC=50 for the engine of helm-operator run (the engine 30 → 22 MiB at 10 loki
 * CRs; GOGC=25 since). Smaller semi-spaces, a lower heap-growing factor and fewer concurrent reconciles (8 or 4)
 * each moved it less than the runs' noise, or cost time at large N. Measured again at 10 loki CRs
 * (one run each, Node's VmHWM): as shipped 110-111 MiB; with --initial-old-space-size=16 117,
 * --heap-growing-percent=30 or 10 111, --max-semi-space-size=4 or 8 112, glibc's
 * MALLOC_MMAP_THRESHOLD_ 128K 113 and 64K (with arena and trim limits) 108. V8's --trace-gc shows
 * why: 23-27 MB live after each mark-compact, the next at 41-52 MB whatever the growing flags
 * (--trace-gc-verbose: V8 11.3 sets each limit at twice the live size; --heap-growing-percent does
 * not change it, and --max-old-space-size=64 did, 116 → 108 MiB, but is a crash at large N).
 * So the peak is about twice what is live, and what is live at rest was most of it: a heap
 * snapshot at the first 44 MB of heap held 25 MB live, 15 of them there before any CR (module
 * sources and their bytecode). Three changes (2026-11-27, medians of 3 rounds at 10 loki CRs,
 * `--crs 10 --charts loki --only binnacle --rounds 3 --idle-ms 3000`) took 132 → 120 MiB: the
 * chart digest imported the whole source/ barrel (git, OCI, sigstore, tar) where it needs one
 * module; the vendored KubeConfig kept 726 modules (630 KB) of the package's generated API and
 * loaded its auth-only dependencies (OIDC, proxies, fetch and its Unicode tables) on start: now
 * 41 KB, and those load on first use (the idle heap 15 → 10.5 MB, kube-config-bundle.ts); and V8's
 * baseline compiler is off (`--no-sparkplug`: its code is never flushed; 127 → 120 MiB). GOGC=25
 * took the engine a further 1-3 MiB. Not taken: `--jitless` (121 MiB, no WebAssembly, a warning
 * on every start), `--single-threaded-gc` (no better), `--no-incremental-marking` (166 MiB: the
 * full collections come later).
 *
 * On Node 24.22.3 (issue 46, 2026-12-05: process.memoryUsage and V8's heap space statistics sampled
 * inside the operator every 250 ms through a --require in NODE_OPTIONS, /proc/PID/smaps at the
 * peak, --trace-gc; one run each at 10 loki CRs): Node's process peaked at 123 MiB against Node
 * 20.20.2's 106. Node 24's binary's file pages were 46 against 38 MiB, the anonymous memory outside
 * V8's heap (malloc's heap 24 MiB of it, ArrayBuffers 3-7 MB) 27 against 18, V8's heap the same (50
 * and 49 MB: old space 35, large objects 10). The Helm engine is a native child either way (VmHWM
 * 24-33 MiB, a 13 MiB binary); nothing of WebAssembly is in Node's process. V8's heap at its peak
 * was twice what was live because `collectLikeGo` set --heap-growing-percent=100, which replaces
 * the 1.3 cap `--optimize-for-size` gives rather than lowering it (so the growing flags tried above
 * were overwritten at start); left out under --optimize-for-size (src/cli/heap.ts), V8's heap peaks
 * at 31 MB and Node's process at 103-108 MiB. Not taken, measured after it or before it: a byte
 * budget on renders in flight (at most ~2 MB of chart between render and applied: Node's peak the
 * same 105 MiB, to Deployed 24 s against 7-9), `--max-concurrent-reconciles` 4 or 2 (112 and 109
 * MiB against 116-123, before), MALLOC_ARENA_MAX=2 (118, before), MALLOC_MMAP_THRESHOLD_=131072
 * (116): within the noise here then (single runs; the image now sets both, with a trim threshold,
 * for the manager's catalogs: src/self/image.ts MALLOC_ENV, and this bench runs Binnacle with
 * them as the image does; their effect on helm-operator run is not measured in one run), GOGC=10 for the engine (the tree 132 against 133-135 MiB), --heap-growing-percent=10
 * (106 against 103-105).
 *
 * Where the requests go (the audit log, by verb and resource): the periodic resync (every CR
 * once a minute) read every object of every release to judge drift, though the dependent watches
 * hold them: the applier now judges a repair, and an upgrade's objects applied as before, from
 * those watches (`ApplyRequest.watched`), reading only what they lack (loki at 100 CRs: 9,261 GETs
 * → 2,261). In manager mode each reconcile's impersonating client read /version, /api and /apis
 * anew, and the release identity's ServiceAccount was read on every reconcile: discovery is now
 * shared by impersonating clients, and an account found is taken to exist for 30 s (memcached at
 * 1,000 CRs, manager: 43,756 requests → 30,563). At 1,000 loki CRs (2026-11-27), after the upgrade
 * 1,644 reconciles changed nothing: the Deployment controller's revision annotation on every
 * rollout re-queued each CR through the dependent watches. A change that leaves Binnacle's own
 * managedFields entry as it was no longer re-queues (src/controllers/helm-dependents.ts; loki at
 * 100 CRs: 330 no-change reconciles → 123). What is left is the periodic resync (every CR once a
 * minute, as operator-sdk's): at 1,000 loki CRs (build 3467ec0) no CR was reconciled within 30 s
 * of its last reconcile, and the idle minute's CPU (0.63× operator-sdk's) is those resyncs.
 * operator-sdk's dependent predicate (operator-lib) re-queues on any change but to status and
 * resourceVersion, so the Deployment controller's revision annotation re-queues its CRs.
 *
 * Manager mode (`--mode manager`, or `--mode helm-operator,manager` for both): the chart, pushed
 * to the cluster's registry, is served as a kind by a HelmOperator inside `binnacle manager`
 * (its kind in group manager.bench.binnacle.dev, apart from the generated projects' bench.binnacle.dev, its releases acting as the operator's own
 * ServiceAccount), measured the same way beside operator-sdk's helm-operator.
 *
 * Settings. Each side runs with its own defaults but for what the bench pins (metrics and probe
 * ports off); the stored result (bench/lib/results.ts) records each side's command line, NODE_OPTIONS,
 * concurrency and the flags added with `--binnacle-args` / `--operator-sdk-args` (space-separated,
 * appended to that side's command). Neither side has a client-side rate limit by default (both
 * leave it to the API server's Priority and Fairness); `--binnacle-args '--kube-api-qps=50'` runs
 * Binnacle with one, `--max-concurrent-reconciles` sets Binnacle's concurrency, and `--matched N`
 * runs both sides at N reconciles at once with no client-side limit on either (settings.bench.matched).
 *
 * usage: npx tsx bench/helm-operator.ts [--crs 1,10,100,1000] [--charts memcached,loki] [--rounds N]
 *        [--binnacle-args '--flag value ...'] [--operator-sdk-args '--flag value ...']
 *        [--mode helm-operator|manager|helm-operator,manager] [--only binnacle|binnacle-manager|operator-sdk] [--phase-timeout-s S] [--idle-ms MS] [--node-options OPTS] [--max-concurrent-reconciles N] [--matched N]
 *        [--binnacle PATH/bin/binnacle.js]   (another build, e.g. a copy of the one before a change)
 *        [--before PATH/bin/binnacle.js]   (another build measured beside this one, as binnacle-before)
 *        [--cpu-prof DIR]   (Binnacle's operator process writes a V8 CPU profile there)
 *        [--log-level debug]   (Binnacle's --zap-log-level: its log, kept beside the bench, times each reconcile's steps)
 */
import { accessSync, constants, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { parse, stringify } from 'yaml';
import { RECORD_OWNER_UID_LABEL, RECORD_PART_OWNER_LABEL, RECORD_RELEASE_NAMESPACE_LABEL } from '../src/apply/release-records.js';
import { recordsNamespaceOf } from '../src/cli/commands/helm-operator.js';
import { clusterUp, countAuditRequestsInFile } from '../src/cluster/index.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfig } from '../src/kube/config.js';
import { serviceAccountDir } from '../src/kube/in-cluster.js';
import type { KubeObject } from '../src/kube/types.js';
import { MANAGER_MEMORY_REQUEST_MIB } from '../src/self/manifests.js';
import { dropPageCache, memoryCgroup, privateCopy, sweepCgroups, type MemoryCgroup } from './lib/cgroup.js';
import { arg, cpuSeconds, maxSampler, operatorCommands, procStatus, ROOT, run, sampleProject, spawnLogged, stopChild, treePeakSampler, type OperatorCommand } from './lib/helm-operator.js';
import { judged, spread, startRun, type GoalVerdict, type SideSettings, type Spread } from './lib/results.js';
import type { HelmOperatorFigures, HelmOperatorSummary } from './lib/summaries.js';

const NAMESPACES = 10;
const IDLE_MS = 5_000;
/**
 * How long converging or upgrading may take (`--phase-timeout-s`; default 15 minutes, or 2 s a
 * CR at large N). An operator still short of N then is not an error: its time is reported as a
 * lower bound with how many CRs it reached (operator-sdk's at N = 1,000 runs for tens of minutes).
 */
const PHASE_TIMEOUT_S = arg('--phase-timeout-s') === undefined ? undefined : Number(arg('--phase-timeout-s'));
const deployTimeoutMs = (n: number): number => (PHASE_TIMEOUT_S !== undefined && PHASE_TIMEOUT_S > 0 ? PHASE_TIMEOUT_S * 1000 : Math.max(900_000, n * 2_000));
const CLEANUP_TIMEOUT_MS = 600_000;
const SCAFFOLD_LIMIT_MIB = 128;
const CRS = (arg('--crs') ?? '1,10,100,1000').split(',').map((n) => Number(n)).filter((n) => Number.isSafeInteger(n) && n > 0);
const CHARTS = (arg('--charts') ?? 'memcached,loki').split(',');
/** `--rounds N`, else 3 at N ≤ 100 (medians and spread) and 1 above (a run at 1,000 CRs takes an hour a side). */
const ROUNDS_ARG = arg('--rounds') === undefined ? undefined : Math.max(1, Number(arg('--rounds')) || 1);
const roundsAt = (n: number): number => ROUNDS_ARG ?? (n <= 100 ? 3 : 1);
/** Flags appended to each side's command (the hook for runs with matched settings). */
const words = (v: string | undefined): string[] => (v ?? '').split(/\s+/).filter((w) => w !== '');
const BINNACLE_EXTRA = words(arg('--binnacle-args'));
const OPERATOR_SDK_EXTRA = words(arg('--operator-sdk-args'));
const IDLE_MEASURE_MS = Number(arg('--idle-ms') ?? 60_000);
/** Each side's process tree held to this memory limit (its cgroup's), as a container's; none by default. */
const MEMORY_LIMIT_MIB = arg('--memory-limit-mib') === undefined ? undefined : Number(arg('--memory-limit-mib'));
if (MEMORY_LIMIT_MIB !== undefined && !(MEMORY_LIMIT_MIB > 0)) throw new Error(`--memory-limit-mib ${arg('--memory-limit-mib') ?? ''}: a positive number of MiB`);
const ONLY = arg('--only');
/** Binnacle's NODE_OPTIONS: by default what helm bundle's Deployment sets (src/publish/helm-bundle/operator.ts). */
const NODE_OPTIONS = arg('--node-options') ?? '--max-semi-space-size=1';
const CPU_PROF = arg('--cpu-prof') === undefined ? undefined : path.resolve(arg('--cpu-prof') ?? '');
/**
 * `--matched N`: both sides run N reconciles at once (each side's --max-concurrent-reconciles),
 * and neither has a client-side rate limit (operator-sdk's has none by default, nor a flag for
 * one; Binnacle's has none by default either, and --binnacle-args may not add one here).
 */
const MATCHED = arg('--matched');
if (MATCHED !== undefined && !(Number(MATCHED) > 0)) throw new Error(`--matched ${MATCHED}: give the reconciles both sides run at once, e.g. --matched 2`);
const MAX_CONCURRENT = MATCHED ?? arg('--max-concurrent-reconciles');
/** Resolved here: the operators run in the chart project's directory. */
const BINNACLE_ENTRY = arg('--binnacle') === undefined ? undefined : path.resolve(arg('--binnacle') ?? '');
const CLUSTER = process.env.BINNACLE_E2E_CLUSTER ?? 'scale';
/** Where the operators' ServiceAccounts live (the audit log records ServiceAccounts' requests). */
const IDENTITY_NS = 'binnacle-bench';
const KUBECTL = path.join(ROOT, '.cache', 'bin', 'kubectl');
const HELM = path.join(ROOT, '.cache', 'bin', 'helm');
/** How Binnacle serves the kind: `helm-operator run` (watches.yaml), a HelmOperator in `binnacle manager`, or both. */
const MODES = new Set((arg('--mode') ?? 'helm-operator').split(','));
/** The group of the kind a HelmOperator serves: its CRD is the operator's own, beside the one helm-operator's watches use. */
const MANAGER_GROUP = 'manager.bench.binnacle.dev';
/** Where manager mode's chart is pushed in the cluster's registry. */
const MANAGER_REPO = 'bench-helm-operator';

/** A chart served as a kind: its project (watches.yaml), CRD, a CR's spec and the change an upgrade makes. */
interface BenchChart {
  name: string;
  project: string;
  apiVersion: string;
  kind: string;
  crd: KubeObject;
  spec: unknown;
  upgrade: Record<string, unknown>;
  /** The chart directory (manager mode pushes it to the registry). */
  chartDir: string;
}

function memcachedChart(): BenchChart {
  const project = sampleProject();
  const cr = parse(readFileSync(path.join(project, 'config', 'samples', 'cache_v1alpha1_memcached.yaml'), 'utf8')) as KubeObject & { spec: unknown };
  const crd = parse(readFileSync(path.join(project, 'config', 'crd', 'bases', 'cache.example.com_memcacheds.yaml'), 'utf8')) as KubeObject;
  return { name: 'memcached', project, apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', crd, spec: cr.spec, upgrade: { replicaCount: 4 }, chartDir: path.join(project, 'helm-charts', 'memcached') };
}

/** grafana's loki-distributed from the corpus, served as LokiDistributed.bench.binnacle.dev/v1 from a generated project. */
function lokiChart(): BenchChart {
  const chart = path.join(process.env.BINNACLE_CHARTS_CORPUS ?? path.join(ROOT, '..', 'shared', 'corpus', 'charts'), 'grafana__loki-distributed');
  const project = path.join(ROOT, '.cache', 'bench-helm-operator', 'loki');
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'watches.yaml'), stringify([{ group: 'bench.binnacle.dev', version: 'v1', kind: 'LokiDistributed', chart }]));
  const schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const crd: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'lokidistributeds.bench.binnacle.dev' },
    spec: {
      group: 'bench.binnacle.dev',
      names: { kind: 'LokiDistributed', listKind: 'LokiDistributedList', plural: 'lokidistributeds', singular: 'lokidistributed' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', properties: { spec: schema, status: schema } } } }],
    },
  };
  return { name: 'loki', project, apiVersion: 'bench.binnacle.dev/v1', kind: 'LokiDistributed', crd, spec: {}, upgrade: { ingester: { replicas: 2, maxUnavailable: 1 } }, chartDir: chart };
}

interface Sample {
  deployedMs: number;
  upgradeMs: number;
  /** CRs Deployed, and upgraded, when the phase ended: below N, its time is a lower bound (the phase timed out). */
  deployed: number;
  upgraded: number;
  peakMib: number;
  /** The kernel's count of the tree at its worst moment (its own memory cgroup), page cache included; null without one. */
  cgroupPeakMib: number | null;
  /** The cgroup's working set (usage less inactive file cache, cAdvisor's), its largest sample (every 250 ms); null without a cgroup. */
  workingSetPeakMib: number | null;
  /** Processes the kernel killed for `--memory-limit-mib`. */
  oomKills: number;
  /** Whether the page cache was emptied before the side started (root only); null without a cgroup. */
  pageCacheEmptied: boolean | null;
  /** Every CR Deployed and upgraded: only then are idle CPU and steady RSS measured (else null). */
  converged: boolean;
  steadyMib: number | null;
  convergeCpuS: number;
  idleCpuS: number | null;
  requests: number;
}

type CustomResource = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

/** How many of the round's CRs are Deployed (one list of the kind, cluster-wide). */
async function deployedCount(client: KubeClient, c: BenchChart, namespaces: Set<string>): Promise<number> {
  const list = await client.list<CustomResource>(c.apiVersion, c.kind);
  return list.items.filter((cr) => namespaces.has(cr.metadata.namespace ?? '') && cr.status?.conditions?.some((x) => x.type === 'Deployed' && x.status === 'True') === true).length;
}

/** How many of the round's releases have a deployed revision 2 (Helm's release Secrets, as both operators keep them). */
async function upgradedCount(client: KubeClient, namespaces: Set<string>): Promise<number> {
  const list = await client.list('v1', 'Secret', { labelSelector: 'owner=helm,status=deployed' });
  return list.items.filter((s) => namespaces.has(s.metadata.namespace ?? '') && /\.v2$/.test(s.metadata.name ?? '')).length;
}

/** How often the CRs or releases are counted at N: the time's resolution. */
function pollIntervalMs(n: number): number {
  return n >= 500 ? 1_000 : n > 10 ? 250 : 50;
}

/** Polls `count` until it reaches n; throws when the operator exits or the deadline passes. */
async function waitFor(what: string, n: number, count: () => Promise<number>, exited: () => string | undefined): Promise<{ ms: number; reached: number }> {
  const start = Date.now();
  const timeoutMs = deployTimeoutMs(n);
  for (;;) {
    const gone = exited();
    if (gone !== undefined) throw new Error(`${gone} before every CR was ${what}`);
    const done = await count();
    if (done >= n) return { ms: Date.now() - start, reached: done };
    if (Date.now() - start > timeoutMs) {
      console.log(`  only ${done} of ${n} CRs ${what} after ${timeoutMs / 1000} s: the time is a lower bound`);
      return { ms: Date.now() - start, reached: done };
    }
    // At large N a list of every release Secret each quarter second would load the API server the
    // operators share; at small N converging takes half a second, so a quarter second was a coin toss.
    await new Promise((r) => setTimeout(r, pollIntervalMs(n)));
  }
}

/** Removes the finalizers of the round's CRs (the operator is gone) and deletes their namespaces. */
/**
 * The trusted release records `helm-operator run` kept for this round's CRs (in `default`, its
 * namespace outside a cluster: src/cli/commands/helm-operator.ts), deleted with the round: its
 * CRs lost their finalizers above, so nothing uninstalled them, and the next round's operator
 * would collect them (records-gc) inside its own timings and request count, and, under a
 * client-side rate limit, its budget (a run at --kube-api-qps=20 collected 351 owners of the run
 * before it while it worked).
 */
async function dropTrustedRecords(client: KubeClient, namespaces: readonly string[]): Promise<void> {
  // Where the operators under test keep them: helm-operator run's rule for a process outside a
  // cluster without leader election, as the bench starts it. A list that fails fails the bench:
  // records left behind would be collected inside the next round's timings.
  const home = recordsNamespaceOf(undefined, serviceAccountDir());
  const records = (await client.list('v1', 'Secret', { namespace: home, labelSelector: RECORD_OWNER_UID_LABEL })).items.filter((s) =>
    namespaces.includes(s.metadata.labels?.[RECORD_RELEASE_NAMESPACE_LABEL] ?? ''),
  );
  const uids = new Set(records.map((s) => s.metadata.labels?.[RECORD_OWNER_UID_LABEL] ?? ''));
  const parts = (await client.list('v1', 'Secret', { namespace: home, labelSelector: RECORD_PART_OWNER_LABEL })).items.filter((s) =>
    uids.has(s.metadata.labels?.[RECORD_PART_OWNER_LABEL] ?? ''),
  );
  for (const s of [...records, ...parts]) await client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: home, name: s.metadata.name ?? '' });
}

/** The finalizers of the chart's CRs in those namespaces removed: no operator runs to remove them. */
async function stripFinalizers(client: KubeClient, c: BenchChart, namespaces: string[]): Promise<void> {
  const list = await client.list<CustomResource>(c.apiVersion, c.kind).catch(() => ({ items: [] as CustomResource[] }));
  await Promise.all(
    list.items
      .filter((cr) => namespaces.includes(cr.metadata.namespace ?? '') && (cr.metadata.finalizers ?? []).length > 0)
      .map((cr) => client.patch({ apiVersion: c.apiVersion, kind: c.kind, namespace: cr.metadata.namespace, name: cr.metadata.name ?? '' }, { metadata: { finalizers: null } }, 'merge').catch(() => undefined)),
  );
}

async function cleanUp(client: KubeClient, c: BenchChart, namespaces: string[]): Promise<void> {
  await stripFinalizers(client, c, namespaces);
  await Promise.all(namespaces.map((ns) => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined)));
  await dropTrustedRecords(client, namespaces);
  // Until they are gone: the next operator watches every namespace, and CRs of this round still
  // being deleted were its work (the uninstall of another operator's releases) inside its own timings.
  const deadline = Date.now() + CLEANUP_TIMEOUT_MS;
  for (;;) {
    const left = (await Promise.all(namespaces.map((ns) => client.find({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined)))).filter((x) => x !== undefined);
    if (left.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${left.length} namespaces of the round still there after ${CLEANUP_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/**
 * A kubeconfig for a ServiceAccount of its own, bound to cluster-admin as the operators' bench
 * setups are: the audit log's user for it is returned beside the file.
 */
async function operatorIdentity(client: KubeClient, adminKubeconfig: string, name: string, dir: string): Promise<{ kubeconfig: string; user: string }> {
  await client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: IDENTITY_NS } });
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${IDENTITY_NS}-${name}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name, namespace: IDENTITY_NS }],
  });
  const token = run(KUBECTL, ['--kubeconfig', adminKubeconfig, 'create', 'token', name, '-n', IDENTITY_NS, '--duration', '24h']);
  const admin = parse(readFileSync(adminKubeconfig, 'utf8')) as { clusters: { name: string; cluster: unknown }[] };
  const cluster = admin.clusters[0];
  const kubeconfig = path.join(dir, `${name}.kubeconfig`);
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'bench', cluster: cluster?.cluster }],
      users: [{ name, user: { token } }],
      contexts: [{ name: 'bench', context: { cluster: 'bench', user: name } }],
      'current-context': 'bench',
    }),
    { mode: 0o600 },
  );
  return { kubeconfig, user: `system:serviceaccount:${IDENTITY_NS}:${name}` };
}

interface Env {
  client: KubeClient;
  adminKubeconfig: string;
  auditLog: string;
  registry: string;
}

/** The kind as a HelmOperator serves it: the same chart and CRs, in group MANAGER_GROUP (its CRD made by the operator). */
function managerChart(c: BenchChart): BenchChart {
  return { ...c, apiVersion: `${MANAGER_GROUP}/${c.apiVersion.split('/')[1] ?? 'v1'}` };
}

/** Packages the chart and pushes it to the cluster's registry (once a run); answers its oci:// reference. */
function pushChart(c: BenchChart, registry: string): string {
  const out = path.join(ROOT, '.cache', 'bench-helm-operator', 'charts');
  mkdirSync(out, { recursive: true });
  const line = run(HELM, ['package', c.chartDir, '-d', out]);
  const tgz = line.slice(line.lastIndexOf(':') + 1).trim();
  const repo = `oci://${registry}/${MANAGER_REPO}`;
  run(HELM, ['push', tgz, repo, '--plain-http'], ROOT);
  // helm push names the repository after the chart (Chart.yaml's name), not its directory.
  const { name } = parse(readFileSync(path.join(c.chartDir, 'Chart.yaml'), 'utf8')) as { name: string };
  return `${repo}/${name}`;
}

/**
 * Manager mode: a HelmOperator serving the chart's kind, its releases acting as the operator's
 * own ServiceAccount (`id`); resolves once it is Ready (its CRD established), with how long that took.
 */
async function startHelmOperator(client: KubeClient, c: BenchChart, name: string, sa: string, chartRef: string, exited: () => string | undefined): Promise<number> {
  const start = Date.now();
  const [group, version] = managerChart(c).apiVersion.split('/');
  await client.apply({
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'HelmOperator',
    metadata: { name },
    spec: { chart: { oci: { ref: chartRef, insecure: true } }, kinds: [{ group, version, kind: c.kind }], serviceAccount: { namespace: IDENTITY_NS, name: sa } },
  });
  for (;;) {
    const gone = exited();
    if (gone !== undefined) throw new Error(`${gone} before the HelmOperator was Ready`);
    const hop = await client.find({ apiVersion: 'binnacle.dev/v1alpha1', kind: 'HelmOperator', name });
    const ready = (hop?.status as { conditions?: { type: string; status: string; message?: string }[] } | undefined)?.conditions?.find((x) => x.type === 'Ready');
    if (ready?.status === 'True') return Date.now() - start;
    if (Date.now() - start > 120_000) throw new Error(`HelmOperator ${name} not Ready after 120 s: ${ready?.message ?? 'no Ready condition'}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** After the manager stopped: the HelmOperator (its finalizer removed), the CRD it made and its ClusterRoles. */
async function removeHelmOperator(client: KubeClient, name: string): Promise<void> {
  const ref = { apiVersion: 'binnacle.dev/v1alpha1', kind: 'HelmOperator', name };
  await client.patch(ref, { metadata: { finalizers: null } }, 'merge').catch(() => undefined);
  await client.delete(ref).catch(() => undefined);
  for (const kind of [{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }]) {
    const made = await client.list(kind.apiVersion, kind.kind, { labelSelector: `binnacle.dev/helm-operator=${name}` }).catch(() => ({ items: [] as KubeObject[] }));
    for (const o of made.items) await client.delete({ ...kind, name: o.metadata.name ?? '' }).catch(() => undefined);
  }
}

/** The cgroups of this bench's sides: `binnacle-bench-<tag>`; a killed run's are swept at start. */
const CGROUP_PREFIX = 'binnacle-bench-';

/** `cmd` as a path: itself when it names one (relative to `cwd`, where it runs), else the first executable of that name on PATH. */
function onPath(cmd: string, cwd: string): string {
  if (cmd.includes('/')) return path.resolve(cwd, cmd);
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = path.join(dir, cmd);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`${cmd}: not found on PATH`);
}

/**
 * The operator started in a memory cgroup of its own (held to --memory-limit-mib), or as it is
 * where none can be made. In a cgroup it runs from a private copy of its binary, the page cache
 * emptied first: the binary's pages, and whatever else the tree reads, are then read by the tree
 * and charged to its cgroup, as on a node that runs the image for the first time. (Pages another
 * process has mapped cannot be dropped: the bench itself runs on the same Node binary as
 * Binnacle, whose pages would otherwise stay charged to the bench. Shared libraries the bench has
 * mapped too, libc's and libstdc++'s for Node, still are: a few MiB in Binnacle's favour.)
 */
function spawnInCgroup(label: string, name: string, cmd: string, args: string[], opts: Parameters<typeof spawnLogged>[3]): ReturnType<typeof spawnLogged> & { cgroup: MemoryCgroup | undefined; pageCacheEmptied: boolean | null; binDir: string | undefined } {
  const cgroup = memoryCgroup(name, MEMORY_LIMIT_MIB);
  if (cgroup === undefined) {
    if (MEMORY_LIMIT_MIB !== undefined) throw new Error('--memory-limit-mib needs a memory cgroup (root, and cgroup v1 or v2 with the memory controller)');
    return { ...spawnLogged(label, cmd, args, opts), cgroup, pageCacheEmptied: null, binDir: undefined };
  }
  const binDir = path.join(ROOT, '.cache', 'bench-helm-operator', 'bin', name);
  let command: { cmd: string; args: string[] };
  try {
    command = cgroup.wrap(privateCopy(onPath(cmd, opts.cwd), binDir), args);
  } catch (err) {
    cgroup.remove();
    throw err;
  }
  const pageCacheEmptied = dropPageCache();
  return { ...spawnLogged(label, command.cmd, command.args, opts), cgroup, pageCacheEmptied, binDir };
}

/** A side's failure, said to be an OOM kill when its cgroup counted one (the round ends the bench; the log tail is in the error). */
function oomExplained(err: unknown, cgroup: MemoryCgroup | undefined, what: string): unknown {
  if (cgroup === undefined || cgroup.oomKills() === 0) return err;
  return new Error(`${what}: ${cgroup.oomKills()} process(es) OOM-killed under the ${MEMORY_LIMIT_MIB ?? '?'} MiB limit: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

/** Stops a side (SIGTERM, then SIGKILL; a process killed by a signal counts as exited), empties its cgroup and removes its binary's copy. */
async function stopSide(child: Parameters<typeof stopChild>[0], cgroup: MemoryCgroup | undefined, binDir: string | undefined): Promise<void> {
  await stopChild(child);
  cgroup?.remove();
  if (binDir !== undefined) rmSync(binDir, { recursive: true, force: true });
}

/** The largest working set the cgroup showed, sampled every 250 ms while the side runs. */
function workingSetSampler(cgroup: MemoryCgroup | undefined): { peakMib: () => number | null; stop: () => void } {
  if (cgroup === undefined) return { peakMib: () => null, stop: () => undefined };
  const s = maxSampler(() => cgroup.workingSetMib(), 250);
  return {
    peakMib: () => {
      const v = s.peakMib();
      return Number.isNaN(v) ? null : v;
    },
    stop: s.stop,
  };
}

function cgroupFigures(cgroup: MemoryCgroup | undefined, pageCacheEmptied: boolean | null, workingSet: ReturnType<typeof workingSetSampler>): Pick<Sample, 'cgroupPeakMib' | 'workingSetPeakMib' | 'oomKills' | 'pageCacheEmptied'> {
  return cgroup === undefined ? { cgroupPeakMib: null, workingSetPeakMib: null, oomKills: 0, pageCacheEmptied } : { cgroupPeakMib: cgroup.peakMib(), workingSetPeakMib: workingSet.peakMib(), oomKills: cgroup.oomKills(), pageCacheEmptied };
}

async function measure(o: OperatorCommand, served: BenchChart, n: number, e: Env, round: number): Promise<Sample> {
  const { client } = e;
  const manager = o.label === 'binnacle-manager';
  const c = manager ? managerChart(served) : served;
  const tag = `${{ binnacle: 'b', 'binnacle-before': 'p', 'binnacle-manager': 'm', 'operator-sdk': 'o' }[o.label]}${c.name.slice(0, 4)}${n}-${round}-${Date.now().toString(36)}`;
  const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `scale-${tag}-${i}`);
  await Promise.all(namespaces.map((ns) => client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })));
  const id = await operatorIdentity(client, e.adminKubeconfig, `op-${tag}`, path.join(ROOT, '.cache', 'bench-helm-operator'));
  const auditFrom = statSync(e.auditLog).size;
  const env = { ...process.env, KUBECONFIG: id.kubeconfig, WATCH_NAMESPACE: '', NODE_OPTIONS: o.nodeOptions, ...o.env };
  // --cpu-prof is not allowed in NODE_OPTIONS: node's own flags before the entry.
  const args = o.label !== 'operator-sdk' && CPU_PROF !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`, ...o.args] : o.args;
  // The whole log beside the tail kept for errors: what each reconcile waited on.
  const logFile = path.join(ROOT, '.cache', 'bench-helm-operator', `${tag}.log`);
  const { cgroup, pageCacheEmptied, binDir, child, pid, exited } = spawnInCgroup(o.label, `${CGROUP_PREFIX}${tag}`, o.cmd, args, { cwd: c.project, env, logFile });
  const inRound = new Set(namespaces);
  // The tree's peak, sampled while it runs: the native Helm engine (a child) may exit when idle.
  const peak = treePeakSampler(pid);
  const workingSet = workingSetSampler(cgroup);
  let sample: Omit<Sample, 'requests'>;
  try {
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const early = exited();
    if (early !== undefined) throw new Error(early);
    if (manager) {
      const readyMs = await startHelmOperator(client, c, `bench-${tag}`, `op-${tag}`, pushChart(c, e.registry), exited);
      console.log(`  ${o.label} N=${n}: HelmOperator Ready (CRD made, kind served) in ${(readyMs / 1000).toFixed(1)} s`);
    }
    const cpu0 = cpuSeconds(pid);
    const created = Date.now();
    await Promise.all(Array.from({ length: n }, (_, i) => client.create({ apiVersion: c.apiVersion, kind: c.kind, metadata: { name: `${c.name}-${i}`, namespace: namespaces[i % NAMESPACES] }, spec: c.spec })));
    const converged = await waitFor('Deployed', n, () => deployedCount(client, c, inRound), exited);
    const deployedMs = Date.now() - created;
    const cpu1 = cpuSeconds(pid);
    const changed = Date.now();
    await Promise.all(Array.from({ length: n }, (_, i) => client.patch({ apiVersion: c.apiVersion, kind: c.kind, namespace: namespaces[i % NAMESPACES], name: `${c.name}-${i}` }, { spec: c.upgrade }, 'merge')));
    const upgraded = await waitFor('upgraded', n, () => upgradedCount(client, inRound), exited);
    const upgradeMs = Date.now() - changed;
    const done = converged.reached >= n && upgraded.reached >= n;
    let idle: { steadyMib: number; idleCpuS: number } | undefined;
    if (done) {
      const cpu2 = cpuSeconds(pid);
      await new Promise((r) => setTimeout(r, IDLE_MEASURE_MS));
      idle = { steadyMib: procStatus(pid).rss, idleCpuS: cpuSeconds(pid) - cpu2 };
    } else console.log(`  ${o.label} N=${n}: not converged (${converged.reached} Deployed, ${upgraded.reached} upgraded of ${n}): idle CPU and steady RSS not measured`);
    sample = { deployedMs, upgradeMs, deployed: converged.reached, upgraded: upgraded.reached, peakMib: Math.max(procStatus(pid).hwm, peak.peakMib()), ...cgroupFigures(cgroup, pageCacheEmptied, workingSet), converged: done, steadyMib: idle?.steadyMib ?? null, convergeCpuS: cpu1 - cpu0, idleCpuS: idle?.idleCpuS ?? null };
  } catch (err) {
    throw oomExplained(err, cgroup, `${o.label} N=${n}`);
  } finally {
    peak.stop();
    workingSet.stop();
    await stopSide(child, cgroup, binDir);
    await cleanUp(client, c, namespaces);
    if (manager) await removeHelmOperator(client, `bench-${tag}`);
  }
  await new Promise((r) => setTimeout(r, 1_000)); // the audit backend writes the closed watches
  if (statSync(e.auditLog).size < auditFrom) throw new Error(`the audit log ${e.auditLog} was rotated during the run: its requests cannot be counted`);
  const byVerb = countAuditRequestsInFile(e.auditLog, auditFrom, new Set([id.user])).get(id.user) ?? new Map<string, number>();
  if (process.env.BENCH_VERBOSE !== undefined) console.log(`  ${o.label} N=${n} requests by verb: ${JSON.stringify(Object.fromEntries(byVerb))}`);
  return { ...sample, requests: [...byVerb.values()].reduce((a, b) => a + b, 0) };
}

/** One operator's rounds at one N: medians with their spread; idle figures only when every round converged. */
type Figures = HelmOperatorFigures;

function summary(xs: Sample[]): Figures {
  const converged = xs.length > 0 && xs.every((x) => x.converged);
  const idle = (f: (x: Sample) => number | null): Spread | null => (converged ? spread(xs.map((x) => f(x) ?? NaN)) : null);
  return {
    rounds: xs.length,
    deployed: Math.min(...xs.map((x) => x.deployed)),
    upgraded: Math.min(...xs.map((x) => x.upgraded)),
    converged,
    deployedMs: spread(xs.map((x) => x.deployedMs)),
    upgradeMs: spread(xs.map((x) => x.upgradeMs)),
    peakMib: spread(xs.map((x) => x.peakMib)),
    cgroupPeakMib: xs.every((x) => x.cgroupPeakMib !== null) ? spread(xs.map((x) => x.cgroupPeakMib ?? NaN)) : null,
    workingSetPeakMib: xs.every((x) => x.workingSetPeakMib !== null) ? spread(xs.map((x) => x.workingSetPeakMib ?? NaN)) : null,
    oomKills: xs.reduce((n, x) => n + x.oomKills, 0),
    steadyMib: idle((x) => x.steadyMib),
    convergeCpuS: spread(xs.map((x) => x.convergeCpuS)),
    idleCpuS: idle((x) => x.idleCpuS),
    requests: spread(xs.map((x) => x.requests)),
  };
}
const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a');
const idleRatio = (a: Spread | null, b: Spread | null): string => (a === null || b === null ? 'not compared (not converged)' : ratio(a.median, b.median));

/** `median (min-max)` when there were several rounds, else the one value. */
function withSpread(x: Spread, f: (v: number) => string): string {
  return x.n > 1 && x.min !== x.max ? `${f(x.median)} (${f(x.min)}-${f(x.max)})` : f(x.median);
}

function row(n: number, label: string, s: Figures): string {
  const sec = (ms: number): string => (ms / 1000).toFixed(1);
  // A phase that timed out: its time is a lower bound, with the CRs it reached.
  const phase = (x: Spread, reached: number): string => (reached >= n ? `${withSpread(x, sec)} s` : `>${sec(x.median)} s (${reached})`);
  const idle = s.idleCpuS === null ? 'not converged' : `${withSpread(s.idleCpuS, (v) => v.toFixed(2))} s`;
  const steady = s.steadyMib === null ? 'not converged' : `${withSpread(s.steadyMib, (v) => v.toFixed(0))} MiB`;
  return `${String(n).padStart(5)} ${label.padEnd(16)} ${phase(s.deployedMs, s.deployed).padStart(17)} ${phase(s.upgradeMs, s.upgraded).padStart(17)} ${`${withSpread(s.peakMib, (v) => v.toFixed(0))} MiB`.padStart(15)} ${(s.cgroupPeakMib === null || s.cgroupPeakMib === undefined ? 'n/a' : `${withSpread(s.cgroupPeakMib, (v) => v.toFixed(0))} MiB${(s.oomKills ?? 0) > 0 ? ` (${s.oomKills} OOM)` : ''}`).padStart(15)} ${(s.workingSetPeakMib === null || s.workingSetPeakMib === undefined ? 'n/a' : `${withSpread(s.workingSetPeakMib, (v) => v.toFixed(0))} MiB`).padStart(15)} ${steady.padStart(15)} ${`${withSpread(s.convergeCpuS, (v) => v.toFixed(1))} s`.padStart(17)} ${idle.padStart(19)} ${withSpread(s.requests, (v) => v.toFixed(0)).padStart(17)}`;
}

function goalsFor(chart: string, n: number, b: Figures, r: Figures, smallLimit: { mib: number; what: string }): GoalVerdict[] {
  const at = `${chart} N=${n}`;
  const idle: GoalVerdict =
    b.idleCpuS === null || r.idleCpuS === null
      ? { goal: `${at} idle CPU <= helm-operator's`, verdict: 'not-compared', detail: `not converged: ${[b.idleCpuS === null ? 'binnacle' : '', r.idleCpuS === null ? 'operator-sdk' : ''].filter((x) => x !== '').join(' and ')}` }
      : judged(`${at} idle CPU <= helm-operator's`, b.idleCpuS.median <= r.idleCpuS.median, `${b.idleCpuS.median.toFixed(2)} s against ${r.idleCpuS.median.toFixed(2)} s`);
  return [
    // Binnacle's must be complete; helm-operator's may be a lower bound (it timed out), which Binnacle's is then at or below.
    judged(`${at} time to all Deployed <= helm-operator's`, b.deployed >= n && b.deployedMs.median <= r.deployedMs.median, `${(b.deployedMs.median / 1000).toFixed(1)} s against ${(r.deployedMs.median / 1000).toFixed(1)} s${r.deployed < n ? ` (a lower bound: ${r.deployed} of ${n})` : ''}`),
    judged(`${at} time for an upgrade of every CR to land <= helm-operator's`, b.upgraded >= n && b.upgradeMs.median <= r.upgradeMs.median, `${(b.upgradeMs.median / 1000).toFixed(1)} s against ${(r.upgradeMs.median / 1000).toFixed(1)} s${r.upgraded < n ? ` (a lower bound: ${r.upgraded} of ${n})` : ''}`),
    ...(n >= 100 ? [judged(`${at} peak RSS <= helm-operator's`, b.peakMib.median <= r.peakMib.median, `${b.peakMib.median.toFixed(0)} MiB against ${r.peakMib.median.toFixed(0)} MiB`)] : []),
    ...(n <= 10 ? [smallLimitGoal(at, b, smallLimit)] : []),
    idle,
    judged(`${at} API requests <= helm-operator's`, b.requests.median <= r.requests.median, `${b.requests.median.toFixed(0)} against ${r.requests.median.toFixed(0)}${r.converged ? '' : " (its run did not finish)"}`),
  ];
}

/**
 * The small-N memory goal: judged on the cgroup's working set where it was measured (what the
 * kubelet evicts on and `kubectl top` shows; the usage peak counts page cache a limit reclaims
 * first), the others beside it; on the summed VmHWM for results without a cgroup; not compared
 * when the run held the side to a limit no larger (the limit bounds it: withinLimit answers).
 */
function smallLimitGoal(at: string, b: Figures, limit: { mib: number; what: string }): GoalVerdict {
  const what = `<= ${limit.mib} MiB (${limit.what})`;
  if (MEMORY_LIMIT_MIB !== undefined && MEMORY_LIMIT_MIB <= limit.mib) return { goal: `${at} peak working set ${what}`, verdict: 'not-compared', detail: `held to a ${MEMORY_LIMIT_MIB} MiB limit, which bounds it: the converges-under-the-limit goal answers it` };
  const ws = b.workingSetPeakMib ?? null;
  if (ws === null) return judged(`${at} peak RSS ${what}`, b.peakMib.median <= limit.mib, `${b.peakMib.median.toFixed(0)} MiB`);
  return judged(`${at} peak working set (its cgroup's) ${what}`, ws.median <= limit.mib, `${ws.median.toFixed(0)} MiB; the cgroup's usage peak, page cache included, ${b.cgroupPeakMib?.median.toFixed(0) ?? '?'} MiB; each process's VmHWM summed ${b.peakMib.median.toFixed(0)} MiB`);
}

function withinLimit(at: string, n: number, f: Figures | undefined, limitMib: number): GoalVerdict {
  const goal = `${at} converges in every round under a ${limitMib} MiB memory limit (its cgroup's), no OOM kill`;
  if (f === undefined) return { goal, verdict: 'not-compared', detail: 'not run' };
  const peak = f.cgroupPeakMib === null || f.cgroupPeakMib === undefined ? 'no cgroup' : `cgroup peak ${f.cgroupPeakMib.median.toFixed(0)} MiB`;
  return judged(goal, f.converged && (f.oomKills ?? 0) === 0, `${f.deployed} of ${n} Deployed, ${f.upgraded} upgraded, ${f.oomKills ?? 0} OOM kills, ${peak}`);
}

const verdictText = (g: GoalVerdict): string => `${g.goal}: ${g.verdict === 'met' ? 'met' : g.verdict === 'not-met' ? 'NOT met' : 'not compared'}${g.detail === undefined ? '' : ` (${g.detail})`}`;

/** Before anything is built or started: the load average the result records is the machine's own. */
const recorder = startRun('helm-operator');
const BEFORE_ENTRY = arg('--before') === undefined ? undefined : path.resolve(arg('--before') ?? '');
const LOG_LEVEL = arg('--log-level');
const operators = operatorCommands({
  only: ONLY,
  nodeOptions: NODE_OPTIONS,
  binnacleEntry: BINNACLE_ENTRY,
  beforeEntry: BEFORE_ENTRY,
  ...(MODES.has('manager') ? { manager: { dataDir: path.join(ROOT, '.cache', 'bench-helm-operator', 'manager-data'), args: LOG_LEVEL === 'debug' ? ['-vv'] : [] } } : {}),
  binnacleArgs: [...(MAX_CONCURRENT === undefined ? [] : ['--max-concurrent-reconciles', MAX_CONCURRENT]), ...(LOG_LEVEL === undefined ? [] : ['--zap-log-level', LOG_LEVEL, '--zap-time-encoding', 'millis'])],
})
  .filter((o) => MODES.has('helm-operator') || (o.label !== 'binnacle' && o.label !== 'binnacle-before'))
  .map((o) => ({ ...o, args: [...o.args, ...(o.label === 'operator-sdk' ? [...(MATCHED === undefined ? [] : ['--max-concurrent-reconciles', MATCHED]), ...OPERATOR_SDK_EXTRA] : BINNACLE_EXTRA)] }));
if (MATCHED !== undefined && BINNACLE_EXTRA.some((a) => a.startsWith('--kube-api-'))) throw new Error('--matched: operator-sdk has no client rate limit to match --kube-api-qps with');
const up = await clusterUp({ name: CLUSTER, audit: true, logger: pino({ level: 'warn' }), progress: () => undefined });
const client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: IDENTITY_NS } });
mkdirSync(path.join(ROOT, '.cache', 'bench-helm-operator'), { recursive: true });
const charts = CHARTS.map((name) => (name === 'loki' ? lokiChart() : memcachedChart()));
for (const c of charts) await client.apply(c.crd);
await new Promise((r) => setTimeout(r, 2_000)); // the CRDs established
const env: Env = { client, adminKubeconfig: up.kubeconfig, auditLog: up.auditLog ?? '', registry: up.registry };
// An interrupted run leaves its CRs behind, and each operator here watches every namespace: they
// would be its work inside its timings. Gone before anything is measured.
const leftover = (await client.list('v1', 'Namespace')).items.map((ns) => ns.metadata.name ?? '').filter((ns) => ns.startsWith('scale-'));
if (leftover.length > 0) {
  console.log(`removing ${leftover.length} namespaces an interrupted run left behind`);
  // Every chart the bench knows, not only this run's: a run of another chart may have left its CRs, whose finalizers no operator now removes.
  const known = CHARTS.includes('loki') ? charts : [...charts, lokiChart()];
  const every = CHARTS.includes('memcached') ? known : [...known, memcachedChart()];
  for (const c of every) for (const kind of [c, managerChart(c)]) await stripFinalizers(client, kind, leftover);
  for (const c of every) await cleanUp(client, c, leftover);
  for (const c of every) await cleanUp(client, managerChart(c), leftover);
}
if (CPU_PROF !== undefined) mkdirSync(CPU_PROF, { recursive: true });
const swept = sweepCgroups(CGROUP_PREFIX);
if (swept.length > 0) console.log(`removed ${swept.length} cgroup(s) a killed run left, with what ran in them: ${swept.join(', ')}`);

console.log(`N CRs over ${NAMESPACES} namespaces created at once, until all Deployed; then every CR changed (upgrade) until every release is at revision 2; then ${IDLE_MEASURE_MS / 1000} s idle (once converged); medians of ${ROUNDS_ARG === undefined ? '3 rounds at N <= 100, 1 above' : `${ROUNDS_ARG} round(s)`}, spread (min-max) in brackets`);
const goals: GoalVerdict[] = [];
const allRounds: ({ chart: string; n: number; operator: string; round: number } & Sample)[] = [];
const figures: { chart: string; n: number; operators: Record<string, Figures>; ratios: Record<string, Record<string, number | string>> }[] = [];
const ratioValue = (a: number, b: number): number => (b > 0 ? a / b : NaN);
for (const c of charts) {
  console.log(`chart ${c.name} (${c.kind})`);
  console.log(`${'N'.padStart(5)} ${'operator'.padEnd(16)} ${'to Deployed'.padStart(17)} ${'upgrade'.padStart(17)} ${'peak RSS'.padStart(15)} ${'cgroup peak'.padStart(15)} ${'working set'.padStart(15)} ${'steady RSS'.padStart(15)} ${'CPU converge'.padStart(17)} ${'idle CPU'.padStart(19)} ${'requests'.padStart(17)}`);
  for (const n of CRS) {
    const results = new Map<string, Sample[]>();
    for (let round = 0; round < roundsAt(n); round++) {
      for (const o of operators) {
        const sample = await measure(o, c, n, env, round);
        results.set(o.label, [...(results.get(o.label) ?? []), sample]);
        allRounds.push({ chart: c.name, n, operator: o.label, round, ...sample });
      }
    }
    const at: (typeof figures)[number] = { chart: c.name, n, operators: {}, ratios: {} };
    figures.push(at);
    for (const o of operators) {
      const f = summary(results.get(o.label) ?? []);
      at.operators[o.label] = f;
      console.log(row(n, o.label, f));
    }
    // Held to a limit: each side must converge inside it, as a container with that limit would (one killed for it ends the bench, its log tail said).
    if (MEMORY_LIMIT_MIB !== undefined) for (const o of operators) goals.push(withinLimit(`${c.name} N=${n} ${o.label}`, n, at.operators[o.label], MEMORY_LIMIT_MIB));
    if (ONLY !== undefined) continue;
    const r = summary(results.get('operator-sdk') ?? []);
    for (const [label, what] of [['binnacle', c.name], ['binnacle-manager', `${c.name} (HelmOperator in binnacle manager)`]] as const) {
      const samples = results.get(label);
      if (samples === undefined) continue;
      const b = summary(samples);
      const [bc, rc] = [b.cgroupPeakMib ?? null, r.cgroupPeakMib ?? null];
      const [bw, rw] = [b.workingSetPeakMib ?? null, r.workingSetPeakMib ?? null];
      at.ratios[label] = {
        deployed: ratioValue(b.deployedMs.median, r.deployedMs.median),
        upgrade: ratioValue(b.upgradeMs.median, r.upgradeMs.median),
        peak: ratioValue(b.peakMib.median, r.peakMib.median),
        ...(bc === null || rc === null ? {} : { cgroupPeak: ratioValue(bc.median, rc.median) }),
        ...(bw === null || rw === null ? {} : { workingSetPeak: ratioValue(bw.median, rw.median) }),
        steady: b.steadyMib === null || r.steadyMib === null ? 'not converged' : ratioValue(b.steadyMib.median, r.steadyMib.median),
        convergeCpu: ratioValue(b.convergeCpuS.median, r.convergeCpuS.median),
        idleCpu: b.idleCpuS === null || r.idleCpuS === null ? 'not converged' : ratioValue(b.idleCpuS.median, r.idleCpuS.median),
        requests: ratioValue(b.requests.median, r.requests.median),
      };
      console.log(
        `${String(n).padStart(5)} ${label} / operator-sdk: time ${ratio(b.deployedMs.median, r.deployedMs.median)}, upgrade ${ratio(b.upgradeMs.median, r.upgradeMs.median)}, peak ${ratio(b.peakMib.median, r.peakMib.median)}${bc === null || rc === null ? '' : `, cgroup peak ${ratio(bc.median, rc.median)}`}${bw === null || rw === null ? '' : `, working set ${ratio(bw.median, rw.median)}`}, steady ${b.steadyMib === null || r.steadyMib === null ? 'not compared (not converged)' : ratio(b.steadyMib.median, r.steadyMib.median)}, CPU ${ratio(b.convergeCpuS.median, r.convergeCpuS.median)}, idle CPU ${idleRatio(b.idleCpuS, r.idleCpuS)}, requests ${ratio(b.requests.median, r.requests.median)}`,
      );
      // helm-operator run is held to operator-sdk's scaffolded limit; the manager (catalogs, installs and every
      // HelmOperator in one process) to the memory request install-self schedules it with.
      const smallLimit = label === 'binnacle' ? { mib: SCAFFOLD_LIMIT_MIB, what: "the scaffold's limit" } : { mib: MANAGER_MEMORY_REQUEST_MIB, what: "the manager Deployment's memory request" };
      goals.push(...goalsFor(what, n, b, r, smallLimit));
    }
    const b = summary(results.get('binnacle') ?? []);
    const before = results.get('binnacle-before');
    if (before !== undefined) {
      const p = summary(before);
      console.log(`${String(n).padStart(5)} binnacle / binnacle-before: time ${ratio(b.deployedMs.median, p.deployedMs.median)}, upgrade ${ratio(b.upgradeMs.median, p.upgradeMs.median)}, peak ${ratio(b.peakMib.median, p.peakMib.median)}, CPU ${ratio(b.convergeCpuS.median, p.convergeCpuS.median)}, idle CPU ${idleRatio(b.idleCpuS, p.idleCpuS)}, requests ${ratio(b.requests.median, p.requests.median)}`);
    }
  }
}
for (const g of goals) console.log(`goal ${verdictText(g)}`);
client.close();

/** What each side ran with: its command line and the defaults that bear on the figures. */
function sideSettings(label: string): SideSettings | undefined {
  const o = operators.find((x) => x.label === label);
  if (o === undefined) return undefined;
  const sdk = label === 'operator-sdk';
  return {
    what: sdk ? "operator-sdk's helm-operator v1.42.3 (hack/bench-tools/helm-operator)" : label === 'binnacle-manager' ? 'a HelmOperator in binnacle manager' : 'binnacle helm-operator run',
    command: [o.cmd === process.execPath ? 'node' : path.relative(ROOT, o.cmd), ...o.args.map((a) => (path.isAbsolute(a) ? path.relative(ROOT, a) : a))],
    nodeOptions: o.nodeOptions,
    env: o.env,
    extraArgs: sdk ? OPERATOR_SDK_EXTRA : BINNACLE_EXTRA,
    maxConcurrentReconciles: MATCHED !== undefined ? `${MATCHED} (matched)` : sdk ? `its default (the CPU count, ${os.cpus().length})` : (MAX_CONCURRENT ?? `its default (16, or the CPU count if more)`),
    reconcilePeriod: 'its default (1m)',
    // operator-sdk's takes controller-runtime v0.21's config.GetConfig, which turns the limiter off (QPS -1)
    // when the kubeconfig sets none; Binnacle's has its default (src/kube/rate-limit.ts) unless --binnacle-args sets one.
    clientRateLimit: sdk
      ? "none: controller-runtime v0.21's config.GetConfig sets QPS -1 when the kubeconfig sets none"
      : BINNACLE_EXTRA.some((a) => a.startsWith('--kube-api-'))
        ? `as --binnacle-args set it (${BINNACLE_EXTRA.filter((a) => a.startsWith('--kube-api-')).join(' ')})`
        : 'none, its default too (src/kube/rate-limit.ts)',
    watchNamespace: 'every namespace',
  };
}
recorder.save({
  settings: {
    bench: { charts: CHARTS, crs: CRS, rounds: ROUNDS_ARG ?? 'auto: 3 at N <= 100, 1 above', namespaces: NAMESPACES, startIdleMs: IDLE_MS, idleMs: IDLE_MEASURE_MS, phaseTimeoutS: PHASE_TIMEOUT_S ?? 'default (max(900 s, 2 s a CR))', modes: [...MODES], only: ONLY ?? null, cluster: CLUSTER, matched: MATCHED !== undefined, ...(MATCHED === undefined ? {} : { matchedConcurrency: Number(MATCHED) }), memoryLimitMib: MEMORY_LIMIT_MIB ?? null, peakMemory: 'peakMib: each process of the tree its VmHWM, summed; cgroupPeakMib: the tree in a memory cgroup of its own, its peak usage, run from a private copy of its binary with the page cache emptied (synced, vm.drop_caches=1) before it started, so that what it reads is charged to it (bench/lib/cgroup.ts; each round records pageCacheEmptied); workingSetPeakMib: the cgroup usage less its inactive file cache (the cAdvisor working set), the largest of samples every 250 ms' },
    binnacle: sideSettings('binnacle') ?? sideSettings('binnacle-manager') ?? { what: 'not run' },
    reference: sideSettings('operator-sdk') ?? { what: 'not run' },
    ...(MODES.has('manager') && MODES.has('helm-operator') ? { binnacleManager: sideSettings('binnacle-manager') } : {}),
    ...(BEFORE_ENTRY === undefined ? {} : { binnacleBefore: sideSettings('binnacle-before') }),
  },
  rounds: allRounds,
  summary: { figures } satisfies HelmOperatorSummary,
  goals,
});
