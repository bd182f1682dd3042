/**
 * `binnacle helm-operator run` beside operator-sdk's own helm-operator (v1.42.3) at N custom
 * resources (issue 29 §1): time until every CR is `Deployed`, peak and steady resident memory,
 * CPU seconds to converge and while settled, each as a ratio to helm-operator measured in the
 * same run. Goals: time at or below helm-operator's at every N; peak memory at or below its at
 * N ≥ 100 (and within the scaffold's 128 MiB at N ≤ 10, which bench/helm-operator-memory.ts
 * explains is out of reach while Helm runs as WebAssembly).
 *
 * For each N and each operator, one at a time against the local control plane (`binnacle
 * cluster up --name BINNACLE_E2E_CLUSTER`, default `scale`): 10 fresh namespaces, the operator
 * started on operator-sdk's memcached sample (watches.yaml, its chart) watching every
 * namespace, IDLE_MS to start, then N Memcached CRs spread round-robin over the namespaces and
 * created at once. Time runs from the first create until every CR's `Deployed` is True (one
 * list a quarter second); CPU to converge is the process's CPU seconds over that span; the
 * operator then runs SETTLE_MS longer (steady RSS and settled CPU at the end). Peak RSS is
 * VmHWM (worker threads included). The CRs' finalizers are removed after the operator stops,
 * so their namespaces go.
 *
 * The local control plane's kwok makes Pods Ready, so a reconcile that waited for the
 * StatefulSet's rollout would show here; helm-operator does not wait (Helm without --wait).
 *
 * usage: npx tsx bench/helm-operator.ts [--crs 1,10,100] [--rounds N] [--only binnacle|operator-sdk]
 *        [--settle-ms MS] [--node-options OPTS] [--max-concurrent-reconciles N]
 *        [--binnacle PATH/bin/binnacle.js]   (another build, e.g. a copy of the one before a change)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { parse } from 'yaml';
import { clusterUp } from '../src/cluster/index.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfig } from '../src/kube/config.js';
import type { KubeObject } from '../src/kube/types.js';
import { arg, cpuSeconds, median, operatorCommands, procStatus, sampleProject, type OperatorCommand } from './lib/helm-operator.js';

const NAMESPACES = 10;
const IDLE_MS = 5_000;
const DEPLOY_TIMEOUT_MS = 600_000;
const SCAFFOLD_LIMIT_MIB = 128;
const CRS = (arg('--crs') ?? '1,10,100').split(',').map((n) => Number(n)).filter((n) => Number.isSafeInteger(n) && n > 0);
const ROUNDS = Math.max(1, Number(arg('--rounds') ?? 1) || 1);
const SETTLE_MS = Number(arg('--settle-ms') ?? 10_000);
const ONLY = arg('--only');
/** Binnacle's NODE_OPTIONS: by default what helm bundle's Deployment sets (src/helm/bundle/operator.ts). */
const NODE_OPTIONS = arg('--node-options') ?? '--max-semi-space-size=1';
const MAX_CONCURRENT = arg('--max-concurrent-reconciles');
/** Resolved here: the operators run in the sample project's directory. */
const BINNACLE_ENTRY = arg('--binnacle') === undefined ? undefined : path.resolve(arg('--binnacle') ?? '');
const CLUSTER = process.env.BINNACLE_E2E_CLUSTER ?? 'scale';
const MEMCACHED = { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached' };

interface Sample {
  deployedMs: number;
  peakMib: number;
  steadyMib: number;
  convergeCpuS: number;
  settledCpuS: number;
}

type Memcached = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

/** How many of the round's CRs are Deployed (one list of the kind, cluster-wide). */
async function deployedCount(client: KubeClient, namespaces: Set<string>): Promise<number> {
  const list = await client.list<Memcached>(MEMCACHED.apiVersion, MEMCACHED.kind);
  return list.items.filter((cr) => namespaces.has(cr.metadata.namespace ?? '') && cr.status?.conditions?.some((c) => c.type === 'Deployed' && c.status === 'True') === true).length;
}

/** Removes the finalizers of the round's CRs (the operator is gone) and deletes their namespaces. */
async function cleanUp(client: KubeClient, namespaces: string[]): Promise<void> {
  const list = await client.list<Memcached>(MEMCACHED.apiVersion, MEMCACHED.kind).catch(() => ({ items: [] as Memcached[] }));
  await Promise.all(
    list.items
      .filter((cr) => namespaces.includes(cr.metadata.namespace ?? '') && (cr.metadata.finalizers ?? []).length > 0)
      .map((cr) => client.patch({ ...MEMCACHED, namespace: cr.metadata.namespace, name: cr.metadata.name ?? '' }, { metadata: { finalizers: null } }, 'merge').catch(() => undefined)),
  );
  await Promise.all(namespaces.map((ns) => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined)));
}

async function measure(o: OperatorCommand, n: number, client: KubeClient, kubeconfig: string, project: string, round: number): Promise<Sample> {
  const tag = `${o.label === 'binnacle' ? 'b' : 'o'}${n}-${round}-${Date.now().toString(36)}`;
  const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `scale-${tag}-${i}`);
  await Promise.all(namespaces.map((ns) => client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })));
  const env = { ...process.env, KUBECONFIG: kubeconfig, WATCH_NAMESPACE: '', NODE_OPTIONS: o.nodeOptions };
  const child = spawn(o.cmd, o.args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (c: Buffer): void => void (out = (out + c.toString('utf8')).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const pid = child.pid ?? 0;
  /** Read afresh each time: the process may exit while we wait. */
  const exitCode = (): number | null => child.exitCode;
  try {
    await new Promise((r) => setTimeout(r, IDLE_MS));
    if (child.exitCode !== null) throw new Error(`${o.label} exited (${child.exitCode}):\n${out}`);
    const cr = parse(readFileSync(path.join(project, 'config', 'samples', 'cache_v1alpha1_memcached.yaml'), 'utf8')) as KubeObject;
    const cpu0 = cpuSeconds(pid);
    const start = Date.now();
    await Promise.all(Array.from({ length: n }, (_, i) => client.create({ ...cr, metadata: { name: `memcached-${i}`, namespace: namespaces[i % NAMESPACES] } })));
    const inRound = new Set(namespaces);
    for (;;) {
      const code = exitCode();
      if (code !== null) throw new Error(`${o.label} exited (${code}) before every CR was Deployed:\n${out}`);
      const done = await deployedCount(client, inRound);
      if (done >= n) break;
      if (Date.now() - start > DEPLOY_TIMEOUT_MS) throw new Error(`${done} of ${n} CRs Deployed after ${DEPLOY_TIMEOUT_MS / 1000} s\n${out}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const deployedMs = Date.now() - start;
    const cpu1 = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const { rss, hwm } = procStatus(pid);
    return { deployedMs, peakMib: hwm, steadyMib: rss, convergeCpuS: cpu1 - cpu0, settledCpuS: cpuSeconds(pid) - cpu1 };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
    await cleanUp(client, namespaces);
  }
}

const operators = operatorCommands({ only: ONLY, nodeOptions: NODE_OPTIONS, binnacleEntry: BINNACLE_ENTRY, binnacleArgs: MAX_CONCURRENT === undefined ? [] : ['--max-concurrent-reconciles', MAX_CONCURRENT] });
const project = sampleProject();
const up = await clusterUp({ name: CLUSTER, logger: pino({ level: 'warn' }), progress: () => undefined });
const client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
await client.apply(parse(readFileSync(path.join(project, 'config', 'crd', 'bases', 'cache.example.com_memcacheds.yaml'), 'utf8')) as KubeObject);
await new Promise((r) => setTimeout(r, 2_000)); // the CRD established

const summary = (xs: Sample[]): Sample => ({
  deployedMs: median(xs.map((x) => x.deployedMs)),
  peakMib: median(xs.map((x) => x.peakMib)),
  steadyMib: median(xs.map((x) => x.steadyMib)),
  convergeCpuS: median(xs.map((x) => x.convergeCpuS)),
  settledCpuS: median(xs.map((x) => x.settledCpuS)),
});
const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a');
const verdict = (ok: boolean, what: string): string => `${what}: ${ok ? 'met' : 'NOT met'}`;

console.log(`memcached sample, N CRs over ${NAMESPACES} namespaces created at once; until all Deployed, then ${SETTLE_MS / 1000} s settled; medians of ${ROUNDS} round(s)`);
console.log(`${'N'.padStart(4)} ${'operator'.padEnd(13)} ${'to Deployed'.padStart(11)} ${'peak RSS'.padStart(10)} ${'steady RSS'.padStart(11)} ${'CPU converge'.padStart(12)} ${'CPU settled'.padStart(11)}`);
const goals: string[] = [];
for (const n of CRS) {
  const results = new Map<string, Sample[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const o of operators) results.set(o.label, [...(results.get(o.label) ?? []), await measure(o, n, client, up.kubeconfig, project, round)]);
  }
  for (const o of operators) {
    const s = summary(results.get(o.label) ?? []);
    console.log(`${String(n).padStart(4)} ${o.label.padEnd(13)} ${(s.deployedMs / 1000).toFixed(1).padStart(9)} s ${s.peakMib.toFixed(0).padStart(6)} MiB ${s.steadyMib.toFixed(0).padStart(7)} MiB ${s.convergeCpuS.toFixed(1).padStart(10)} s ${s.settledCpuS.toFixed(1).padStart(9)} s`);
  }
  if (ONLY !== undefined) continue;
  const b = summary(results.get('binnacle') ?? []);
  const r = summary(results.get('operator-sdk') ?? []);
  console.log(`${String(n).padStart(4)} binnacle / operator-sdk: time ${ratio(b.deployedMs, r.deployedMs)}, peak ${ratio(b.peakMib, r.peakMib)}, steady ${ratio(b.steadyMib, r.steadyMib)}, CPU ${ratio(b.convergeCpuS, r.convergeCpuS)}, settled CPU ${ratio(b.settledCpuS, r.settledCpuS)}`);
  goals.push(verdict(b.deployedMs <= r.deployedMs, `N=${n} time to all Deployed <= helm-operator's`));
  if (n >= 100) goals.push(verdict(b.peakMib <= r.peakMib, `N=${n} peak RSS <= helm-operator's`));
  if (n <= 10) goals.push(verdict(b.peakMib <= SCAFFOLD_LIMIT_MIB, `N=${n} peak RSS <= ${SCAFFOLD_LIMIT_MIB} MiB (the scaffold's limit)`));
}
for (const g of goals) console.log(`goal ${g}`);
client.close();
