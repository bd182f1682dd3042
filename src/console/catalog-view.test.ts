import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Bundle, DeclarativeConfig } from '../declcfg/index.js';
import { csvMetadataOf, iconOf, packageDetail, packageSummaries } from './catalog-view.js';

const bundle = (name: string, version: string, extra: Bundle['properties'] = []): Bundle => ({
  schema: 'olm.bundle',
  package: 'demo',
  name,
  image: `example.com/demo:${version}`,
  properties: [{ type: 'olm.package', value: { packageName: 'demo', version } }, ...extra],
});

const meta = {
  type: 'olm.csv.metadata',
  value: {
    displayName: 'Demo Operator',
    description: '# Demo\n\nIt demos.',
    provider: { name: 'Acme' },
    annotations: { categories: 'Database, Monitoring', capabilities: 'Full Lifecycle', description: 'short' },
    installModes: [{ type: 'AllNamespaces', supported: true }, { type: 'OwnNamespace', supported: false }],
    keywords: ['demo'],
  },
};

const cfg: DeclarativeConfig = {
  packages: [{ schema: 'olm.package', name: 'demo', defaultChannel: 'stable', icon: { base64data: Buffer.from('<svg/>').toString('base64'), mediatype: 'image/svg+xml' } }],
  channels: [{ schema: 'olm.channel', package: 'demo', name: 'stable', entries: [{ name: 'demo.v1' }, { name: 'demo.v2', replaces: 'demo.v1', skipRange: '<1.5.0' }] }],
  bundles: [bundle('demo.v1', '1.0.0'), bundle('demo.v2', '2.0.0', [meta, { type: 'olm.package.required', value: { packageName: 'dep', versionRange: '>=1.0.0' } }])],
  deprecations: [{ schema: 'olm.deprecations', package: 'demo', entries: [{ reference: { schema: 'olm.bundle', name: 'demo.v1' }, message: 'use v2' }] }],
  others: [],
};

describe('console catalog view', () => {
  it('summarises a package from its default channel head', () => {
    const [s] = packageSummaries([{ name: 'cat', priority: 0, config: cfg }]);
    assert.deepEqual(s, {
      catalog: 'cat',
      name: 'demo',
      displayName: 'Demo Operator',
      shortDescription: 'short',
      hasIcon: true,
      provider: 'Acme',
      categories: ['Database', 'Monitoring'],
      capability: 'Full Lifecycle',
      installModes: ['AllNamespaces'],
      keywords: ['demo'],
      hasDependencies: true,
      defaultChannel: 'stable',
      headVersion: '2.0.0',
      deprecated: false,
    });
  });

  it('details channels with edges and deprecations, and the head bundle’s requirements', () => {
    const d = packageDetail({ name: 'cat', priority: 0, config: cfg }, 'demo');
    assert.equal(d?.description, '# Demo\n\nIt demos.');
    assert.equal(d?.channels[0]?.head, 'demo.v2');
    assert.deepEqual(d?.channels[0]?.entries.map((e) => [e.name, e.version, e.replaces, e.skipRange, e.deprecation]), [
      ['demo.v1', '1.0.0', undefined, undefined, 'use v2'],
      ['demo.v2', '2.0.0', 'demo.v1', '<1.5.0', undefined],
    ]);
    assert.deepEqual(d?.bundles.find((b) => b.name === 'demo.v2')?.requiresPackages, [{ packageName: 'dep', versionRange: '>=1.0.0' }]);
    assert.equal(packageDetail({ name: 'cat', priority: 0, config: cfg }, 'nope'), undefined);
  });

  it('reads the CSV from olm.bundle.object when there is no olm.csv.metadata', () => {
    const csv = { kind: 'ClusterServiceVersion', metadata: { annotations: { capabilities: 'Basic Install' } }, spec: { displayName: 'From object', description: 'd' } };
    const b = bundle('x', '1.0.0', [{ type: 'olm.bundle.object', value: { data: Buffer.from(JSON.stringify(csv)).toString('base64') } }]);
    assert.equal(csvMetadataOf(b).displayName, 'From object');
    assert.deepEqual(csvMetadataOf(bundle('y', '1.0.0', [{ type: 'olm.bundle.object', value: { data: 'not base64 json' } }])), {});
  });

  it('serves only image icons', () => {
    assert.equal(iconOf({ schema: 'olm.package', name: 'a', icon: { base64data: 'PGh0bWw+', mediatype: 'text/html' } }), undefined);
    assert.equal(iconOf({ schema: 'olm.package', name: 'a', icon: { base64data: 'iVBORw0KGgo=', mediatype: 'image/png' } })?.type, 'image/png');
  });
});
