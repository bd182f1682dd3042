import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { API_VERSION, type ClusterExtension, type HelmOperator } from '../api/types.js';
import type { Condition } from '../kube/types.js';
import { countHealth, healthOf, helmOperatorHealth, resourceHealth } from './health.js';

const c = (type: string, status: string, reason = '', message = '', observedGeneration?: number): Condition => ({ type, status: status as Condition['status'], reason, message, lastTransitionTime: 't', ...(observedGeneration === undefined ? {} : { observedGeneration }) });
const cr = (conditions: Condition[], meta: { generation?: number; deletionTimestamp?: string } = {}) => ({ metadata: meta, conditions });

describe('health', () => {
  it('a ClusterExtension: Healthy installed and settled at its generation, Failing when it says so, else Progressing', () => {
    const ce = (conditions: Condition[], observed = 1): ClusterExtension => ({ apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name: 'e', generation: 1 }, spec: { namespace: 'n', serviceAccount: { name: 's' }, source: { sourceType: 'Catalog', catalog: { packageName: 'p' } } }, status: { observedGeneration: observed, conditions } });
    assert.equal(healthOf(ce([c('Installed', 'True'), c('Progressing', 'False')])).health, 'Healthy');
    assert.equal(healthOf(ce([c('Installed', 'True'), c('Progressing', 'False')], 0)).health, 'Progressing');
    assert.equal(healthOf(ce([c('Installed', 'False'), c('Progressing', 'True', 'Retrying', 'apply failed: refused')])).health, 'Failing');
    assert.equal(healthOf(ce([c('Installed', 'False', '', 'no bundle'), c('Progressing', 'False')])).health, 'Failing');
  });

  it('a HelmOperator: Ready says it', () => {
    const hop = (conditions: Condition[]): HelmOperator => ({ apiVersion: API_VERSION, kind: 'HelmOperator', metadata: { name: 'h', generation: 1 }, spec: { chart: {}, kinds: [] }, status: { observedGeneration: 1, conditions } });
    assert.equal(helmOperatorHealth(hop([c('Ready', 'True', 'Serving')])).health, 'Healthy');
    assert.deepEqual(helmOperatorHealth(hop([c('Ready', 'False', 'ChartUnavailable', 'no such tag')])), { health: 'Failing', message: 'ChartUnavailable: no such tag' });
    assert.equal(helmOperatorHealth(hop([])).health, 'Progressing');
  });

  it("a Helm operator's release: Deployed is Healthy, ReleaseFailed or Irreconcilable Failing, a chart not fetched yet Progressing", () => {
    assert.equal(resourceHealth(cr([c('Initialized', 'True'), c('Deployed', 'True', 'InstallSuccessful'), c('ReleaseFailed', 'False', 'InstallError')])).health, 'Healthy');
    assert.deepEqual(resourceHealth(cr([c('Deployed', 'True'), c('ReleaseFailed', 'True', 'UpgradeError', 'template: bad')])), { health: 'Failing', message: 'ReleaseFailed: template: bad' });
    assert.equal(resourceHealth(cr([c('Irreconcilable', 'True', 'ErrorGettingValues', 'no ConfigMap')])).health, 'Failing');
    assert.equal(resourceHealth(cr([c('Irreconcilable', 'True', 'ErrorGettingChart', 'not yet')])).health, 'Progressing');
    assert.equal(resourceHealth(cr([c('Paused', 'True', 'ReconcilePaused'), c('Deployed', 'True')])).health, 'Progressing');
  });

  it('any other custom resource: Ready/Available, Degraded, a stale generation, being deleted, or Unknown without conditions', () => {
    assert.equal(resourceHealth(cr([c('Available', 'True')])).health, 'Healthy');
    assert.equal(resourceHealth(cr([c('Ready', 'False', 'Waiting', 'pods starting')])).health, 'Progressing');
    assert.equal(resourceHealth(cr([c('Ready', 'False', 'Error', 'invalid spec')])).health, 'Failing');
    assert.equal(resourceHealth(cr([c('Ready', 'True'), c('Degraded', 'True', 'X', 'one replica down')])).health, 'Failing');
    assert.match(resourceHealth(cr([c('Ready', 'True', '', '', 1)], { generation: 2 })).message, /generation 2 not yet observed/);
    assert.equal(resourceHealth(cr([c('Ready', 'True')], { deletionTimestamp: 't' })).health, 'Deleting');
    assert.deepEqual(resourceHealth(cr([])), { health: 'Unknown', message: 'it reports no conditions' });
    assert.equal(resourceHealth(cr([c('Synced', 'True')])).health, 'Unknown');
  });

  it('rolls up by counting', () => {
    assert.deepEqual(countHealth([{ health: 'Healthy' }, { health: 'Failing' }, { health: 'Healthy' }]), { Healthy: 2, Progressing: 0, Failing: 1, Deleting: 0, Unknown: 0 });
  });
});
