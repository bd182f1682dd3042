/**
 * The ClusterExtension reconciler's steps over the one fake cluster: each step's success and
 * failure branches, and one status write per reconcile (none when nothing changed). The cluster
 * holds the extension (finalizer, status), its BundleDeployments (applied and deleted through the
 * default port) and OperatorConditions; the installed-state view is the real reader listing it.
 * Catalogs, the resolver, the planner and the clock are ports the tests answer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ANNOTATION_BUNDLE_VERSION,
  FINALIZER_CLEANUP,
  LABEL_OWNER_KIND,
  LABEL_OWNER_NAME,
  LABEL_PACKAGE,
  type ClusterExtension,
  type ClusterExtensionStatus,
} from '../api/types.js';
import { neededByLabel } from '../installed/index.js';
import { LABEL_OLMV1_TWIN_OF } from '../api/olmv1/types.js';
import { KubeApiError } from '../kube/errors.js';
import {
  ctx,
  req,
  T,
  extension,
  served,
  chosen,
  setup,
  resolvesTo,
  withCaches,
  lastStatus,
  condition,
  installedDeployment,
} from './cluster-extension.test-helper.js';

describe('ClusterExtension reconciler, step by step with fakes', () => {
  describe('status is written once per reconcile', () => {
    test('a first install: the BundleDeployment is created, and status is written exactly once; the same reconcile again writes nothing', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.statusWrites.length, 1, 'one status write per reconcile');
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.statusWrites.length, 1, 'nothing changed: no second write');
      assert.equal(cluster.applied.length, 1, 'the unchanged BundleDeployment is not written again');
    });

    test('once the BundleDeployment is installed: one write saying so, then none while nothing changes', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      cluster.setDeploymentStatus('demo', { status: 'True', reason: 'Succeeded', message: 'installed' });
      const before = cluster.statusWrites.length;
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.equal(cluster.statusWrites.length, before + 1);
      await reconciler.reconcile(req, ctx);
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.statusWrites.length, before + 1);
    });

    test('only the installed state is read and changed under the lock: the finalizer is added before it is waited for, the status written after it is let go', async () => {
      const { cluster, view } = setup({ ce: extension({ metadata: { finalizers: [] } }) });
      const counts = (): string => `finalizer ${cluster.finalizerPatches}, applied ${cluster.applied.length}, status ${cluster.statusWrites.length}`;
      const seen: string[] = [];
      const lock = {
        withLock: async <T>(fn: () => Promise<T>): Promise<T> => {
          seen.push(`lock taken: ${counts()}`);
          try {
            return await fn();
          } finally {
            seen.push(`lock let go: ${counts()}`);
          }
        },
      };
      await withCaches(cluster, view, lock, '1.0.0').reconcile(req, ctx);
      assert.deepEqual(seen, ['lock taken: finalizer 1, applied 0, status 0', 'lock let go: finalizer 1, applied 1, status 0']);
      assert.equal(cluster.statusWrites.length, 1, 'the status, written after the lock');
      assert.deepEqual(cluster.extensions.get('demo')?.metadata.finalizers, [FINALIZER_CLEANUP]);
      // A reconcile that fails in the lock still says why in status, after it.
      cluster.failWrites(new KubeApiError(422, 'Invalid', 'refused'));
      cluster.extensions.set('demo', { ...(cluster.extensions.get('demo') as ClusterExtension), spec: { ...extension().spec, source: { sourceType: 'Catalog', catalog: { packageName: 'demo', version: '2.0.0' } } } });
      await assert.rejects(withCaches(cluster, view, lock, '2.0.0').reconcile(req, ctx));
      assert.equal(seen.at(-1), 'lock let go: finalizer 1, applied 1, status 1');
      assert.equal(cluster.statusWrites.length, 2);
      assert.match(JSON.stringify(cluster.statusWrites.at(-1)?.status.conditions), /refused/);
    });

    test('a finalizer patch refused before the lock (forbidden, not a conflict) does not escape: the locked reconcile tries again and says why in status', async () => {
      const { cluster, view } = setup({ ce: extension({ metadata: { finalizers: [] } }) });
      cluster.failPatches(new KubeApiError(403, 'Forbidden', 'clusterextensions.binnacle.dev "demo" is forbidden'));
      let locked = 0;
      const lock = { withLock: <T>(fn: () => Promise<T>): Promise<T> => { locked += 1; return fn(); } };
      await assert.rejects(withCaches(cluster, view, lock, '1.0.0').reconcile(req, ctx), /forbidden/);
      assert.equal(locked, 1, 'the lock was still taken');
      assert.equal(cluster.finalizerPatches, 2, 'tried before the lock, and again in it');
      assert.equal(cluster.statusWrites.length, 1, 'the refusal is said in status');
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /forbidden/);
      assert.equal(cluster.applied.length, 0);
    });

    test('an extension that is gone is not reconciled and nothing is written', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.extensions.clear();
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.equal(cluster.statusWrites.length + cluster.applied.length + cluster.finalizerPatches, 0);
    });
  });

  describe('HandleFinalizer', () => {
    test('success: an extension without the cleanup finalizer gets it, its write is told to the view, and the reconcile goes on', async () => {
      const { cluster, view, reconciler } = setup({ ce: extension({ metadata: { finalizers: [] } }), resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      assert.deepEqual(cluster.extensions.get('demo')?.metadata.finalizers, [FINALIZER_CLEANUP]);
      assert.equal(cluster.applied.length, 1, 'resolved and deployed in the same reconcile');
      assert.ok(view.writes.some((w) => w.startsWith('extensions@')), 'the view must see the finalizer write');
    });

    test('failure: the finalizer patch fails; the error is said in the one status write and thrown for backoff', async () => {
      const { cluster, reconciler } = setup({ ce: extension({ metadata: { finalizers: [] } }), resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.failPatches(new KubeApiError(409, 'Conflict', 'the object has been modified'));
      await assert.rejects(reconciler.reconcile(req, ctx), /the object has been modified/);
      assert.equal(cluster.statusWrites.length, 1);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
      assert.equal(condition(cluster, 'Progressing')?.message, 'the object has been modified');
      assert.equal(cluster.applied.length, 0);
    });

    test('deletion: the set is let go (its BundleDeployments deleted) and the extension waits; once they are gone the finalizer goes; no status is written', async () => {
      const ce = extension({ metadata: { deletionTimestamp: T } });
      const { cluster, view, reconciler } = setup({ ce, resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 2_000 });
      assert.deepEqual(cluster.deleted, ['demo']);
      assert.deepEqual(cluster.extensions.get('demo')?.metadata.finalizers, [FINALIZER_CLEANUP], 'held until its BundleDeployments are gone');
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 2_000 }, 'still being removed: wait');
      cluster.deployments.delete('demo');
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.equal(cluster.extensions.get('demo'), undefined, 'its finalizer removed, the extension goes');
      assert.equal(cluster.statusWrites.length, 0);
      // The BundleDeployment's delete makes the view list the API server next; the extension's own
      // going does not (it is written after the lock, and nothing installed changes with it).
      assert.equal(view.deletes, 1);
    });

    test('deletion: a dependency another extension still needs stays, handed to it', async () => {
      const ce = extension({ metadata: { deletionTimestamp: T } });
      const { cluster, reconciler } = setup({ ce });
      cluster.extensions.set('other', extension({ name: 'other' }));
      cluster.deployments.set('demo-lib', installedDeployment('demo-lib', 'lib', '1.0.0', ['demo', 'other']));
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.deepEqual(cluster.deleted, []);
      const lib = cluster.deployments.get('demo-lib');
      assert.equal(lib?.metadata.labels?.[neededByLabel('demo')], undefined);
      assert.equal(lib?.metadata.labels?.[neededByLabel('other')], 'dependency');
      assert.equal(lib?.metadata.labels?.[LABEL_OWNER_NAME], 'other');
    });

    test('deletion failure: a BundleDeployment delete is refused; the extension keeps its finalizer, status says why, the error is thrown', async () => {
      const ce = extension({ metadata: { deletionTimestamp: T } });
      const { cluster, reconciler } = setup({ ce });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      cluster.failWrites(new KubeApiError(403, 'Forbidden', 'bundledeployments "demo" is forbidden'));
      await assert.rejects(reconciler.reconcile(req, ctx), /forbidden/);
      assert.deepEqual(cluster.extensions.get('demo')?.metadata.finalizers, [FINALIZER_CLEANUP]);
      assert.equal(cluster.statusWrites.length, 1);
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /forbidden/);
    });
  });

  describe('Validate', () => {
    test('failure: an invalid spec is Progressing=False InvalidSpec naming each field; nothing is resolved or written but status', async () => {
      const ce = extension({ spec: { namespace: '', serviceAccount: { name: '' } } });
      const { cluster, resolves, reconciler } = setup({ ce, resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.equal(await reconciler.reconcile(req, ctx), undefined, 'not retried: a spec change calls it back');
      const c = condition(cluster, 'Progressing');
      assert.equal(c?.status, 'False');
      assert.equal(c?.reason, 'InvalidSpec');
      assert.equal(c?.message, 'spec.namespace: required; spec.serviceAccount.name: required');
      assert.equal(c?.observedGeneration, 1);
      assert.equal(lastStatus(cluster)?.observedGeneration, 1);
      assert.equal(resolves.length, 0);
      assert.equal(cluster.applied.length, 0);
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('failure keeps what status said before (the installed bundle, the last resolution and history)', async () => {
      const previous: ClusterExtensionStatus = {
        install: { bundle: { name: 'demo.v1.0.0', version: '1.0.0', package: 'demo', image: 'i', catalog: 'ops' }, bundleDeployment: 'demo', namespace: 'demo-ns' },
        resolution: { bundles: [] },
        history: [{ time: T, reason: 'Initial', generation: 1, catalogs: [], bundles: [], outcome: 'Resolved' }],
      };
      const ce = extension({ spec: { namespace: '' }, metadata: { generation: 2 } });
      ce.status = previous;
      const { cluster, reconciler } = setup({ ce });
      await reconciler.reconcile(req, ctx);
      assert.deepEqual(lastStatus(cluster)?.install, previous.install);
      assert.deepEqual(lastStatus(cluster)?.history, previous.history);
      assert.equal(lastStatus(cluster)?.observedGeneration, 2);
    });
  });

  describe('Tidy', () => {
    test('success: a BundleDeployment no existing extension needs (left by a crash) is deleted', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.deployments.set('gone-lib', installedDeployment('gone-lib', 'lib', '1.0.0', ['gone']));
      await reconciler.reconcile(req, ctx);
      assert.deepEqual(cluster.deleted, ['gone-lib']);
      assert.equal(cluster.applied.length, 1, 'and the extension is still deployed');
    });

    test('failure: the delete fails; status says why, once, and the error is thrown', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.deployments.set('gone-lib', installedDeployment('gone-lib', 'lib', '1.0.0', ['gone']));
      cluster.failWrites(new KubeApiError(500, 'InternalError', 'etcdserver: request timed out'));
      await assert.rejects(reconciler.reconcile(req, ctx), /etcdserver/);
      assert.equal(cluster.statusWrites.length, 1);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
    });
  });

  describe('Catalogs', () => {
    test('failure: a ClusterCatalog the selector draws from is still loading; wait for it, nothing resolved', async () => {
      const { cluster, resolves, reconciler } = setup({ loading: ['certified', 'community'], resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      assert.equal(condition(cluster, 'Progressing')?.message, 'waiting for ClusterCatalogs certified, community to serve content before resolving');
      assert.equal(resolves.length, 0);
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('failure: no catalog is serving', async () => {
      const { cluster, resolves, reconciler } = setup({ catalogs: [], resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      const c = condition(cluster, 'Progressing');
      assert.equal(c?.reason, 'Retrying');
      assert.equal(c?.message, 'no ClusterCatalog matching the selector is serving content yet');
      assert.equal(resolves.length, 0);
    });

    test("an OLM v1 twin with its catalog gone keeps its installed bundle and still applies its other spec changes (operator-controller's fallback); another version asked for, or a binnacle.dev extension, waits", async () => {
      const twin = (over: Partial<ClusterExtension['spec']> = {}): ClusterExtension =>
        extension({ metadata: { labels: { 'binnacle.dev/olmv1-twin-of': 'uid-v1' }, ownerReferences: [{ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'demo', uid: 'uid-v1', controller: true }], generation: 2 }, spec: { install: { crdUpgradeSafety: 'None' }, ...over } });
      const kept = setup({ ce: twin(), catalogs: [], resolve: resolvesTo(chosen('demo', '2.0.0')) });
      kept.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await kept.reconciler.reconcile(req, ctx);
      assert.equal(kept.resolves.length, 0, 'nothing to resolve against: not resolved');
      assert.equal(kept.cluster.deployments.get('demo')?.spec.crdUpgradeSafety, 'None', 'the spec change reached the BundleDeployment');
      assert.equal(kept.cluster.deployments.get('demo')?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.0.0', 'the installed version is kept');
      assert.notEqual(condition(kept.cluster, 'Progressing')?.message, 'no ClusterCatalog matching the selector is serving content yet');

      const other = setup({ ce: twin({ source: { sourceType: 'Catalog', catalog: { packageName: 'demo', version: '2.0.0' } } }), catalogs: [] });
      other.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      assert.deepEqual(await other.reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 }, 'another version cannot be had without a catalog');
      const own = setup({ ce: extension({ spec: { install: { crdUpgradeSafety: 'None' } } }), catalogs: [] });
      own.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      assert.deepEqual(await own.reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
    });

    test('failure: catalogs serve, but none matches the selector', async () => {
      const ce = extension({ spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'demo', selector: { matchLabels: { tier: 'gold' } } } } } });
      const { cluster, resolves, reconciler } = setup({ ce, catalogs: [served('ops', undefined, { tier: 'silver' })], resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      assert.equal(condition(cluster, 'Progressing')?.message, 'no ClusterCatalog matching the selector is serving content yet');
      assert.equal(resolves.length, 0);
    });

    test('success: only the catalogs the selector draws from reach the resolver and the history', async () => {
      const ce = extension({ spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'demo', selector: { matchLabels: { tier: 'gold' } } } } } });
      const { cluster, resolves, reconciler } = setup({ ce, catalogs: [served('gold', undefined, { tier: 'gold' }), served('silver', undefined, { tier: 'silver' })], resolve: resolvesTo(chosen('demo', '1.0.0', { catalog: 'gold' })) });
      await reconciler.reconcile(req, ctx);
      assert.equal(resolves.length, 1);
      assert.deepEqual(lastStatus(cluster)?.history?.[0]?.catalogs, [{ name: 'gold', digest: 'sha256:gold' }]);
    });
  });

  describe('Resolve', () => {
    test('failure: nothing fits (the real resolver): the explanation is in status.resolution, the condition and the history, and it is looked at again later', async () => {
      const { cluster, reconciler } = setup();
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
      const status = lastStatus(cluster);
      const explanation = status?.resolution?.explanation ?? '';
      assert.match(explanation, /no set of bundles satisfies the request/);
      assert.match(explanation, /demo/);
      assert.deepEqual(status?.resolution?.bundles, []);
      assert.equal(status?.resolution?.requestUnmatched, true, 'no bundle of the requested package fits: said as data (OLM v1 words it from this)');
      assert.equal(condition(cluster, 'Progressing')?.message, `resolution failed: ${explanation}`);
      assert.equal(condition(cluster, 'Installed')?.status, 'False');
      assert.equal(condition(cluster, 'Installed')?.reason, 'Failed');
      assert.deepEqual(
        status?.history?.map((h) => ({ time: h.time, reason: h.reason, outcome: h.outcome })),
        [{ time: '2026-11-26T12:00:00Z', reason: 'Initial', outcome: 'Failed' }],
        'recorded at the clock port\'s time',
      );
      assert.equal(cluster.applied.length, 0);
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('failure: the package is already installed by another extension; refused, naming it', async () => {
      const { cluster, resolves, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.extensions.set('first', extension({ name: 'first', spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'demo' } } } }));
      cluster.deployments.set('first-demo', installedDeployment('first-demo', 'demo', '1.0.0', ['first'], { labels: { [LABEL_OWNER_KIND]: 'ClusterExtension', [LABEL_OWNER_NAME]: 'first', [LABEL_PACKAGE]: 'demo', [neededByLabel('first')]: 'requested' } }));
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.equal(
        lastStatus(cluster)?.resolution?.explanation,
        'package demo is already installed by extension first (BundleDeployment first-demo, version 1.0.0); a package is installed once per cluster',
      );
      assert.equal(lastStatus(cluster)?.resolution?.requestUnmatched, undefined, 'not a request nothing fits');
      assert.equal(resolves.length, 0);
      assert.equal(cluster.applied.length, 0);
    });

    describe("taking over another extension's dependency", () => {
      const verify = { provider: 'cosign' as const, secretRef: { namespace: 'prod', name: 'keys' } };
      /** `first` installed `app`, which needs `demo`: demo's BundleDeployment is first's dependency, verified or not. */
      const withDependency = (o: { verified: boolean; ce?: ClusterExtension }): ReturnType<typeof setup> => {
        const w = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')), ...(o.ce === undefined ? {} : { ce: o.ce }) });
        w.cluster.extensions.set('first', extension({ name: 'first', spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'app' } } } }));
        const dep = installedDeployment('first-demo', 'demo', '1.0.0', ['first'], { labels: { [LABEL_OWNER_KIND]: 'ClusterExtension', [LABEL_OWNER_NAME]: 'first', [LABEL_PACKAGE]: 'demo', [neededByLabel('first')]: 'dependency' } });
        if (o.verified) dep.spec.source.verify = verify;
        w.cluster.deployments.set('first-demo', dep);
        return w;
      };

      test("failure: an OLM v1 ClusterExtension's twin does not take it over (it would install as the other's installer, where it runs); nothing written", async () => {
        const { cluster, resolves, reconciler } = withDependency({ verified: false, ce: extension({ metadata: { labels: { [LABEL_OLMV1_TWIN_OF]: 'uid-v1' }, ownerReferences: [{ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'demo', uid: 'uid-v1', controller: true }] } }) });
        assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
        assert.equal(lastStatus(cluster)?.resolution?.explanation, "package demo is installed as a dependency (BundleDeployment first-demo in namespace demo-ns, needed by first); an OLM v1 ClusterExtension does not take over another extension's install");
        assert.equal(resolves.length, 0);
        assert.equal(cluster.applied.length, 0);
      });

      test('failure: a take-over that would drop the signature policy its source is verified with is refused; repeating it, it is taken over', async () => {
        const refused = withDependency({ verified: true });
        assert.deepEqual(await refused.reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
        assert.match(lastStatus(refused.cluster)?.resolution?.explanation ?? '', /^package demo is installed as a dependency \(BundleDeployment first-demo in namespace demo-ns, needed by first\), its source verified with a signature policy; spec\.verify must repeat it/);
        assert.equal(refused.cluster.applied.length, 0);
        const same = withDependency({ verified: true, ce: extension({ spec: { verify } }) });
        await same.reconciler.reconcile(req, ctx);
        assert.equal(same.resolves.length, 1, 'resolved');
        assert.deepEqual(same.cluster.applied.map((b) => [b.metadata?.name, b.spec?.source?.verify]), [['first-demo', verify]], 'taken over in place, verified as before');
      });
    });

    test('failure: the cluster\'s facts cannot be read; said as a failed resolution and retried with backoff', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { clusterFacts: () => Promise.reject(new Error('the server is currently unable to handle the request')) } });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true });
      assert.equal(condition(cluster, 'Progressing')?.message, 'resolution failed: the server is currently unable to handle the request');
      assert.equal(lastStatus(cluster)?.resolution?.explanation, 'the server is currently unable to handle the request');
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('success: the request carries the spec, the cluster\'s facts and what is installed; only the package\'s own set is kept', async () => {
      const ce = extension({ spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'demo', channels: ['stable'], version: '>=1.0.0', upgradeConstraintPolicy: 'SelfCertified' } } } });
      const { cluster, resolves, reconciler } = setup({
        ce,
        resolve: resolvesTo(chosen('lib', '2.0.0'), chosen('unrelated', '1.0.0'), chosen('demo', '1.0.0', { dependsOn: ['lib'] })),
        ports: { clusterFacts: () => Promise.resolve({ kubeVersion: 'v1.31.2' }) },
      });
      cluster.extensions.set('other', extension({ name: 'other' }));
      cluster.deployments.set('other', installedDeployment('other', 'other', '3.0.0', ['other']));
      await reconciler.reconcile(req, ctx);
      const input = resolves[0];
      assert.deepEqual(input?.requests, [{ package: 'demo', channels: ['stable'], versionRange: '>=1.0.0', upgradePolicy: 'SelfCertified', preferUpgrade: true }]);
      assert.deepEqual(input?.cluster, { kubeVersion: 'v1.31.2' });
      assert.deepEqual(input?.installed?.map((b) => `${b.package}@${b.version}`), ['other@3.0.0']);
      assert.deepEqual(lastStatus(cluster)?.resolution?.bundles.map((b) => b.name), ['lib.v2.0.0', 'demo.v1.0.0']);
      assert.deepEqual(cluster.applied.map((b) => b.metadata.name), ['demo-lib', 'demo'], 'dependencies first');
      assert.equal(lastStatus(cluster)?.history?.at(-1)?.outcome, 'Resolved');
    });
  });

});
