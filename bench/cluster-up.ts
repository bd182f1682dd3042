/**
 * bench/cluster-up: how long `binnacle cluster up` takes with binaries cached, and the API
 * server's round trip for a GET through Binnacle's client, beside the floor measured in the
 * same run (a bare keep-alive HTTPS GET with the same credentials).
 *
 * usage: npx tsx bench/cluster-up.ts [--rounds 3] [--gets 300]
 */
import * as https from 'node:https';
import { pino } from 'pino';
import { loadKubeConfig } from '../src/kube/config.js';
import { KubeClient } from '../src/kube/client.js';
import { clusterDown, clusterUp } from '../src/cluster/index.js';
import { startRun } from './lib/results.js';
import type { ClusterUpSummary } from './lib/summaries.js';

const args = process.argv.slice(2);
const arg = (name: string, def: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const rounds = arg('rounds', 3);
const gets = arg('gets', 300);
const logger = pino({ level: 'warn' });
const recorder = startRun('cluster-up');

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

const upTimes: number[] = [];
for (let r = 0; r < rounds; r++) {
  await clusterDown({ name: 'bench', logger });
  const t0 = performance.now();
  await clusterUp({ name: 'bench', logger, progress: () => undefined });
  upTimes.push(performance.now() - t0);
}
const up = await clusterUp({ name: 'bench', logger, progress: () => undefined });
const t1 = performance.now();
await clusterUp({ name: 'bench', logger, progress: () => undefined });
const idempotentUp = performance.now() - t1;

const kc = loadKubeConfig({ kubeconfig: up.kubeconfig });
const client = await KubeClient.fromKubeConfig(kc);
const ref = { apiVersion: 'v1', kind: 'Namespace', name: 'default' };
await client.get(ref); // discovery warm-up
const ours: number[] = [];
for (let i = 0; i < gets; i++) {
  const t = performance.now();
  await client.get(ref);
  ours.push(performance.now() - t);
}

const opts: https.RequestOptions = {};
await kc.applyToHTTPSOptions(opts);
const agent = new https.Agent({ keepAlive: true, ca: opts.ca, cert: opts.cert, key: opts.key });
const server = new URL(kc.getCurrentCluster()?.server ?? '');
const rawGet = (): Promise<void> =>
  new Promise((resolve, reject) => {
    const req = https.request({ host: server.hostname, port: server.port, path: '/api/v1/namespaces/default', agent, headers: { Accept: 'application/json' } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end();
  });
await rawGet();
const floor: number[] = [];
for (let i = 0; i < gets; i++) {
  const t = performance.now();
  await rawGet();
  floor.push(performance.now() - t);
}
agent.destroy();
client.close();
await clusterDown({ name: 'bench', logger });

const f = (n: number): string => n.toFixed(2);
console.log(`cluster up (binaries cached), ${rounds} rounds: p50 ${f(pct(upTimes, 50) / 1000)} s, max ${f(Math.max(...upTimes) / 1000)} s`);
console.log(`cluster up when already running: ${f(idempotentUp)} ms`);
console.log(`GET /api/v1/namespaces/default, ${gets} requests:`);
console.log(`  binnacle client  p50 ${f(pct(ours, 50))} ms  p99 ${f(pct(ours, 99))} ms`);
console.log(`  bare https floor p50 ${f(pct(floor, 50))} ms  p99 ${f(pct(floor, 99))} ms`);
console.log(`  ratio (binnacle / floor) at p50: ${f(pct(ours, 50) / pct(floor, 50))}x`);
const q = (xs: number[]): { p50: number; p99: number; max: number } => ({ p50: pct(xs, 50), p99: pct(xs, 99), max: Math.max(...xs) });
recorder.save({
  settings: {
    bench: { rounds, gets, binaries: 'cached (.cache/bin)', cluster: 'bench' },
    binnacle: { what: "binnacle cluster up (clusterUp), then KubeClient.get of the default Namespace", client: 'src/kube/client.ts' },
    reference: { what: 'a bare keep-alive HTTPS GET (node:https) with the same credentials: the floor of a GET' },
  },
  rounds: [{ upMs: upTimes, idempotentUpMs: idempotentUp, getMs: { binnacle: ours.map((x) => Math.round(x * 1000) / 1000), floor: floor.map((x) => Math.round(x * 1000) / 1000) } }],
  summary: { up: q(upTimes), idempotentUpMs: idempotentUp, get: { binnacle: q(ours), floor: q(floor), ratioP50: pct(ours, 50) / pct(floor, 50) } } satisfies ClusterUpSummary,
  goals: [],
});
