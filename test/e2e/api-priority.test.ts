/**
 * Binnacle's client on a shared API server that pushes back (issue 47 §2). A FlowSchema puts one
 * impersonated user alone in a PriorityLevelConfiguration of its own, squeezed to the least
 * concurrency API Priority and Fairness gives (one share of the server's seats, nothing
 * borrowed, no queue: what does not fit is refused at once with 429 and a Retry-After). Binnacle's
 * client, as that user and with its defaults (no client-side limit, as controller-runtime's), then
 * sends a burst of creates and reads. The test shows the API server refused some (429s counted by the manager's metric), the
 * client waited and sent them again, and every request in the end succeeded; and that the
 * client's own identity, in another bucket and another priority level, was not held back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { countApiRequests } from '../../src/kube/metrics.js';
import type { KubeObject } from '../../src/kube/types.js';
import { e2eClient, e2eKubeconfig, eventually, uniqueName } from './env.js';

const FLOWCONTROL = 'flowcontrol.apiserver.k8s.io/v1';
const BURST = 200;

let admin: KubeClient;
let client: KubeClient;
const ns = uniqueName('rl');
const user = `binnacle-e2e-${ns}`;
const squeezed = `binnacle-e2e-${ns}`;

before(async () => {
  admin = await e2eClient();
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await admin.apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'configmaps', namespace: ns }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create'] }] });
  await admin.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'configmaps', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmaps' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  await admin.apply({
    apiVersion: FLOWCONTROL,
    kind: 'PriorityLevelConfiguration',
    metadata: { name: squeezed },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
  });
  await admin.apply({
    apiVersion: FLOWCONTROL,
    kind: 'FlowSchema',
    metadata: { name: squeezed },
    spec: {
      priorityLevelConfiguration: { name: squeezed },
      // Before every built-in schema that could match a user's requests (workload-low is 9000, global-default 9900).
      matchingPrecedence: 300,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: user } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  });
  // The API server's flow-control controller takes the schema up and says so in its status.
  await eventually('the FlowSchema in effect', async () => {
    const fs = await admin.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>({ apiVersion: FLOWCONTROL, kind: 'FlowSchema', name: squeezed });
    return fs.status?.conditions?.some((c) => c.type === 'Dangling' && c.status === 'False') === true ? true : undefined;
  });
  // The client under test: a client as `binnacle manager` makes it, with its defaults.
  client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: e2eKubeconfig() }));
});

after(async () => {
  client?.close();
  for (const kind of ['FlowSchema', 'PriorityLevelConfiguration']) await admin.delete({ apiVersion: FLOWCONTROL, kind, name: squeezed }).catch(() => undefined);
  await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
  admin.close();
});

test('a burst from an identity API Priority and Fairness squeezes meets 429s, waits as told, and every request succeeds', { timeout: 240_000 }, async (t) => {
  assert.equal(client.rateLimit, undefined, 'no client-side limit: the API server alone pushes back');
  const registry = new Registry();
  countApiRequests(registry, client);
  const responses = new Map<number, number>();
  client.observeResponses((_method, status) => responses.set(status, (responses.get(status) ?? 0) + 1));
  const as = client.impersonate({ user });
  await as.resourceFor('v1', 'ConfigMap'); // discovery, once, before the burst

  const started = Date.now();
  const created = await Promise.allSettled(
    Array.from({ length: BURST }, (_, i) => as.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns }, data: { i: String(i) } })),
  );
  const createdMs = Date.now() - started;
  const read = await Promise.allSettled(Array.from({ length: BURST }, (_, i) => as.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `cm-${i}` })));
  const totalMs = Date.now() - started;

  const failed = [...created, ...read].filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String(r.reason));
  const metrics = await registry.metrics();
  const retriesByMethod = [...metrics.matchAll(/binnacle_rest_client_request_retries_total\{method="(\w+)",code="(\d+)"\} (\d+)/g)].map((m) => `${m[1]} ${m[2]}: ${m[3]}`);
  const retried429 = [...metrics.matchAll(/binnacle_rest_client_request_retries_total\{method="\w+",code="429"\} (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  t.diagnostic(`${BURST} creates in ${createdMs} ms, then ${BURST} gets: ${totalMs} ms in all; responses by status ${JSON.stringify(Object.fromEntries(responses))}; retries ${retriesByMethod.join(', ') || 'none'}`);

  assert.deepEqual(failed, [], 'every request succeeded in the end');
  const got429 = responses.get(429) ?? 0;
  assert.ok(got429 > 0, `the API server refused some requests with 429 (responses: ${JSON.stringify(Object.fromEntries(responses))})`);
  // Each 429 was waited out and sent again (none was the last answer), and the metric counts each retry.
  assert.equal(retried429, got429, `the metric counts the 429 retries: ${retriesByMethod.join(', ')}`);
  assert.equal(responses.get(201), BURST);
  assert.equal(responses.get(200), BURST + 1); // the gets, and discovery

  // The client's own identity is in the API server's ordinary priority levels:
  // a handful of its requests now go out without a wait and without a 429.
  const before429 = responses.get(429) ?? 0;
  for (let i = 0; i < 5; i++) await client.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  assert.equal(responses.get(429) ?? 0, before429);
});
