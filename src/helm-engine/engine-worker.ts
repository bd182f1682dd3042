/**
 * The worker thread that hosts Helm's WebAssembly engine. Kept as source text and started
 * with `eval`, so the same code runs from TypeScript sources (tsx) and from compiled `dist/`.
 *
 * Protocol (parent ⇄ worker):
 *   → { type: 'call', id, op: 'render'|'inspect', json }      ← { type: 'result', id, json | oversized, memoryBytes } (the instance's linear memory after the call)
 *   ← { type: 'lookup', id, lookupId, method, path, body }     → { type: 'lookup-reply', lookupId, status, body }
 *   ← { type: 'ready' } once Go has registered globalThis.binnacleHelm, or { type: 'failed', error, fatal, memoryBytes }
 *     when Go exits (`fatal`: what Go's runtime printed as it died, e.g. "fatal error: out of
 *     memory"; `memoryBytes`: the size of its linear memory then).
 * An answer longer than workerData.maxOutputBytes is replaced by its length (`oversized`, which
 * the parent words as the output limit's error), so an oversized render is never copied into the parent's heap.
 * Go's `lookup` calls globalThis.binnacleHelmHost.request(method, host, path, body), where host
 * is `call-<id>`: the render the request belongs to, so the parent can use that render's client.
 * sprig's key generation calls globalThis.binnacleHelmHost.generateRSAKey(bits) (see
 * src/helm-engine/go/overlay), which answers a key or a Promise of one.
 *
 * RSA keys: a prime search takes 0.1–5 s and its time is random with a long tail. The worker
 * keeps one spare key per size that templates asked for, searched for in libuv's thread pool
 * (other cores) while Go renders; a key is used once, never kept after it is handed out. When
 * no key is ready, two searches run and the first to finish is taken (the other becomes the
 * spare), which cuts the long tail. With workerData.spareKeys false (HelmEngineOptions.spareKeys)
 * each key is searched for when a template asks, and nothing is searched for between renders.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
let fatal = '';
// Go's syscall/fs_js calls Node's callback API and parks the goroutine until the callback
// runs. Node's callback API goes through libuv's thread pool and a turn of the event loop per
// call, and loading a chart of hundreds of files makes thousands of calls (a quarter of a
// warm render's time). Here each call is made with the sync API and answered on the next
// tick: the same answers, the same order of events as the callback API (Go has returned to
// JS before its callback runs, which keeps the runtime's stack as it expects), without the
// trip through the thread pool.
{
  const nodeFs = require('node:fs');
  const fs = Object.create(nodeFs);
  for (const name of ['open', 'close', 'fstat', 'read', 'write', 'readdir', 'lstat', 'stat', 'mkdir', 'unlink', 'rmdir', 'rename', 'chmod', 'fchmod', 'chown', 'fchown', 'lchown', 'utimes', 'ftruncate', 'truncate', 'readlink', 'symlink', 'link', 'fsync']) {
    const sync = nodeFs[name + 'Sync'];
    fs[name] = (...args) => {
      const callback = args.pop();
      let result;
      try {
        result = sync.apply(nodeFs, args);
      } catch (err) {
        // A system call's failure is Go's error, as the callback API reports it. Anything else
        // (bad arguments, a JS stack overflow under deep template recursion) is thrown, as
        // the callback API throws it, so it is never taken for a file system answer.
        if (err === null || typeof err !== 'object' || typeof err.syscall !== 'string') throw err;
        process.nextTick(callback, err);
        return;
      }
      process.nextTick(callback, null, result);
    };
  }
  // Go's runtime writes its own messages (a fatal error and its goroutine dump) with writeSync
  // on fd 2. The start of a fatal error is kept for the parent's error instead of going to the
  // process's stderr; anything else (Helm's log warnings) is written as before.
  fs.writeSync = (fd, buf, ...rest) => {
    if (fd === 2 && (fatal.length > 0 || /^(fatal error|runtime: |panic: )/.test(Buffer.from(buf.subarray(0, 32)).toString()))) {
      if (fatal.length < 4096) fatal += Buffer.from(buf).toString().slice(0, 4096 - fatal.length);
      return buf.length;
    }
    return nodeFs.writeSync(fd, buf, ...rest);
  };
  globalThis.fs = fs;
}
globalThis.path = require('node:path');
require(workerData.glue);
const lookups = new Map();
let nextLookup = 1;
const keyStock = new Map(); // bits -> searches under way or finished: { key?, error?, done }
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
    if (workerData.spareKeys === false) {
      const one = [];
      searchKey(bits, one);
      return one[0].done.then((e) => (e.error ? Promise.reject(e.error) : e.key));
    }
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
      (json) => parentPort.postMessage(json.length > workerData.maxOutputBytes ? { type: 'result', id: m.id, oversized: json.length, memoryBytes: memoryBytes() } : { type: 'result', id: m.id, json, memoryBytes: memoryBytes() }),
      (err) => parentPort.postMessage({ type: 'result', id: m.id, json: JSON.stringify({ error: String(err), phase: 'internal' }), memoryBytes: memoryBytes() }),
    );
});
const MiB = 1024 * 1024;
const go = new Go();
let instance;
// The size of the instance's linear memory, which only grows while it lives (engine-thread.ts recycles past a bound).
const memoryBytes = () => (instance ? instance.exports.mem.buffer.byteLength : 0);
// GOGC 200: Go's collector runs on this thread, between template steps, so collecting half as
// often makes warm renders of the corpus about a tenth faster with no higher peak (measured
// with bench/helm.ts); the host's GOGC, when set, is taken instead.
// GOMEMLIMIT: the module's memory cannot grow past workerData.memoryBytes (engine.ts), so Go's
// collector is told to work harder as the heap nears it, and a render that only makes garbage
// fits; the rest of the ceiling is for stacks, the runtime's own data and fragmentation.
go.env = {
  GOGC: process.env.GOGC || '200',
  GOMEMLIMIT: Math.floor((workerData.memoryBytes * 3) / 4 / MiB) + 'MiB',
  TMPDIR: require('node:os').tmpdir(),
  HOME: require('node:os').homedir(),
};
go.exit = (code) => {
  parentPort.postMessage({ type: 'failed', error: 'Go exited with code ' + code, fatal, memoryBytes: memoryBytes() });
};
globalThis.binnacleHelmReady = () => parentPort.postMessage({ type: 'ready' });
// The module is compiled once by the parent and shared by every engine thread.
WebAssembly.instantiate(workerData.module, go.importObject)
  .then((inst) => go.run((instance = inst)))
  .catch((err) => parentPort.postMessage({ type: 'failed', error: String(err && err.stack || err) }));
`;
