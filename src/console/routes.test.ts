import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { ConsoleApi } from './api.js';
import { apiParts, routes } from './contract/routes.js';

/** A cluster every request to which fails with this: a handler that ran shows the router took the path. */
const REACHED = new Error('the handler ran');
const cluster = new FakeCluster();
cluster.inject({ error: () => REACHED, times: Infinity });
const client = cluster.client();

function request(): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.headers = { 'content-type': 'application/json' };
  req.push(Buffer.from('{}'));
  req.push(null);
  return req;
}

/** Whether the router answers METHOD /api/PATH (a handler ran or answered), as the server splits it. */
async function routed(method: string, path: string): Promise<boolean> {
  const url = new URL(`/api/${path}`, 'http://console.test');
  const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }) });
  try {
    return (await api.route(method, apiParts(url.pathname) ?? [], { client, req: request(), url })) !== undefined;
  } catch {
    return true;
  }
}

// Names with characters that need encoding, so a path that forgets to encode them splits wrong.
const odd = 'a/b c?d';

describe('console API paths', () => {
  it('every path the page builds is one the router answers, for the method the page uses', async () => {
    const calls: [string, string][] = [
      ['GET', routes.packages()],
      ['GET', routes.packagePage(odd, odd)],
      ['GET', routes.packageIcon(odd, odd)],
      ['POST', routes.plan()],
      ['GET', routes.extensions()],
      ['POST', routes.extensions()],
      ['GET', routes.extension(odd)],
      ['PATCH', routes.extension(odd)],
      ['DELETE', routes.extension(odd)],
      ...(['events', 'uninstall-preview', 'apis', 'revisions', 'drift', 'rollback-preview'] as const).map((part): [string, string] => ['GET', routes.extensionPart(odd, part)]),
      ['GET', routes.extensionPart(odd, 'timeline', { bundleDeployment: odd })],
      ['POST', routes.extensionPart(odd, 'rollback')],
      ['POST', routes.extensionPart(odd, 'approve')],
      ['GET', routes.helmOperators()],
      ['GET', routes.inventory()],
      ['GET', routes.crd(odd)],
      ['POST', routes.resources(odd)],
      ['GET', routes.resource(odd, odd, odd)],
      ['GET', routes.resource(odd, odd)],
      ['PATCH', routes.resource(odd, odd, odd)],
      ['DELETE', routes.resource(odd, odd, odd)],
      ...(['delete-preview', 'drift', 'timeline'] as const).map((part): [string, string] => ['GET', routes.resourcePart(odd, odd, part, odd)]),
    ];
    for (const [method, path] of calls) assert.equal(await routed(method, path), true, `${method} /api/${path}`);
  });

  it('a path the router does not know is told apart (the check can fail)', async () => {
    // The icon URL the catalog page once built: no `packages` segment.
    assert.equal(await routed('GET', `catalogs/c/p/icon`), false);
    assert.equal(await routed('GET', `extensions/x/no-such-part`), false);
    assert.equal(await routed('PUT', routes.extension('x')), false);
    // Unencoded, a name with a slash is two segments, and the path is another one.
    assert.equal(await routed('GET', `extensions/${odd}/events`), false);
  });

  it('splits and decodes as the server does, with the query apart', () => {
    assert.deepEqual(apiParts(new URL(`/api/${routes.resourcePart(odd, 'n', 'drift', 'ns 1')}`, 'http://x').pathname), ['crds', odd, 'resources', 'n', 'drift']);
    assert.equal(new URL(`/api/${routes.resource('c', 'n', 'ns 1')}`, 'http://x').searchParams.get('namespace'), 'ns 1');
    assert.equal(routes.resource('c', 'n'), 'crds/c/resources/n');
    assert.equal(apiParts('/index.html'), undefined);
  });
});
