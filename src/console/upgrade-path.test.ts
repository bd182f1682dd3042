import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { pino } from 'pino';
import { API_VERSION } from '../api/types.js';
import type { KubeObject } from '../kube/types.js';
import { catalog, requiresPackage } from '../resolve/fixtures.test-helper.js';
import type { PackagePage } from './contract/api-types.js';
import { ConsoleApi } from './api.js';
import { consoleCluster } from './fake-cluster.test-helper.js';
import { layoutUpgradeGraph } from './graph.js';
import { upgradePath } from './upgrade-path.js';

// 1.0.0 → 1.1.0 → 1.2.0 (which also skips 1.0.0) → 2.0.0; 1.3.0 is a dead end off 1.1.0; `fast` has 3.0.0 too.
const cat = catalog('c', [
  {
    name: 'op',
    bundles: [
      { version: '1.0.0', channels: ['stable', 'fast'] },
      { version: '1.1.0', channels: ['stable', 'fast'], replaces: '1.0.0' },
      { version: '1.2.0', channels: ['stable', 'fast'], replaces: '1.1.0', skips: ['1.0.0'] },
      { version: '1.3.0', channels: ['stable'], skips: ['1.1.0'] },
      { version: '2.0.0', channels: ['stable', 'fast'], replaces: '1.2.0' },
      { version: '3.0.0', channels: ['fast'], replaces: '2.0.0' },
    ],
  },
]);

describe('the path the next upgrade takes', () => {
  it('follows the resolver step by step: the preferred successor each time, until none is due', () => {
    assert.deepEqual(upgradePath([cat], { package: 'op', version: '1.0.0', channels: ['stable'] }), { bundles: ['op.v1.0.0', 'op.v1.2.0', 'op.v2.0.0'] });
  });

  it('keeps to the channels and the version range', () => {
    assert.deepEqual(upgradePath([cat], { package: 'op', version: '1.0.0', channels: ['fast'] }).bundles, ['op.v1.0.0', 'op.v1.2.0', 'op.v2.0.0', 'op.v3.0.0']);
    assert.deepEqual(upgradePath([cat], { package: 'op', version: '1.0.0', channels: ['stable'], versionRange: '<1.2.0' }).bundles, ['op.v1.0.0', 'op.v1.1.0']);
    // From 1.1.0 under <2.0.0: 1.3.0 (higher) is preferred over 1.2.0, and nothing replaces 1.3.0.
    assert.deepEqual(upgradePath([cat], { package: 'op', version: '1.1.0', channels: ['stable'], versionRange: '<2.0.0' }).bundles, ['op.v1.1.0', 'op.v1.3.0']);
  });

  it('SelfCertified jumps straight to the best version in range', () => {
    assert.deepEqual(upgradePath([cat], { package: 'op', version: '1.0.0', channels: ['stable'], upgradePolicy: 'SelfCertified' }).bundles, ['op.v1.0.0', 'op.v2.0.0']);
  });

  it('is just the installed bundle at the channel head, and says why when resolution fails', () => {
    assert.deepEqual(upgradePath([cat], { package: 'op', version: '2.0.0', channels: ['stable'] }), { bundles: ['op.v2.0.0'] });
    const r = upgradePath([cat], { package: 'op', version: '1.0.0', channels: ['nope'] });
    assert.deepEqual(r.bundles, ['op.v1.0.0']);
    assert.match(r.problem ?? '', /nope/);
  });

  it('marks the path on the graph apart from what is merely reachable', () => {
    const stable = cat.config.channels.find((c) => c.name === 'stable');
    assert.ok(stable !== undefined);
    const entries = stable.entries.map((e) => ({ ...e, version: e.name.replace('op.v', '') }));
    const path = upgradePath([cat], { package: 'op', version: '1.0.0', channels: ['stable'] });
    const g = layoutUpgradeGraph(entries, { installed: 'op.v1.0.0', upgradePath: path });
    const on = g.nodes.filter((n) => n.onPath).map((n) => n.id);
    const reachable = g.nodes.filter((n) => n.reachable).map((n) => n.id);
    assert.deepEqual(on, ['op.v1.2.0', 'op.v2.0.0']);
    assert.deepEqual(reachable.sort(), ['op.v1.1.0', 'op.v1.2.0', 'op.v1.3.0', 'op.v2.0.0']);
    assert.deepEqual(g.edges.filter((e) => e.onPath).map((e) => `${e.from}->${e.to}`).sort(), ['op.v1.0.0->op.v1.2.0', 'op.v1.2.0->op.v2.0.0']);
    assert.deepEqual(g.upgradePath, path);
  });

  it('the package page of an installed package carries the path in the channel that has the installed bundle', async () => {
    const { cluster, client } = await consoleCluster();
    cluster.put({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'c' }, spec: {}, status: { urls: { base: 'https://c.example' }, conditions: [{ type: 'Serving', status: 'True', reason: 'Available', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] } });
    const served = catalog('c', [{ name: 'p', bundles: [{ version: '1.0.0' }, { version: '1.1.0', replaces: '1.0.0' }, { version: '1.2.0', replaces: '1.1.0' }] }]);
    const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }), catalogLoader: (_base, name, priority) => Promise.resolve({ ...served, name, priority }) });
    const res = await api.route('GET', ['catalogs', 'c', 'packages', 'p'], { client, req: new IncomingMessage(new Socket()), url: new URL('http://console/api/catalogs/c/packages/p') });
    assert.equal(res?.status, 200);
    const page = (res as { json: PackagePage }).json;
    assert.equal(page.installedBundle, 'p.v1.0.0');
    const g = page.graphs.stable;
    assert.deepEqual(g?.upgradePath, { bundles: ['p.v1.0.0', 'p.v1.1.0', 'p.v1.2.0'] });
    assert.deepEqual(g.nodes.filter((n) => n.onPath).map((n) => n.id), ['p.v1.1.0', 'p.v1.2.0']);
  });

  it('weighs what else is installed: an operator that needs this package in a range holds its path back', () => {
    const withApp = catalog('c', [
      { name: 'op', bundles: [{ version: '1.0.0' }, { version: '1.1.0', replaces: '1.0.0' }, { version: '2.0.0', replaces: '1.1.0' }] },
      { name: 'app', bundles: [{ version: '1.0.0', props: [requiresPackage('op', '<2.0.0')] }] },
    ]);
    assert.deepEqual(upgradePath([withApp], { package: 'op', version: '1.0.0' }).bundles, ['op.v1.0.0', 'op.v1.1.0', 'op.v2.0.0']);
    const held = upgradePath([withApp], { package: 'op', version: '1.0.0', others: [{ package: 'app', version: '1.0.0', owner: 'ClusterExtension app' }] });
    assert.deepEqual(held.bundles, ['op.v1.0.0', 'op.v1.1.0']);
  });

  it('the package page draws the path through the catalogs the extension selects, with what else is installed', async () => {
    const { cluster, client } = await consoleCluster();
    const serving = { urls: { base: 'https://c.example' }, conditions: [{ type: 'Serving', status: 'True', reason: 'Available', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] };
    cluster.put({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'c' }, spec: {}, status: serving });
    // A catalog the extension's selector leaves out, with a newer version of the package.
    cluster.put({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'other', labels: { tier: 'test' } }, spec: {}, status: { ...serving, urls: { base: 'https://other.example' } } });
    const contents: Record<'c' | 'other', ReturnType<typeof catalog>> = {
      c: catalog('c', [{ name: 'p', bundles: [{ version: '1.0.0' }, { version: '1.1.0', replaces: '1.0.0' }, { version: '1.2.0', replaces: '1.1.0' }] }]),
      other: catalog('other', [{ name: 'p', bundles: [{ version: '1.0.0' }, { version: '9.0.0', replaces: '1.0.0' }] }]),
    };
    const ext = (await client.list<{ metadata: { name?: string }; spec: { source: { catalog: Record<string, unknown> } } } & KubeObject>(API_VERSION, 'ClusterExtension')).items.find((e) => e.spec.source.catalog.packageName === 'p');
    assert.ok(ext !== undefined, 'the fake cluster has an extension installing p');
    cluster.put({ ...ext, spec: { ...ext.spec, source: { ...ext.spec.source, catalog: { ...ext.spec.source.catalog, selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': 'c' } } } } } });
    const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }), catalogLoader: (_base, name, priority) => Promise.resolve({ ...(name === 'other' ? contents.other : contents.c), name, priority }) });
    const res = await api.route('GET', ['catalogs', 'c', 'packages', 'p'], { client, req: new IncomingMessage(new Socket()), url: new URL('http://console/api/catalogs/c/packages/p') });
    assert.equal(res?.status, 200);
    assert.deepEqual((res as { json: PackagePage }).json.graphs.stable?.upgradePath, { bundles: ['p.v1.0.0', 'p.v1.1.0', 'p.v1.2.0'] }, 'not through 9.0.0 of the catalog it does not select');
  });
});
