import { test } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { INSECURE_REGISTRIES_ENV, insecureByDefault, localIpv4Addresses, RegistryClient } from './registry-client.js';

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
  assert.equal(insecureByDefault('198.51.100.10:5000', none), false, 'another machine (TEST-NET-2)');
  assert.equal(insecureByDefault('registry.example.com', none), false);
  assert.equal(insecureByDefault('quay.io', none), false);
});

test('the environment names more plain-http registries, by host or host:port, and nothing else', () => {
  const env = { [INSECURE_REGISTRIES_ENV]: ' 198.51.100.10:5000 , registry.internal ' };
  assert.equal(insecureByDefault('198.51.100.10:5000', env), true);
  assert.equal(insecureByDefault('198.51.100.10:5001', env), false, 'another port of a host named with its port');
  assert.equal(insecureByDefault('registry.internal:443', env), true, 'a host named alone: any port');
  assert.equal(insecureByDefault('registry.internal.example.com', env), false, 'no prefix matching');
  assert.equal(insecureByDefault('evil.example.com', { [INSECURE_REGISTRIES_ENV]: '' }), false);
});

test("a client's base URL follows the default unless its options decide", () => {
  assert.equal(new RegistryClient({ auth: () => undefined }).baseUrl(`${ownAddress()}:5000`), `http://${ownAddress()}:5000`);
  assert.equal(new RegistryClient({ auth: () => undefined }).baseUrl('198.51.100.10:5000'), 'https://198.51.100.10:5000');
  assert.equal(new RegistryClient({ auth: () => undefined, insecure: false }).baseUrl(`${ownAddress()}:5000`), `https://${ownAddress()}:5000`);
});

test("this machine's IPv4 addresses come from the kernel's local routes, so a bridge without carrier (no Pod on it yet) still counts", () => {
  const fibTrie = [
    'Main:',
    '  +-- 0.0.0.0/0 3 0 5',
    '     |-- 0.0.0.0',
    '        /0 universe UNICAST',
    '     +-- 10.244.7.0/24 2 0 2',
    '        |-- 10.244.7.0',
    '           /24 link UNICAST',
    '        |-- 10.244.7.1',
    '           /32 host LOCAL',
    '        |-- 10.244.7.255',
    '           /32 link BROADCAST',
    '     +-- 127.0.0.0/8 2 0 2',
    '           |-- 127.0.0.0',
    '              /8 host LOCAL',
    '           |-- 127.0.0.1',
    '              /32 host LOCAL',
    'Local:',
    '        |-- 10.244.7.1',
    '           /32 host LOCAL',
  ].join('\n');
  assert.deepEqual(localIpv4Addresses(fibTrie), ['10.244.7.1', '127.0.0.1']);
  assert.deepEqual(localIpv4Addresses(''), []);
});
