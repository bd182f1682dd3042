/**
 * The BundleDeployment reconciler's steps, driven with fakes (no cluster, no registry, no
 * renderer): each step's success and failure branches, who each thing is done as, and one
 * status write per reconcile (none when nothing changed).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ApplyRefusedError, type ApplierClient, type ApplyRequest, type ApplyResult, type ObjectRef, type ReleaseRevision } from '../apply/index.js';
import { API_VERSION, FINALIZER_CLEANUP, type BundleDeployment } from '../api/types.js';
import type { KubeClient } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import type { Condition, KubeObject } from '../kube/types.js';
import type { RenderContext, RenderedBundle } from '../render/index.js';
import type { UnpackedSource, UnpackOptions } from '../source/index.js';
import { TerminalError, ValidationError, ValidationResult } from '../util/errors.js';
import { SignatureVerificationError } from '../oci/index.js';
import { ANNOTATION_ORPHAN_ON_DELETE, BundleDeploymentReconciler, type BundleApplier, type BundleDeploymentPorts } from './bundle-deployment.js';
import type { MissingPermission } from '../apply/preflight-permissions.js';
import { conflict, NextFailure } from './fakes.test-helper.js';

const logger = pino({ level: 'silent' });
const MANAGER = 'manager';
const SA_USER = 'system:serviceaccount:team-a:installer';
const DIGEST = 'sha256:' + 'a'.repeat(64);

/** The slice of KubeClient the reconciler uses, in memory; every client made by impersonate shares it and records who asked. */
class FakeKube {
  readonly objects = new Map<string, KubeObject>();
  readonly statusWrites: Record<string, unknown>[] = [];
  readonly deletes: { who: string; ref: string }[] = [];
  /** Fails the next finalizer patch. */
  readonly patchFailure = new NextFailure();
  /** Who made the last find: how a fake learns whom a ServiceAccountFallbackClient acts as. */
  lastFinder = '';
  /** Who may not delete what (answered 403). */
  forbidDelete: (who: string, ref: ObjectRef) => boolean = () => false;

  key(r: { kind: string; namespace?: string | undefined; name?: string | undefined }): string {
    return `${r.kind}/${r.namespace ?? ''}/${r.name ?? ''}`;
  }

  put(o: KubeObject): void {
    this.objects.set(this.key({ kind: o.kind, ...o.metadata }), o);
  }

  bd(name = 'op'): BundleDeployment {
    return this.objects.get(`BundleDeployment//${name}`) as BundleDeployment;
  }

  client(who = MANAGER): KubeClient {
    const find = (ref: ObjectRef): Promise<KubeObject | undefined> => {
      this.lastFinder = who;
      return Promise.resolve(this.objects.get(this.key(ref)));
    };
    const c = {
      who,
      find,
      get: async (ref: ObjectRef) => {
        const o = await find(ref);
        if (o === undefined) throw new KubeApiError(404, 'NotFound', `${ref.kind} ${ref.name} not found`);
        return structuredClone(o);
      },
      apply: (obj: KubeObject, opts: { subresource?: string }) => {
        assert.equal(opts.subresource, 'status', 'the reconciler writes only status with apply');
        assert.equal(who, MANAGER, 'status is written as Binnacle');
        this.statusWrites.push(structuredClone(obj.status as Record<string, unknown>));
        const live = this.objects.get(this.key({ kind: obj.kind, ...obj.metadata }));
        if (live !== undefined) live.status = structuredClone(obj.status);
        return Promise.resolve(obj);
      },
      patch: (ref: ObjectRef, patch: { metadata: { finalizers?: string[] } }) => {
        const failed = this.patchFailure.take();
        if (failed !== undefined) return failed;
        const live = this.objects.get(this.key(ref));
        if (live === undefined) return Promise.reject(new KubeApiError(404, 'NotFound', 'gone'));
        if (patch.metadata.finalizers !== undefined) live.metadata.finalizers = patch.metadata.finalizers;
        live.metadata.resourceVersion = String(Number(live.metadata.resourceVersion ?? '1') + 1);
        return Promise.resolve(structuredClone(live));
      },
      delete: (ref: ObjectRef) => {
        if (this.forbidDelete(who, ref)) return Promise.reject(new KubeApiError(403, 'Forbidden', `${ref.kind} ${ref.name} is forbidden for ${who}`));
        this.deletes.push({ who, ref: this.key(ref) });
        this.objects.delete(this.key(ref));
        return Promise.resolve();
      },
      impersonate: (as: { user: string }) => this.client(as.user),
    };
    return c as unknown as KubeClient;
  }
}

/** An applier that records what it was asked and as whom; its answers are set per test. */
class FakeApplier implements BundleApplier {
  constructor(
    private readonly world: FakeWorld,
    private readonly client: ApplierClient,
  ) {}
  /** Whom the client acts as: asked of the fake API server, as a fallback client decides on first use. */
  private async who(): Promise<string> {
    await this.client.find({ apiVersion: 'v1', kind: 'WhoAmI', name: 'x' });
    return this.world.kube.lastFinder;
  }
  async apply(req: ApplyRequest): Promise<ApplyResult> {
    this.world.applied.push({ who: await this.who(), req });
    return this.world.applyResult(req);
  }
  async uninstall(opts: { owner: { kind: string; name: string } }): Promise<{ deleted: ObjectRef[] }> {
    const who = await this.who();
    this.world.uninstalled.push({ who, owner: opts.owner });
    const err = this.world.uninstallError(who);
    if (err !== undefined) throw err;
    return { deleted: [] };
  }
  async history(): Promise<ReleaseRevision[]> {
    this.world.historyReads.push(await this.who());
    return this.world.history;
  }
}

function deployed(over: Partial<ApplyResult> = {}): ApplyResult {
  return {
    revision: 1,
    status: 'deployed',
    applied: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'settings' }],
    pruned: [],
    health: { healthy: true, objects: [] },
    message: 'installed',
    ...over,
  };
}

function revision(owner: { kind: string; name: string } | undefined, n = 1): ReleaseRevision {
  return { name: 'op', namespace: 'team-a', revision: n, status: 'deployed', description: '', firstDeployed: '', lastDeployed: '', chart: { name: 'op', version: '1.0.0' }, config: {}, manifest: '', owner };
}

const RENDERED: RenderedBundle = {
  objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'settings' } }],
  chart: { name: 'op', version: '1.0.0' },
};

/** Everything the fakes saw, and what they answer. */
class FakeWorld {
  readonly kube = new FakeKube();
  readonly applied: { who: string; req: ApplyRequest }[] = [];
  readonly uninstalled: { who: string; owner: { kind: string; name: string } }[] = [];
  readonly historyReads: string[] = [];
  readonly unpacks: UnpackOptions[] = [];
  readonly renders: RenderContext[] = [];
  readonly preflights: { who: string; sa: string }[] = [];
  readonly events: { type: string; reason: string; message: string }[] = [];
  history: ReleaseRevision[] = [];
  now = Date.now();
  unpack: () => Promise<UnpackedSource> = () => Promise.resolve({ dir: '/cache/trees/a', digest: DIGEST, resolved: { type: 'configMaps' } });
  render: (ctx: RenderContext) => Promise<RenderedBundle> = () => Promise.resolve(RENDERED);
  missing: () => Promise<MissingPermission[]> = () => Promise.resolve([]);
  applyResult: (req: ApplyRequest) => Promise<ApplyResult> = () => Promise.resolve(deployed());
  uninstallError: (who: string) => Error | undefined = () => undefined;

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
      missingPermissions: (client, sa) => {
        this.preflights.push({ who: (client as unknown as { who: string }).who, sa: `${sa.namespace}/${sa.name}` });
        return this.missing();
      },
      applier: (client) => new FakeApplier(this, client),
      recordEvent: (_obj, type, reason, message) => {
        this.events.push({ type, reason, message });
        return Promise.resolve();
      },
      now: () => this.now,
    };
  }

  reconciler(): BundleDeploymentReconciler {
    return new BundleDeploymentReconciler({ client: this.kube.client(), cacheDir: '/cache', resyncMs: 600_000, ports: this.ports() });
  }
}

type Spec = BundleDeployment['spec'];

function setup(opts: { spec?: Partial<Spec>; metadata?: Partial<BundleDeployment['metadata']>; serviceAccount?: boolean; status?: BundleDeployment['status'] } = {}): FakeWorld {
  const w = new FakeWorld();
  if (opts.serviceAccount !== false) w.kube.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'team-a', name: 'installer' } });
  const bd: BundleDeployment = {
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name: 'op', generation: 1, resourceVersion: '1', uid: 'u1', finalizers: [FINALIZER_CLEANUP], ...opts.metadata },
    spec: {
      source: { type: 'configMaps', configMaps: [{ namespace: 'team-a', name: 'op-bundle', path: 'manifests' }] },
      format: 'plain',
      installNamespace: 'team-a',
      serviceAccount: { name: 'installer' },
      ...opts.spec,
    },
    ...(opts.status === undefined ? {} : { status: opts.status }),
  };
  w.kube.put(bd);
  return w;
}

const req = { key: 'op', name: 'op' };
const ctx = { logger, signal: new AbortController().signal };

function conditionOf(w: FakeWorld, type: string): Condition | undefined {
  const status = w.kube.statusWrites.at(-1) as { conditions?: Condition[] } | undefined;
  return status?.conditions?.find((c) => c.type === type);
}

function lastStatus(w: FakeWorld): Record<string, unknown> {
  const s = w.kube.statusWrites.at(-1);
  assert.ok(s !== undefined, 'a status was written');
  return s;
}

const DELETING = { deletionTimestamp: '2026-01-01T00:00:00Z' };

describe('BundleDeployment reconciler, step by step with fakes', () => {
  describe('success, and one status write', () => {
    test('a BundleDeployment is unpacked, rendered, checked and applied as its ServiceAccount; status is written once, with what was applied', async () => {
      const w = setup({ metadata: { finalizers: [] } });
      const result = await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(result, { requeueAfterMs: 600_000 }, 'a healthy install is looked at again at the resync period');
      assert.deepEqual(w.kube.bd().metadata.finalizers, [FINALIZER_CLEANUP], 'HandleFinalizer adds the cleanup finalizer');
      assert.equal(w.applied.length, 1);
      assert.equal(w.applied[0]?.who, SA_USER, 'applied as the ServiceAccount, never as Binnacle');
      assert.deepEqual(w.applied[0]?.req.owner, { kind: 'BundleDeployment', name: 'op' });
      assert.deepEqual(w.applied[0]?.req.release, { name: 'op', namespace: 'team-a' });
      assert.equal((w.renders[0]?.client as unknown as { who: string }).who, SA_USER, 'the renderer sees the cluster as the ServiceAccount');
      assert.equal(w.unpacks[0]?.secrets?.identity, 'service account team-a/installer', "the source's Secrets are read as the ServiceAccount");
      assert.deepEqual(w.preflights, [{ who: MANAGER, sa: 'team-a/installer' }]);
      assert.equal(w.kube.statusWrites.length, 1, 'one status write per reconcile');
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
    });

    test('a second identical reconcile writes no status', async () => {
      const w = setup();
      const r = w.reconciler();
      await r.reconcile(req, ctx);
      assert.equal(w.kube.statusWrites.length, 1);
      await r.reconcile(req, ctx);
      assert.equal(w.applied.length, 2, 'the second reconcile did apply (drift repair)');
      assert.equal(w.kube.statusWrites.length, 1, 'but its status was unchanged, so not written');
    });

    test('a changed spec (new generation) is written again, once', async () => {
      const w = setup();
      const r = w.reconciler();
      await r.reconcile(req, ctx);
      w.kube.bd().metadata.generation = 2;
      await r.reconcile(req, ctx);
      assert.equal(w.kube.statusWrites.length, 2);
      assert.equal(lastStatus(w).observedGeneration, 2);
    });

    test('without a ServiceAccount, Binnacle installs as itself and no permission preflight runs', async () => {
      const w = setup({ spec: { serviceAccount: undefined } });
      await w.reconciler().reconcile(req, ctx);
      assert.equal(w.preflights.length, 0);
      assert.equal(w.applied[0]?.who, MANAGER);
      assert.match(w.unpacks[0]?.secrets?.identity ?? '', /^Binnacle's own service account/);
    });
  });

  describe('HandleFinalizer', () => {
    test('failure: adding the finalizer conflicts; the error is said in the one status write and thrown for backoff', async () => {
      const w = setup({ metadata: { finalizers: [] } });
      w.kube.patchFailure.arm(conflict());
      await assert.rejects(w.reconciler().reconcile(req, ctx), /the object has been modified/);
      assert.equal(w.kube.statusWrites.length, 1);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason, conditionOf(w, 'Progressing')?.message], ['True', 'Retrying', 'the object has been modified']);
      assert.equal(w.unpacks.length, 0, 'nothing after the failing step ran');
    });

    test('deleting: what the release records say it installed is uninstalled as the ServiceAccount, its webhook certificate deleted, the finalizer removed, no status written', async () => {
      const w = setup({ metadata: DELETING });
      w.history = [revision({ kind: 'BundleDeployment', name: 'op' })];
      const result = await w.reconciler().reconcile(req, ctx);
      assert.equal(result, undefined);
      assert.deepEqual(w.uninstalled, [{ who: SA_USER, owner: { kind: 'BundleDeployment', name: 'op' } }]);
      assert.deepEqual(w.historyReads, [SA_USER], 'the release records are read as the ServiceAccount');
      assert.deepEqual(w.kube.deletes, [{ who: SA_USER, ref: 'Secret/team-a/op-binnacle-webhook-certs' }]);
      assert.deepEqual(w.kube.bd().metadata.finalizers, []);
      assert.equal(w.kube.statusWrites.length, 0);
      assert.equal(w.unpacks.length, 0);
    });

    test("deleting: a release whose records name another owner is left in place; the finalizer still goes", async () => {
      const w = setup({ metadata: DELETING });
      w.history = [revision({ kind: 'ClusterExtension', name: 'other' })];
      await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(w.uninstalled, []);
      assert.deepEqual(w.kube.bd().metadata.finalizers, []);
    });

    test('deleting with the ServiceAccount gone and Binnacle forbidden: ServiceAccountGone, finalizer kept, looked at again in a minute, one status write', async () => {
      const w = setup({ metadata: DELETING, serviceAccount: false, status: { appliedObjects: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'op-manager' }] } });
      w.history = [revision({ kind: 'BundleDeployment', name: 'op' })];
      w.uninstallError = () => new KubeApiError(403, 'Forbidden', 'clusterroles "op-manager" is forbidden');
      const result = await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(result, { requeueAfterMs: 60_000 });
      assert.deepEqual(w.uninstalled.map((u) => u.who), [MANAGER], 'with the account gone, removal falls back to Binnacle');
      assert.deepEqual(w.kube.bd().metadata.finalizers, [FINALIZER_CLEANUP]);
      assert.equal(w.kube.statusWrites.length, 1);
      const c = conditionOf(w, 'Progressing');
      assert.deepEqual([c?.status, c?.reason], ['False', 'ServiceAccountGone']);
      assert.match(c?.message ?? '', /service account installer in namespace team-a is gone.*clusterroles "op-manager" is forbidden/);
      assert.match(c?.message ?? '', new RegExp(`${ANNOTATION_ORPHAN_ON_DELETE}: "true"`));
      assert.deepEqual(lastStatus(w).appliedObjects, [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'op-manager' }], 'what it installed stays in status');
    });

    test('deleting with the ServiceAccount present but not allowed: RemovalForbidden, finalizer kept', async () => {
      const w = setup({ metadata: DELETING });
      w.history = [revision({ kind: 'BundleDeployment', name: 'op' })];
      w.uninstallError = () => new KubeApiError(403, 'Forbidden', 'deployments "op" is forbidden');
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.equal(conditionOf(w, 'Progressing')?.reason, 'RemovalForbidden');
      assert.match(conditionOf(w, 'Progressing')?.message ?? '', /service account team-a\/installer is not allowed/);
      assert.deepEqual(w.kube.bd().metadata.finalizers, [FINALIZER_CLEANUP]);
    });

    test('deleting: an uninstall that fails otherwise (the API server) is said in status and thrown; the finalizer stays', async () => {
      const w = setup({ metadata: DELETING });
      w.history = [revision({ kind: 'BundleDeployment', name: 'op' })];
      w.uninstallError = () => new KubeApiError(503, 'ServiceUnavailable', 'etcd leader changed');
      await assert.rejects(w.reconciler().reconcile(req, ctx), /etcd leader changed/);
      assert.equal(w.kube.statusWrites.length, 1);
      assert.deepEqual([conditionOf(w, 'Progressing')?.reason, conditionOf(w, 'Progressing')?.message], ['Retrying', 'etcd leader changed']);
      assert.deepEqual(w.kube.bd().metadata.finalizers, [FINALIZER_CLEANUP]);
    });

    test('deleting: a webhook certificate neither the account nor Binnacle may delete is left, and the deletion goes on', async () => {
      const w = setup({ metadata: DELETING });
      w.kube.forbidDelete = () => true;
      await w.reconciler().reconcile(req, ctx);
      assert.deepEqual(w.kube.deletes, []);
      assert.deepEqual(w.kube.bd().metadata.finalizers, []);
    });

    test('deleting with orphan-on-delete: nothing is uninstalled, an Orphaned event lists what stays, the finalizer goes, no status written', async () => {
      const w = setup({
        metadata: { ...DELETING, annotations: { [ANNOTATION_ORPHAN_ON_DELETE]: 'true' } },
        status: { appliedObjects: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'team-a', name: 'op' }] },
      });
      w.history = [revision({ kind: 'BundleDeployment', name: 'op' })];
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.deepEqual(w.uninstalled, []);
      assert.deepEqual(w.kube.deletes, []);
      assert.equal(w.events.length, 1);
      assert.deepEqual([w.events[0]?.type, w.events[0]?.reason], ['Warning', 'Orphaned']);
      assert.match(w.events[0]?.message ?? '', /Deployment team-a\/op/);
      assert.deepEqual(w.kube.bd().metadata.finalizers, []);
      assert.equal(w.kube.statusWrites.length, 0);
    });

    test('deleting without the cleanup finalizer: nothing is done and nothing written', async () => {
      const w = setup({ metadata: { ...DELETING, finalizers: ['someone-else'] } });
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.deepEqual(w.uninstalled, []);
      assert.deepEqual(w.historyReads, []);
      assert.equal(w.kube.statusWrites.length, 0);
    });
  });

  describe('Validate', () => {
    test('failure: a spec with problems is InvalidSpec naming each, nothing is unpacked, and it waits for a new spec', async () => {
      const w = setup({ spec: { format: 'zip' as never, installNamespace: '' } });
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.equal(w.unpacks.length, 0);
      const c = conditionOf(w, 'Progressing');
      assert.deepEqual([c?.status, c?.reason, c?.message], ['False', 'InvalidSpec', 'spec.format: unknown format "zip"; spec.installNamespace: required']);
      assert.equal(w.kube.statusWrites.length, 1);
    });
  });

  describe('Unpack', () => {
    test('failure: an unpack error is Unpacked=False UnpackFailed, Progressing Retrying, said once and thrown for backoff', async () => {
      const w = setup();
      w.unpack = () => Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'configmaps unavailable'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), /configmaps unavailable/);
      assert.equal(w.renders.length, 0);
      assert.equal(w.kube.statusWrites.length, 1);
      assert.deepEqual([conditionOf(w, 'Unpacked')?.status, conditionOf(w, 'Unpacked')?.reason, conditionOf(w, 'Unpacked')?.message], ['False', 'UnpackFailed', 'configmaps unavailable']);
      assert.equal(conditionOf(w, 'Progressing')?.message, 'unpacking: configmaps unavailable', "the step's own message, not overwritten by the catch-all");
    });

    test('failure: a terminal unpack error (the source can never be read) stops without a retry', async () => {
      const w = setup();
      w.unpack = () => Promise.reject(new TerminalError('SourceDenied', 'sources that read this machine\'s files are not allowed here'));
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.equal(w.renders.length, 0);
      assert.equal(conditionOf(w, 'Unpacked')?.reason, 'UnpackFailed');
      assert.equal(w.kube.statusWrites.length, 1);
    });
  });

  describe('Render', () => {
    test('success: the renderer gets the unpacked tree, and the next revision from the release records (read as the ServiceAccount)', async () => {
      const w = setup();
      w.history = [revision({ kind: 'BundleDeployment', name: 'op' }, 1), revision({ kind: 'BundleDeployment', name: 'op' }, 4)];
      w.render = async (rctx) => {
        assert.equal(await rctx.nextRevision(), 5);
        return RENDERED;
      };
      await w.reconciler().reconcile(req, ctx);
      assert.equal(w.renders[0]?.dir, '/cache/trees/a');
      assert.equal(w.renders[0]?.digest, DIGEST);
      assert.deepEqual(w.historyReads, [SA_USER]);
      assert.equal(w.applied.length, 1);
    });

    test('failure: an invalid bundle is Installed=False InvalidBundle and Progressing Blocked; not retried until the spec changes', async () => {
      const w = setup();
      w.render = () => Promise.reject(new TerminalError('InvalidBundle', 'CRD x needs a conversion webhook'));
      assert.equal(await w.reconciler().reconcile(req, ctx), undefined);
      assert.equal(w.applied.length, 0);
      assert.deepEqual([conditionOf(w, 'Installed')?.reason, conditionOf(w, 'Installed')?.message], ['InvalidBundle', 'CRD x needs a conversion webhook']);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason], ['False', 'Blocked']);
      assert.equal(lastStatus(w).contentDigest, DIGEST, 'what was unpacked is in status');
      assert.equal(w.kube.statusWrites.length, 1);
    });

    test('failure: the API server failing while rendering is Progressing Retrying, thrown for backoff, not a verdict on the bundle', async () => {
      const w = setup();
      w.render = () => Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'list Secret team-a'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), /list Secret team-a/);
      assert.equal(conditionOf(w, 'Installed'), undefined);
      assert.deepEqual([conditionOf(w, 'Progressing')?.reason, conditionOf(w, 'Progressing')?.message], ['Retrying', 'rendering: list Secret team-a (retrying)']);
      assert.equal(w.kube.statusWrites.length, 1);
    });

    test('failure: an unexpected render bug is InvalidBundle in status and thrown', async () => {
      const w = setup();
      w.render = () => Promise.reject(new TypeError('cannot read properties of undefined'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), TypeError);
      assert.equal(conditionOf(w, 'Installed')?.reason, 'InvalidBundle');
      assert.equal(conditionOf(w, 'Progressing')?.reason, 'Blocked', 'the step said it; the catch-all does not overwrite it');
      assert.equal(w.kube.statusWrites.length, 1);
    });
  });

  describe('Preflight', () => {
    test('failure: missing permissions are InsufficientPermissions, each named (20 at most); nothing is applied; looked at again in 30 s', async () => {
      const w = setup();
      const missing = Array.from({ length: 22 }, (_, i): MissingPermission => ({ verb: 'create', group: '', resource: 'configmaps', namespace: 'team-a', name: `c${i}` }));
      w.missing = () => Promise.resolve(missing);
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 30_000 });
      assert.equal(w.applied.length, 0);
      const c = conditionOf(w, 'Installed');
      assert.deepEqual([c?.status, c?.reason], ['False', 'InsufficientPermissions']);
      assert.match(c?.message ?? '', /^service account team-a\/installer lacks permissions: .* and 2 more$/);
      assert.equal(conditionOf(w, 'Progressing')?.reason, 'Retrying');
      assert.equal(w.kube.statusWrites.length, 1);
    });

    test('failure: a permission check that cannot be made fails closed: nothing applied, said, thrown for backoff', async () => {
      const w = setup();
      w.missing = () => Promise.reject(new KubeApiError(500, 'InternalError', 'subjectaccessreviews failed'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), /subjectaccessreviews failed/);
      assert.equal(w.applied.length, 0);
      assert.equal(conditionOf(w, 'Progressing')?.message, 'cannot check the permissions of service account team-a/installer; waiting: subjectaccessreviews failed');
      assert.equal(w.kube.statusWrites.length, 1);
    });
  });

  describe('Apply', () => {
    test('failure: a refused apply (another owner, unsafe CRD change) is Installed=False Refused, Progressing Blocked; looked at again in a minute', async () => {
      const w = setup();
      w.applyResult = () => Promise.reject(new ApplyRefusedError(new ValidationResult('release team-a/op').error('owner', 'ConfigMap team-a/settings belongs to BundleDeployment other')));
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.equal(conditionOf(w, 'Installed')?.reason, 'Refused');
      assert.match(conditionOf(w, 'Installed')?.message ?? '', /belongs to BundleDeployment other/);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason], ['False', 'Blocked']);
      assert.equal(w.kube.statusWrites.length, 1);
    });

    test('failure: an invalid request is refused the same way', async () => {
      const w = setup();
      w.applyResult = () => Promise.reject(new ValidationError(new ValidationResult('release team-a/op').error('name', 'bad release name')));
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.equal(conditionOf(w, 'Installed')?.reason, 'Refused');
    });

    test('failure: a transient apply error is Progressing Retrying with its message and thrown for backoff; what was unpacked stays in status', async () => {
      const w = setup();
      w.applyResult = () => Promise.reject(new KubeApiError(504, 'Timeout', 'the server was unable to return a response in the time allotted'));
      await assert.rejects(w.reconciler().reconcile(req, ctx), /unable to return a response/);
      assert.deepEqual([conditionOf(w, 'Progressing')?.status, conditionOf(w, 'Progressing')?.reason, conditionOf(w, 'Progressing')?.message], ['True', 'Retrying', 'the server was unable to return a response in the time allotted']);
      assert.equal(lastStatus(w).contentDigest, DIGEST);
      assert.equal(w.kube.statusWrites.length, 1);
    });

    test('health not ready: Installed but Unhealthy, naming the objects; looked at again in 10 s', async () => {
      const w = setup();
      const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'team-a', name: 'op' };
      w.applyResult = () => Promise.resolve(deployed({ health: { healthy: false, objects: [{ ref, healthy: false, reason: '0/1 replicas available' }] } }));
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 10_000 });
      assert.equal(conditionOf(w, 'Installed')?.status, 'True');
      assert.deepEqual([conditionOf(w, 'Healthy')?.status, conditionOf(w, 'Healthy')?.reason, conditionOf(w, 'Healthy')?.message], ['False', 'Unhealthy', 'Deployment op: 0/1 replicas available']);
    });

    test('a failed first install that was removed is Installed=False Failed with no revision left; retried after a minute, not at once (clock port)', async () => {
      const w = setup({ status: { revision: 7, appliedObjects: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'old' }] } });
      w.applyResult = () => Promise.resolve(deployed({ status: 'failed', message: 'health timed out', removed: [], health: { healthy: false, objects: [] } }));
      const r = w.reconciler();
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 60_000 });
      const status = lastStatus(w);
      assert.equal(status.revision, undefined, 'no revision left');
      assert.deepEqual(status.appliedObjects, []);
      assert.deepEqual([conditionOf(w, 'Installed')?.status, conditionOf(w, 'Installed')?.reason], ['False', 'Failed']);
      assert.equal(conditionOf(w, 'Healthy')?.message, 'health timed out');
      // An event (say) 10 s later: not applied again, nothing new to write.
      w.now = Date.parse(conditionOf(w, 'Installed')?.lastTransitionTime ?? '') + 10_000;
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 50_000 });
      assert.equal(w.applied.length, 1);
      assert.equal(w.kube.statusWrites.length, 1);
      // A minute on: tried again.
      w.now += 60_000;
      await r.reconcile(req, ctx);
      assert.equal(w.applied.length, 2);
    });

    test('a rolled-back upgrade is Installed=True RolledBack, Progressing Retrying', async () => {
      const w = setup();
      w.applyResult = () => Promise.resolve(deployed({ status: 'rolled-back', revision: 3, message: 'upgrade failed; rolled back to 3' }));
      assert.deepEqual(await w.reconciler().reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.deepEqual([conditionOf(w, 'Installed')?.status, conditionOf(w, 'Installed')?.reason], ['True', 'RolledBack']);
      assert.equal(conditionOf(w, 'Progressing')?.reason, 'Retrying');
      assert.equal(lastStatus(w).revision, 3);
    });

    test('skipped objects and dropped fields are reported in status and as Events, once', async () => {
      const w = setup();
      const monitor = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', namespace: 'team-a', name: 'op-metrics' };
      const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'team-a', name: 'op' };
      w.applyResult = () => Promise.resolve(deployed({ skipped: [{ object: monitor, reason: 'API not served' }], droppedFields: [{ object: deployment, path: 'spec.extra', schema: '/openapi/v3 apis/apps/v1' }] }));
      const r = w.reconciler();
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 30_000 }, 'skipped objects are looked for again soon');
      assert.equal(conditionOf(w, 'OptionalObjectsSkipped')?.reason, 'APINotServed');
      assert.deepEqual((lastStatus(w).warnings as { field: string }[]).map((x) => x.field), ['spec.extra']);
      assert.deepEqual(w.events.map((e) => e.reason).sort(), ['OptionalObjectsSkipped', 'UnknownFieldDropped']);
      await r.reconcile(req, ctx);
      assert.equal(w.events.length, 2, 'nothing new: no new Events');
      assert.equal(w.kube.statusWrites.length, 1);
      // The API appears: the condition goes.
      w.applyResult = () => Promise.resolve(deployed());
      await r.reconcile(req, ctx);
      assert.equal(conditionOf(w, 'OptionalObjectsSkipped'), undefined);
    });
  });
});

describe('signed content', () => {
  test('an artifact refused by its verification policy is not applied; the installed revision keeps running; the condition names artifact, digest and reason', async () => {
    const w = setup({ spec: { source: { type: 'image', image: { ref: 'registry.example/op:2' }, verify: { provider: 'cosign', secretRef: { namespace: 'team-a', name: 'keys' } } } } });
    const r = w.reconciler();
    w.unpack = () => Promise.reject(new SignatureVerificationError('registry.example/op:2', `sha256:${'e'.repeat(64)}`, 'Unsigned', 'it has no cosign signature'));
    await r.reconcile(req, ctx).catch(() => undefined);
    assert.equal(w.applied.length, 0, 'nothing of it is applied');
    assert.equal(w.uninstalled.length, 0, 'nothing installed is removed');
    const unpacked = conditionOf(w, 'Unpacked');
    assert.deepEqual([unpacked?.status, unpacked?.reason], ['False', 'VerificationFailed']);
    assert.match(unpacked?.message ?? '', /registry\.example\/op:2 \(digest sha256:e{64}\) is refused: it has no cosign signature/);
    assert.equal(w.unpacks[0]?.secrets?.identity, 'service account team-a/installer', 'the keys are read as the installing ServiceAccount');
  });

  test('a verify policy on a ConfigMaps source is refused as an invalid spec, naming the source type', async () => {
    const w = setup({ spec: { source: { type: 'configMaps', configMaps: [{ namespace: 'team-a', name: 'op-bundle' }], verify: { provider: 'cosign', secretRef: { namespace: 'team-a', name: 'keys' } } } } });
    await w.reconciler().reconcile(req, ctx);
    assert.equal(w.unpacks.length, 0);
    assert.equal(w.applied.length, 0);
    assert.match(conditionOf(w, 'Progressing')?.message ?? '', /a configMaps source cannot carry an OCI signature/);
  });
});
