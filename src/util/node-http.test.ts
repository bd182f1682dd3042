import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = (f: string): string => JSON.stringify(fileURLToPath(new URL(f, import.meta.url)));

// A process of its own: the test runner's may have loaded undici already.
const SCRIPT = `
const undici = () => process.moduleLoadList.some((m) => m.includes('undici'));
const { createSafeServer, closeServer } = await import(${here('./http-server.ts')});
await import(${here('../kube/client.ts')});
await import(${here('../cluster/health.ts')});
const { RegistryClient } = await import(${here('../oci/registry-client.ts')});
const { nodeHttp } = await import(${here('./node-http.ts')});
const paths = [];
const server = createSafeServer((req, res) => { paths.push(req.url); res.end('ok'); }, { name: 'probe' });
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const body = await new Promise((resolve, reject) => nodeHttp.get('http://127.0.0.1:' + server.address().port + '/', (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve(b)); }).on('error', reject));
// The registry client, which every pull goes through (src/util/http-request.ts, not fetch).
await new RegistryClient({ auth: () => undefined }).ping('127.0.0.1:' + server.address().port);
await closeServer(server);
const served = undici();
// The import the modules above avoid: on a Node whose node:http has undici's getters, it loads undici.
const getters = ['WebSocket', 'CloseEvent', 'MessageEvent'].some((k) => Object.getOwnPropertyDescriptor(nodeHttp, k)?.get !== undefined);
await import('node:http');
console.log(JSON.stringify({ body, paths, served, getters, imported: undici() }));
`;

test("Binnacle's HTTP servers and clients, the registry client among them, take node:http without loading undici (fetch): an ES import of it would, on Node 24", async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: fileURLToPath(new URL('../..', import.meta.url)) });
  const seen = JSON.parse(stdout.trim()) as { body: string; paths: string[]; served: boolean; getters: boolean; imported: boolean };
  assert.equal(seen.body, 'ok', 'a request was served and answered');
  assert.deepEqual(seen.paths, ['/', '/v2/'], 'the registry client asked too');
  assert.equal(seen.served, false, 'undici not loaded by serving, the Kubernetes client, the health checks or the registry client');
  // Where node:http has the getters (Node 24, the pinned Node the tests run on), the probe sees what an ES import does.
  assert.equal(seen.imported, seen.getters);
  assert.ok(seen.getters || Number(process.versions.node.split('.')[0]) < 24, `node:http has undici's getters on Node 24 (this is ${process.versions.node})`);
});
