/**
 * A tenant's hook Job that never finishes (an image that does not pull, a quota the tenant
 * filled, a nodeSelector from values) waits for its timeout, 5 minutes by default, inside its
 * release's reconcile. The wait must not hold one of the kind's shared workers: with as many
 * such CRs as the kind has workers, every other namespace's CRs of the kind would wait too.
 * The real Controller and the real reconciler over the in-memory cluster.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ReleaseRecords } from '../../apply/index.js';
import { crdOf } from '../../apply/crd.test-helper.js';
import { Controller } from '../../kube/controller.js';
import { FakeCluster } from '../../kube/fake-cluster.test-helper.js';
import { HelmReleaseReconciler, UNINSTALL_FINALIZER, type HelmKind } from './helm-release.js';
import { rendered, type TestHook } from './rendered.test-helper.js';

const logger = pino({ level: 'silent' });
const SYSTEM = 'binnacle-system';
const CM = (name: string): string => `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
const HUNG_JOB = (release: string): TestHook => ({
  name: 'migrate',
  kind: 'Job',
  manifest: `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ${release}-migrate\nspec:\n  template:\n    spec:\n      containers:\n      - name: m\n        image: does-not-exist.invalid/x\n      restartPolicy: Never\n`,
});
const VICTIM = { apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: 'team-b', name: 'victim' };

test("one namespace's hung hook Jobs do not hold back another namespace's CR of the same kind", { timeout: 60_000 }, async () => {
  const cluster = new FakeCluster();
  for (const ns of ['team-a', 'team-b', SYSTEM]) cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  cluster.put(crdOf({ group: 'example.com', kind: 'Pushgateway', plural: 'pushgateways' }, {}));
  for (const ns of ['team-a', 'team-b']) cluster.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: ns, name: 'releaser' } });
  const crs = [['team-a', 'h1'], ['team-a', 'h2'], ['team-b', 'victim']] as const;
  for (const [ns, name] of crs) cluster.put({ apiVersion: 'example.com/v1', kind: 'Pushgateway', metadata: { namespace: ns, name, uid: `${ns}-${name}`, finalizers: [UNINSTALL_FINALIZER] }, spec: {} });
  const kind: HelmKind = { group: 'example.com', version: 'v1', kind: 'Pushgateway', chart: () => ({ path: '/c', digest: 'sha256:c', version: '1' }), identity: { type: 'namespaceServiceAccount', name: 'releaser' }, scope: {} };
  const client = cluster.client({ user: 'manager' });
  let victimReconciled = false;
  const reconciler = new HelmReleaseReconciler({
    client,
    kind,
    engine: { records: new ReleaseRecords({ client, namespace: SYSTEM, logger }), pollIntervalMs: 10 },
    // Longer than the test may take: the victim must not wait for these hooks at all.
    healthTimeoutMs: 600_000,
    ports: {
      inputDigest: () => Promise.resolve('sha256:i'),
      // The admin's chart has a pre-install migration Job; team-a's values make it never finish.
      render: (input) => {
        if (input.release.namespace === 'team-b') victimReconciled = true;
        return Promise.resolve(rendered(CM(input.release.name), input.release.namespace === 'team-a' ? [HUNG_JOB(input.release.name)] : []));
      },
      event: () => Promise.resolve(),
    },
  });
  // Two workers stand for the kind's 16 (DEFAULT_HELM_RECONCILES): team-a has one hung CR per worker.
  const controller = new Controller({ name: 'helm-pushgateway', logger, workers: 2, reconciler });
  const stop = new AbortController();
  const running = controller.run(stop.signal);
  for (const [ns, name] of crs) controller.enqueue(`${ns}/${name}`);
  const deployed = (): boolean => {
    const cr = cluster.get(VICTIM);
    return (cr?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Deployed' && c.status === 'True') === true;
  };
  // Both team-a hooks are running (their Jobs exist) before the victim is looked at.
  while (!(deployed() && cluster.all('Job').length === 2)) await new Promise((r) => setTimeout(r, 10)); // the test's timeout bounds it
  assert.ok(victimReconciled);
  const hung = cluster.all('Job').map((j) => j.metadata.namespace);
  assert.deepEqual(hung.sort(), ['team-a', 'team-a']);
  // The hung releases are still installing: their reconciles are in flight, asleep without a worker.
  assert.equal(controller.queue.inFlight, 2);
  // Finishing the Jobs lets the hung releases go on, and the controller stops cleanly.
  for (const j of cluster.all('Job')) cluster.put({ ...j, status: { conditions: [{ type: 'Complete', status: 'True' }] } });
  stop.abort();
  await running;
  for (const name of ['h1', 'h2']) {
    const cr = cluster.get({ ...VICTIM, namespace: 'team-a', name });
    assert.ok((cr?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Deployed' && c.status === 'True'), `team-a/${name} deployed once its Job completed`);
  }
});
