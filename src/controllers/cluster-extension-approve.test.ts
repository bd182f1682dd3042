/**
 * The ClusterExtension reconciler's later steps over the one fake cluster (CheckUpgradeable,
 * Deploy, Report, Approve); the earlier ones are in cluster-extension-reconcile.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATOR_CONDITION_API_VERSION, OPERATOR_CONDITION_KIND } from '../api/operator-condition.js';
import { ANNOTATION_BUNDLE_VERSION, LABEL_OWNER_KIND, LABEL_OWNER_NAME, LABEL_PACKAGE, type ClusterExtension } from '../api/types.js';
import { ANNOTATION_APPROVED_PLAN } from '../api/approval.js';
import { emptyDeclarativeConfig } from '../declcfg/index.js';
import { neededByLabel } from '../installed/index.js';
import { KubeApiError } from '../kube/errors.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { ClusterExtensionReconciler, type ClusterExtensionPorts } from './cluster-extension.js';
import {
  ctx,
  req,
  NOW,
  T,
  World,
  extension,
  served,
  chosen,
  resolution,
  type Setup,
  setup,
  resolvesTo,
  lastStatus,
  condition,
  installedDeployment,
} from './cluster-extension.test-helper.js';

describe('ClusterExtension reconciler, step by step with fakes (later steps)', () => {
  describe('CheckUpgradeable', () => {
    const upgraded = (): Setup => {
      const ce = extension();
      ce.status = {
        conditions: [{ type: 'Installed', status: 'True', reason: 'Succeeded', message: 'installed demo.v1.0.0', lastTransitionTime: T, observedGeneration: 1 }],
        resolution: { bundles: [{ name: 'demo.v1.0.0', package: 'demo', version: '1.0.0', image: 'registry.example/demo@sha256:1.0.0', catalog: 'ops' }] },
      };
      const s = setup({ ce, resolve: resolvesTo(chosen('demo', '1.1.0')) });
      s.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      return s;
    };

    test('failure: the installed operator\'s OperatorCondition says Upgradeable=False; the upgrade waits, in its own words, and nothing is written but status', async () => {
      const { cluster, reconciler } = upgraded();
      cluster.putOperatorCondition({
        apiVersion: OPERATOR_CONDITION_API_VERSION,
        kind: OPERATOR_CONDITION_KIND,
        metadata: { name: 'demo.v1.0.0', namespace: 'demo-ns', labels: { [LABEL_OWNER_KIND]: 'BundleDeployment', [LABEL_OWNER_NAME]: 'demo' } },
        spec: { conditions: [{ type: 'Upgradeable', status: 'False', reason: 'Migrating', message: 'a storage migration is running', lastTransitionTime: T }] },
      });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      const c = condition(cluster, 'Progressing');
      assert.equal(c?.reason, 'UpgradeBlocked');
      assert.match(c?.message ?? '', /upgrade of demo to demo\.v1\.1\.0 is held back: the operator \(OperatorCondition demo-ns\/demo\.v1\.0\.0\) says Upgradeable=False: a storage migration is running/);
      assert.equal(cluster.applied.length, 0, 'the BundleDeployment is not switched');
      assert.deepEqual(lastStatus(cluster)?.resolution?.bundles.map((b) => b.version), ['1.0.0'], 'status.resolution still says what is installed');
      assert.equal(condition(cluster, 'Installed')?.status, 'True');
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('success: Upgradeable=True (or no OperatorCondition) lets the upgrade through', async () => {
      const { cluster, reconciler } = upgraded();
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 1);
      assert.equal(cluster.applied[0]?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.1.0');
    });

    test('failure: the OperatorConditions cannot be read; status says why, once, and the error is thrown', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { upgradeBlockers: () => Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'apiserver is shutting down')) } });
      await assert.rejects(reconciler.reconcile(req, ctx), /shutting down/);
      assert.equal(cluster.statusWrites.length, 1);
      assert.equal(condition(cluster, 'Progressing')?.message, 'apiserver is shutting down');
      assert.equal(lastStatus(cluster)?.history?.at(-1)?.outcome, 'Resolved', 'what was learnt before the failure is kept');
      assert.equal(cluster.applied.length, 0);
    });
  });

  describe('Deploy', () => {
    test('success: a BundleDeployment is created for the resolution, with the extension\'s namespace, ServiceAccount, image and needs', async () => {
      const { cluster, view, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      const bd = cluster.applied[0];
      assert.equal(bd?.metadata.name, 'demo');
      assert.equal(bd?.metadata.labels?.[LABEL_PACKAGE], 'demo');
      assert.equal(bd?.metadata.labels?.[neededByLabel('demo')], 'requested');
      assert.equal(bd?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.0.0');
      assert.deepEqual(bd?.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}/${r.uid}`), ['ClusterExtension/demo/uid-demo']);
      assert.equal(bd?.spec.source.image?.ref, 'registry.example/demo@sha256:1.0.0');
      assert.equal(bd?.spec.installNamespace, 'demo-ns');
      assert.deepEqual(bd?.spec.serviceAccount, { name: 'installer' });
      assert.ok(view.writes.some((w) => w.startsWith('deployments@')), 'the view must see the BundleDeployment write');
    });

    test('waiting: an earlier copy of the package is still being removed; nothing is written, and it looks again soon', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.deployments.set('old-demo', installedDeployment('old-demo', 'demo', '0.9.0', ['gone'], { deletionTimestamp: T }));
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 2_000 });
      assert.equal(cluster.applied.length, 0);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Waiting');
      assert.equal(condition(cluster, 'Progressing')?.message, 'demo: waiting for BundleDeployment old-demo to be removed');
      assert.equal(condition(cluster, 'Installed')?.reason, 'Installing');
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('failure: the BundleDeployment write is refused; status says why, once, and the error is thrown', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.failWrites(new KubeApiError(422, 'Invalid', 'BundleDeployment.binnacle.dev "demo" is invalid'));
      await assert.rejects(reconciler.reconcile(req, ctx), /is invalid/);
      assert.equal(cluster.statusWrites.length, 1);
      assert.equal(condition(cluster, 'Progressing')?.message, 'BundleDeployment.binnacle.dev "demo" is invalid');
    });
  });

  describe('Report', () => {
    test('installing: the new BundleDeployment has no verdict yet', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 30_000 });
      assert.equal(condition(cluster, 'Installed')?.reason, 'Installing');
      assert.equal(condition(cluster, 'Installed')?.message, 'installing demo.v1.0.0');
      assert.equal(condition(cluster, 'Progressing')?.message, 'waiting for demo.v1.0.0');
      assert.deepEqual(lastStatus(cluster)?.resolution?.bundles, [{ name: 'demo.v1.0.0', package: 'demo', version: '1.0.0', image: 'registry.example/demo@sha256:1.0.0', catalog: 'ops' }]);
      assert.equal(lastStatus(cluster)?.install, undefined);
    });

    test('success: the BundleDeployment is installed; so is the extension, with status.install', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      cluster.setDeploymentStatus('demo', { status: 'True', reason: 'Succeeded', message: '' });
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.equal(condition(cluster, 'Installed')?.status, 'True');
      assert.equal(condition(cluster, 'Installed')?.message, 'installed demo.v1.0.0');
      assert.equal(condition(cluster, 'Progressing')?.status, 'False');
      assert.equal(condition(cluster, 'Deprecated')?.status, 'False');
      assert.deepEqual(lastStatus(cluster)?.install, {
        bundle: { name: 'demo.v1.0.0', version: '1.0.0', package: 'demo', image: 'registry.example/demo@sha256:1.0.0', catalog: 'ops' },
        bundleDeployment: 'demo',
        namespace: 'demo-ns',
      });
    });

    test('failure: the BundleDeployment failing is reflected in the extension\'s status, in its own words', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      cluster.setDeploymentStatus('demo', { status: 'False', reason: 'Failed', message: 'pulling registry.example/demo@sha256:1.0.0: unauthorized' });
      assert.equal(await reconciler.reconcile(req, ctx), undefined, 'its own news calls the extension back');
      assert.equal(condition(cluster, 'Installed')?.reason, 'Failed');
      assert.equal(condition(cluster, 'Installed')?.message, 'demo.v1.0.0: pulling registry.example/demo@sha256:1.0.0: unauthorized');
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
      assert.equal(lastStatus(cluster)?.install, undefined);
    });

    test('a configuration the bundle refuses (OLM v1 rules, bundleConfig): Progressing=False/InvalidConfiguration in the BundleDeployment\'s words, terminal', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      const message = 'invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing';
      cluster.setDeploymentStatus('demo', { status: 'False', reason: 'InvalidConfiguration', message }, { status: 'False', reason: 'InvalidConfiguration', message });
      await reconciler.reconcile(req, ctx);
      assert.equal(condition(cluster, 'Installed')?.reason, 'Failed');
      assert.equal(condition(cluster, 'Installed')?.message, `demo.v1.0.0: ${message}`);
      assert.deepEqual([condition(cluster, 'Progressing')?.status, condition(cluster, 'Progressing')?.reason, condition(cluster, 'Progressing')?.message], ['False', 'InvalidConfiguration', message]);
    });

    // The BundleDeployment's words after an upgrade failed: Failed, or rolled back (Installed=True: the old revision runs).
    for (const [how, bdStatus, expected] of [
      ['failed', { status: 'False', reason: 'Failed', message: 'upgrade failed' }, /^demo\.v1\.1\.0: upgrade failed$/],
      ['rolled back', { status: 'True', reason: 'RolledBack', message: 'revision 3 failed (not healthy after 120 s); rolled back to revision 2 as revision 4' }, /^demo\.v1\.1\.0: revision 3 failed .*rolled back/],
    ] as const) {
      test(`an upgrade ${how}: Installed stays True and status.install on the old version (it runs); Progressing=Retrying says why the new one is not installed`, async () => {
        const ce = extension();
        ce.status = {
          conditions: [{ type: 'Installed', status: 'True', reason: 'Succeeded', message: 'installed demo.v1.0.0', lastTransitionTime: T, observedGeneration: 1 }],
          install: { bundle: { name: 'demo.v1.0.0', version: '1.0.0', package: 'demo', image: 'registry.example/demo@sha256:1.0.0', catalog: 'ops' }, bundleDeployment: 'demo', namespace: 'demo-ns' },
        };
        const { cluster, reconciler } = setup({ ce, resolve: resolvesTo(chosen('demo', '1.1.0')) });
        cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
        await reconciler.reconcile(req, ctx);
        cluster.setDeploymentStatus('demo', bdStatus);
        await reconciler.reconcile(req, ctx);
        assert.equal(condition(cluster, 'Installed')?.status, 'True');
        assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
        assert.match(condition(cluster, 'Progressing')?.message ?? '', expected);
        assert.equal(lastStatus(cluster)?.install?.bundle.version, '1.0.0', 'the extension does not claim 1.1.0');
      });
    }

    test('a verdict from the version before is not this version\'s', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.1.0')) });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.deployments.get('demo')?.metadata.generation, 2, 'the spec changed: a new generation');
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Installing', 'Installed=True of generation 1 does not speak for 1.1.0');
    });

    test('deprecations the catalog declares for the package are reported', async () => {
      const config = emptyDeclarativeConfig();
      config.deprecations.push({ schema: 'olm.deprecations', package: 'demo', entries: [{ reference: { schema: 'olm.package' }, message: 'demo is end of life' }] });
      const { cluster, reconciler } = setup({ catalogs: [served('ops', config)], resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      assert.equal(condition(cluster, 'Deprecated')?.message, 'demo is end of life');
      assert.equal(condition(cluster, 'PackageDeprecated')?.status, 'True');
      assert.equal(condition(cluster, 'BundleDeprecated')?.status, 'False');
    });
  });

  describe('Approve (issue 31 §1: upgrades approved from their plan)', () => {
    /** A planner whose plan digest follows the chosen bundles (as the real one's follows their digests and manifests). */
    function planner(calls: string[] = []): ClusterExtensionPorts['planChange'] {
      return ({ chosen: bundles }) => {
        calls.push(bundles.map((b) => b.name).join(','));
        const digest = `sha256:${bundles.map((b) => b.version).join('-')}`;
        return Promise.resolve({ digest, changes: bundles.map((b) => ({ name: b.name, package: b.package, to: b.version, ref: b.image })), objects: { create: 0, update: 1, delete: 0, unchanged: 3, changed: ['~ Deployment demo-ns/demo'] }, crdSafety: [], missingPermissions: [] });
      };
    }
    const manual = (over: { annotations?: Record<string, string>; spec?: Partial<ClusterExtension['spec']> } = {}): ClusterExtension =>
      extension({ spec: { upgradeApproval: 'Manual', ...over.spec }, metadata: over.annotations === undefined ? {} : { annotations: over.annotations } });
    /** Someone approves the plan: the annotation, written by their own hand. */
    const approve = (cluster: World, digest: string): void => {
      const ce = cluster.extensions.get('demo');
      assert.ok(ce !== undefined);
      cluster.cluster.put({ ...ce, metadata: { ...ce.metadata, annotations: { ...ce.metadata.annotations, [ANNOTATION_APPROVED_PLAN]: digest } } });
    };

    test('Manual: a newer bundle changes nothing; status shows the plan and its digest, and Installed stays True', async () => {
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 300_000 });
      assert.equal(cluster.applied.length, 0, 'no BundleDeployment is written');
      assert.equal(cluster.deployments.get('demo')?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.0.0');
      const pending = lastStatus(cluster)?.pendingPlan;
      assert.equal(pending?.digest, 'sha256:1.1.0');
      assert.equal(pending?.since, NOW.toISOString());
      assert.deepEqual(pending?.objects?.changed, ['~ Deployment demo-ns/demo']);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'AwaitingApproval');
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /the upgrade to demo\.v1\.1\.0 awaits approval of plan sha256:1\.1\.0 \(binnacle approve demo --digest sha256:1\.1\.0\)/);
      assert.notEqual(condition(cluster, 'Installed')?.status, 'False');
    });

    test('a re-poll with nothing new keeps the same plan (digest and time) and writes nothing', async () => {
      let minutes = 0;
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner(), clock: () => new Date(NOW.getTime() + minutes * 60_000) } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      minutes = 10;
      const writes = cluster.statusWrites.length;
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.statusWrites.length, writes, 'the same plan: no status write');
      assert.equal(lastStatus(cluster)?.pendingPlan?.since, NOW.toISOString());
    });

    test('approving the digest shown lets exactly that upgrade through, and the plan leaves status once it is applied', async () => {
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      approve(cluster, 'sha256:1.1.0');
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 1);
      assert.equal(cluster.deployments.get('demo')?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.1.0');
      assert.equal(lastStatus(cluster)?.pendingPlan, undefined);
      cluster.setDeploymentStatus('demo', { status: 'True', reason: 'Succeeded', message: 'installed' });
      await reconciler.reconcile(req, ctx);
      assert.equal(condition(cluster, 'Installed')?.message, 'installed demo.v1.1.0');
    });

    test('a newer plan supersedes an unapproved one and says so; the approval of the superseded digest is not applied and says why', async () => {
      let offered = chosen('demo', '1.1.0');
      const { cluster, reconciler } = setup({ ce: manual(), resolve: () => resolution([offered]), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      offered = chosen('demo', '1.2.0'); // the catalog moved on before anyone approved
      await reconciler.reconcile(req, ctx);
      assert.equal(lastStatus(cluster)?.pendingPlan?.digest, 'sha256:1.2.0');
      assert.equal(lastStatus(cluster)?.pendingPlan?.supersedes, 'sha256:1.1.0');
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /it supersedes plan sha256:1\.1\.0, which was not approved/);
      approve(cluster, 'sha256:1.1.0');
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 0, 'the superseded plan is not applied, nor the newer one');
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /the approval of sha256:1\.1\.0 is not applied: that plan was superseded before it was applied/);
      approve(cluster, 'sha256:1.2.0');
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.deployments.get('demo')?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.2.0');
    });

    test('an approval naming no pending plan (a typo, an old one) lets nothing through and says why', async () => {
      const { cluster, reconciler } = setup({ ce: manual({ annotations: { [ANNOTATION_APPROVED_PLAN]: 'sha256:nope' } }), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 0);
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /the approval of sha256:nope is not applied: it names no plan awaiting approval/);
    });

    test('a new dependency the upgrade brings waits too', async () => {
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('lib', '1.0.0'), chosen('demo', '1.0.0', { dependsOn: ['lib'] })), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 0);
      assert.equal(lastStatus(cluster)?.pendingPlan?.digest, 'sha256:1.0.0-1.0.0');
    });

    test('Automatic (the default) and Manual with nothing new: no plan is made and nothing waits', async () => {
      const calls: string[] = [];
      const auto = setup({ resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner(calls) } });
      auto.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await auto.reconciler.reconcile(req, ctx);
      assert.equal(auto.cluster.applied.length, 1);
      const same = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { planChange: planner(calls) } });
      same.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await same.reconciler.reconcile(req, ctx);
      assert.deepEqual(calls, []);
      assert.equal(condition(same.cluster, 'Installed')?.status, 'True');
      assert.equal(lastStatus(same.cluster)?.pendingPlan, undefined);
    });

    test('a first install waits only when spec.install.approval is Manual; upgradeApproval alone does not hold it', async () => {
      const first = setup({ ce: extension({ spec: { install: { approval: 'Manual' } } }), resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { planChange: planner() } });
      await first.reconciler.reconcile(req, ctx);
      assert.equal(first.cluster.applied.length, 0);
      assert.equal(condition(first.cluster, 'Installed')?.reason, 'AwaitingApproval');
      assert.match(condition(first.cluster, 'Installed')?.message ?? '', /the install of demo\.v1\.0\.0 awaits approval of plan sha256:1\.0\.0/);
      approve(first.cluster, 'sha256:1.0.0');
      await first.reconciler.reconcile(req, ctx);
      assert.equal(first.cluster.applied.length, 1);
      const upgradesOnly = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { planChange: planner() } });
      await upgradesOnly.reconciler.reconcile(req, ctx);
      assert.equal(upgradesOnly.cluster.applied.length, 1);
    });

    describe('an approval pins the digests its plan showed (issue 43 §4)', () => {
      const OLD = `sha256:${'a'.repeat(64)}`;
      const MOVED = `sha256:${'b'.repeat(64)}`;
      /** The registry as the planner and the reconciler see it: the tag points to `at.digest`. */
      const at = { digest: OLD };
      const tagged = chosen('demo', '1.1.0', { image: 'registry.example/demo:1.1.0' });
      /** A planner that pulls by tag, as the real one does: its plan's digest covers the image's digest. */
      const pulling: ClusterExtensionPorts['planChange'] = ({ chosen: bundles }) =>
        Promise.resolve({ digest: `sha256:plan-${at.digest.slice(7, 15)}`, changes: bundles.map((b) => ({ name: b.name, package: b.package, to: b.version, ref: b.image, digest: at.digest })), objects: { create: 0, update: 1, delete: 0, unchanged: 3, changed: [] }, crdSafety: [], missingPermissions: [] });

      /** demo 1.0.0 installed, 1.1.0 offered by tag while the tag points to OLD, its plan approved and applied. */
      async function approvedAtOld(): Promise<Setup> {
        at.digest = OLD;
        const s = setup({ ce: manual(), resolve: resolvesTo(tagged), ports: { planChange: pulling, resolveDigest: () => Promise.resolve(at.digest) } });
        s.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
        await s.reconciler.reconcile(req, ctx);
        approve(s.cluster, `sha256:plan-${OLD.slice(7, 15)}`);
        await s.reconciler.reconcile(req, ctx);
        return s;
      }

      test('the BundleDeployment an approved plan makes names the image by the digest the plan showed, not the catalog tag', async () => {
        const { cluster } = await approvedAtOld();
        assert.equal(cluster.applied.length, 1);
        assert.equal(cluster.deployments.get('demo')?.spec.source.image?.ref, `registry.example/demo@${OLD}`);
      });

      test('a tag that moves after approval is a new plan awaiting approval; what the approval let through keeps running, pinned', async () => {
        const { cluster, reconciler } = await approvedAtOld();
        cluster.setDeploymentStatus('demo', { status: 'True', reason: 'Succeeded', message: 'installed' });
        // Nothing moved: the pinned BundleDeployment is left as it is, and no plan waits.
        await reconciler.reconcile(req, ctx);
        assert.equal(cluster.applied.length, 1, 'nothing new to write');
        assert.equal(lastStatus(cluster)?.pendingPlan, undefined);
        // Someone pushes other content under the same tag.
        at.digest = MOVED;
        await reconciler.reconcile(req, ctx);
        assert.equal(cluster.applied.length, 1, 'the moved tag is not installed under the old approval');
        assert.equal(cluster.deployments.get('demo')?.spec.source.image?.ref, `registry.example/demo@${OLD}`);
        assert.equal(lastStatus(cluster)?.pendingPlan?.digest, `sha256:plan-${MOVED.slice(7, 15)}`);
        assert.equal(condition(cluster, 'Progressing')?.reason, 'AwaitingApproval');
        approve(cluster, `sha256:plan-${MOVED.slice(7, 15)}`);
        await reconciler.reconcile(req, ctx);
        assert.equal(cluster.deployments.get('demo')?.spec.source.image?.ref, `registry.example/demo@${MOVED}`, 'approved: the new digest, pinned');
      });
    });

    test('failure: the plan cannot be made (the image cannot be pulled); nothing changes, status says why, retried with backoff', async () => {
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: () => Promise.reject(new Error('pull registry.example/demo: connection refused')) } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await assert.rejects(reconciler.reconcile(req, ctx), /connection refused/);
      assert.equal(cluster.applied.length, 0);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
    });
  });

  test('the default catalog access needs a registry: without one (or ports.catalogs) the reconciler is not made', () => {
    assert.throws(() => new ClusterExtensionReconciler({ client: new FakeCluster().client() }), /registry or ports\.catalogs/);
  });
});
