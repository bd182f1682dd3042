/**
 * Credentials that rotate while a client lives: an `exec` plugin's token and a token file (what
 * a Pod's projected ServiceAccount token is). The API server here accepts only the newest token
 * and answers 401 to the old one, as a real one does once a token expired.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { KubeClient } from './client.js';
import { Credentials } from './credentials.js';

let server: Server;
let port: number;
let dir: string;
let valid = 'token-1';
const seen: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'binnacle-credentials-'));
  server = createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    seen.push(auth);
    if (auth !== `Bearer ${valid}`) {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ gitVersion: 'v1.36.3' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  server.close();
  await rm(dir, { recursive: true, force: true });
});

function kubeconfig(user: User): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [user],
    contexts: [{ name: 'x', cluster: 'c', user: user.name }],
    currentContext: 'x',
  });
  return kc;
}

test("an exec plugin's token is read once for many requests, and again when the API server answers 401", async () => {
  const tokenFile = join(dir, 'exec-token');
  const runs = join(dir, 'exec-runs');
  await writeFile(tokenFile, 'token-1');
  await writeFile(runs, '');
  const plugin = join(dir, 'plugin.sh');
  await writeFile(
    plugin,
    `#!/bin/sh\necho run >> '${runs}'\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$(cat '${tokenFile}')"\n`,
    { mode: 0o755 },
  );
  valid = 'token-1';
  const client = await KubeClient.fromKubeConfig(kubeconfig({ name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, args: [], env: [], interactiveMode: 'Never' } }));
  try {
    // Each a request: the client keeps the server's version otherwise (discovery).
    const version = (): Promise<string> => {
      client.invalidateDiscovery();
      return client.serverVersion();
    };
    for (let i = 0; i < 5; i++) assert.equal(await version(), 'v1.36.3');
    const before = (await readFile(runs, 'utf8')).trim().split('\n').length;
    // The token expires: the server now wants the plugin's next one.
    await writeFile(tokenFile, 'token-2');
    valid = 'token-2';
    assert.equal(await version(), 'v1.36.3');
    const afterRotation = (await readFile(runs, 'utf8')).trim().split('\n').length;
    assert.equal(afterRotation, before + 1, 'the plugin ran once more, after the 401');
    assert.ok(before <= 2, `the plugin ran ${before} times for the first 5 requests`);
  } finally {
    client.close();
  }
});

test('a rotated token file (a projected ServiceAccount token) is read again after a 401', async () => {
  const tokenFile = join(dir, 'sa-token');
  await writeFile(tokenFile, 'sa-1');
  valid = 'sa-1';
  const client = await KubeClient.fromKubeConfig(kubeconfig({ name: 'sa', authProvider: { name: 'tokenFile', config: { tokenFile } } }));
  try {
    assert.equal(await client.serverVersion(), 'v1.36.3');
    await writeFile(tokenFile, 'sa-2');
    valid = 'sa-2';
    client.invalidateDiscovery(); // a request, not the version kept from the first
    assert.equal(await client.serverVersion(), 'v1.36.3');
    assert.equal(seen.at(-1), 'Bearer sa-2');
  } finally {
    client.close();
  }
});

test('a static token is not read again: a 401 is the answer, sent once', async () => {
  valid = 'other';
  const client = await KubeClient.fromKubeConfig(kubeconfig({ name: 'static', token: 'static-token' }));
  try {
    const n = seen.length;
    await assert.rejects(client.serverVersion(), /Unauthorized/);
    assert.equal(seen.length, n + 1, 'no retry: the credential cannot change');
  } finally {
    client.close();
  }
});

test('refreshable credentials are read again once they are older than their maximum age', async () => {
  let clock = 0;
  const tokenFile = join(dir, 'aged-token');
  await writeFile(tokenFile, 'aged-1');
  const kc = kubeconfig({ name: 'aged', authProvider: { name: 'tokenFile', config: { tokenFile } } });
  const opts = {};
  await kc.applyToHTTPSOptions(opts);
  const creds = Credentials.fromKubeConfig(kc, opts, { maxAgeMs: 1000, now: () => clock });
  assert.equal((await creds.current()).Authorization, 'Bearer aged-1');
  await writeFile(tokenFile, 'aged-2');
  clock = 500;
  assert.equal((await creds.current()).Authorization, 'Bearer aged-1', 'fresh enough: not read');
  clock = 1500;
  assert.equal((await creds.current()).Authorization, 'Bearer aged-2');
});
