import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { consoleCluster } from './fake-cluster.test-helper.js';
import { inventory } from './inventory.js';

describe('inventory', () => {
  it('OLM operators with the custom resources of their APIs, Helm operators with their releases, each with a health, and the roll-up', async () => {
    const { client } = await consoleCluster();
    const inv = await inventory(client);
    assert.deepEqual(inv.warnings, []);
    assert.deepEqual(
      inv.operators.map((o) => ({ type: o.type, name: o.name, source: o.source, version: o.version, health: o.health, crds: o.crds, resources: o.resources.map((r) => `${r.kind} ${r.namespace ?? ''}/${r.name} ${r.health}`), counts: o.counts })),
      [
        { type: 'ClusterExtension', name: 'ext', source: 'p', version: '1.0.0', health: 'Healthy', crds: ['widgets.example.com'], resources: ['Widget ns/w1 Healthy', 'Widget ns/w2 Failing'], counts: { Healthy: 2, Progressing: 0, Failing: 1, Deleting: 0, Unknown: 0 } },
        { type: 'HelmOperator', name: 'charts', source: 'nginx', version: '1.2.3', health: 'Healthy', crds: ['nginxes.charts.example.com'], resources: ['Nginx apps/broken Failing', 'Nginx apps/web Healthy'], counts: { Healthy: 2, Progressing: 0, Failing: 1, Deleting: 0, Unknown: 0 } },
      ],
    );
    assert.deepEqual(inv.counts, { Healthy: 4, Progressing: 0, Failing: 2, Deleting: 0, Unknown: 0 });
    assert.equal(inv.operators[1]?.resources[0]?.message, 'ReleaseFailed: template: bad');
    assert.equal(inv.operators[0]?.resources[0]?.crd, 'widgets.example.com');
  });

  it('what the person may not list is named and left out, the rest still shown', async () => {
    const { client } = await consoleCluster((verb, kind) => verb === 'list' && (kind === 'Widget' || kind === 'HelmOperator'));
    const inv = await inventory(client);
    // As the API server words it: the resource qualified by its group.
    assert.deepEqual(inv.warnings, ['Widget (widgets.example.com) not listed: forbidden: list widgets.example.com', 'HelmOperators not listed: forbidden: list helmoperators.binnacle.dev']);
    assert.deepEqual(inv.operators.map((o) => [o.name, o.crds, o.resources.length]), [['ext', ['widgets.example.com'], 0]], 'its CRDs still named: the page follows them');
    assert.deepEqual(inv.counts, { Healthy: 1, Progressing: 0, Failing: 0, Deleting: 0, Unknown: 0 });
  });
});
