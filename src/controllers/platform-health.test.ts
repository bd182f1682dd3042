import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BundleDeployment, ClusterExtension, PlatformPackageStatus } from '../api/types.js';
import type { Condition } from '../kube/types.js';
import { aggregateConditions, packageHealth } from './platform-health.js';

const T = '2024-01-01T00:00:00Z';
const c = (type: string, status: Condition['status'], reason: string, message = ''): Condition => ({ type, status, reason, message, lastTransitionTime: T });

function ce(conditions: Condition[], extra: { version?: string; generation?: number; observed?: number; deleting?: boolean } = {}): ClusterExtension {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'ClusterExtension',
    metadata: { name: 'core-a', generation: extra.generation ?? 1, ...(extra.deleting === true ? { deletionTimestamp: T } : {}) },
    spec: { namespace: 'ops', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'a' } } },
    status: {
      conditions,
      observedGeneration: extra.observed ?? 1,
      ...(extra.version === undefined ? {} : { install: { bundle: { name: `a.v${extra.version}`, version: extra.version, package: 'a', image: 'i', catalog: 'c' } } }),
    },
  };
}

function bd(name: string, healthy: Condition['status'], message = ''): BundleDeployment {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'BundleDeployment',
    metadata: { name },
    spec: { source: { type: 'image', image: { ref: 'i' } }, format: 'registry+v1', installNamespace: 'ops' },
    status: { conditions: [c('Healthy', healthy, healthy === 'True' ? 'Healthy' : 'Unhealthy', message)] },
  };
}

const installed = [c('Installed', 'True', 'Succeeded', 'installed a.v1'), c('Progressing', 'False', 'Succeeded', 'desired state reached')];

describe('packageHealth', () => {
  it('is Healthy when installed with every BundleDeployment healthy', () => {
    assert.deepEqual(packageHealth('a', 'core-a', ce(installed, { version: '1.0.0' }), [bd('core-a', 'True')]), {
      name: 'a',
      extension: 'core-a',
      installed: true,
      healthy: true,
      version: '1.0.0',
      reason: 'Healthy',
      message: 'installed a.v1',
    });
  });

  it('is Unhealthy, naming the BundleDeployment and why, when one of them is not healthy', () => {
    const h = packageHealth('a', 'core-a', ce(installed, { version: '1.0.0' }), [bd('core-a', 'True'), bd('core-a-dep', 'False', 'Deployment x: 0 of 1 replicas available')]);
    assert.equal(h.reason, 'Unhealthy');
    assert.equal(h.healthy, false);
    assert.equal(h.installed, true);
    assert.equal(h.message, 'core-a-dep: Deployment x: 0 of 1 replicas available');
  });

  it('is Installing before the extension exists or has installed anything', () => {
    assert.equal(packageHealth('a', 'core-a', undefined, []).reason, 'Installing');
    const h = packageHealth('a', 'core-a', ce([c('Installed', 'False', 'Installing', 'installing a.v1'), c('Progressing', 'True', 'Installing', 'waiting for a.v1')]), []);
    assert.deepEqual([h.reason, h.message], ['Installing', 'waiting for a.v1']);
  });

  it('is Failed with the extension’s explanation when resolution or the install failed', () => {
    const h = packageHealth('a', 'core-a', ce([c('Installed', 'False', 'Failed', 'no bundle could be resolved'), c('Progressing', 'True', 'Retrying', 'resolution failed: no package "a"')]), []);
    assert.deepEqual([h.reason, h.installed, h.message], ['Failed', false, 'resolution failed: no package "a"']);
  });

  it('is not Failed on a stale status', () => {
    const h = packageHealth('a', 'core-a', ce([c('Installed', 'False', 'Failed', 'old')], { generation: 2, observed: 1 }), []);
    assert.equal(h.reason, 'Installing');
  });

  it('says when the operator holds back its upgrade, and when an upgrade is under way', () => {
    const blocked = packageHealth('a', 'core-a', ce([installed[0] as Condition, c('Progressing', 'True', 'UpgradeBlocked', 'upgrade of a is held back: …')], { version: '1.0.0' }), []);
    assert.deepEqual([blocked.reason, blocked.healthy, blocked.message], ['UpgradeBlocked', true, 'upgrade of a is held back: …']);
    const moving = packageHealth('a', 'core-a', ce([installed[0] as Condition, c('Progressing', 'True', 'Installing', 'waiting for a.v2')], { version: '1.0.0' }), []);
    assert.equal(moving.reason, 'Upgrading');
  });
});

describe('aggregateConditions', () => {
  const p = (name: string, reason: PlatformPackageStatus['reason'], ok = reason === 'Healthy' || reason === 'UpgradeBlocked'): PlatformPackageStatus => ({
    name,
    installed: ok,
    healthy: ok,
    reason,
    message: `${name} is ${reason}`,
  });
  const byType = (ps: PlatformPackageStatus[]): Record<string, { status: boolean; reason: string; message: string }> =>
    Object.fromEntries(aggregateConditions(ps).map((x) => [x.type, { status: x.status, reason: x.reason, message: x.message }]));

  it('is Available when every listed package is installed and healthy; removed ones do not count', () => {
    const a = byType([p('a', 'Healthy'), p('b', 'Healthy'), p('c', 'Removed')]);
    assert.deepEqual(a.Available, { status: true, reason: 'AllHealthy', message: '2 packages installed and healthy' });
    assert.equal(a.Progressing?.status, false);
    assert.equal(a.Degraded?.status, false);
    assert.equal(a.Upgradeable?.status, true);
  });

  it('names each package that keeps it from being Available, with its reason', () => {
    const a = byType([p('a', 'Healthy'), p('b', 'Failed'), p('c', 'Installing')]);
    assert.deepEqual(a.Available, { status: false, reason: 'PackagesDegraded', message: 'b: Failed: b is Failed; c: Installing: c is Installing' });
    assert.deepEqual(a.Degraded, { status: true, reason: 'PackagesFailing', message: 'b: Failed: b is Failed' });
    assert.deepEqual(a.Progressing, { status: true, reason: 'PackagesChanging', message: 'c: Installing: c is Installing' });
  });

  it('is Progressing while a removed package is being uninstalled, and not Upgradeable while an operator holds back', () => {
    const a = byType([p('a', 'UpgradeBlocked'), p('b', 'Removing')]);
    assert.equal(a.Available?.status, true);
    assert.deepEqual(a.Progressing, { status: true, reason: 'PackagesChanging', message: 'b: Removing: b is Removing' });
    assert.deepEqual(a.Upgradeable, { status: false, reason: 'UpgradeBlocked', message: 'a: UpgradeBlocked: a is UpgradeBlocked' });
  });
});
