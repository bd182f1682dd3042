import { test } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { INSECURE_REGISTRIES_ENV, insecureByDefault, RegistryClient } from './registry-client.js';

/** An IPv4 address of this machine that is not loopback (CI machines have one). */
function ownAddress(): string {
  const a = Object.values(networkInterfaces())
    .flat()
    .find((x) => x !== undefined && x.family === 'IPv4' && !x.internal);
  if (a === undefined) throw new Error('this machine has no non-loopback IPv4 address');
  return a.address;
}

test('plain http by default for loopback and for an address of this machine (a real node registry on its bridge), https elsewhere', () => {
  const none = {};
  assert.equal(insecureByDefault('127.0.0.1:5000', none), true);
  assert.equal(insecureByDefault('localhost:5000', none), true);
  assert.equal(insecureByDefault(`${ownAddress()}:5000`, none), true, "one of the machine's own addresses");
  assert.equal(insecureByDefault('192.0.2.10:5000', none), false, 'another machine (TEST-NET-1)');
  assert.equal(insecureByDefault('registry.example.com', none), false);
  assert.equal(insecureByDefault('quay.io', none), false);
});

test('the environment names more plain-http registries, by host or host:port, and nothing else', () => {
  const env = { [INSECURE_REGISTRIES_ENV]: ' 192.0.2.10:5000 , registry.internal ' };
  assert.equal(insecureByDefault('192.0.2.10:5000', env), true);
  assert.equal(insecureByDefault('192.0.2.10:5001', env), false, 'another port of a host named with its port');
  assert.equal(insecureByDefault('registry.internal:443', env), true, 'a host named alone: any port');
  assert.equal(insecureByDefault('registry.internal.example.com', env), false, 'no prefix matching');
  assert.equal(insecureByDefault('evil.example.com', { [INSECURE_REGISTRIES_ENV]: '' }), false);
});

test("a client's base URL follows the default unless its options decide", () => {
  assert.equal(new RegistryClient({ auth: () => undefined }).baseUrl(`${ownAddress()}:5000`), `http://${ownAddress()}:5000`);
  assert.equal(new RegistryClient({ auth: () => undefined }).baseUrl('192.0.2.10:5000'), 'https://192.0.2.10:5000');
  assert.equal(new RegistryClient({ auth: () => undefined, insecure: false }).baseUrl(`${ownAddress()}:5000`), `https://${ownAddress()}:5000`);
});
