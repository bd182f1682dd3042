import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BundleDeployment, ClusterExtension } from '../api/types.js';
import { buildInstalledState, describeNeeds, installedFacts, requesterOf, unitOf, unitsNeededBy } from './index.js';

function ce(name: string, pkg: string): ClusterExtension {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'ClusterExtension',
    metadata: { name, uid: `uid-${name}` },
    spec: { namespace: name, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: pkg } } },
  };
}

function bd(name: string, pkg: string, version: string, needs: Record<string, string>, opts: { installed?: boolean; deleting?: boolean; created?: string; provides?: string } = {}): BundleDeployment {
  const labels: Record<string, string> = { 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/package': pkg };
  for (const [ext, role] of Object.entries(needs)) labels[`needed-by.binnacle.dev/${ext}`] = role;
  const first = Object.keys(needs)[0];
  if (first !== undefined) labels['binnacle.dev/owner-name'] = first;
  const annotations: Record<string, string> = { 'binnacle.dev/bundle-version': version, 'binnacle.dev/bundle-name': `${pkg}.v${version}` };
  if (opts.provides !== undefined) annotations['binnacle.dev/provides'] = opts.provides;
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'BundleDeployment',
    metadata: { name, labels, annotations, creationTimestamp: opts.created ?? '2026-01-01T00:00:00Z', ...(opts.deleting === true ? { deletionTimestamp: '2026-01-02T00:00:00Z' } : {}) },
    spec: { source: { type: 'image', image: { ref: `reg/${pkg}:${version}` } }, format: 'registry+v1', installNamespace: 'ns' },
    status: { conditions: opts.installed === false ? [] : [{ type: 'Installed', status: 'True', reason: 'Succeeded', message: '', lastTransitionTime: '' }] },
  };
}

test('every BundleDeployment of every extension is a fact, with who needs it and its bundle name (which upgrade edges name)', () => {
  const state = buildInstalledState(
    [
      bd('nhc-pp', 'poison-pill', '0.1.0', { pp: 'requested', nhc: 'dependency', gone: 'dependency' }, { provides: 'poison-pill.medik8s.io/v1alpha1/PoisonPillRemediation' }),
      bd('nhc', 'node-healthcheck', '0.0.2', { nhc: 'requested' }),
      bd('manual', 'no-package-label', '1.0.0', {}),
    ].map((b, i) => (i === 2 ? { ...b, metadata: { ...b.metadata, labels: {} } } : b)),
    [ce('nhc', 'node-healthcheck'), ce('pp', 'poison-pill')],
  );
  assert.deepEqual(state.units.map((u) => u.bundleDeployment), ['nhc', 'nhc-pp'], 'oldest first; BundleDeployments no resolution made are not part of it');
  const pill = unitOf(state, 'poison-pill');
  assert.deepEqual(pill?.needs, [{ extension: 'pp', role: 'requested' }, { extension: 'nhc', role: 'dependency' }]);
  assert.deepEqual(pill?.staleNeeds, [{ extension: 'gone', role: 'dependency' }]);
  assert.equal(pill === undefined ? undefined : requesterOf(pill), 'pp');
  assert.deepEqual(unitsNeededBy(state, 'nhc').map((u) => u.package), ['node-healthcheck', 'poison-pill']);
  assert.deepEqual(installedFacts(state, 'other'), [
    { package: 'node-healthcheck', version: '0.0.2', owner: 'requested by extension nhc', bundleName: 'node-healthcheck.v0.0.2' },
    { package: 'poison-pill', version: '0.1.0', owner: 'requested by extension pp, needed by extension nhc', bundleName: 'poison-pill.v0.1.0', provides: ['poison-pill.medik8s.io/v1alpha1/PoisonPillRemediation'] },
  ]);
});

test("an extension's own first install that has not succeeded is no fact for it; one being removed is no fact at all", () => {
  const state = buildInstalledState(
    [bd('a', 'a-pkg', '1.0.0', { a: 'requested' }, { installed: false }), bd('old', 'b-pkg', '1.0.0', { b: 'requested' }, { deleting: true })],
    [ce('a', 'a-pkg'), ce('b', 'b-pkg')],
  );
  assert.deepEqual(installedFacts(state, 'a'), []);
  assert.deepEqual(installedFacts(state, 'c').map((f) => f.package), ['a-pkg'], 'others must leave it be');
  assert.equal(unitOf(state, 'b-pkg'), undefined);
  assert.equal(state.units.find((u) => u.package === 'b-pkg')?.state, 'deleting');
});

test('one package in two BundleDeployments: the older is the installed one, the other is reported', () => {
  const state = buildInstalledState(
    [bd('second', 'pp', '0.1.0', { y: 'requested' }, { created: '2026-01-02T00:00:00Z' }), bd('first', 'pp', '0.1.0', { x: 'dependency' }, { created: '2026-01-01T00:00:00Z' })],
    [ce('x', 'nhc'), ce('y', 'pp')],
  );
  assert.equal(unitOf(state, 'pp')?.bundleDeployment, 'first');
  assert.deepEqual(state.problems, ['package pp is in two BundleDeployments, first and second; second (the newer) is left out of resolution']);
});

test('needs read as a sentence', () => {
  assert.equal(describeNeeds([{ extension: 'a', role: 'dependency' }, { extension: 'b', role: 'dependency' }, { extension: 'c', role: 'dependency' }]), 'needed by extensions a, b and c');
  assert.equal(describeNeeds([{ extension: 'p', role: 'requested' }]), 'requested by extension p');
});
