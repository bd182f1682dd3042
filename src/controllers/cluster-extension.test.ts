import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { MAX_NESTING } from '../util/nesting.js';
import { emptyDeclarativeConfig, type Bundle } from '../declcfg/index.js';
import type { ClusterExtension } from '../api/types.js';
import type { ChosenBundle } from '../resolve/index.js';
import type { ServedCatalog } from './catalog-registry.js';
import { extensionSpecProblems, olmv1Ambiguity } from './cluster-extension.js';

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

test('OLM v1 twins only: the chosen bundle offered by two selected catalogs of the same priority is ambiguous (operator-controller refuses); another priority, another bundle, an installed bundle or a binnacle.dev extension is not', () => {
  const bundle = (name: string): Bundle => ({ schema: 'olm.bundle', name, package: 'test', image: `reg/${name}`, properties: [] });
  const cat = (name: string, priority: number, names: string[]): Pick<ServedCatalog, 'name' | 'priority' | 'config'> => ({ name, priority, config: { ...emptyDeclarativeConfig(), bundles: names.map(bundle) } });
  const ce = (twin: boolean): ClusterExtension => ({
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'ClusterExtension',
    metadata: { name: 'ext', ...(twin ? { labels: { 'binnacle.dev/olmv1-twin-of': 'uid' }, ownerReferences: [{ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'ext', uid: 'uid', controller: true }] } : {}) },
    spec: { namespace: 'ns', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'test' } } },
  });
  const chosen = (installed = false): ChosenBundle[] => [{ name: 'test.1.2.0', package: 'test', version: '1.2.0', image: 'reg/test.1.2.0', catalog: 'test', installed, dependsOn: [], provides: [] }];
  const both = [cat('test', 0, ['test.1.2.0']), cat('extra', 0, ['test.1.2.0'])];
  const r = olmv1Ambiguity(ce(true), chosen(), both);
  assert.deepEqual(r?.catalogs, ['extra', 'test']);
  assert.match(r?.message ?? '', /offered by ClusterCatalogs extra, test at the same priority 0/);
  assert.equal(olmv1Ambiguity(ce(false), chosen(), both), undefined, "Binnacle's own extensions choose");
  assert.equal(olmv1Ambiguity(ce(true), chosen(true), both), undefined, 'an installed bundle stays');
  assert.equal(olmv1Ambiguity(ce(true), chosen(), [cat('test', 0, ['test.1.2.0']), cat('extra', -1, ['test.1.2.0'])]), undefined, 'priority decides');
  assert.equal(olmv1Ambiguity(ce(true), chosen(), [cat('test', 0, ['test.1.2.0']), cat('extra', 0, ['other.1.0.0'])]), undefined);
});
