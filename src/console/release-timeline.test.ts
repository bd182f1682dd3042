import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { pino } from 'pino';
import { HELM_RELEASE_NAME_ANNOTATION, HELM_RELEASE_NAMESPACE_ANNOTATION } from '../apply/ownership.js';
import { releaseSecrets, type ReleaseRecordInput } from '../apply/release.js';
import { ReleaseStore } from '../apply/release-store.js';
import type { ReleaseHook } from '../apply/types.js';
import type { ConsoleClient } from './client.js';
import type { KubeObject } from '../kube/types.js';
import { ConsoleApi } from './api.js';
import type { ExtensionTimeline, HookView, ReleaseTimeline } from './contract/api-types.js';
import { httpErrorOf, InputError } from './errors.js';
import { consoleCluster, type Forbid } from './fake-cluster.test-helper.js';
import { executionOrder, releaseTimeline, resourceTimeline } from './release-timeline.js';

const NGINX_CRD = 'nginxes.charts.example.com';
const NEVER = { started_at: '0001-01-01T00:00:00Z', completed_at: '0001-01-01T00:00:00Z', phase: '' };
const T1 = '2026-02-01T10:00:00Z';
const T2 = '2026-02-02T10:00:00Z';
const T3 = '2026-02-03T10:00:00Z';

/** A hook as Helm's JSON has it: a weight of 0 is left out (omitempty). */
function hook(name: string, kind: string, events: string[], weight: number, policies: string[] | null = null, lastRun = NEVER): ReleaseHook {
  const apiVersion = kind === 'Job' ? 'batch/v1' : 'v1';
  const h = { name, kind, path: `jobs-chart/templates/${name}.yaml`, manifest: `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n`, events, last_run: lastRun, delete_policies: policies };
  return (weight === 0 ? h : { ...h, weight }) as ReleaseHook;
}

const ran = (at: string, phase: string): ReleaseHook['last_run'] => ({ started_at: at.replace(':00Z', ':01Z'), completed_at: at.replace(':00Z', ':09Z'), phase });

/** The hooks of the chart, stored out of order; `runs` sets the last run of some. */
function chartHooks(runs: Record<string, ReleaseHook['last_run']>): ReleaseHook[] {
  const r = (name: string): ReleaseHook['last_run'] => runs[name] ?? NEVER;
  return [
    hook('smoke', 'Pod', ['test'], 0, null, r('smoke')),
    hook('notify', 'Job', ['post-install'], 5, [], r('notify')),
    hook('b-config', 'ConfigMap', ['pre-install'], 0, null, r('b-config')),
    hook('cleanup', 'ConfigMap', ['pre-delete'], 0, ['hook-succeeded'], r('cleanup')),
    hook('a-config', 'ConfigMap', ['pre-install'], 0, null, r('a-config')),
    hook('migrate', 'Job', ['pre-install', 'pre-upgrade'], -5, ['before-hook-creation', 'hook-succeeded'], r('migrate')),
  ];
}

function revision(version: number, status: ReleaseRecordInput['status'], description: string, at: string, hooks: ReleaseHook[], templates: unknown[] = []): ReleaseRecordInput {
  return {
    name: 'jobs',
    namespace: 'apps',
    version,
    status,
    description,
    firstDeployed: T1,
    lastDeployed: at,
    chart: { name: 'jobs-chart', version: `0.${version}.0` },
    config: { password: 'not-for-the-page' },
    manifest: '',
    content: { chart: { metadata: { name: 'jobs-chart', version: `0.${version}.0`, apiVersion: 'v2' }, templates, values: {}, files: [] }, manifest: '', hooks },
  };
}

const releaseNotes = { [HELM_RELEASE_NAME_ANNOTATION]: 'jobs', [HELM_RELEASE_NAMESPACE_ANNOTATION]: 'apps' };

/**
 * The console cluster with a Helm operator resource `apps/jobs` whose release has hooks:
 * revision 1 installed (the pre-install hooks and the post-install Job `notify`, which failed and
 * is still on the cluster), revision 2 an upgrade (the pre-upgrade Job `migrate` ran again and
 * was deleted by its policy), revision 3 a rollback to 1 (its hooks copied with their runs, and
 * `rollbackRuns` of its own).
 */
async function jobsCluster(forbid?: Forbid, rollbackRuns: Record<string, ReleaseHook['last_run']> = {}): Promise<Awaited<ReturnType<typeof consoleCluster>>> {
  const c = await consoleCluster(forbid);
  c.cluster.put({ apiVersion: 'charts.example.com/v1', kind: 'Nginx', metadata: { name: 'jobs', namespace: 'apps' }, spec: {} });
  const installRuns = { migrate: ran(T1, 'Succeeded'), 'a-config': ran(T1, 'Succeeded'), 'b-config': ran(T1, 'Succeeded'), notify: ran(T1, 'Failed') };
  const store = new ReleaseStore(c.cluster.client());
  const owner = { kind: 'Nginx', name: 'jobs' };
  await store.create(revision(1, 'superseded', 'Install complete', T1, chartHooks(installRuns)), owner);
  await store.create(revision(2, 'superseded', 'Upgrade complete', T2, chartHooks({ migrate: ran(T2, 'Succeeded'), 'a-config': ran(T2, 'Succeeded'), 'b-config': ran(T2, 'Succeeded') })), owner);
  await store.create(revision(3, 'deployed', 'Rollback to 1', T3, chartHooks({ ...installRuns, ...rollbackRuns })), owner);
  c.cluster.put({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'notify', namespace: 'apps', uid: 'u-notify', annotations: releaseNotes },
    status: { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] },
  });
  const event = (name: string, type: string, reason: string, job: string, last: string): KubeObject => ({ apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'apps' }, involvedObject: { kind: 'Job', name: job, uid: `u-${job}` }, type, reason, message: `${reason} of ${job}`, count: 1, lastTimestamp: last });
  for (const e of [event('e1', 'Warning', 'BackoffLimitExceeded', 'notify', '2026-02-01T10:00:09Z'), event('e2', 'Normal', 'SuccessfulCreate', 'notify', '2026-02-01T10:00:02Z'), event('e3', 'Warning', 'FailedCreate', 'other', '2026-02-01T10:00:05Z'), event('e4', 'Warning', 'PodFailurePolicy', 'notify', '2026-02-01T10:00:08Z')]) c.cluster.put(e);
  return c;
}

const hookRow = (h: HookView): string => `${h.kind} ${h.name} ${h.events.join(',')} w${h.weight} [${h.deletePolicies.join(',')}] ${h.lastRun === undefined ? 'no run' : `${h.lastRun.phase}${h.lastRun.ofThisRevision ? '' : ' (earlier)'}`}${h.live === undefined ? '' : ` live:${h.live.state}${h.live.revision === undefined ? '' : `@${h.live.revision}`}`}`;

const route = async (api: ConsoleApi, client: ConsoleClient, path: string): Promise<unknown> => {
  const url = new URL(`http://console${path}`);
  const parts = url.pathname.slice('/api/'.length).split('/').map(decodeURIComponent);
  const r = await api.route('GET', parts, { client, req: new IncomingMessage(new Socket()), url });
  assert.ok(r !== undefined && 'json' in r && r.status === 200, `${path} answered`);
  return r.json;
};

describe('release timeline', () => {
  it('orders hooks as Helm runs them: by the first lifecycle event each runs at, then weight and name; test hooks last', () => {
    assert.deepEqual(executionOrder(chartHooks({})).map((h) => h.name), ['migrate', 'a-config', 'b-config', 'notify', 'cleanup', 'smoke']);
  });

  it('revisions newest first, hooks in order with their last runs, the live Job of the newest run merged, a deleted Job said to be gone', async () => {
    const { client } = await jobsCluster();
    const t = await resourceTimeline(client, NGINX_CRD, 'jobs', 'apps');
    assert.deepEqual(t.revisions.map((r) => [r.revision, r.status, r.deployed, `${r.chart.name}-${r.chart.version}`, r.description]), [
      [3, 'deployed', T3, 'jobs-chart-0.3.0', 'Rollback to 1'],
      [2, 'superseded', T2, 'jobs-chart-0.2.0', 'Upgrade complete'],
      [1, 'superseded', T1, 'jobs-chart-0.1.0', 'Install complete'],
    ]);
    const [rollback, upgrade, install] = t.revisions.map((r) => r.hooks.map(hookRow));
    assert.deepEqual(install, [
      'Job migrate pre-install,pre-upgrade w-5 [before-hook-creation,hook-succeeded] Succeeded live:rerun@2',
      'ConfigMap a-config pre-install w0 [] Succeeded',
      'ConfigMap b-config pre-install w0 [] Succeeded',
      'Job notify post-install w5 [] Failed live:present',
      'ConfigMap cleanup pre-delete w0 [hook-succeeded] no run',
      'Pod smoke test w0 [] no run',
    ]);
    assert.deepEqual(upgrade?.slice(0, 4), ['Job migrate pre-install,pre-upgrade w-5 [before-hook-creation,hook-succeeded] Succeeded live:gone', 'ConfigMap a-config pre-install w0 [] Succeeded', 'ConfigMap b-config pre-install w0 [] Succeeded', 'Job notify post-install w5 [] no run']);
    // The rollback's record carries revision 1's runs, as Helm's does: shown, but not as its own.
    assert.deepEqual(rollback?.[3], 'Job notify post-install w5 [] Failed (earlier)');
    const notify = t.revisions[2]?.hooks.find((h) => h.name === 'notify');
    assert.deepEqual(notify?.lastRun, { startedAt: '2026-02-01T10:00:01Z', completedAt: '2026-02-01T10:00:09Z', phase: 'Failed', ofThisRevision: true });
    assert.deepEqual({ ...notify?.live, warnings: notify?.live?.warnings?.map((w) => w.reason) }, {
      state: 'present',
      active: 0,
      succeeded: 0,
      failed: 1,
      conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }],
      warnings: ['BackoffLimitExceeded', 'PodFailurePolicy'],
    });
    assert.doesNotMatch(JSON.stringify(t), /not-for-the-page|apiVersion: batch/, 'neither values nor hook manifests are sent');
  });

  it('a release without hooks has revisions with none; an extension answers each release of its set', async () => {
    const { client } = await jobsCluster();
    const web = await resourceTimeline(client, NGINX_CRD, 'web', 'apps');
    assert.deepEqual(web.revisions.map((r) => [r.revision, r.status, r.hooks.length]), [[2, 'deployed', 0], [1, 'superseded', 0]]);
    const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }) });
    const ext = (await route(api, client, '/api/extensions/ext/timeline')) as ExtensionTimeline;
    assert.deepEqual(ext.releases.map((r) => [r.bundleDeployment, r.package, r.release, r.namespace, r.revisions.map((v) => v.revision)]), [['ext-p', 'p', 'ext-p', 'ns', [1]]]);
    const one = (await route(api, client, '/api/extensions/ext/timeline?bundleDeployment=ext-p')) as ExtensionTimeline;
    assert.equal(one.releases.length, 1);
    await assert.rejects(route(api, client, '/api/extensions/ext/timeline?bundleDeployment=other'), (e: unknown) => e instanceof InputError && /other is not a BundleDeployment of ext's set \(ext-p\)/.test(e.message));
    const viaRoute = (await route(api, client, `/api/crds/${NGINX_CRD}/resources/jobs/timeline?namespace=apps`)) as ReleaseTimeline;
    assert.equal(viaRoute.revisions.length, 3);
  });

  it('without list on Secrets (the release records) the answer is a 403 naming that; a Job or Events the person may not read is said on the hook', async () => {
    const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }) });
    const { client: noSecrets } = await jobsCluster((verb, kind) => verb === 'list' && kind === 'Secret');
    await assert.rejects(route(api, noSecrets, `/api/crds/${NGINX_CRD}/resources/jobs/timeline?namespace=apps`), (err: unknown) => {
      const mapped = httpErrorOf(err);
      assert.equal(mapped?.status, 403);
      assert.match(mapped.body.error, /^forbidden: list secrets/);
      return true;
    });
    const { client: noJobs } = await jobsCluster((verb, kind) => verb === 'get' && kind === 'Job');
    const t = await resourceTimeline(noJobs, NGINX_CRD, 'jobs', 'apps');
    assert.deepEqual(t.revisions[1]?.hooks[0]?.live, { state: 'unreadable', message: 'Job apps/migrate: forbidden: get jobs.batch' });
    assert.equal(t.revisions[1]?.hooks[0]?.lastRun?.phase, 'Succeeded', 'the recorded run is still shown');
    const { client: noEvents } = await jobsCluster((verb, kind) => verb === 'list' && kind === 'Event');
    const job = (await resourceTimeline(noEvents, NGINX_CRD, 'jobs', 'apps')).revisions[2]?.hooks.find((h) => h.name === 'notify')?.live;
    assert.equal(job?.state, 'present');
    assert.equal(job.failed, 1);
    assert.equal(job.message, 'its Events: forbidden: list events');
  });

  it("a hook Pod's phase and containers, and the Warning Events of a hook Job's Pods (not another Job's), newest first", async () => {
    // The test hook `smoke` (a Pod) ran in revision 3, and is still there, unable to pull its image.
    const { cluster, client } = await jobsCluster(undefined, { smoke: ran(T3, 'Running') });
    cluster.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'smoke', namespace: 'apps', uid: 'u-smoke', annotations: releaseNotes },
      status: {
        phase: 'Pending',
        initContainerStatuses: [{ name: 'wait', restartCount: 2, state: { terminated: { reason: 'Error', exitCode: 1 } } }],
        containerStatuses: [{ name: 'test', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope"' } } }],
      },
    });
    const podOf = (name: string, job: string, uid: string, at: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'apps', uid: `u-${name}`, creationTimestamp: at, labels: { 'job-name': job }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job, uid, controller: true }] } });
    cluster.put(podOf('notify-a', 'notify', 'u-notify', '2026-02-01T10:00:01Z'));
    cluster.put(podOf('notify-x', 'notify', 'u-old-notify', '2026-01-01T10:00:01Z')); // an earlier Job's of the same name
    const podEvent = (name: string, reason: string, pod: string, last: string): KubeObject => ({ apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'apps' }, involvedObject: { kind: 'Pod', name: pod, uid: `u-${pod}` }, type: 'Warning', reason, message: `${reason} of ${pod}`, count: 3, lastTimestamp: last });
    for (const e of [podEvent('p1', 'BackOff', 'notify-a', '2026-02-01T10:00:10Z'), podEvent('p2', 'FailedMount', 'notify-x', '2026-02-01T10:00:11Z'), podEvent('p3', 'Failed', 'smoke', '2026-02-03T10:00:05Z')]) cluster.put(e);

    const t = await resourceTimeline(client, NGINX_CRD, 'jobs', 'apps');
    const smoke = t.revisions[0]?.hooks.find((h) => h.name === 'smoke')?.live;
    assert.deepEqual({ ...smoke, warnings: smoke?.warnings?.map((w) => `${w.object} ${w.reason}`) }, {
      state: 'present',
      phase: 'Pending',
      conditions: [],
      containers: [
        { name: 'wait', state: 'Terminated: Error, exit code 1, 2 restarts' },
        { name: 'test', state: 'Waiting: ImagePullBackOff (Back-off pulling image "nope")' },
      ],
      warnings: ['Pod smoke Failed'],
    });
    const notify = t.revisions[2]?.hooks.find((h) => h.name === 'notify')?.live;
    assert.deepEqual(notify?.warnings?.map((w) => `${w.object} ${w.reason}`), ['Pod notify-a BackOff', 'Job notify BackoffLimitExceeded', 'Job notify PodFailurePolicy']);
    // Without list on Pods, the Job's own Events are still shown, and the Pods' absence said.
    const { client: noPods } = await jobsCluster((verb, kind) => verb === 'list' && kind === 'Pod');
    const partial = (await resourceTimeline(noPods, NGINX_CRD, 'jobs', 'apps')).revisions[2]?.hooks.find((h) => h.name === 'notify')?.live;
    assert.deepEqual(partial?.warnings?.map((w) => w.reason), ['BackoffLimitExceeded', 'PodFailurePolicy']);
    assert.equal(partial?.message, 'its Pods: forbidden: list pods');
  });

  it('a Job of the same name that another release made is not taken for the hook’s', async () => {
    const { cluster, client } = await jobsCluster();
    cluster.put({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'migrate', namespace: 'apps', annotations: { [HELM_RELEASE_NAME_ANNOTATION]: 'other', [HELM_RELEASE_NAMESPACE_ANNOTATION]: 'apps' } }, status: { active: 1 } });
    const job = (await resourceTimeline(client, NGINX_CRD, 'jobs', 'apps')).revisions[1]?.hooks[0]?.live;
    assert.deepEqual(job, { state: 'gone', message: 'the Job apps/migrate on the cluster is not this release\'s (Helm release apps/other)' });
  });

  it('a release stored in parts (above a Secret’s size) is read whole; a missing part is named', async () => {
    const { cluster, client } = await consoleCluster();
    // Random bytes do not compress: a template a small limit must split.
    const templates = [{ name: 'templates/big.yaml', data: randomBytes(16 * 1024).toString('base64') }];
    const input = revision(1, 'deployed', 'Install complete', T1, chartHooks({ migrate: ran(T1, 'Succeeded') }), templates);
    const secrets = releaseSecrets(input, { kind: 'Nginx', name: 'jobs' }, new Date(T1), 'created', 8 * 1024);
    assert.ok(secrets.length > 2, `stored in parts (${secrets.length} Secrets)`);
    for (const s of secrets) cluster.put(s);
    const t = await releaseTimeline(client, { name: 'jobs', namespace: 'apps' });
    assert.deepEqual(t.revisions.map((r) => [r.revision, r.hooks.length, r.hooks[0]?.lastRun?.phase]), [[1, 6, 'Succeeded']]);
    const part = secrets[1];
    assert.ok(part !== undefined);
    assert.ok(cluster.remove({ apiVersion: 'v1', kind: 'Secret', name: part.metadata.name ?? '', namespace: part.metadata.namespace }), 'a part removed');
    await assert.rejects(releaseTimeline(client, { name: 'jobs', namespace: 'apps' }), /announces \d+ parts but part 0 .* is missing/);
  });
});
