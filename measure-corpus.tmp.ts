// Temporary: peak WebAssembly memory of each corpus render, each in a fresh worker.
import { Worker } from 'node:worker_threads';
import { readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { WORKER_SOURCE } from './src/helm/engine-worker.js';

const dir = path.resolve('.cache/helm-wasm');
const CHARTS = path.resolve('../shared/corpus/charts');
const module = await WebAssembly.compile(await readFile(path.join(dir, 'helm.wasm')));
const src = WORKER_SOURCE.replace("parentPort.postMessage({ type: 'result', id: m.id, json:", "parentPort.postMessage({ type: 'result', mem: instance.exports.mem.buffer.byteLength, heap: require('node:v8').getHeapStatistics().used_heap_size, len: json.length, id: m.id, json:");
async function one(req: Record<string, unknown>): Promise<{ mem: number; heap: number; len: number; err?: string }> {
  const w = new Worker(src, { eval: true, workerData: { module, glue: path.join(dir, 'wasm_exec.js'), memoryBytes: 4096 * 1024 * 1024, maxOutputBytes: 1e12 } });
  try {
    return await new Promise((resolve, reject) => {
      w.on('message', (m) => {
        if (m.type === 'ready') w.postMessage({ type: 'call', id: 1, op: 'render', json: JSON.stringify({ ...req, callId: 1 }) });
        if (m.type === 'result') resolve({ mem: m.mem, heap: m.heap, len: m.len, err: JSON.parse(m.json).error });
        if (m.type === 'failed') reject(new Error(m.error));
      });
      w.on('error', reject);
    });
  } finally {
    await w.terminate();
  }
}
const rows: string[] = [];
let max = { mem: 0, heap: 0, len: 0 };
for (const c of (await readdir(CHARTS)).sort()) {
  const chart = path.join(CHARTS, c);
  const reqs: Record<string, unknown>[] = [{ chart, releaseName: 'corpus', namespace: 'corpus-ns', includeCRDs: true, apiVersions: ['monitoring.coreos.com/v1', 'route.openshift.io/v1'] }];
  const ci = path.join(chart, 'ci');
  if (existsSync(ci)) for (const f of (await readdir(ci)).filter((n) => /\.ya?ml$/.test(n))) reqs.push({ chart, releaseName: 'corpus', namespace: 'corpus-ns', valueFiles: [path.join(ci, f)] });
  for (const r of reqs) {
    const m = await one(r);
    max = { mem: Math.max(max.mem, m.mem), heap: Math.max(max.heap, m.heap), len: Math.max(max.len, m.len) };
    rows.push(`${(m.mem / 2 ** 20).toFixed(0).padStart(5)} MiB wasm ${(m.heap / 2 ** 20).toFixed(0).padStart(4)} MiB js ${(m.len / 2 ** 20).toFixed(1).padStart(6)} MiB answer ${c} ${r.valueFiles ? path.basename((r.valueFiles as string[])[0] ?? '') : 'defaults'}${m.err ? ' (error)' : ''}`);
    console.log(rows.at(-1));
  }
}
console.log('MAX', max.mem / 2 ** 20, max.heap / 2 ** 20, max.len / 2 ** 20);
