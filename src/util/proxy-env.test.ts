/**
 * Which proxy a request goes through, as Node (undici's EnvHttpProxyAgent) picks it: the error
 * messages name that proxy, so the choice here must be Node's. Requests through a real proxy,
 * from the command line's entry, are tested in src/cli/proxy-env.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeHttp } from './node-http.js';
import { namesProxy, noProxyOf, proxyFor } from './proxy-env.js';

/** Node applies the variables itself with NODE_USE_ENV_PROXY=1, so proxyFor answers for `env` alone. */
const via = (target: string, env: Record<string, string>): string | undefined => proxyFor(target, { NODE_USE_ENV_PROXY: '1', ...env })?.href;

test('a proxy variable counts when it is set and not empty, in either case', () => {
  assert.equal(namesProxy({}), false);
  assert.equal(namesProxy({ NO_PROXY: '*', HTTP_PROXY: '' }), false);
  assert.equal(namesProxy({ https_proxy: 'http://p:3128' }), true);
  assert.equal(namesProxy({ HTTP_PROXY: 'p:3128' }), true);
});

test('https requests take HTTPS_PROXY alone, http requests HTTP_PROXY alone, as in Go and Node\'s agents; lower case first', () => {
  assert.equal(via('https://r.example/v2/', { HTTPS_PROXY: 'http://s:1', HTTP_PROXY: 'http://h:2' }), 'http://s:1/');
  assert.equal(via('https://r.example/v2/', { HTTP_PROXY: 'http://h:2' }), undefined);
  assert.equal(via('http://r.example/v2/', { HTTPS_PROXY: 'http://s:1' }), undefined);
  assert.equal(via('http://r.example/v2/', { http_proxy: 'http://lower:1', HTTP_PROXY: 'http://upper:2' }), 'http://lower:1/');
  assert.equal(via('http://r.example/', { HTTP_PROXY: 'proxy.corp:3128' }), 'http://proxy.corp:3128/');
});

test('NO_PROXY: names, subdomains, ports, ranges and *; a CIDR exempts nothing (Node does not read them)', () => {
  const env = (noProxy: string): Record<string, string> => ({ HTTPS_PROXY: 'http://p:3128', NO_PROXY: noProxy });
  assert.equal(via('https://catalogd.olmv1-system.svc/api', env('.svc,10.96.0.1')), undefined);
  assert.equal(via('https://a.b.example.com/', env('*.example.com')), undefined);
  assert.equal(via('https://example.com/', env('example.com')), undefined);
  assert.equal(via('https://registry.example.com/', env('example.com')), undefined, 'a name covers its subdomains, as in Go');
  assert.equal(via('https://notexample.com/', env('example.com')), 'http://p:3128/');
  assert.equal(via('https://10.0.0.7/', env('10.0.0.0-10.0.0.9')), undefined);
  assert.equal(via('https://10.0.0.10/', env('10.0.0.0-10.0.0.9')), 'http://p:3128/');
  assert.equal(via('https://r.example:5000/', env('r.example:5000')), undefined);
  assert.equal(via('https://r.example/', env('r.example:5000')), 'http://p:3128/');
  assert.equal(via('https://10.96.0.1/', env('10.96.0.0/12')), 'http://p:3128/');
  assert.equal(via('https://anything/', env('*')), undefined);
  assert.equal(via('https://anything/', env('other, *')), undefined, '* covers all wherever it is, as Node\'s agents read it');
});

test('loopback always goes direct, as in Go: localhost, 127.0.0.1 and ::1, NO_PROXY or not', () => {
  for (const noProxy of ['', 'r.example']) {
    for (const target of ['http://127.0.0.1:5000/v2/', 'https://localhost:8443/', 'http://[::1]:5000/v2/']) {
      assert.equal(via(target, { HTTP_PROXY: 'http://p:3128', HTTPS_PROXY: 'http://p:3128', NO_PROXY: noProxy }), undefined, `${target} with NO_PROXY=${noProxy}`);
    }
  }
  assert.equal(via('http://192.0.2.2:5000/v2/', { HTTP_PROXY: 'http://p:3128' }), 'http://p:3128/', 'another address of this machine is not loopback');
});

test('nothing is proxied unless the process put the proxy in place', () => {
  assert.equal(proxyFor('https://r.example/', { HTTPS_PROXY: 'http://p:3128' }), undefined);
});

test('noProxyOf: each bare name also as .name (how Node\'s agents say "and its subdomains"), then loopback', () => {
  assert.equal(noProxyOf({}), 'localhost,127.0.0.1,::1,[::1]');
  assert.equal(noProxyOf({ NO_PROXY: 'corp.example, .svc,10.0.0.1 r.example:5000,*.x.io,10.96.0.0/12' }), 'corp.example,.corp.example,.svc,10.0.0.1,r.example:5000,*.x.io,10.96.0.0/12,localhost,127.0.0.1,::1,[::1]');
  assert.equal(noProxyOf({ no_proxy: '*', NO_PROXY: 'other' }), '*');
  assert.equal(noProxyOf({ NO_PROXY: '10.0.0.0-10.0.0.9' }), '10.0.0.0-10.0.0.9,localhost,127.0.0.1,::1,[::1]', 'a range is not a name');
  assert.equal(noProxyOf({ NO_PROXY: '123-456' }), '123-456,.123-456,localhost,127.0.0.1,::1,[::1]', 'a name of digits and hyphens is a name');
});

/** Where Node's own agent, given HTTP_PROXY and `noProxy`, sends a request for `target`: the proxy's log, or nothing (direct). */
async function nodeAgentRoute(target: string, noProxy: string): Promise<string[]> {
  const seen: string[] = [];
  const proxy = createServer((req, res) => {
    seen.push(`${req.method ?? ''} ${req.url ?? ''}`);
    res.end('via proxy');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  try {
    const proxyEnv = { HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, NO_PROXY: noProxy };
    // Node >= 24.5 reads proxyEnv (the pinned Node the tests run on); setGlobalProxyFromEnv makes agents so.
    const agent = new nodeHttp.Agent({ proxyEnv } as ConstructorParameters<typeof nodeHttp.Agent>[0]);
    await new Promise<void>((resolve) => {
      const req = nodeHttp.get(target, { agent, timeout: 5000 }, (res) => res.resume().on('end', resolve));
      // Direct: the name does not resolve, or nothing listens.
      req.on('error', () => resolve());
      req.on('timeout', () => req.destroy());
    });
    agent.destroy();
  } finally {
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
  }
  return seen;
}

test("Node's own agent, given noProxyOf's list, sends a bare name's subdomain direct, as Go does; given the name alone, through the proxy", async () => {
  const target = 'http://registry.corp.invalid/v2/';
  assert.deepEqual(await nodeAgentRoute(target, 'corp.invalid'), [`GET ${target}`], 'control: Node reads a bare name as that host alone');
  assert.deepEqual(await nodeAgentRoute(target, noProxyOf({ NO_PROXY: 'corp.invalid' })), []);
  assert.deepEqual(await nodeAgentRoute('http://other.invalid/v2/', noProxyOf({ NO_PROXY: 'corp.invalid' })), ['GET http://other.invalid/v2/']);
});
