/**
 * Memory of `binnacle helm-operator run` serving one custom resource, beside operator-sdk's own
 * helm-operator (v1.42.3) measured in the same run (issue 28 §1 "Memory"): the goal is that
 * Binnacle fits the 128 MiB limit that operator-sdk scaffolds into a Helm operator's manager.
 *
 * For each operator, one at a time against the local control plane (`binnacle cluster up --name
 * BINNACLE_E2E_CLUSTER`, default `memory`): a namespace of its own, the memcached sample's CRD,
 * the operator started with WATCH_NAMESPACE set to that namespace and its sample project as the
 * working directory; its RSS after IDLE_MS without a CR (idle), then one Memcached CR; the operator runs until the CR's `Deployed`
 * condition is True and SETTLE_MS longer (its steady state), then is stopped. Peak RSS is the
 * kernel's high-water mark (VmHWM of /proc/PID/status, read before the stop, worker threads
 * included), plus that of each child process (the native Helm engine, helm-engine), sampled
 * while it runs; steady RSS is VmRSS at the end, children included. `--rounds N` (default 1) repeats and takes medians.
 *
 * The sample (operator-sdk's testdata/helm/memcached-operator) comes from test/vendor when
 * vendored there, else from the Go module cache; helm-operator is built from the Go module proxy
 * by hack/bench-tools/helm-operator/build.sh when missing. Binnacle runs as bin/binnacle.js
 * runs in the image: from the bundle built from this checkout (`npm run build` first, every run).
 *
 * Where the memory goes (issue 28, measured on a 2-core machine with Node 20, /proc/PID/status,
 * smaps and process.memoryUsage; helm.wasm is 80 MiB: 48 MiB of code, 32 MiB of data):
 *   node -e ''                                   40 MiB
 *   binnacle --version                           54 MiB
 *   helm-operator run, idle (client, informers)  77 MiB
 *   Helm's engine once it rendered one CR       +172 MiB: V8's own copy of the module's bytes
 *     (80 MiB, kept for lazy compilation) and its metadata (~7), Go's linear memory (40 MiB
 *     from the start: the module's data is copied in), compiled code (14 MiB with Liftoff
 *     only; lazy, so only the functions that ran), the worker thread's isolate (~24 MiB)
 *   before this bench's changes the peak was 427 MiB: the file as read and its rewritten copy
 *     (2 x 80 MiB) alive while V8 copied them and Go started, and TurboFan's tier-up (+65 MiB).
 * Since (issue 29, 2026-11-27) helm.wasm is built without client-go's scheme: 31 MiB, Go's heap
 * from 18 MiB; one CR now peaks at ~170 MiB (this bench, `--only binnacle`). 128 MiB is still out
 * of reach while Helm runs as Go compiled to WebAssembly: Node and the client (~80 MiB) plus the
 * module's bytes, Go's heap, compiled code and the worker's isolate (~90 MiB).
 * Since (issue 29, the same day) the same Go source also builds natively (helm-engine, a child
 * process: src/helm-engine/go/main_native.go), the default when built: one CR peaks at 109 MiB for the
 * whole process tree (median of 3 rounds; the child's VmHWM added to Node's), against 168 MiB with
 * BINNACLE_HELM_ENGINE=wasm in the same run. helm bundle's manager gets 128Mi/512Mi (operator.ts).
 *
 * usage: npx tsx bench/helm-operator-memory.ts [--rounds N] [--only binnacle|operator-sdk] [--node-options OPTS]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { parse } from 'yaml';
import { clusterUp } from '../src/cluster/index.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfig } from '../src/kube/config.js';
import type { KubeObject } from '../src/kube/types.js';
import { median, operatorCommands, procStatus, sampleProject, treePeakSampler } from './lib/helm-operator.js';
import { judged, spread, startRun } from './lib/results.js';
import type { HelmOperatorMemoryFigures, HelmOperatorMemorySummary } from './lib/summaries.js';

const GOAL_MIB = 128;
const SETTLE_MS = 5_000;
const IDLE_MS = 5_000;
const DEPLOY_TIMEOUT_MS = 180_000;
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg === -1 ? 1 : Math.max(1, Number(process.argv[roundsArg + 1]) || 1);
const nodeOptionsArg = process.argv.indexOf('--node-options');
/** Binnacle's NODE_OPTIONS: by default what helm bundle's Deployment sets (src/publish/helm-bundle/operator.ts); `--node-options ''` to try others. */
const NODE_OPTIONS = nodeOptionsArg === -1 ? '--max-semi-space-size=1' : (process.argv[nodeOptionsArg + 1] ?? '');
const CLUSTER = process.env.BINNACLE_E2E_CLUSTER ?? 'memory';

interface Sample {
  /** RSS before the CR exists: the process, its client and its informers, no Helm engine yet. */
  idleMib: number;
  peakMib: number;
  steadyMib: number;
  deployedMs: number;
}

async function deployed(client: KubeClient, ns: string, name: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + DEPLOY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the operator exited (${child.exitCode}) before Deployed:\n${log()}`);
    const cr = await client.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>({ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', namespace: ns, name });
    if (cr.status?.conditions?.some((c) => c.type === 'Deployed' && c.status === 'True') === true) return;
    if (Date.now() > deadline) throw new Error(`no Deployed condition after ${DEPLOY_TIMEOUT_MS / 1000} s: ${JSON.stringify(cr.status)}\n${log()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One operator serving one CR in a fresh namespace; its peak and steady RSS. */
async function measure(label: string, client: KubeClient, kubeconfig: string, project: string, cmd: string, args: string[], nodeOptions: string, moreEnv: Record<string, string>, round: number): Promise<Sample> {
  const ns = `mem-${label}-${round}-${Date.now().toString(36)}`;
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const env = { ...process.env, KUBECONFIG: kubeconfig, WATCH_NAMESPACE: ns, NODE_OPTIONS: nodeOptions, ...moreEnv };
  const child = spawn(cmd, args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (c: Buffer): void => void (out = (out + c.toString('utf8')).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const start = Date.now();
  // The tree's peak: a child process (the native Helm engine) that exits before the end keeps its share.
  const sampler = treePeakSampler(child.pid ?? 0, 200);
  try {
    await new Promise((r) => setTimeout(r, IDLE_MS));
    if (child.exitCode !== null) throw new Error(`the operator exited (${child.exitCode}):\n${out}`);
    const idleMib = procStatus(child.pid ?? 0).rss;
    const cr = parse(readFileSync(path.join(project, 'config', 'samples', 'cache_v1alpha1_memcached.yaml'), 'utf8')) as KubeObject;
    const name = cr.metadata.name ?? 'memcached-sample';
    await client.create({ ...cr, metadata: { ...cr.metadata, namespace: ns } });
    await deployed(client, ns, name, child, () => out);
    const deployedMs = Date.now() - start;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const { rss, hwm } = procStatus(child.pid ?? 0);
    return { idleMib, peakMib: Math.max(hwm, sampler.peakMib()), steadyMib: rss, deployedMs };
  } finally {
    sampler.stop();
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
  }
}

const onlyArg = process.argv.indexOf('--only');
/** `--only binnacle`: measure one side (no ratio), e.g. while trying a change. */
const ONLY = onlyArg === -1 ? undefined : process.argv[onlyArg + 1];
const recorder = startRun('helm-operator-memory');
const project = sampleProject();
const up = await clusterUp({ name: CLUSTER, logger: pino({ level: 'warn' }), progress: () => undefined });
const client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
await client.apply(parse(readFileSync(path.join(project, 'config', 'crd', 'bases', 'cache.example.com_memcacheds.yaml'), 'utf8')) as KubeObject);
await new Promise((r) => setTimeout(r, 2_000)); // the CRD established

const operators = operatorCommands({ only: ONLY, nodeOptions: NODE_OPTIONS, binnacleArgs: ['--helm-engine-threads', '1'] });
const results = new Map<string, Sample[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const o of operators) {
    const s = await measure(o.label, client, up.kubeconfig, project, o.cmd, o.args, o.nodeOptions, o.env, round);
    results.set(o.label, [...(results.get(o.label) ?? []), s]);
  }
}
const summary = (label: string): Sample => {
  const xs = results.get(label) ?? [];
  return { idleMib: median(xs.map((x) => x.idleMib)), peakMib: median(xs.map((x) => x.peakMib)), steadyMib: median(xs.map((x) => x.steadyMib)), deployedMs: median(xs.map((x) => x.deployedMs)) };
};
const ref = summary('operator-sdk');
console.log(`one memcached CR, until Deployed + ${SETTLE_MS / 1000} s; medians of ${ROUNDS} round(s)`);
console.log(`${'operator'.padEnd(14)} ${'idle RSS'.padStart(10)} ${'peak RSS'.padStart(10)} ${'steady RSS'.padStart(11)} ${'to Deployed'.padStart(12)}`);
for (const o of operators) {
  const s = summary(o.label);
  console.log(`${o.label.padEnd(14)} ${s.idleMib.toFixed(0).padStart(6)} MiB ${s.peakMib.toFixed(0).padStart(6)} MiB ${s.steadyMib.toFixed(0).padStart(7)} MiB ${(s.deployedMs / 1000).toFixed(1).padStart(10)} s`);
}
const b = summary('binnacle');
if (ONLY === undefined) console.log(`binnacle / operator-sdk: peak ${(b.peakMib / ref.peakMib).toFixed(1)}x, steady ${(b.steadyMib / ref.steadyMib).toFixed(1)}x`);
console.log(`goal (peak <= ${GOAL_MIB} MiB, operator-sdk's scaffolded limit): ${b.peakMib <= GOAL_MIB ? 'met' : `NOT met (${b.peakMib.toFixed(0)} MiB)`}`);
const side = (label: string): { what: string; command: string[]; nodeOptions: string; env: Record<string, string>; engine?: string } | undefined => {
  const o = operators.find((x) => x.label === label);
  if (o === undefined) return undefined;
  return { what: label === 'operator-sdk' ? "operator-sdk's helm-operator v1.42.3 (hack/bench-tools/helm-operator)" : 'binnacle helm-operator run', command: [o.cmd, ...o.args], nodeOptions: o.nodeOptions, env: o.env, ...(label === 'operator-sdk' ? {} : { engine: process.env.BINNACLE_HELM_ENGINE ?? 'default (native when built)' }) };
};
const figures = (label: string): HelmOperatorMemoryFigures | undefined => {
  const xs = results.get(label);
  if (xs === undefined) return undefined;
  return { idleMib: spread(xs.map((x) => x.idleMib)), peakMib: spread(xs.map((x) => x.peakMib)), steadyMib: spread(xs.map((x) => x.steadyMib)), deployedMs: spread(xs.map((x) => x.deployedMs)) };
};
recorder.save({
  settings: {
    bench: { rounds: ROUNDS, only: ONLY ?? null, crs: 1, settleMs: SETTLE_MS, idleMs: IDLE_MS, cluster: CLUSTER },
    binnacle: side('binnacle') ?? { what: 'not run' },
    reference: side('operator-sdk') ?? { what: 'not run' },
  },
  rounds: [...results].flatMap(([label, xs]) => xs.map((x, round) => ({ label, round, ...x }))),
  summary: { binnacle: figures('binnacle') ?? null, 'operator-sdk': figures('operator-sdk') ?? null, goalMib: GOAL_MIB } satisfies HelmOperatorMemorySummary,
  goals: results.has('binnacle') ? [judged(`peak RSS of one CR <= ${GOAL_MIB} MiB (operator-sdk's scaffolded limit)`, b.peakMib <= GOAL_MIB, `${b.peakMib.toFixed(0)} MiB`)] : [],
});
