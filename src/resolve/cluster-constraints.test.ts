import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from './resolver.js';
import { celCluster, clusterVersion } from './cluster-constraints.js';
import { catalog, chain, constraint, explain } from './fixtures.test-helper.js';
import type { Property } from '../declcfg/index.js';

const csvMeta = (minKubeVersion: string): Property => ({ type: 'olm.csv.metadata', value: { displayName: 'x', minKubeVersion } });
const maxOcp = (v: unknown): Property => ({ type: 'olm.maxOpenShiftVersion', value: v });

test('cluster versions read as plain semver', () => {
  assert.equal(clusterVersion('v1.31.2+k3s1')?.version, '1.31.2');
  assert.equal(clusterVersion('v1.32.0-alpha.1.120+abc')?.version, '1.32.0');
  assert.equal(clusterVersion('4.8')?.version, '4.8.0');
  assert.equal(clusterVersion(''), undefined);
  assert.deepEqual(celCluster({ kubeVersion: 'v1.30.1', openShiftVersion: '4.14.3' }), { platform: 'OpenShift', kubeVersion: '1.30.1', openShiftVersion: '4.14.3' });
  assert.deepEqual(celCluster({ kubeVersion: 'v1.30.1' }), { platform: 'Kubernetes', kubeVersion: '1.30.1' });
});

test('minKubeVersion above the cluster rules the bundle out, and the explanation names it', () => {
  const cat = catalog('c', [chain('foo', ['1.0.0', '2.0.0'], (v) => [csvMeta(v === '2.0.0' ? '1.40.0' : '1.20.0')])]);
  const r = resolve({ catalogs: [cat], requests: [{ package: 'foo' }], cluster: { kubeVersion: 'v1.31.0' } });
  assert.deepEqual(r.bundles.map((b) => b.version), ['1.0.0'], 'the newest bundle that runs here');
  const e = explain({ catalogs: [cat], requests: [{ package: 'foo', versionRange: '>=2' }], cluster: { kubeVersion: 'v1.31.0' } });
  assert.deepEqual(e.sentences, [
    'package foo was requested with version range >=2; its only candidate is foo 2.0.0',
    'foo 2.0.0 requires Kubernetes 1.40.0 or newer (minKubeVersion); the cluster runs Kubernetes 1.31.0',
  ]);
  assert.ok(e.facts.some((f) => f.kind === 'cluster-constraint' && f.source === 'minKubeVersion'));
  // An olm.minKubeVersion bundle property counts the same.
  const prop = catalog('c', [chain('bar', ['1.0.0'], () => [{ type: 'olm.minKubeVersion', value: '1.99.0' }])]);
  assert.match(explain({ catalogs: [prop], requests: [{ package: 'bar' }], cluster: { kubeVersion: '1.31.0' } }).message, /bar 1\.0\.0 requires Kubernetes 1\.99\.0 or newer \(minKubeVersion\)/);
  // Offline (no cluster) nothing is enforced, and the resolution says so.
  const offline = resolve({ catalogs: [cat], requests: [{ package: 'foo' }] });
  assert.deepEqual(offline.bundles.map((b) => b.version), ['2.0.0']);
  assert.deepEqual(offline.notices, ['foo 2.0.0 asks the cluster for minKubeVersion 1.40.0; not checked (no cluster to check against)']);
});

test('what is installed is not judged again', () => {
  const cat = catalog('c', [chain('foo', ['2.0.0'], () => [csvMeta('1.40.0')])]);
  const r = resolve({ catalogs: [cat], installed: [{ package: 'foo', version: '2.0.0' }], requests: [{ package: 'foo' }], cluster: { kubeVersion: 'v1.31.0' } });
  assert.deepEqual(r.bundles.map((b) => `${b.version}:${b.installed}`), ['2.0.0:true']);
});

test('olm.maxOpenShiftVersion is enforced on OpenShift and reported elsewhere', () => {
  const cat = catalog('c', [chain('foo', ['1.0.0', '2.0.0'], (v) => (v === '2.0.0' ? [maxOcp('4.8')] : [maxOcp('"4.12"')]))]);
  const ocp = resolve({ catalogs: [cat], requests: [{ package: 'foo' }], cluster: { kubeVersion: 'v1.25.4', openShiftVersion: '4.12.9' } });
  assert.deepEqual(ocp.bundles.map((b) => b.version), ['1.0.0'], '2.0.0 stops at 4.8; 1.0.0 supports 4.12');
  const e = explain({ catalogs: [cat], requests: [{ package: 'foo', versionRange: '2.0.0' }], cluster: { kubeVersion: 'v1.25.4', openShiftVersion: '4.12.9' } });
  assert.match(e.message, /foo 2\.0\.0 requires OpenShift 4\.8 or older \(olm\.maxOpenShiftVersion\); the cluster runs Kubernetes 1\.25\.4 \(OpenShift 4\.12\.9\)/);
  const kube = resolve({ catalogs: [cat], requests: [{ package: 'foo' }], cluster: { kubeVersion: 'v1.31.0' } });
  assert.deepEqual(kube.bundles.map((b) => b.version), ['2.0.0']);
  assert.deepEqual(kube.notices, ['foo 2.0.0 supports OpenShift up to 4.8 (olm.maxOpenShiftVersion); not enforced, the cluster is not OpenShift']);
  // The same minor passes.
  assert.equal(resolve({ catalogs: [cat], requests: [{ package: 'foo' }], cluster: { kubeVersion: 'v1.21.0', openShiftVersion: '4.8.57' } }).bundles[0]?.version, '2.0.0');
});

test('an olm.constraint with CEL over cluster facts constrains the bundle itself', () => {
  const rule = (r: string, failureMessage?: string): Property => constraint({ ...(failureMessage === undefined ? {} : { failureMessage }), cel: { rule: r } });
  const cat = catalog('c', [
    chain('new-only', ['1.0.0'], () => [rule('semver_compare(cluster.kubeVersion, "1.29.0") >= 0', 'needs Kubernetes 1.29 for ValidatingAdmissionPolicy')]),
    chain('not-ocp', ['1.0.0'], () => [rule('cluster.platform != "OpenShift"')]),
    chain('db', ['1.0.0', '2.0.0']),
    // Mixed: names a dependency, and the cluster decides which one.
    chain('app', ['1.0.0'], () => [
      rule('properties.exists(p, p.type == "olm.package" && p.value.packageName == "db" && (semver_compare(cluster.kubeVersion, "1.30.0") >= 0 || p.value.version == "1.0.0"))'),
    ]),
  ]);
  const old = { kubeVersion: 'v1.27.3' };
  const e = explain({ catalogs: [cat], requests: [{ package: 'new-only' }], cluster: old });
  assert.deepEqual(e.sentences, [
    'package new-only was requested; its only candidate is new-only 1.0.0',
    'new-only 1.0.0 requires a cluster matching the rule semver_compare(cluster.kubeVersion, "1.29.0") >= 0 (olm.constraint): needs Kubernetes 1.29 for ValidatingAdmissionPolicy; the cluster runs Kubernetes 1.27.3',
  ]);
  assert.equal(resolve({ catalogs: [cat], requests: [{ package: 'new-only' }], cluster: { kubeVersion: 'v1.30.0' } }).bundles.length, 1, 'no dependency is asked for');
  assert.equal(resolve({ catalogs: [cat], requests: [{ package: 'not-ocp' }], cluster: old }).bundles.length, 1);
  assert.match(explain({ catalogs: [cat], requests: [{ package: 'not-ocp' }], cluster: { kubeVersion: 'v1.27.3', openShiftVersion: '4.14.0' } }).message, /not-ocp 1\.0\.0 requires a cluster matching the rule/);
  const pick = (cluster: { kubeVersion: string }): string[] => resolve({ catalogs: [cat], requests: [{ package: 'app' }], cluster }).bundles.map((b) => `${b.package}@${b.version}`);
  // Facts that could not be read are not held against a bundle.
  const unknown = resolve({ catalogs: [cat], requests: [{ package: 'new-only' }], cluster: {} });
  assert.equal(unknown.bundles.length, 1);
  assert.match(unknown.notices.join(), /new-only 1\.0\.0 asks the cluster for the rule .*; not checked \(the API server's version is unknown\)/);
  assert.deepEqual(pick(old), ['db@1.0.0', 'app@1.0.0']);
  assert.deepEqual(pick({ kubeVersion: 'v1.31.0' }), ['db@2.0.0', 'app@1.0.0']);
});
