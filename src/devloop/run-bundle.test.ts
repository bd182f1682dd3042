import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BundleDirInfo } from '../catalog-render/bundle-dir.js';
import { BinnacleError } from '../util/errors.js';
import { CONFIGMAP_BUDGET, packConfigMaps } from './configmaps.js';
import { missingUpgradeEdge } from './run-bundle.js';

function info(o: Partial<BundleDirInfo>): BundleDirInfo {
  return { dir: '/b', name: 'op.v2.0.0', version: '2.0.0', replaces: undefined, skips: [], skipRange: undefined, annotationPackage: 'op', channels: ['alpha'], defaultChannel: 'alpha', icon: undefined, description: undefined, ...o } as BundleDirInfo;
}

const installed = { name: 'op.v1.0.0', version: '1.0.0' };

test('an upgrade edge from the installed bundle: replaces, skips or a skipRange covering its version', () => {
  assert.equal(missingUpgradeEdge(info({ replaces: 'op.v1.0.0' }), installed), undefined);
  assert.equal(missingUpgradeEdge(info({ skips: ['op.v0.9.0', 'op.v1.0.0'] }), installed), undefined);
  assert.equal(missingUpgradeEdge(info({ skipRange: '>=1.0.0 <2.0.0' }), installed), undefined);
});

test('no upgrade edge: the message names both bundles, what the CSV has, and what to add', () => {
  const why = missingUpgradeEdge(info({ replaces: 'op.v1.5.0', skipRange: '>=1.1.0 <2.0.0' }), installed);
  assert.ok(why !== undefined);
  assert.match(why, /bundle op\.v2\.0\.0 \(2\.0\.0\) has no upgrade edge from the installed op\.v1\.0\.0 \(1\.0\.0\)/);
  assert.match(why, /replaces: op\.v1\.5\.0; skips: \(none\); olm\.skipRange: >=1\.1\.0 <2\.0\.0/);
  assert.match(why, /add `spec\.replaces: op\.v1\.0\.0`/);
});

test('files are packed into ConfigMaps under the size budget, binary files in binaryData; a file too large for any is refused', () => {
  const big = Buffer.alloc(Math.floor(CONFIGMAP_BUDGET * 0.6), 'a');
  const packed = packConfigMaps(
    [
      { key: 'a.yaml', content: big },
      { key: 'b.yaml', content: big },
      { key: 'icon.png', content: Buffer.from([0x89, 0x50, 0xff, 0xfe]) },
    ],
    { base: 'op-1', path: 'manifests', namespace: 'dev', labels: { x: 'y' } },
  );
  assert.deepEqual(packed.map((p) => p.name), ['op-1-manifests-0', 'op-1-manifests-1']);
  assert.deepEqual(Object.keys((packed[1]?.object.binaryData as Record<string, string> | undefined) ?? {}), ['icon.png']);
  assert.throws(
    () => packConfigMaps([{ key: 'huge.yaml', content: Buffer.alloc(CONFIGMAP_BUDGET + 1, 'a') }], { base: 'op-1', path: 'manifests', namespace: 'dev', labels: {} }),
    (err: unknown) => err instanceof BinnacleError && err.code === 'RUN_BUNDLE_FILE_TOO_LARGE' && /manifests\/huge\.yaml .*push the bundle as an image/.test(err.message),
  );
});
