import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatConfigMapsImage, parseConfigMapsImage } from './configmaps-ref.js';

test('a configmaps:// bundle reference round-trips, with and without paths', () => {
  const refs = [{ name: 'op-1-manifests', path: 'manifests' }, { name: 'op-1-metadata', path: 'metadata' }, { name: 'extra' }];
  const image = formatConfigMapsImage('dev', refs);
  assert.equal(image, 'configmaps://dev/op-1-manifests:manifests,op-1-metadata:metadata,extra');
  assert.deepEqual(parseConfigMapsImage(image), refs.map((r) => ({ namespace: 'dev', ...r })));
});

test('anything else is not a configmaps:// reference: OCI references, traversal paths, bad names', () => {
  assert.equal(parseConfigMapsImage('quay.io/org/op:v1'), undefined);
  assert.equal(parseConfigMapsImage('configmaps://dev/a:../../etc'), undefined);
  assert.equal(parseConfigMapsImage('configmaps://Dev/a'), undefined);
  assert.equal(parseConfigMapsImage('configmaps://dev/'), undefined);
  assert.equal(parseConfigMapsImage('configmaps://dev/a:b:c'), undefined);
});
