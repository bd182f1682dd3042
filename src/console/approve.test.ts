import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { ANNOTATION_APPROVED_PLAN } from '../api/approval.js';
import type { KubeClient } from '../kube/client.js';
import type { ObjectRef } from '../kube/types.js';
import { ConsoleApi } from './api.js';
import { apiParts, routes } from './contract/routes.js';

const D = `sha256:${'a'.repeat(64)}`;
const OLD = `sha256:${'b'.repeat(64)}`;

function request(body: unknown): IncomingMessage {
  const req = Readable.from([Buffer.from(JSON.stringify(body))]) as unknown as IncomingMessage;
  req.headers = { 'content-type': 'application/json' };
  return req;
}

/** The person's own client (the console hands the route the signed-in identity's): what it was asked to write. */
function personClient(): { client: KubeClient; patches: { ref: ObjectRef; body: unknown }[] } {
  const patches: { ref: ObjectRef; body: unknown }[] = [];
  const ce = { apiVersion: 'binnacle.dev/v1alpha1', kind: 'ClusterExtension', metadata: { name: 'op', resourceVersion: '3' }, spec: {}, status: { pendingPlan: { digest: D, supersedes: OLD, changes: [], since: '', message: '' } } };
  const client = {
    get: () => Promise.resolve(structuredClone(ce)),
    patch: (ref: ObjectRef, body: unknown) => {
      patches.push({ ref, body });
      return Promise.resolve(ce);
    },
  };
  return { client: client as unknown as KubeClient, patches };
}

async function post(client: KubeClient, body: unknown): Promise<unknown> {
  const url = new URL(`/api/${routes.extensionPart('op', 'approve')}`, 'http://console.test');
  const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }) });
  return api.route('POST', apiParts(url.pathname) ?? [], { client, req: request(body), url });
}

test('the console approves the digest the page showed, through the person\'s own client', async () => {
  const p = personClient();
  const answer = (await post(p.client, { digest: D })) as { status: number; json: { digest: string } };
  assert.equal(answer.status, 200);
  assert.equal(answer.json.digest, D);
  assert.deepEqual(p.patches.map((x) => [x.ref.kind, x.ref.name, x.body]), [['ClusterExtension', 'op', { metadata: { resourceVersion: '3', annotations: { [ANNOTATION_APPROVED_PLAN]: D } } }]]);
});

test('the console refuses an approval without a digest, or of a superseded one, and writes nothing', async () => {
  const p = personClient();
  await assert.rejects(post(p.client, {}), /digest.*required|required/);
  await assert.rejects(post(p.client, { digest: OLD }), /superseded by plan/);
  assert.deepEqual(p.patches, []);
});
