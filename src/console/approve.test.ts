import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { test } from 'node:test';
import { pino } from 'pino';
import { ANNOTATION_APPROVED_PLAN } from '../api/approval.js';
import { ALL_CRDS } from '../api/crds.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import { ConsoleApi } from './api.js';
import { apiParts, routes } from './contract/routes.js';

const D = `sha256:${'a'.repeat(64)}`;
const OLD = `sha256:${'b'.repeat(64)}`;

function request(body: unknown): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.headers = { 'content-type': 'application/json' };
  req.push(Buffer.from(JSON.stringify(body)));
  req.push(null);
  return req;
}

/** The person's own client (the console hands the route the signed-in identity's), on a cluster holding the extension `op` with a plan awaiting approval. */
function personClient(): { client: FakeClient; cluster: FakeCluster; rv: string | undefined } {
  const cluster = new FakeCluster({ objects: ALL_CRDS });
  const ce = cluster.put({ apiVersion: 'binnacle.dev/v1alpha1', kind: 'ClusterExtension', metadata: { name: 'op' }, spec: {}, status: { pendingPlan: { digest: D, supersedes: OLD, changes: [], since: '', message: '' } } });
  return { client: cluster.client({ user: 'alice' }), cluster, rv: ce.metadata.resourceVersion };
}

async function post(client: FakeClient, body: unknown): Promise<unknown> {
  const url = new URL(`/api/${routes.extensionPart('op', 'approve')}`, 'http://console.test');
  const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }) });
  return api.route('POST', apiParts(url.pathname) ?? [], { client, req: request(body), url });
}

test('the console approves the digest the page showed, through the person\'s own client', async () => {
  const p = personClient();
  const answer = (await post(p.client, { digest: D })) as { status: number; json: { digest: string } };
  assert.equal(answer.status, 200);
  assert.equal(answer.json.digest, D);
  assert.deepEqual(p.cluster.patched.map((x) => [x.ref.kind, x.ref.name, x.patch, x.identity]), [['ClusterExtension', 'op', { metadata: { resourceVersion: p.rv, annotations: { [ANNOTATION_APPROVED_PLAN]: D } } }, 'alice']]);
});

test('the console refuses an approval without a digest, or of a superseded one, and writes nothing', async () => {
  const p = personClient();
  await assert.rejects(post(p.client, {}), /digest.*required|required/);
  await assert.rejects(post(p.client, { digest: OLD }), /superseded by plan/);
  assert.deepEqual(p.cluster.writes, []);
});
