import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { MAX_NESTING } from '../util/nesting.js';
import { extensionSpecProblems } from './cluster-extension.js';

/** An object nested `depth` levels deep: {a: {a: … {}}}. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

/** A ClusterExtension as written, whatever its spec says. */
const extension = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'binnacle.dev/v1alpha1', kind: 'ClusterExtension', metadata: { name: 'demo' }, spec });

test('a ClusterExtension spec is refused for what is wrong in it, an install.config nested past the limit included', () => {
  const good = { namespace: 'ns', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'demo' } } };
  assert.deepEqual(extensionSpecProblems(extension(good)), []);
  assert.deepEqual(extensionSpecProblems(extension({ ...good, install: { config: nested(MAX_NESTING) } })), []);
  assert.deepEqual(extensionSpecProblems(extension({ ...good, install: { config: nested(MAX_NESTING + 1) } })), [`spec.install.config: nests deeper than ${MAX_NESTING} levels`]);
  assert.deepEqual(extensionSpecProblems(extension({ source: { sourceType: 'Bundle' } })), [
    'spec.namespace: required',
    'spec.serviceAccount.name: required',
    'spec.source.sourceType: must be Catalog',
    'spec.source.catalog.packageName: required',
  ]);
});

test('a ClusterExtension’s drift rules are checked, naming the field', () => {
  const good = { namespace: 'ns', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'demo' } } };
  assert.deepEqual(extensionSpecProblems(extension({ ...good, drift: { mode: 'Warn', ignore: [{ paths: ['/spec/replicas'] }] } })), []);
  assert.deepEqual(extensionSpecProblems(extension({ ...good, drift: { mode: 'warn', ignore: [{ paths: ['/metadata/name'] }] } })), [
    'spec.drift.mode: must be one of Repair, Warn, Off (got "warn")',
    'spec.drift.ignore[0].paths[0]: /metadata/name cannot be ignored: it is part of the object’s identity',
  ]);
});
