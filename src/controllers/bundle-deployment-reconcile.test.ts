/**
 * The BundleDeployment reconciler's steps over the one fake cluster with the release engine's
 * real operations: each step's success and failure branches, who each thing is done as, one
 * status write per reconcile (none when nothing changed), the trusted history and the decision
 * made before anything is rendered. Unpacking, rendering, certificates, the permission check,
 * Events and the clock are ports the tests answer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { HELM_AT_WORK_MS, RECORD_OWNER_UID_LABEL, ReleaseRecords, revisionFromSecret, revisionRecordSecret } from '../apply/index.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { API_VERSION, FINALIZER_CLEANUP, type BundleDeployment } from '../api/types.js';
import { Crash, FakeCluster, faults } from '../kube/fake-cluster.test-helper.js';
import { KubeApiError } from '../kube/errors.js';
import type { Condition, KubeObject } from '../kube/types.js';
import type { RenderContext, RenderedBundle } from '../render/index.js';
import type { WebhookCerts } from '../render/webhook-certs.js';
import type { UnpackedSource, UnpackOptions } from '../source/index.js';
import { TerminalError } from '../util/errors.js';
import { SignatureVerificationError } from '../oci/index.js';
import { revisionDigest } from '../apply/release-chunked.js';
import { ANNOTATION_ORPHAN_ON_DELETE, BundleDeploymentReconciler, type BundleDeploymentPorts } from './bundle-deployment.js';
import type { MissingPermission } from '../apply/preflight-permissions.js';

const logger = pino({ level: 'silent' });
const MANAGER = 'manager';
const SA_USER = 'system:serviceaccount:team-a:installer';
const DIGEST = 'sha256:' + 'a'.repeat(64);
const SYSTEM = 'binnacle-system';
const BD = { apiVersion: API_VERSION, kind: 'BundleDeployment', name: 'op' };

const settings = (data: Record<string, string> = { a: '1' }): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'settings' }, data });
const deployment = (image = 'op:1'): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: 'team-a', name: 'op' }, spec: { replicas: 1, template: { spec: { containers: [{ name: 'op', image }] } } } });

function renderedOf(objects: KubeObject[]): RenderedBundle {
  return { objects, chart: { name: 'op', version: '1.0.0' } };
}

/** Everything the ports saw, and what they answer; the cluster is the one fake. */
class FakeWorld {
  readonly cluster = new FakeCluster();
  readonly records: ReleaseRecords;
  readonly unpacks: UnpackOptions[] = [];
  readonly renders: RenderContext[] = [];
  readonly preflights: { who: string; sa: string }[] = [];
  readonly events: { type: string; reason: string; message: string }[] = [];
  now = Date.now();
  healthTimeoutMs = 200;
  unpack: () => Promise<UnpackedSource> = () => Promise.resolve({ dir: '/cache/trees/a', digest: DIGEST, resolved: { type: 'configMaps' } });
  render: (ctx: RenderContext) => Promise<RenderedBundle> = () => Promise.resolve(renderedOf([settings()]));
  certs: () => Promise<WebhookCerts | undefined> = () => Promise.resolve(undefined);
  missing: () => Promise<MissingPermission[]> = () => Promise.resolve([]);

  constructor() {
    this.records = new ReleaseRecords({ client: this.cluster.client({ user: MANAGER }), namespace: SYSTEM, logger, now: () => new Date(this.now) });
  }

  ports(): Partial<BundleDeploymentPorts> {
    return {
      unpack: (_source, opts) => {
        this.unpacks.push(opts);
        return this.unpack();
      },
      render: (_format, ctx) => {
        this.renders.push(ctx);
        return this.render(ctx);
      },
      webhookCerts: () => this.certs(),
      missingPermissions: (_client, sa) => {
        this.preflights.push({ who: MANAGER, sa: `${sa.namespace}/${sa.name}` });
        return this.missing();
      },
      recordEvent: (_obj, type, reason, message) => {
        this.events.push({ type, reason, message });
        return Promise.resolve();
      },
      now: () => this.now,
    };
  }

  reconciler(): BundleDeploymentReconciler {
    return new BundleDeploymentReconciler({ client: this.cluster.client({ user: MANAGER }), engine: { records: this.records, pollIntervalMs: 10 }, cacheDir: '/cache', resyncMs: 600_000, healthTimeoutMs: this.healthTimeoutMs, ports: this.ports() });
  }

  bd(): BundleDeployment {
    const bd = this.cluster.get(BD);
    assert.ok(bd !== undefined);
    return bd as BundleDeployment;
  }

  /** Every object applied (not status), as whom. */
  applies(kind?: string): string[] {
    return this.cluster.applied.filter((a) => kind === undefined || a.obj.kind === kind).map((a) => `${a.obj.kind} ${a.obj.metadata.name ?? ''} as ${a.identity}`);
  }

  statusWrites(): number {
    return this.cluster.log.filter((r) => r.verb === 'status' && r.kind === 'BundleDeployment').length;
  }

  /** The trusted history's revisions and statuses. */
  history(): [number, string][] {
    return this.cluster
      .all('Secret', SYSTEM)
      .filter((x) => x.metadata.labels?.[RECORD_OWNER_UID_LABEL] === 'u1')
      .map((x) => [Number(x.metadata.labels?.version), x.metadata.labels?.status ?? ''] as [number, string])
      .sort((a, b) => a[0] - b[0]);
  }

  live(kind: string, name: string, apiVersion = 'v1'): KubeObject | undefined {
    return this.cluster.get({ apiVersion, kind, namespace: 'team-a', name });
  }

  /** Marks the BundleDeployment deleted (its finalizer holds it). */
  delete(annotations?: Record<string, string>): void {
    const bd = this.bd();
    this.cluster.put({ ...bd, metadata: { ...bd.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', ...(annotations === undefined ? {} : { annotations }) } });
  }
}

type Spec = BundleDeployment['spec'];

/** A BundleDeployment `op` as written: `spec` overrides fields of a good one (`format` with any string, as an older CRD's schema let in). */
function setup(opts: { spec?: Partial<Omit<Spec, 'format'>> & { format?: string }; metadata?: Partial<BundleDeployment['metadata']>; serviceAccount?: boolean; status?: BundleDeployment['status'] } = {}): FakeWorld {
  const w = new FakeWorld();
  for (const ns of ['team-a', SYSTEM]) w.cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  w.cluster.put(crdOf({ group: 'binnacle.dev', kind: 'BundleDeployment', plural: 'bundledeployments' }, {}, { scope: 'Cluster', version: 'v1alpha1' }));
  if (opts.serviceAccount !== false) w.cluster.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'team-a', name: 'installer' } });
  const bd: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name: 'op', uid: 'u1', finalizers: [FINALIZER_CLEANUP], ...opts.metadata },
    spec: {
      source: { type: 'configMaps', configMaps: [{ namespace: 'team-a', name: 'op-bundle', path: 'manifests' }] },
      format: 'plain',
      installNamespace: 'team-a',
      serviceAccount: { name: 'installer' },
      ...opts.spec,
    },
    ...(opts.status === undefined ? {} : { status: opts.status }),
  };
  w.cluster.put(bd);
  return w;
}

const req = { key: 'op', name: 'op' };
const ctx = { logger, signal: new AbortController().signal };

function conditionOf(w: FakeWorld, type: string): Condition | undefined {
  const status = w.bd().status;
  return status?.conditions?.find((c) => c.type === type);
}

function lastStatus(w: FakeWorld): Record<string, unknown> {
  const s = w.bd().status;
  assert.ok(s !== undefined, 'a status was written');
  return s as Record<string, unknown>;
}

describe('BundleDeployment reconciler over the fake cluster and the real release engine', () => {
  describe('success, and one status write', () => {
    test('a BundleDeployment is unpacked, rendered, checked and applied as its ServiceAccount; status is written once, with what was applied', async () => {
      const w = setup({ metadata: { finalizers: [] } });
      const result = await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(result, { requeueAfterMs: 600_000 }, 'a healthy install is looked at again at the resync period');
      assert.deepEqual(w.bd().metadata.finalizers, [FINALIZER_CLEANUP], 'HandleFinalizer adds the cleanup finalizer');
      assert.deepEqual(w.applies(), [`ConfigMap settings as ${SA_USER}`], 'applied as the ServiceAccount, never as Binnacle');
      const live = w.live('ConfigMap', 'settings');
      assert.deepEqual([live?.metadata.labels?.['binnacle.dev/owner-kind'], live?.metadata.labels?.['binnacle.dev/owner-name'], live?.metadata.annotations?.['meta.helm.sh/release-name']], ['BundleDeployment', 'op', 'op']);
      assert.equal(w.renders[0]?.client !== undefined, true, 'the renderer sees the cluster (as the ServiceAccount)');
      assert.equal(w.unpacks[0]?.secrets?.identity, 'service account team-a/installer', "the source's Secrets are read as the ServiceAccount");
      assert.deepEqual(w.preflights, [{ who: MANAGER, sa: 'team-a/installer' }]);
      assert.equal(w.statusWrites(), 1, 'one status write per reconcile');
      const status = lastStatus(w);
      assert.equal(status.contentDigest, DIGEST);
      assert.deepEqual(status.resolvedSource, { type: 'configMaps' });
      assert.equal(status.revision, 1);
      assert.deepEqual(status.appliedObjects, [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'settings' }]);
      assert.equal(status.observedGeneration, 1);
      assert.equal(conditionOf(w, 'Unpacked')?.reason, 'UnpackSucceeded');
      assert.deepEqual([conditionOf(w, 'Installed')?.status, conditionOf(w, 'Installed')?.reason, conditionOf(w, 'Installed')?.message], ['True', 'Succeeded', 'revision 1 of op 1.0.0 installed']);
      assert.deepEqual([conditionOf(w, 'Healthy')?.status, conditionOf(w, 'Healthy')?.reason], ['True', 'Healthy']);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason], ['False', 'Succeeded']);
      assert.deepEqual(w.history(), [[1, 'deployed']], "the history is kept in the manager's namespace");
    });

    test('a second identical reconcile renders nothing (the decision comes first: a repair), and writes no status; drift is repaired and said', async () => {
      const w = setup();
      const r = w.reconciler();
      await r.reconcile(req, ctx);
      // The first repair says it found no drift (the install said it applied the revision); after that, nothing changes.
      await r.reconcile(req, ctx);
      assert.equal(conditionOf(w, 'Drifted')?.reason, 'NoDrift');
      const writes = w.statusWrites();
      await r.reconcile(req, ctx);
      assert.equal(w.renders.length, 1, 'rendered once: the other reconciles repaired the recorded revision');
      assert.equal(w.statusWrites(), writes, 'its status was unchanged, so not written');
      w.cluster.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'settings' });
      await r.reconcile(req, ctx);
      assert.equal(w.renders.length, 1);
      assert.notEqual(w.live('ConfigMap', 'settings'), undefined, 'the deleted object is back');
      assert.deepEqual([conditionOf(w, 'Drifted')?.reason, conditionOf(w, 'Drifted')?.message], ['DriftRepaired', 'drift repaired: ConfigMap team-a/settings: missing']);
      assert.deepEqual(w.history(), [[1, 'deployed']]);
    });

    test('a changed spec (new generation) is written again, once; a spec change that changes the render is an upgrade', async () => {
      const w = setup();
      const r = w.reconciler();
      await r.reconcile(req, ctx);
      const bd = w.bd();
      w.cluster.put({ ...bd, spec: { ...bd.spec, config: { env: [{ name: 'A', value: '1' }] } } });
      // A new bundle: an upgrade is due.
      w.unpack = () => Promise.resolve({ dir: '/cache/trees/b', digest: `sha256:${'b'.repeat(64)}`, resolved: { type: 'configMaps' } });
      w.render = () => Promise.resolve(renderedOf([settings({ a: '2' })]));
      await r.reconcile(req, ctx);
      assert.equal(w.statusWrites(), 2);
      assert.equal(lastStatus(w).observedGeneration, 2);
      assert.deepEqual(w.history(), [
        [1, 'superseded'],
        [2, 'deployed'],
      ]);
    });

    test("an OLM v1 ClusterExtension's bundle takes over, in place, what operator-controller installed for that very ClusterExtension (the uid its twin recorded; the ClusterExtension is not read); another uid's object is refused", async () => {
      const installedByOlm = (uid: string): KubeObject => ({
        ...settings(),
        metadata: {
          namespace: 'team-a',
          name: 'settings',
          labels: { 'olm.operatorframework.io/owner-kind': 'ClusterExtension', 'olm.operatorframework.io/owner-name': 'ext' },
          ownerReferences: [{ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'ext', uid, controller: true }],
        },
      });
      const w = setup({ spec: { olmv1Owner: 'ext', olmv1OwnerUID: 'ce-uid' } });
      w.cluster.put(installedByOlm('ce-uid'));
      await w.reconciler().reconcile(req, ctx);
      assert.deepEqual([conditionOf(w, 'Installed')?.status, conditionOf(w, 'Installed')?.reason], ['True', 'Succeeded']);
      assert.equal(w.live('ConfigMap', 'settings')?.metadata.labels?.['binnacle.dev/owner-name'], 'op', "taken over: Binnacle's marks");
      assert.deepEqual(w.cluster.log.filter((r) => r.kind === 'ClusterExtension'), [], 'the ClusterExtension was not read');
      const other = setup({ spec: { olmv1Owner: 'ext', olmv1OwnerUID: 'ce-uid' } });
      other.cluster.put(installedByOlm('a-namesake-made-since'));
      await other.reconciler().reconcile(req, ctx);
      assert.deepEqual([conditionOf(other, 'Installed')?.status, conditionOf(other, 'Installed')?.reason], ['False', 'Refused']);
      assert.match(conditionOf(other, 'Installed')?.message ?? '', /ConfigMap team-a\/settings/);
      assert.equal(other.live('ConfigMap', 'settings')?.metadata.labels?.['binnacle.dev/owner-name'], undefined, 'not taken');
    });

    test('without a ServiceAccount, Binnacle installs as itself and no permission preflight runs', async () => {
      const w = setup({ spec: { serviceAccount: undefined } });
      await w.reconciler().reconcile(req, ctx);
      assert.equal(w.preflights.length, 0);
      assert.deepEqual(w.applies(), [`ConfigMap settings as ${MANAGER}`]);
      assert.match(w.unpacks[0]?.secrets?.identity ?? '', /^Binnacle's own service account/);
    });
  });

  describe('HandleFinalizer', () => {
    test('failure: adding the finalizer conflicts; the error is said in the one status write and thrown for backoff', async () => {
      const w = setup({ metadata: { finalizers: [] } });
      w.cluster.inject({ verb: 'patch', kind: 'BundleDeployment', error: faults.conflict });
      await assert.rejects(w.reconciler().reconcile(req, ctx), /the object has been modified/);
      assert.equal(w.statusWrites(), 1);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason], ['True', 'Retrying']);
      assert.equal(w.unpacks.length, 0, 'nothing after the failing step ran');
    });

    test('deleting: what the history says it installed (its webhook certificates among them) is uninstalled as the ServiceAccount, the history removed, the finalizer removed, no status written', async () => {
      const w = setup();
      const certs: WebhookCerts = { serving: {}, fallback: { caPem: '', certPem: '', keyPem: '' }, secret: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'op-binnacle-webhook-certs', namespace: 'team-a' }, data: {} }, digest: 'sha256:certs', issued: true };
      w.certs = () => Promise.resolve(certs);
      w.render = (rctx) => Promise.resolve(renderedOf([settings(), ...(rctx.certs?.secret === undefined ? [] : [rctx.certs.secret])]));
      await w.reconciler().reconcile(req, ctx);
      assert.notEqual(w.live('Secret', 'op-binnacle-webhook-certs'), undefined, 'the certificates are an object of the release');
      w.delete();
      const writes = w.statusWrites();
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.deepEqual(
        w.cluster.log.filter((r) => r.verb === 'delete' && r.namespace === 'team-a' && !r.name.startsWith('sh.helm')).map((r) => `${r.kind} ${r.name} as ${r.identity}`).sort(),
        [`ConfigMap settings as ${SA_USER}`, `Secret op-binnacle-webhook-certs as ${SA_USER}`],
      );
      assert.deepEqual(w.history(), [], 'the trusted history is removed');
      assert.equal(w.live('Secret', 'sh.helm.release.v1.op.v1'), undefined, 'and its mirror');
      assert.equal(w.cluster.get(BD), undefined, 'the finalizer went');
      assert.equal(w.statusWrites(), writes);
    });

    test("deleting: Helm records of another owner under the release's name are left in place, and their objects; the finalizer still goes", async () => {
      const w = setup();
      w.cluster.put(revisionRecordSecret({ name: 'op', namespace: 'team-a', version: 1, status: 'deployed', description: '', firstDeployed: '', lastDeployed: '', chart: { name: 'x', version: '1' }, config: {}, manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: theirs\n' }, { kind: 'ClusterExtension', name: 'other' }, new Date(), 'created'));
      w.cluster.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'theirs', labels: { 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'other' } } });
      w.delete();
      await w.reconciler().reconcile(req, ctx);
      assert.notEqual(w.live('ConfigMap', 'theirs'), undefined);
      assert.notEqual(w.live('Secret', 'sh.helm.release.v1.op.v1'), undefined);
      assert.equal(w.cluster.get(BD), undefined);
    });

    test('deleting with the ServiceAccount gone and Binnacle forbidden: ServiceAccountGone, finalizer kept, looked at again in a minute, one status write', async () => {
      const w = setup();
      await w.reconciler().reconcile(req, ctx);
      w.cluster.remove({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'team-a', name: 'installer' });
      w.cluster.inject({ verb: 'delete', identity: MANAGER, kind: 'ConfigMap', error: () => new KubeApiError(403, 'Forbidden', 'configmaps "settings" is forbidden'), times: Infinity });
      w.delete();
      const writes = w.statusWrites();
      const result = await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(result, { requeueAfterMs: 60_000 });
      assert.deepEqual(w.cluster.log.filter((r) => r.verb === 'delete' && r.kind === 'ConfigMap').map((r) => r.identity), [MANAGER], 'with the account gone, removal falls back to Binnacle');
      assert.deepEqual(w.bd().metadata.finalizers, [FINALIZER_CLEANUP]);
      assert.equal(w.statusWrites(), writes + 1);
      const c = conditionOf(w, 'Progressing');
      assert.deepEqual([c?.status, c?.reason], ['False', 'ServiceAccountGone']);
      assert.match(c?.message ?? '', /service account installer in namespace team-a is gone.*configmaps "settings" is forbidden/);
      assert.match(c?.message ?? '', new RegExp(`${ANNOTATION_ORPHAN_ON_DELETE}: "true"`));
      assert.deepEqual(lastStatus(w).appliedObjects, [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'settings' }], 'what it installed stays in status');
    });

    test('deleting with the ServiceAccount present but not allowed: RemovalForbidden, finalizer kept', async () => {
      const w = setup();
      await w.reconciler().reconcile(req, ctx);
      w.cluster.inject({ verb: 'delete', identity: SA_USER, kind: 'ConfigMap', error: () => new KubeApiError(403, 'Forbidden', 'configmaps "settings" is forbidden'), times: Infinity });
      w.delete();
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.equal(conditionOf(w, 'Progressing')?.reason, 'RemovalForbidden');
      assert.match(conditionOf(w, 'Progressing')?.message ?? '', /service account team-a\/installer is not allowed/);
      assert.deepEqual(w.bd().metadata.finalizers, [FINALIZER_CLEANUP]);
    });

    test('deleting: an uninstall that fails otherwise (the API server) is said in status and thrown; the finalizer stays', async () => {
      const w = setup();
      await w.reconciler().reconcile(req, ctx);
      w.cluster.inject({ verb: 'delete', kind: 'ConfigMap', error: () => new KubeApiError(503, 'ServiceUnavailable', 'etcd leader changed') });
      w.delete();
      await assert.rejects(w.reconciler().reconcile(req, ctx), /etcd leader changed/);
      assert.deepEqual([conditionOf(w, 'Progressing')?.reason, conditionOf(w, 'Progressing')?.message], ['Retrying', 'etcd leader changed']);
      assert.deepEqual(w.bd().metadata.finalizers, [FINALIZER_CLEANUP]);
    });

    test('deleting with orphan-on-delete: nothing is uninstalled, an Orphaned event lists what stays, the finalizer goes, no status written', async () => {
      const w = setup();
      await w.reconciler().reconcile(req, ctx);
      w.delete({ [ANNOTATION_ORPHAN_ON_DELETE]: 'true' });
      const writes = w.statusWrites();
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.notEqual(w.live('ConfigMap', 'settings'), undefined);
      assert.equal(w.events.length, 1);
      assert.deepEqual([w.events[0]?.type, w.events[0]?.reason], ['Warning', 'Orphaned']);
      assert.match(w.events[0]?.message ?? '', /ConfigMap team-a\/settings/);
      assert.equal(w.cluster.get(BD), undefined);
      assert.equal(w.statusWrites(), writes);
    });

    test('deleting without the cleanup finalizer: nothing is done and nothing written', async () => {
      const w = setup({ metadata: { finalizers: ['someone-else'], deletionTimestamp: '2026-01-01T00:00:00Z' } });
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.equal(w.cluster.log.filter((r) => r.verb !== 'get').length, 0);
    });
  });

  describe('Validate', () => {
    test('failure: a spec with problems is InvalidSpec naming each, nothing is unpacked, and it waits for a new spec', async () => {
      const w = setup({ spec: { format: 'zip', installNamespace: '' } });
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.equal(w.unpacks.length, 0);
      const c = conditionOf(w, 'Progressing');
      assert.deepEqual([c?.status, c?.reason, c?.message], ['False', 'InvalidSpec', 'spec.format: unknown format "zip"; spec.installNamespace: required']);
      assert.equal(w.statusWrites(), 1);
    });

    test("failure: the manager's own namespace is neither installed into nor watched, from any field (a Role there reaches the manager's identity and records)", async () => {
      for (const spec of [{ installNamespace: SYSTEM }, { watchNamespace: SYSTEM }, { watchNamespaces: ['team-b', SYSTEM] }, { bundleConfig: { watchNamespace: SYSTEM } }]) {
        const w = setup({ spec: { format: 'registry+v1', ...spec } });
        assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
        assert.equal(w.unpacks.length, 0, JSON.stringify(spec));
        const c = conditionOf(w, 'Progressing');
        const field = Object.keys(spec)[0] === 'bundleConfig' ? 'spec.bundleConfig.watchNamespace' : Object.keys(spec)[0] === 'watchNamespaces' ? 'spec.watchNamespaces[1]' : `spec.${Object.keys(spec)[0] ?? ''}`;
        assert.deepEqual([c?.status, c?.reason], ['False', 'InvalidSpec'], JSON.stringify(spec));
        assert.ok((c?.message ?? '').includes(`${field}: "${SYSTEM}" is Binnacle's own namespace`), c?.message);
        assert.equal(w.cluster.all('Secret', SYSTEM).length, 0, 'no release record written');
      }
    });
  });

  describe('Unpack', () => {
    test('failure: an unpack error is Unpacked=False UnpackFailed, Progressing Retrying, said once and thrown for backoff', async () => {
      const w = setup();
      w.unpack = () => Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'configmaps unavailable'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), /configmaps unavailable/);
      assert.equal(w.renders.length, 0);
      assert.equal(w.statusWrites(), 1);
      assert.deepEqual([conditionOf(w, 'Unpacked')?.status, conditionOf(w, 'Unpacked')?.reason, conditionOf(w, 'Unpacked')?.message], ['False', 'UnpackFailed', 'configmaps unavailable']);
      assert.equal(conditionOf(w, 'Progressing')?.message, 'unpacking: configmaps unavailable', "the step's own message, not overwritten by the catch-all");
    });

    test('failure: a terminal unpack error (the source can never be read) stops without a retry', async () => {
      const w = setup();
      w.unpack = () => Promise.reject(new TerminalError('SourceDenied', "sources that read this machine's files are not allowed here"));
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.equal(w.renders.length, 0);
      assert.equal(conditionOf(w, 'Unpacked')?.reason, 'UnpackFailed');
      assert.equal(w.statusWrites(), 1);
    });
  });

  describe('Render', () => {
    test('success: the renderer gets the unpacked tree, the certificates made before it, and the next revision number from the history', async () => {
      const w = setup();
      await w.reconciler().reconcile(req, ctx);
      const bd = w.bd();
      w.cluster.put({ ...bd, spec: { ...bd.spec, values: { x: 1 } } });
      await w.reconciler().reconcile(req, ctx);
      assert.equal(w.renders[1]?.dir, '/cache/trees/a');
      assert.equal(w.renders[1]?.digest, DIGEST);
      assert.equal(w.renders[1]?.revision, 2);
    });

    test('failure: an invalid bundle is Installed=False InvalidBundle and Progressing Blocked; not retried until the spec changes', async () => {
      const w = setup();
      w.render = () => Promise.reject(new TerminalError('InvalidBundle', 'CRD x needs a conversion webhook'));
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.deepEqual(w.cluster.applied, []);
      assert.deepEqual([conditionOf(w, 'Installed')?.reason, conditionOf(w, 'Installed')?.message], ['InvalidBundle', 'CRD x needs a conversion webhook']);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason], ['False', 'Blocked']);
      assert.equal(lastStatus(w).contentDigest, DIGEST, 'what was unpacked is in status');
      assert.equal(w.statusWrites(), 1);
    });

    test('failure: a configuration the bundle refuses (OLM v1 rules) is InvalidConfiguration on both conditions, terminal, in the renderer\'s words', async () => {
      const w = setup();
      const message = 'invalid ClusterExtension configuration: invalid configuration: unknown field "watchNamespace"';
      w.render = () => Promise.reject(new TerminalError('InvalidConfiguration', message));
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined, 'not retried until the spec changes');
      assert.deepEqual(w.cluster.applied, []);
      assert.deepEqual([conditionOf(w, 'Installed')?.status, conditionOf(w, 'Installed')?.reason, conditionOf(w, 'Installed')?.message], ['False', 'InvalidConfiguration', message]);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason, conditionOf(w, 'Progressing')?.message], ['False', 'InvalidConfiguration', message]);
    });

    test('failure: the API server failing while rendering is Progressing Retrying, thrown for backoff, not a verdict on the bundle', async () => {
      const w = setup();
      w.render = () => Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'list Secret team-a'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), /list Secret team-a/);
      assert.equal(conditionOf(w, 'Installed'), undefined);
      assert.deepEqual([conditionOf(w, 'Progressing')?.reason, conditionOf(w, 'Progressing')?.message], ['Retrying', 'rendering: list Secret team-a (retrying)']);
      assert.equal(w.statusWrites(), 1);
    });

    test('failure: an unexpected render bug is InvalidBundle in status and thrown', async () => {
      const w = setup();
      w.render = () => Promise.reject(new TypeError('cannot read properties of undefined'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), TypeError);
      assert.equal(conditionOf(w, 'Installed')?.reason, 'InvalidBundle');
      assert.equal(conditionOf(w, 'Progressing')?.reason, 'Blocked', 'the step said it; the catch-all does not overwrite it');
      assert.equal(w.statusWrites(), 1);
    });

    test('certificates: the same certificates are a repair (nothing rendered); new ones (renewed near expiry) are an upgrade', async () => {
      const w = setup();
      let digest = 'sha256:certs-1';
      w.certs = () => Promise.resolve({ serving: {}, fallback: { caPem: '', certPem: '', keyPem: '' }, secret: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'op-binnacle-webhook-certs', namespace: 'team-a' }, data: { 'ca.crt': Buffer.from(digest).toString('base64') } }, digest, issued: false });
      w.render = (rctx) => Promise.resolve(renderedOf([settings(), ...(rctx.certs?.secret === undefined ? [] : [rctx.certs.secret])]));
      const r = w.reconciler();
      await r.reconcile(req, ctx);
      await r.reconcile(req, ctx);
      assert.equal(w.renders.length, 1);
      digest = 'sha256:certs-2';
      await r.reconcile(req, ctx);
      assert.equal(w.renders.length, 2);
      assert.deepEqual(w.history(), [
        [1, 'superseded'],
        [2, 'deployed'],
      ]);
      assert.equal((w.live('Secret', 'op-binnacle-webhook-certs')?.data as Record<string, string>)['ca.crt'], Buffer.from('sha256:certs-2').toString('base64'));
    });
  });

  describe('Preflight', () => {
    test('failure: missing permissions are InsufficientPermissions, each named (20 at most); nothing is applied; looked at again in 30 s', async () => {
      const w = setup();
      const missing = Array.from({ length: 22 }, (_, i): MissingPermission => ({ verb: 'create', group: '', resource: 'configmaps', namespace: 'team-a', name: `c${i}` }));
      w.missing = () => Promise.resolve(missing);
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 30_000 });
      assert.deepEqual(w.cluster.applied, []);
      const c = conditionOf(w, 'Installed');
      assert.deepEqual([c?.status, c?.reason], ['False', 'InsufficientPermissions']);
      assert.match(c?.message ?? '', /^service account team-a\/installer lacks permissions: .* and 2 more$/);
      assert.equal(conditionOf(w, 'Progressing')?.reason, 'Retrying');
      assert.equal(w.statusWrites(), 1);
    });

    test('failure: a permission check that cannot be made fails closed: nothing applied, said, thrown for backoff', async () => {
      const w = setup();
      w.missing = () => Promise.reject(new KubeApiError(500, 'InternalError', 'subjectaccessreviews failed'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), /subjectaccessreviews failed/);
      assert.deepEqual(w.cluster.applied, []);
      assert.equal(conditionOf(w, 'Progressing')?.message, 'cannot check the permissions of service account team-a/installer; waiting: subjectaccessreviews failed');
      assert.equal(w.statusWrites(), 1);
    });
  });

  describe('Apply', () => {
    test('failure: an object another owner holds is refused before anything changes: Installed=False Refused, Progressing Blocked; looked at again with backoff from 1 s to a minute (the object in the way may be removed by hand)', async () => {
      const w = setup();
      w.cluster.put({ ...settings(), metadata: { namespace: 'team-a', name: 'settings', labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'other' } } });
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { failed: true, retryCapMs: 60_000 });
      assert.equal(conditionOf(w, 'Installed')?.reason, 'Refused');
      assert.match(conditionOf(w, 'Installed')?.message ?? '', /belongs to BundleDeployment other/);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason], ['False', 'Blocked']);
      assert.deepEqual(w.cluster.applied, []);
      assert.equal(w.statusWrites(), 1);
    });

    test('failure: an invalid request (a release name Helm cannot record) is refused the same way', async () => {
      const w = setup({ spec: { releaseName: 'Bad_Name' } });
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { failed: true, retryCapMs: 60_000 });
      assert.equal(conditionOf(w, 'Installed')?.reason, 'Refused');
      assert.match(conditionOf(w, 'Installed')?.message ?? '', /release name "Bad_Name" must be a DNS-1123 name/);
    });

    test('failure: a transient apply error is Progressing Retrying with its message and thrown for backoff; what was unpacked stays in status', async () => {
      const w = setup();
      w.cluster.inject({ verb: 'apply', kind: 'ConfigMap', error: () => new KubeApiError(504, 'Timeout', 'the server was unable to return a response in the time allotted') });
      await assert.rejects(w.reconciler().reconcile(req, ctx), /unable to return a response/);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason], ['True', 'Retrying']);
      assert.match(conditionOf(w, 'Progressing')?.message ?? '', /the server was unable to return a response in the time allotted/);
      assert.equal(lastStatus(w).contentDigest, DIGEST);
      assert.equal(w.statusWrites(), 1);
    });

    test('health not ready at a repair: Installed but Unhealthy, naming the objects; looked at again in 10 s', async () => {
      const w = setup();
      w.render = () => Promise.resolve(renderedOf([deployment()]));
      const r = w.reconciler();
      await r.reconcile(req, ctx);
      w.cluster.unhealthyNames.add('op');
      const live = w.live('Deployment', 'op', 'apps/v1');
      assert.ok(live !== undefined);
      w.cluster.put(live);
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      assert.equal(conditionOf(w, 'Installed')?.status, 'True');
      assert.deepEqual([conditionOf(w, 'Healthy')?.status, conditionOf(w, 'Healthy')?.reason], ['False', 'Unhealthy']);
      assert.match(conditionOf(w, 'Healthy')?.message ?? '', /^Deployment op: /);
    });

    test('a failed first install is removed: Installed=False Failed with no revision left; retried after a minute, not at once (clock port)', async () => {
      const w = setup();
      w.healthTimeoutMs = 50;
      w.cluster.unhealthyNames.add('op');
      w.render = () => Promise.resolve(renderedOf([deployment()]));
      const r = w.reconciler();
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 60_000 });
      const status = lastStatus(w);
      assert.equal(status.revision, undefined, 'no revision left');
      assert.deepEqual(status.appliedObjects, []);
      assert.deepEqual([conditionOf(w, 'Installed')?.status, conditionOf(w, 'Installed')?.reason], ['False', 'Failed']);
      assert.match(conditionOf(w, 'Installed')?.message ?? '', /not healthy after 50 ms: Deployment team-a\/op: 0 of 1 replicas available; removed the failed install/);
      assert.equal(w.live('Deployment', 'op', 'apps/v1'), undefined, 'what the failed install created is gone');
      assert.deepEqual(w.history(), []);
      // An event (say) 10 s later: not applied again, nothing new to write.
      const writes = w.statusWrites();
      w.now = Date.parse(conditionOf(w, 'Installed')?.lastTransitionTime ?? '') + 10_000;
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 50_000 });
      assert.equal(w.renders.length, 1);
      assert.equal(w.statusWrites(), writes);
      // A minute on: tried again.
      w.now += 60_000;
      await r.reconcile(req, ctx);
      assert.equal(w.renders.length, 2);
    });

    test('a failed upgrade is rolled back: Installed=True RolledBack, Progressing Retrying; the same inputs are not tried again (keep)', async () => {
      const w = setup();
      w.healthTimeoutMs = 50;
      const r = w.reconciler();
      await r.reconcile(req, ctx);
      const bd = w.bd();
      w.cluster.put({ ...bd, spec: { ...bd.spec, values: { v: 2 } } });
      w.cluster.unhealthyNames.add('op');
      w.render = () => Promise.resolve(renderedOf([settings(), deployment()]));
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.deepEqual([conditionOf(w, 'Installed')?.status, conditionOf(w, 'Installed')?.reason], ['True', 'RolledBack']);
      assert.equal(conditionOf(w, 'Progressing')?.reason, 'Retrying');
      assert.equal(lastStatus(w).revision, 3);
      assert.equal(w.live('Deployment', 'op', 'apps/v1'), undefined, 'the rollback pruned it');
      w.now += 120_000;
      await r.reconcile(req, ctx);
      assert.equal(w.renders.length, 2, 'inputs that failed and were rolled back are not rendered again until they change');
      assert.deepEqual(w.history(), [
        [1, 'superseded'],
        [2, 'failed'],
        [3, 'deployed'],
      ]);
    });

    test('an object of an optional API the cluster does not serve is reported in status and as an Event, once, and applied by a repair once served', async () => {
      const w = setup();
      const monitor: KubeObject = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { namespace: 'team-a', name: 'op-metrics' } };
      w.render = () => Promise.resolve(renderedOf([settings(), monitor]));
      const r = w.reconciler();
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 30_000 }, 'skipped objects are looked for again soon');
      assert.equal(conditionOf(w, 'OptionalObjectsSkipped')?.reason, 'APINotServed');
      assert.deepEqual(w.events.map((e) => e.reason), ['OptionalObjectsSkipped']);
      await r.reconcile(req, ctx);
      assert.equal(w.events.length, 1, 'nothing new: no new Events');
      // The API appears: the repair applies it and the condition goes.
      w.cluster.put(crdOf({ group: 'monitoring.coreos.com', kind: 'ServiceMonitor', plural: 'servicemonitors' }, {}));
      await r.reconcile(req, ctx);
      assert.equal(conditionOf(w, 'OptionalObjectsSkipped'), undefined);
      assert.notEqual(w.live('ServiceMonitor', 'op-metrics', 'monitoring.coreos.com/v1'), undefined);
      assert.equal(w.renders.length, 1);
    });
  });

  describe('nothing lost, nothing forged (issue 43)', () => {
    test('an upgrade interrupted by a crash, then the spec changed back: the deployed revision is rolled out again; nothing it holds is deleted', async () => {
      const w = setup();
      const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'op-data' } };
      const pvc: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { namespace: 'team-a', name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } };
      w.render = (rctx) => Promise.resolve(renderedOf([ns, pvc, settings(), ...(rctx.spec.values?.b === true ? [deployment()] : [])]));
      const r = w.reconciler();
      await r.reconcile(req, ctx);
      const bd = w.bd();
      w.cluster.put({ ...bd, spec: { ...bd.spec, values: { b: true } } });
      w.cluster.inject({ verb: 'apply', kind: 'Deployment', when: 'after', error: faults.crash });
      await assert.rejects(r.reconcile(req, ctx), Crash);
      w.cluster.restart();
      assert.deepEqual(w.history(), [
        [1, 'deployed'],
        [2, 'pending-upgrade'],
      ]);
      const back = w.bd();
      w.cluster.put({ ...back, spec: { ...back.spec, values: undefined } });
      const deletes = w.cluster.log.filter((x) => x.verb === 'delete').length;
      await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(w.cluster.log.filter((x) => x.verb === 'delete').slice(deletes).map((x) => `${x.kind} ${x.name}`), ['Deployment op'], 'only what the unfinished revision added');
      for (const [kind, name, ns2] of [['Namespace', 'op-data', undefined], ['PersistentVolumeClaim', 'data', 'team-a'], ['ConfigMap', 'settings', 'team-a']] as const) {
        assert.notEqual(w.cluster.get({ apiVersion: 'v1', kind, name, namespace: ns2 }), undefined, `${kind} ${name} stays`);
      }
      assert.deepEqual([conditionOf(w, 'Installed')?.status, conditionOf(w, 'Installed')?.reason], ['True', 'Succeeded']);
      assert.deepEqual(w.history(), [
        [1, 'superseded'],
        [2, 'failed'],
        [3, 'deployed'],
      ]);
    });

    test("Helm records someone wrote in the install namespace are never acted on: a forged 'deployed' revision is not repaired, rolled back to, or uninstalled by", async () => {
      const w = setup();
      await w.reconciler().reconcile(req, ctx);
      const forged = revisionRecordSecret(
        { name: 'op', namespace: 'team-a', version: 2, status: 'deployed', description: '', firstDeployed: '', lastDeployed: '', chart: { name: 'op', version: '1.0.0' }, config: {}, manifest: '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: installer-admin\n' },
        { kind: 'BundleDeployment', name: 'op' },
        new Date(),
        'created',
      );
      w.cluster.put(forged);
      await w.reconciler().reconcile(req, ctx);
      assert.equal(w.cluster.get({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: 'installer-admin' }), undefined);
      assert.equal(w.live('Secret', 'sh.helm.release.v1.op.v2'), undefined, 'the planted record is removed from the mirror');
      assert.match(conditionOf(w, 'ReleaseRecordsDrifted')?.message ?? '', /revision 2 added by hand/);
    });

    test('a revision `helm upgrade` adds by hand is left while it is pending (Helm\'s lock: the command writes its last record), and put back once it is done or older than Helm\'s timeout', async () => {
      const w = setup();
      await w.reconciler().reconcile(req, ctx);
      const byHand = (status: 'pending-upgrade' | 'deployed', created: number): KubeObject => {
        const s = revisionRecordSecret(
          { name: 'op', namespace: 'team-a', version: 2, status, description: '', firstDeployed: '', lastDeployed: '', chart: { name: 'op', version: '1.0.0' }, config: {}, manifest: '' },
          { kind: 'BundleDeployment', name: 'op' },
          new Date(created),
          'created',
        );
        return { ...s, metadata: { ...s.metadata, creationTimestamp: new Date(created).toISOString() } };
      };
      const started = w.now;
      w.cluster.put(byHand('pending-upgrade', started));
      w.now += HELM_AT_WORK_MS - 1000;
      await w.reconciler().reconcile(req, ctx);
      assert.notEqual(w.live('Secret', 'sh.helm.release.v1.op.v2'), undefined, 'the record of the helm command at work is left');
      assert.equal(conditionOf(w, 'ReleaseRecordsDrifted'), undefined);
      // Done: its record says deployed, and is put back at once.
      w.cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace: 'team-a', name: 'sh.helm.release.v1.op.v2' });
      w.cluster.put(byHand('deployed', started));
      await w.reconciler().reconcile(req, ctx);
      assert.equal(w.live('Secret', 'sh.helm.release.v1.op.v2'), undefined);
      assert.match(conditionOf(w, 'ReleaseRecordsDrifted')?.message ?? '', /revision 2 added by hand/);
      // A helm command that died: its pending record goes once it is older than Helm's timeout.
      w.cluster.put(byHand('pending-upgrade', started));
      await w.reconciler().reconcile(req, ctx);
      assert.notEqual(w.live('Secret', 'sh.helm.release.v1.op.v2'), undefined);
      w.now += 1000;
      await w.reconciler().reconcile(req, ctx);
      assert.equal(w.live('Secret', 'sh.helm.release.v1.op.v2'), undefined, 'a pending record older than Helm\'s timeout is put back');
      // Only the revision after the newest is a helm command's: a pending one further on is not.
      w.cluster.put({ ...byHand('pending-upgrade', w.now), metadata: { ...byHand('pending-upgrade', w.now).metadata, name: 'sh.helm.release.v1.op.v3', labels: { ...byHand('pending-upgrade', w.now).metadata.labels, version: '3' } } });
      await w.reconciler().reconcile(req, ctx);
      assert.equal(w.live('Secret', 'sh.helm.release.v1.op.v3'), undefined);
      // An uninstall takes the record of a helm command at work with the rest.
      w.cluster.put(byHand('pending-upgrade', w.now));
      w.delete();
      await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(w.cluster.all('Secret', 'team-a').map((s) => s.metadata.name), []);
    });

    test('a release made before the trusted history moves over when every object its record names is live and this BundleDeployment\'s; a record naming anything else is refused, and the next revision rendered anew', async () => {
      const owner = { kind: 'BundleDeployment', name: 'op' };
      const base = { name: 'op', namespace: 'team-a', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name: 'op', version: '1.0.0' }, config: {} };
      const moving = setup({ status: { revision: 1 } });
      moving.cluster.put({ ...settings(), metadata: { namespace: 'team-a', name: 'settings', labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'op' }, annotations: { 'meta.helm.sh/release-name': 'op', 'meta.helm.sh/release-namespace': 'team-a' } } });
      moving.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'deployed', manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\n' }, owner, new Date(), 'created'));
      // A live object cannot be read once (etcd timed out): the reconcile fails and moves nothing
      // (read as "not live", the record would be refused for good); the next one moves it.
      moving.cluster.inject({ verb: 'get', kind: 'ConfigMap', error: () => new KubeApiError(500, 'InternalError', 'etcdserver: request timed out') });
      await assert.rejects(moving.reconciler().reconcile(req, ctx), /request timed out/);
      assert.equal(conditionOf(moving, 'ReleaseRecordsRefused'), undefined);
      assert.deepEqual(moving.history(), []);
      await moving.reconciler().reconcile(req, ctx);
      assert.equal(conditionOf(moving, 'ReleaseRecordsRefused'), undefined);
      assert.equal(moving.history()[0]?.[0], 1, 'revision 1 moved over');

      const refused = setup({ status: { revision: 1 } });
      refused.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'deployed', manifest: '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: installer-admin\n' }, owner, new Date(), 'created'));
      await refused.reconciler().reconcile(req, ctx);
      assert.match(conditionOf(refused, 'ReleaseRecordsRefused')?.message ?? '', /ClusterRoleBinding installer-admin is not a live object of this BundleDeployment/);
      // Two records, the check of the second failing for a while: nothing is half moved (the move
      // happens once: revision 1 moved alone would have lost revision 2 for good); the next reconcile moves both.
      const two = setup({ status: { revision: 2 } });
      two.cluster.put({ ...settings(), metadata: { namespace: 'team-a', name: 'settings', labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'op' }, annotations: { 'meta.helm.sh/release-name': 'op', 'meta.helm.sh/release-namespace': 'team-a' } } });
      const cmManifest = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\n';
      two.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'superseded', manifest: cmManifest }, owner, new Date(), 'created'));
      two.cluster.put(revisionRecordSecret({ ...base, version: 2, status: 'deployed', manifest: cmManifest }, owner, new Date(), 'created'));
      let gets = 0;
      two.cluster.inject({ match: (r) => r.verb === 'get' && r.kind === 'ConfigMap' && ++gets === 2, error: () => new KubeApiError(500, 'InternalError', 'etcdserver: request timed out') });
      await assert.rejects(two.reconciler().reconcile(req, ctx), /request timed out/);
      assert.deepEqual(two.history(), [], 'nothing half moved');
      await two.reconciler().reconcile(req, ctx);
      assert.deepEqual(two.history().slice(0, 2), [[1, 'superseded'], [2, 'superseded']], 'both moved over (then rendered anew as revision 3)');
      // A record the API server will not store (a verdict, as one too large would get) is refused by
      // name and the others move; one that fails for a while takes the whole move back (retried).
      for (const [status, moved] of [[422, [1]], [503, []]] as const) {
        const writes = setup({ status: { revision: 2 } });
        writes.cluster.put({ ...settings(), metadata: { namespace: 'team-a', name: 'settings', labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'op' }, annotations: { 'meta.helm.sh/release-name': 'op', 'meta.helm.sh/release-namespace': 'team-a' } } });
        writes.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'superseded', manifest: cmManifest }, owner, new Date(), 'created'));
        writes.cluster.put(revisionRecordSecret({ ...base, version: 2, status: 'deployed', manifest: cmManifest }, owner, new Date(), 'created'));
        writes.cluster.inject({
          match: (r) => r.verb === 'create' && r.kind === 'Secret' && r.namespace === SYSTEM && r.name === 'binnacle.release.u1.v2',
          error: () => new KubeApiError(status, status === 422 ? 'Invalid' : 'ServiceUnavailable', status === 422 ? 'Secret "binnacle.release.u1.v2" is invalid: data: Too long' : 'etcd leader changed'),
        });
        const done = await writes.reconciler().reconcile(req, ctx).then(
          () => 'resolved',
          (err: unknown) => String(err),
        );
        if (moved.length > 0) assert.deepEqual(writes.history()[0], [1, 'superseded'], `revision 1 moved over: ${done}`);
        if (status === 503) {
          assert.match(done, /etcd leader changed/);
          assert.deepEqual(writes.history(), [], 'nothing half moved');
        } else assert.match(conditionOf(writes, 'ReleaseRecordsRefused')?.message ?? '', /sh\.helm\.release\.v1\.op\.v2: Secret "binnacle\.release\.u1\.v2" is invalid/);
      }
      // Beside the records being moved, one a Helm user made under the name: the release is someone
      // else's from the very read that moves them (it was only from the next one), and nothing of theirs is written over.
      const shared = setup({ status: { revision: 1 } });
      shared.cluster.put({ ...settings(), metadata: { namespace: 'team-a', name: 'settings', labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'op' }, annotations: { 'meta.helm.sh/release-name': 'op', 'meta.helm.sh/release-namespace': 'team-a' } } });
      shared.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'superseded', manifest: cmManifest }, owner, new Date(), 'created'));
      const byHelm = revisionRecordSecret({ ...base, version: 2, status: 'deployed', manifest: cmManifest }, undefined, new Date(), 'created');
      shared.cluster.put(byHelm);
      await shared.reconciler().reconcile(req, ctx).catch(() => undefined);
      assert.match(JSON.stringify(shared.bd().status?.conditions ?? []), /belongs to a Helm user/);
      assert.deepEqual(shared.live('Secret', 'sh.helm.release.v1.op.v2')?.data, byHelm.data, "the Helm user's record is as it was");
      assert.equal(shared.live('Secret', 'sh.helm.release.v1.op.v3'), undefined, 'no revision of Binnacle made over it');
      // An object that cannot be read for good (not a passing failure) is the record's problem, named: the reconcile goes on.
      const unreadable = setup({ status: { revision: 1 } });
      unreadable.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'deployed', manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\n' }, owner, new Date(), 'created'));
      unreadable.cluster.inject({ verb: 'get', kind: 'ConfigMap', error: () => new KubeApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource') });
      await unreadable.reconciler().reconcile(req, ctx);
      assert.match(conditionOf(unreadable, 'ReleaseRecordsRefused')?.message ?? '', /ConfigMap settings cannot be read to check it: the server does not allow this method/);
      assert.equal(refused.cluster.get({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: 'installer-admin' }), undefined);
      assert.deepEqual([conditionOf(refused, 'Installed')?.status, conditionOf(refused, 'Installed')?.reason], ['True', 'Succeeded'], 'rendered and installed anew');
    });

    test("a record moved over is never re-applied from its record: one planted with this BundleDeployment's inputs and other fields of its own live object is rendered anew (not repaired from), and a failed upgrade is not rolled back to it", async () => {
      // The inputs' digest as a reconcile records it, read from a world where Binnacle made the release.
      const made = setup();
      await made.reconciler().reconcile(req, ctx);
      const digest = made.cluster.all('Secret', SYSTEM).find((x) => x.metadata.labels?.[RECORD_OWNER_UID_LABEL] === 'u1')?.metadata.labels?.['binnacle.dev/input-digest'];
      assert.ok(digest !== undefined && digest !== '', 'the trusted record carries the input digest');
      const owner = { kind: 'BundleDeployment', name: 'op' };
      const base = { name: 'op', namespace: 'team-a', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name: 'op', version: '1.0.0' }, config: {}, inputDigest: digest };
      const w = setup({ status: { revision: 1 } });
      w.cluster.put({ ...settings(), metadata: { namespace: 'team-a', name: 'settings', labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'op' }, annotations: { 'meta.helm.sh/release-name': 'op', 'meta.helm.sh/release-namespace': 'team-a' } } });
      // Planted by whoever could write Secrets in team-a before the move: its own live object, other data.
      w.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'deployed', manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\ndata:\n  planted: "yes"\n' }, owner, new Date(), 'created'));
      await w.reconciler().reconcile(req, ctx);
      assert.equal(conditionOf(w, 'ReleaseRecordsRefused'), undefined, 'its objects pass the check');
      assert.deepEqual(w.live('ConfigMap', 'settings')?.data, { a: '1' }, 'what the bundle renders, not what the record says');
      assert.deepEqual(w.history(), [[1, 'superseded'], [2, 'deployed']], 'rendered anew as a revision of its own');
      const marks = w.cluster
        .all('Secret', SYSTEM)
        .filter((x) => x.metadata.labels?.[RECORD_OWNER_UID_LABEL] === 'u1')
        .map((x) => [Number(x.metadata.labels?.version), x.metadata.annotations?.['binnacle.dev/moved-over']])
        .sort();
      assert.deepEqual(marks, [[1, 'true'], [2, undefined]], 'the mark stays on the moved-over record once superseded; none on Binnacle’s own');
      // Drift from now on is repaired from Binnacle's own revision.
      w.cluster.put({ ...w.live('ConfigMap', 'settings')!, data: { a: 'changed by hand' } });
      await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(w.live('ConfigMap', 'settings')?.data, { a: '1' });

      // An upgrade from a moved-over revision that fails is not rolled back to it.
      const failing = setup({ status: { revision: 1 } });
      failing.cluster.put({ ...settings(), metadata: { namespace: 'team-a', name: 'settings', labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'op' }, annotations: { 'meta.helm.sh/release-name': 'op', 'meta.helm.sh/release-namespace': 'team-a' } } });
      failing.cluster.put(revisionRecordSecret({ ...base, inputDigest: 'sha256:older-inputs', version: 1, status: 'deployed', manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\ndata:\n  planted: "yes"\n' }, owner, new Date(), 'created'));
      // The new revision applies `settings` and then fails on an object of its own: a rollback would apply the record.
      failing.render = () => Promise.resolve(renderedOf([settings(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'extra' }, data: {} }]));
      failing.cluster.inject({ verb: 'apply', kind: 'ConfigMap', name: 'extra', error: () => new KubeApiError(422, 'Invalid', 'admission webhook "x" denied the request'), times: Infinity });
      await failing.reconciler().reconcile(req, ctx).catch(() => undefined);
      assert.equal((failing.live('ConfigMap', 'settings')?.data as Record<string, string> | undefined)?.planted, undefined, 'the planted fields were never applied');
      assert.match(JSON.stringify(failing.bd().status?.conditions ?? []), /not rolled back: revision 1 moved over from Helm's records/);
      failing.cluster.clearFaults();
      await failing.reconciler().reconcile(req, ctx).catch(() => undefined);
      assert.equal((failing.live('ConfigMap', 'settings')?.data as Record<string, string> | undefined)?.planted, undefined, 'nor on the next reconcile');
    });

    test("the release's Helm records cannot be listed for a while: no revision is decided on that read (who else holds the name is unknown), and the next reconcile goes on", async () => {
      const w = setup();
      await w.reconciler().reconcile(req, ctx);
      w.cluster.inject({ verb: 'list', kind: 'Secret', namespace: 'team-a', error: () => new KubeApiError(503, 'ServiceUnavailable', 'etcd leader changed') });
      await assert.rejects(w.reconciler().reconcile(req, ctx), /etcd leader changed/);
      assert.deepEqual(w.history(), [[1, 'deployed']]);
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 600_000 });
      assert.equal(conditionOf(w, 'Installed')?.status, 'True');
    });

    test("moving over from OLM v1: operator-controller's history (binnacle olmv1 import-history's records) moves over when pinned on the ClusterExtension and its objects are the ClusterExtension's; unpinned, or a namesake's, it is refused", async () => {
      const owner = { kind: 'BundleDeployment', name: 'op' };
      const manifest = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\n';
      const input = { name: 'op', namespace: 'team-a', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name: 'op', version: '0.9.0' }, config: {}, version: 1, status: 'deployed' as const, manifest };
      // The pin import-history writes: the digest of the record as it reads back.
      const pin = revisionDigest(revisionFromSecret(revisionRecordSecret(input, owner, new Date(), 'created')));
      const byOperatorController = (uid: string): KubeObject => ({
        ...settings(),
        metadata: { namespace: 'team-a', name: 'settings', labels: { 'olm.operatorframework.io/owner-kind': 'ClusterExtension', 'olm.operatorframework.io/owner-name': 'ext' }, ownerReferences: [{ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'ext', uid, controller: true }] },
      });
      const world = (liveUid: string, pins: Record<string, string> | undefined): FakeWorld => {
        const w = setup({ spec: { olmv1Owner: 'ext', olmv1OwnerUID: 'ce-uid' } });
        w.cluster.put(crdOf({ group: 'olm.operatorframework.io', kind: 'ClusterExtension', plural: 'clusterextensions' }, {}, { scope: 'Cluster', version: 'v1' }));
        w.cluster.put({ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', metadata: { name: 'ext', uid: 'ce-uid', ...(pins === undefined ? {} : { annotations: { 'binnacle.dev/olmv1-imported-history': JSON.stringify(pins) } }) }, spec: {} });
        w.cluster.put(byOperatorController(liveUid));
        w.cluster.put(revisionRecordSecret(input, owner, new Date(), 'created'));
        return w;
      };
      const moving = world('ce-uid', { '1': pin });
      // The pin cannot be read once (etcd timed out): the reconcile fails and moves nothing; the next one moves it.
      moving.cluster.inject({ verb: 'get', kind: 'ClusterExtension', error: () => new KubeApiError(500, 'InternalError', 'etcdserver: request timed out') });
      await assert.rejects(moving.reconciler().reconcile(req, ctx), /request timed out/);
      assert.deepEqual(moving.history(), []);
      await moving.reconciler().reconcile(req, ctx);
      assert.equal(conditionOf(moving, 'ReleaseRecordsRefused'), undefined);
      assert.deepEqual(moving.history(), [[1, 'superseded'], [2, 'deployed']], "operator-controller's revision, then the take-over");

      // Planted beside the import (no pin, or another content under the pinned number): refused.
      for (const pins of [undefined, { '1': 'sha256:something-else' }]) {
        const planted = world('ce-uid', pins);
        await planted.reconciler().reconcile(req, ctx);
        assert.match(conditionOf(planted, 'ReleaseRecordsRefused')?.message ?? '', /ConfigMap settings is not a live object of this BundleDeployment/, JSON.stringify(pins));
        assert.deepEqual(planted.history(), [[1, 'deployed']], "only Binnacle's own revision (the take-over)");
      }

      const namesake = world('another-uid', { '1': pin });
      await namesake.reconciler().reconcile(req, ctx);
      assert.match(conditionOf(namesake, 'ReleaseRecordsRefused')?.message ?? '', /ConfigMap settings is not a live object of this BundleDeployment/);
      assert.deepEqual(namesake.history(), [], 'nothing moved over (and the object in the way is refused)');
    });
  });
});

describe('signed content', () => {
  test('an artifact refused by its verification policy is not applied; the installed revision keeps running; the condition names artifact, digest and reason', async () => {
    const w = setup({ spec: { source: { type: 'image', image: { ref: 'registry.example/op:2' }, verify: { provider: 'cosign', secretRef: { namespace: 'team-a', name: 'keys' } } } } });
    const r = w.reconciler();
    w.unpack = () => Promise.reject(new SignatureVerificationError('registry.example/op:2', `sha256:${'e'.repeat(64)}`, 'Unsigned', 'it has no cosign signature'));
    await r.reconcile(req, ctx).catch(() => undefined);
    assert.deepEqual(w.cluster.applied, [], 'nothing of it is applied');
    const unpacked = conditionOf(w, 'Unpacked');
    assert.deepEqual([unpacked?.status, unpacked?.reason], ['False', 'VerificationFailed']);
    assert.match(unpacked?.message ?? '', /registry\.example\/op:2 \(digest sha256:e{64}\) is refused: it has no cosign signature/);
    assert.equal(w.unpacks[0]?.secrets?.identity, 'service account team-a/installer', 'the keys are read as the installing ServiceAccount');
  });

  test('a verify policy on a ConfigMaps source is refused as an invalid spec, naming the source type', async () => {
    const w = setup({ spec: { source: { type: 'configMaps', configMaps: [{ namespace: 'team-a', name: 'op-bundle' }], verify: { provider: 'cosign', secretRef: { namespace: 'team-a', name: 'keys' } } } } });
    await w.reconciler().reconcile(req, ctx);
    assert.equal(w.unpacks.length, 0);
    assert.deepEqual(w.cluster.applied, []);
    assert.match(conditionOf(w, 'Progressing')?.message ?? '', /a configMaps source cannot carry an OCI signature/);
  });
});
