/**
 * The applier against the local control plane: install, upgrade with pruning, refusal to
 * adopt, unsafe CRD changes, automatic rollback after a health timeout, `helm` reading our
 * release records, and uninstall.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { compareWithCluster } from '../../src/actions/plan.js';
import { ApplyRefusedError, type ApplyRequest } from '../../src/apply/index.js';
import { releaseEngine } from '../../src/apply/engine.test-helper.js';
import type { KubeClient } from '../../src/kube/client.js';
import { refOf, type KubeObject } from '../../src/kube/types.js';
import { switchUnion, unionSwitchPatch } from '../../src/apply/union-switch.js';
import { e2eClient, e2eKubeconfig, eventually, kubectl, uniqueName } from './env.js';

const run = promisify(execFile);
const logger = pino({ level: process.env.BINNACLE_LOG_LEVEL ?? 'silent' });

async function helm(...args: string[]): Promise<string> {
  const { stdout } = await run('helm', ['--kubeconfig', e2eKubeconfig(), ...args]);
  return stdout;
}

function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

function deployment(ns: string, name: string, image = 'registry.example/op:1'): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { serviceAccountName: name, containers: [{ name: 'manager', image }] } },
    },
  };
}

function configMap(ns: string, name: string, data: Record<string, string> = { a: '1' }): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

function serviceAccount(ns: string, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } };
}

function crd(group: string, specProps: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: specProps } } } } }],
    },
  };
}

describe('applier e2e', () => {
  let client: KubeClient;
  let applier: ReturnType<typeof releaseEngine>;
  const ns = uniqueName('apply');
  const owner = { kind: 'ClusterExtension', name: ns };
  const release = { name: 'op', namespace: ns };
  const base = (objects: KubeObject[], extra: Partial<ApplyRequest> = {}): ApplyRequest => ({
    owner,
    release,
    objects,
    chart: { name: 'op', version: '1.0.0', appVersion: '1.0.0' },
    healthTimeoutMs: 60_000,
    ...extra,
  });

  before(async () => {
    client = await e2eClient();
    applier = releaseEngine(client, { logger, pollIntervalMs: 250 });
  });
  after(async () => {
    await kubectl('delete', 'namespace', ns, '--ignore-not-found', '--wait=false').catch(() => '');
    client.close();
  });

  test('install: objects applied in phases, Deployment Available, revision 1 deployed, helm sees it', async () => {
    const res = await applier.apply(base([deployment(ns, 'op'), configMap(ns, 'op-config'), serviceAccount(ns, 'op'), namespace(ns)], { values: { replicas: 1 } }));
    assert.equal(res.status, 'deployed', res.message);
    assert.equal(res.revision, 1);
    assert.deepEqual(res.applied.map((r) => r.kind), ['Namespace', 'ServiceAccount', 'ConfigMap', 'Deployment']);
    assert.equal(res.health.healthy, true);
    const dep = res.health.objects.find((o) => o.ref.kind === 'Deployment');
    assert.match(dep?.reason ?? '', /1 of 1 replicas available/);

    const live = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'op' });
    assert.equal(live.metadata.labels?.['binnacle.dev/owner-name'], ns);
    assert.equal(live.metadata.labels?.['app.kubernetes.io/managed-by'], 'Helm');
    assert.equal(live.metadata.annotations?.['meta.helm.sh/release-name'], 'op');

    const listed = JSON.parse(await helm('list', '-A', '-o', 'json')) as { name: string; namespace: string; revision: string; status: string; chart: string; app_version: string }[];
    assert.deepEqual(
      listed.filter((r) => r.namespace === ns).map((r) => [r.name, r.revision, r.status, r.chart, r.app_version]),
      [['op', '1', 'deployed', 'op-1.0.0', '1.0.0']],
    );
    const dep0 = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'op' });
    const conds = (dep0.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    assert.ok(conds.some((c) => c.type === 'Available' && c.status === 'True'), 'Deployment Available');
    const values = JSON.parse(await helm('get', 'values', 'op', '-n', ns, '-o', 'json')) as unknown;
    assert.deepEqual(values, { replicas: 1 });
    const manifest = await helm('get', 'manifest', 'op', '-n', ns);
    assert.match(manifest, /kind: Deployment/);
  });

  test('upgrade that drops an object prunes it and supersedes revision 1', async () => {
    const res = await applier.apply(base([namespace(ns), serviceAccount(ns, 'op'), deployment(ns, 'op', 'registry.example/op:2')], { chart: { name: 'op', version: '1.1.0' } }));
    assert.equal(res.status, 'deployed', res.message);
    assert.equal(res.revision, 2);
    assert.deepEqual(res.pruned.map((r) => `${r.kind}/${r.name}`), ['ConfigMap/op-config']);
    assert.equal(await client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'op-config' }), undefined);
    const history = await applier.history(release);
    assert.deepEqual(history.map((r) => [r.revision, r.status]), [[1, 'superseded'], [2, 'deployed']]);
    assert.equal((await applier.history(release)).findLast((r) => r.status === 'deployed')?.revision, 2);

    // A controller re-applying the same objects repairs drift but records no new revision.
    await kubectl('delete', 'serviceaccount', 'op', '-n', ns);
    const again = await applier.apply(base([namespace(ns), serviceAccount(ns, 'op'), deployment(ns, 'op', 'registry.example/op:2')], { chart: { name: 'op', version: '1.1.0' } }));
    assert.equal(again.revision, 2, again.message);
    assert.ok((await client.find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'op' })) !== undefined, 'drift repaired');
    assert.equal((await applier.history(release)).length, 2);
  });

  test('refuses to take over a foreign object and creates nothing', async () => {
    await kubectl('create', 'configmap', 'foreign', '-n', ns, '--from-literal=x=1');
    const before = await applier.history(release);
    await assert.rejects(
      applier.apply(base([namespace(ns), serviceAccount(ns, 'op'), serviceAccount(ns, 'newcomer'), deployment(ns, 'op', 'registry.example/op:2'), configMap(ns, 'foreign')])),
      (err: unknown) => {
        assert.ok(err instanceof ApplyRefusedError);
        assert.equal(err.code, 'APPLY_REFUSED');
        assert.match(err.message, /ConfigMap .*\/foreign already exists and belongs to no Binnacle owner/);
        // The namespace existed already, but it is ours: only the ConfigMap is refused.
        assert.equal(err.result.errors().length, 1);
        return true;
      },
    );
    assert.equal(await client.find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'newcomer' }), undefined, 'nothing created');
    const cm = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'foreign' });
    assert.equal(cm.metadata.labels?.['binnacle.dev/owner-name'], undefined, 'foreign object untouched');
    assert.equal((await applier.history(release)).length, before.length, 'no revision recorded');
  });

  test('an unsafe CRD change is refused with its reasons and changes nothing', async () => {
    const group = `${ns}.binnacle.dev`;
    const v1 = crd(group, { size: { type: 'integer' }, color: { type: 'string', enum: ['red', 'blue'] } });
    const ok = await applier.apply(base([namespace(ns), serviceAccount(ns, 'op'), deployment(ns, 'op', 'registry.example/op:2'), v1]));
    assert.equal(ok.status, 'deployed', ok.message);
    const revisions = (await applier.history(release)).length;

    const v2 = crd(group, { color: { type: 'string', enum: ['red'] } });
    await assert.rejects(
      applier.apply(base([namespace(ns), serviceAccount(ns, 'op'), deployment(ns, 'op', 'registry.example/op:3'), v2])),
      (err: unknown) => {
        assert.ok(err instanceof ApplyRefusedError);
        const rules = err.result.errors().map((p) => p.rule).sort();
        assert.deepEqual(rules, ['crd.enum-removed', 'crd.field-removed']);
        assert.match(err.message, /field \.spec\.size was removed/);
        assert.match(err.message, /enum values removed: "blue"/);
        return true;
      },
    );
    const live = await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `gadgets.${group}` });
    assert.match(JSON.stringify(live.spec), /"size"/, 'CRD unchanged');
    const dep = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'op' });
    assert.match(JSON.stringify(dep.spec), /op:2/, 'Deployment unchanged');
    assert.equal((await applier.history(release)).length, revisions);
  });

  test('an upgrade that never gets healthy rolls back to the last deployed revision', async () => {
    const good = (await applier.history(release)).findLast((r) => r.status === 'deployed');
    assert.ok(good !== undefined);
    const group = `${ns}.binnacle.dev`;
    const webhookSvc: KubeObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'op-webhook', namespace: ns },
      spec: { selector: { app: 'nobody-runs-this' }, ports: [{ port: 443, targetPort: 9443 }] },
    };
    const webhook: KubeObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: `${ns}-validate` },
      webhooks: [
        {
          name: `validate.${group}`,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          clientConfig: { service: { name: 'op-webhook', namespace: ns, path: '/validate' } },
          rules: [{ apiGroups: [group], apiVersions: ['v1'], operations: ['CREATE'], resources: ['gadgets'] }],
        },
      ],
    };
    const v1 = crd(group, { size: { type: 'integer' }, color: { type: 'string', enum: ['red', 'blue'] } });
    const res = await applier.apply(base([namespace(ns), serviceAccount(ns, 'op'), deployment(ns, 'op', 'registry.example/op:2'), v1, webhookSvc, webhook], { healthTimeoutMs: 3000 }));
    assert.equal(res.status, 'rolled-back', res.message);
    assert.match(res.message, /Service .*op-webhook: no ready endpoints/);
    const history = await applier.history(release);
    const failed = history.at(-2);
    const rollback = history.at(-1);
    assert.equal(failed?.status, 'failed');
    assert.equal(rollback?.status, 'deployed');
    assert.equal(rollback?.description, `Rollback to ${good.revision}`);
    assert.equal(res.revision, rollback?.revision);
    // The rollback pruned what the failed revision added.
    assert.equal(await client.find({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: 'op-webhook' }), undefined);
    assert.equal(await client.find({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: `${ns}-validate` }), undefined);

    const out = await helm('history', 'op', '-n', ns, '-o', 'json');
    const helmHistory = JSON.parse(out) as { revision: number; status: string; description: string }[];
    assert.deepEqual(
      helmHistory.map((h) => [h.revision, h.status]),
      history.map((h) => [h.revision, h.status]),
    );
    assert.ok(helmHistory.some((h) => h.status === 'superseded'));
    assert.equal(helmHistory.at(-1)?.description, `Rollback to ${good.revision}`);
  });

  test('explicit rollback to revision 1 re-applies its manifest as a new revision', async () => {
    const res = await applier.rollback({ release, toRevision: 1, healthTimeoutMs: 60_000 });
    assert.equal(res.status, 'deployed', res.message);
    const cm = await client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'op-config' });
    assert.ok(cm !== undefined, 'revision 1 ConfigMap is back');
    assert.ok(res.pruned.some((r) => r.kind === 'CustomResourceDefinition'), 'the CRD revision 1 lacked is pruned');
    assert.equal((await applier.history(release)).findLast((r) => r.status === 'deployed')?.description, 'Rollback to 1');
  });

  test('uninstall deletes every object and the release records', async () => {
    const res = await applier.uninstall({ owner, release });
    assert.ok(res.deleted.some((r) => r.kind === 'Deployment'));
    assert.equal(res.deleted.at(-1)?.kind, 'Namespace');
    await eventually('namespace gone', async () => ((await client.find({ apiVersion: 'v1', kind: 'Namespace', name: ns })) === undefined ? true : undefined), 90_000);
    assert.deepEqual(await applier.history(release).catch(() => []), []);
    const listed = JSON.parse(await helm('list', '-A', '-o', 'json')) as { name: string; namespace: string }[];
    assert.equal(listed.filter((r) => r.namespace === ns).length, 0);
  });
});

describe('applier e2e: force replaces what cannot change in place', () => {
  let client: KubeClient;
  let applier: ReturnType<typeof releaseEngine>;
  const ns = uniqueName('force');
  const owner = { kind: 'ClusterExtension', name: ns };
  const release = { name: 'op', namespace: ns };
  const withSelector = (app: string): KubeObject => {
    const d = deployment(ns, 'op');
    const spec = d.spec as { selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> } } };
    spec.selector.matchLabels = { app };
    spec.template.metadata.labels = { app };
    return d;
  };
  const claim = (storageClassName: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: ns },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '1Gi' } } },
  });
  // No provisioner binds these claims (kwok's cluster has none): Helm 4's watcher would wait for
  // them to be Bound, as `helm --wait` does; `legacy` waits for the workloads only, which is what
  // these cases are about. The watcher's claim rule has its own test (src/apply/install.test.ts).
  const request = (objects: KubeObject[], extra: Partial<ApplyRequest> = {}): ApplyRequest => ({ owner, release, objects, chart: { name: 'op', version: '1.0.0' }, healthTimeoutMs: 60_000, waitStrategy: 'legacy', ...extra });

  before(async () => {
    client = await e2eClient();
    applier = releaseEngine(client, { logger, pollIntervalMs: 250 });
  });
  after(async () => {
    await kubectl('delete', 'namespace', ns, '--ignore-not-found', '--wait=false').catch(() => '');
    client.close();
  });

  test('a changed Deployment selector is refused without force, naming force; with force the Deployment is re-created and the upgrade deployed', async () => {
    const first = await applier.apply(request([namespace(ns), serviceAccount(ns, 'op'), withSelector('one'), claim('slow')]));
    assert.equal(first.status, 'deployed', first.message);
    const before = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'op' });

    const refused = await applier.apply(request([namespace(ns), serviceAccount(ns, 'op'), withSelector('two'), claim('slow')])).catch((err: unknown) => err);
    assert.ok(refused instanceof ApplyRefusedError, String(refused));
    assert.match(refused.message, /Deployment .*op.*immutable/);
    assert.match(refused.message, /an upgrade with force deletes and re-creates it/);
    assert.deepEqual((await applier.history(release)).map((r) => r.revision), [1], 'nothing recorded');

    const forced = await applier.apply(request([namespace(ns), serviceAccount(ns, 'op'), withSelector('two'), claim('slow')], { force: true }));
    assert.equal(forced.status, 'deployed', forced.message);
    assert.equal(forced.revision, 2);
    const after = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'op' });
    assert.notEqual(after.metadata.uid, before.metadata.uid, 'a new Deployment');
    assert.deepEqual((after.spec as { selector: unknown }).selector, { matchLabels: { app: 'two' } });
    assert.equal(after.metadata.labels?.['binnacle.dev/owner-name'], ns, 'with our marks');
    const listed = JSON.parse(await helm('history', 'op', '-n', ns, '-o', 'json')) as { revision: number; status: string }[];
    assert.deepEqual(listed.map((r) => [r.revision, r.status]), [[1, 'superseded'], [2, 'deployed']]);
  });

  test('force never replaces a PersistentVolumeClaim: the change is refused, saying its data would go', async () => {
    const claimBefore = await client.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: ns, name: 'data' });
    const refused = await applier.apply(request([namespace(ns), serviceAccount(ns, 'op'), withSelector('two'), claim('fast')], { force: true })).catch((err: unknown) => err);
    assert.ok(refused instanceof ApplyRefusedError, String(refused));
    assert.match(refused.message, /PersistentVolumeClaim .*data.*a PersistentVolumeClaim is never replaced: deleting it would delete its data/s);
    const claimAfter = await client.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: ns, name: 'data' });
    assert.equal(claimAfter.metadata.uid, claimBefore.metadata.uid, 'the claim is untouched');
    assert.deepEqual((await applier.history(release)).map((r) => r.revision), [1, 2]);
  });

  test('rollback with force re-creates the Deployment with revision 1 selector', async () => {
    const back = await applier.rollback({ release, toRevision: 1, healthTimeoutMs: 60_000, force: true, waitStrategy: 'legacy' });
    assert.equal(back.status, 'deployed', back.message);
    const live = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'op' });
    assert.deepEqual((live.spec as { selector: unknown }).selector, { matchLabels: { app: 'one' } });
    assert.equal((await applier.history(release)).findLast((r) => r.status === 'deployed')?.description, 'Rollback to 1');
  });
});

describe("applier e2e: an update strategy switched over what the API server filled in", () => {
  let client: KubeClient;
  let applier: ReturnType<typeof releaseEngine>;
  const ns = uniqueName('strategy');
  const owner = { kind: 'ClusterExtension', name: ns };
  const release = { name: 'op', namespace: ns };
  const withStrategy = (strategy: Record<string, unknown> | undefined): KubeObject => {
    const d = deployment(ns, 'op');
    if (strategy !== undefined) (d.spec as Record<string, unknown>).strategy = strategy;
    return d;
  };
  const statefulSet = (updateStrategy: Record<string, unknown> | undefined): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: ns },
    spec: {
      serviceName: 'db',
      replicas: 1,
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'registry.example/db:1' }] } },
      ...(updateStrategy === undefined ? {} : { updateStrategy }),
    },
  });
  const objects = (d: Record<string, unknown> | undefined, s: Record<string, unknown> | undefined): KubeObject[] => [namespace(ns), serviceAccount(ns, 'op'), withStrategy(d), statefulSet(s)];
  const request = (objs: KubeObject[]): ApplyRequest => ({ owner, release, objects: objs, chart: { name: 'op', version: '1.0.0' }, healthTimeoutMs: 60_000, waitStrategy: 'legacy' });
  const liveStrategies = async (): Promise<[unknown, unknown]> => [
    JSON.parse(await kubectl('get', 'deployment', 'op', '-n', ns, '-o', 'jsonpath={.spec.strategy}')),
    JSON.parse(await kubectl('get', 'statefulset', 'db', '-n', ns, '-o', 'jsonpath={.spec.updateStrategy}')),
  ];

  before(async () => {
    client = await e2eClient();
    applier = releaseEngine(client, { logger, pollIntervalMs: 250 });
  });
  after(async () => {
    await kubectl('delete', 'namespace', ns, '--ignore-not-found', '--wait=false').catch(() => '');
    client.close();
  });

  test('installed without strategies, the API server fills in rollingUpdate; an apply of Recreate alone is refused for it (the case this is about)', async () => {
    const first = await applier.apply(request(objects(undefined, undefined)));
    assert.equal(first.status, 'deployed', first.message);
    assert.deepEqual(await liveStrategies(), [
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    ]);
    const alone = await client.apply(withStrategy({ type: 'Recreate' }), { dryRun: true, force: true }).catch((err: unknown) => err);
    assert.match(String(alone), /rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'/);
  });

  test('a switch decided on another object of the name (its uid) is refused by the API server (422, uid immutable), answered as a conflict, and the live strategy kept', async () => {
    const live = await client.find(refOf(withStrategy(undefined)));
    const patch = unionSwitchPatch(live, withStrategy({ type: 'Recreate' }));
    assert.equal(patch?.metadata?.uid, live?.metadata.uid, 'the switch is conditional on the object read');
    assert.ok(patch !== undefined);
    const elsewhere = { ...patch, metadata: { uid: '00000000-0000-4000-8000-000000000000' } };
    await assert.rejects(switchUnion(client, withStrategy({ type: 'Recreate' }), elsewhere), (err: Error & { statusCode?: number }) => err.statusCode === 409 && /not the object the strategy switch was decided on/.test(err.message));
    assert.deepEqual((await liveStrategies())[0], { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
  });

  test("a plan of the switch lists the switched fields (not '(could not dry-run)'); a type the API server does not know is refused by name before anything changes", async () => {
    const planned = await compareWithCluster(client, [withStrategy({ type: 'Recreate' })], 'op', ns);
    const dep = planned.objects.find((o) => o.kind === 'Deployment');
    assert.equal(dep?.action, 'update');
    const changes = dep?.changes ?? [];
    assert.ok(changes.includes('spec.strategy.type') && changes.includes('spec.strategy.rollingUpdate'), JSON.stringify(changes));
    assert.ok(!changes.includes('(could not dry-run)'), JSON.stringify(changes));

    const refused = await applier.apply(request(objects({ type: 'Recreat' }, undefined))).catch((err: unknown) => err);
    assert.ok(refused instanceof ApplyRefusedError, String(refused));
    assert.match(refused.message, /Deployment .*op.*spec\.strategy: Unsupported value: \{"Type":"Recreat"/);
    assert.deepEqual((await applier.history(release)).map((r) => r.revision), [1], 'nothing recorded');
    assert.deepEqual((await liveStrategies())[0], { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } }, 'the live strategy untouched');
  });

  test('an upgrade to Recreate and OnDelete is deployed: the type switched and the filled-in member dropped first, the same objects kept (not replaced), helm sees revision 2', async () => {
    const before = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'op' });
    const res = await applier.apply(request(objects({ type: 'Recreate' }, { type: 'OnDelete' })));
    assert.equal(res.status, 'deployed', res.message);
    assert.equal(res.revision, 2);
    assert.deepEqual(await liveStrategies(), [{ type: 'Recreate' }, { type: 'OnDelete' }]);
    const after = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'op' });
    assert.equal(after.metadata.uid, before.metadata.uid, 'switched in place');
    const listed = JSON.parse(await helm('history', 'op', '-n', ns, '-o', 'json')) as { revision: number; status: string }[];
    assert.deepEqual(listed.map((r) => [r.revision, r.status]), [[1, 'superseded'], [2, 'deployed']]);
  });

  test('drift back to RollingUpdate by hand is repaired to Recreate; a rollback to revision 1 restores the default strategy', async () => {
    await kubectl('patch', 'deployment', 'op', '-n', ns, '--type=merge', '-p', '{"spec":{"strategy":{"type":"RollingUpdate"}}}');
    assert.deepEqual((await liveStrategies())[0], { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } }, 'the API server filled it in again');
    const repaired = await applier.apply(request(objects({ type: 'Recreate' }, { type: 'OnDelete' })));
    assert.equal(repaired.status, 'deployed', repaired.message);
    assert.equal(repaired.revision, 2, 'a repair, no new revision');
    assert.deepEqual(await liveStrategies(), [{ type: 'Recreate' }, { type: 'OnDelete' }]);

    const back = await applier.rollback({ release, toRevision: 1, healthTimeoutMs: 60_000, waitStrategy: 'legacy' });
    assert.equal(back.status, 'deployed', back.message);
    assert.deepEqual(await liveStrategies(), [
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    ]);
  });
});

describe('Helm v4 itself on the same switch (a witness, for docs/helm4.md)', () => {
  const ns = uniqueName('helm4-switch');
  let chart = '';

  before(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'helm4-switch-'));
    chart = join(dir, 'switch');
    await mkdir(join(chart, 'templates'), { recursive: true });
    await writeFile(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: switch\nversion: 0.1.0\n');
    // The Deployment of the applier's case, its strategy set only when asked.
    await writeFile(
      join(chart, 'templates', 'deployment.yaml'),
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op\nspec:\n  replicas: 1\n  {{- if .Values.recreate }}\n  strategy:\n    type: Recreate\n  {{- end }}\n  selector:\n    matchLabels: {app: op}\n  template:\n    metadata:\n      labels: {app: op}\n    spec:\n      containers:\n        - name: manager\n          image: registry.example/op:1\n',
    );
    await kubectl('create', 'namespace', ns);
  });
  after(async () => {
    await kubectl('delete', 'namespace', ns, '--ignore-not-found', '--wait=false').catch(() => '');
    if (chart !== '') await rm(join(chart, '..'), { recursive: true, force: true });
  });

  test('installed by helm v4 (server-side apply, its default), the upgrade to Recreate fails on the filled-in member and is recorded failed; by client-side apply it is deployed', async () => {
    assert.match(await helm('version', '--short'), /^v4\./);
    await helm('install', 'op', chart, '-n', ns);
    const failed = await helm('upgrade', 'op', chart, '-n', ns, '--set', 'recreate=true').then(
      () => '',
      (err: unknown) => String((err as { stderr?: unknown }).stderr ?? err),
    );
    assert.match(failed, /UPGRADE FAILED: server-side apply failed .*spec\.strategy\.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'/);
    const history = JSON.parse(await helm('history', 'op', '-n', ns, '-o', 'json')) as { revision: number; status: string }[];
    assert.deepEqual(history.map((r) => [r.revision, r.status]), [[1, 'deployed'], [2, 'failed']]);
    assert.equal(await kubectl('get', 'deployment', 'op', '-n', ns, '-o', 'jsonpath={.spec.strategy.type}'), 'RollingUpdate', 'the live object unchanged');
    // Helm 3's way, still in Helm 4: a three-way strategic merge patch clears the member (retainKeys).
    await helm('upgrade', 'op', chart, '-n', ns, '--set', 'recreate=true', '--server-side=false');
    assert.equal(await kubectl('get', 'deployment', 'op', '-n', ns, '-o', 'jsonpath={.spec.strategy}'), '{"type":"Recreate"}');
  });
});
