/**
 * The worker thread that hosts Helm's WebAssembly engine. Kept as source text and started
 * with `eval`, so the same code runs from TypeScript sources (tsx) and from compiled `dist/`.
 *
 * Protocol (parent ⇄ worker):
 *   → { type: 'call', id, op: 'render'|'inspect', json }      ← { type: 'result', id, json }
 *   ← { type: 'lookup', id, lookupId, method, path, body }     → { type: 'lookup-reply', lookupId, status, body }
 *   ← { type: 'ready' } once Go has registered globalThis.binnacleHelm, or { type: 'failed', error }.
 * Go's `lookup` calls globalThis.binnacleHelmHost.request(method, host, path, body), where host
 * is `call-<id>`: the render the request belongs to, so the parent can use that render's client.
 * sprig's key generation calls globalThis.binnacleHelmHost.generateRSAKey(bits) (see
 * hack/helm-wasm/overlay), which answers a key or a Promise of one.
 *
 * RSA keys: a prime search takes 0.1–5 s and its time is random with a long tail. The worker
 * keeps one spare key per size that templates asked for, searched for in libuv's thread pool
 * (other cores) while Go renders; a key is used once, never kept after it is handed out. When
 * no key is ready, two searches run and the first to finish is taken (the other becomes the
 * spare), which cuts the long tail.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
globalThis.fs = require('node:fs');
globalThis.path = require('node:path');
require(workerData.glue);
const lookups = new Map();
let nextLookup = 1;
const keyStock = new Map(); // bits → searches under way or finished: { key?, error?, done }
function searchKey(bits, stock) {
  const entry = { key: undefined, error: undefined };
  entry.done = new Promise((resolve) => {
    require('node:crypto').generateKeyPair('rsa', { modulusLength: bits, publicKeyEncoding: { type: 'pkcs1', format: 'der' }, privateKeyEncoding: { type: 'pkcs1', format: 'der' } }, (err, _pub, priv) => {
      if (err) entry.error = err;
      else entry.key = new Uint8Array(priv);
      resolve(entry);
    });
  });
  stock.push(entry);
}
globalThis.binnacleHelmHost = {
  // sprig's RSA keys (genCA, genPrivateKey, gen*Cert), from OpenSSL: PKCS#1 DER, which Go parses.
  generateRSAKey(bits) {
    let stock = keyStock.get(bits);
    if (!stock) keyStock.set(bits, (stock = []));
    const take = (entry) => {
      const at = stock.indexOf(entry);
      if (at < 0) return this.generateRSAKey(bits); // a render beside this one took it first
      stock.splice(at, 1);
      if (stock.length === 0) searchKey(bits, stock); // the next spare
      return entry.error ? Promise.reject(entry.error) : entry.key;
    };
    const ready = stock.find((e) => e.key !== undefined || e.error !== undefined);
    if (ready) return take(ready);
    while (stock.length < 2) searchKey(bits, stock);
    return Promise.race(stock.map((e) => e.done)).then(take);
  },
  request(method, host, path, body) {
    const id = Number(String(host).replace(/^call-/, ''));
    return new Promise((resolve, reject) => {
      const lookupId = nextLookup++;
      lookups.set(lookupId, { resolve, reject });
      parentPort.postMessage({ type: 'lookup', id, lookupId, method, path, body });
    });
  },
};
parentPort.on('message', (m) => {
  if (m.type === 'lookup-reply') {
    const l = lookups.get(m.lookupId);
    lookups.delete(m.lookupId);
    if (l) l.resolve({ status: m.status, body: m.body });
    return;
  }
  if (m.type !== 'call') return;
  const api = globalThis.binnacleHelm;
  Promise.resolve()
    .then(() => api[m.op](m.json))
    .then(
      (json) => parentPort.postMessage({ type: 'result', id: m.id, json }),
      (err) => parentPort.postMessage({ type: 'result', id: m.id, json: JSON.stringify({ error: String(err), phase: 'internal' }) }),
    );
});
const go = new Go();
go.env = { TMPDIR: require('node:os').tmpdir(), HOME: require('node:os').homedir() };
go.exit = (code) => parentPort.postMessage({ type: 'failed', error: 'Go exited with code ' + code });
globalThis.binnacleHelmReady = () => parentPort.postMessage({ type: 'ready' });
// The module is compiled once by the parent and shared by every engine thread.
WebAssembly.instantiate(workerData.module, go.importObject)
  .then((instance) => go.run(instance))
  .catch((err) => parentPort.postMessage({ type: 'failed', error: String(err && err.stack || err) }));
`;
