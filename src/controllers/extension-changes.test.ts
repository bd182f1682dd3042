import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BundleDeployment, ClusterExtension } from '../api/types.js';
import { buildInstalledState, recordedNeeds } from '../installed/index.js';
import type { ChosenBundle } from '../resolve/index.js';
import { bundleDeploymentName } from '../api/names.js';
import { changesForRemoval, changesForResolution, orphans } from './extension-changes.js';

function ce(name: string, pkg: string, namespace = name, extra: Partial<ClusterExtension['spec']> = {}): ClusterExtension {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'ClusterExtension',
    metadata: { name, uid: `uid-${name}`, generation: 1 },
    spec: { namespace, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: pkg } }, ...extra },
  };
}

function chosen(pkg: string, version: string, opts: { installed?: boolean; dependsOn?: string[]; provides?: string[] } = {}): ChosenBundle {
  return {
    name: `${pkg}.v${version}`,
    package: pkg,
    version,
    image: `reg/${pkg}:${version}`,
    catalog: 'cat',
    installed: opts.installed ?? false,
    dependsOn: opts.dependsOn ?? [],
    provides: opts.provides ?? [`${pkg}.io/v1/Thing`],
  };
}

/** Plays the API server: applies the bodies (installed, as after a successful install) and deletes. */
class Cluster {
  bds = new Map<string, BundleDeployment>();
  extensions = new Map<string, ClusterExtension>();
  writes = 0;

  add(...list: ClusterExtension[]): this {
    for (const c of list) this.extensions.set(c.metadata.name ?? '', c);
    return this;
  }

  state(): ReturnType<typeof buildInstalledState> {
    return buildInstalledState([...this.bds.values()], [...this.extensions.values()]);
  }

  resolve(c: ClusterExtension, bundles: ChosenBundle[]): ReturnType<typeof changesForResolution> {
    const changes = changesForResolution(c, this.state(), bundles);
    this.write(changes);
    return changes;
  }

  remove(name: string): ReturnType<typeof changesForRemoval> {
    const changes = changesForRemoval(name, this.state());
    this.write(changes);
    this.extensions.delete(name);
    return changes;
  }

  private write(changes: { apply: BundleDeployment[]; delete: string[] }): void {
    for (const b of changes.apply) {
      this.writes++;
      const name = b.metadata.name ?? '';
      const prev = this.bds.get(name);
      const generation = (prev?.metadata.generation ?? 0) + (prev === undefined || JSON.stringify(prev.spec) !== JSON.stringify(b.spec) ? 1 : 0);
      this.bds.set(name, {
        ...b,
        metadata: { ...b.metadata, generation, creationTimestamp: prev?.metadata.creationTimestamp ?? `2026-01-01T00:00:0${this.bds.size}Z` },
        status: { conditions: [{ type: 'Installed', status: 'True', reason: 'Succeeded', message: '', lastTransitionTime: '' }] },
      });
    }
    for (const name of changes.delete) this.bds.delete(name);
  }

  needs(name: string): string[] {
    const bd = this.bds.get(name);
    return bd === undefined ? [] : recordedNeeds(bd).map((n) => `${n.extension}:${n.role}`);
  }
}

const nhc = ce('nhc', 'node-healthcheck');
const pp = ce('pp', 'poison-pill', 'pp-ns');
const nhcSet = [chosen('poison-pill', '0.1.0'), chosen('node-healthcheck', '0.0.2', { dependsOn: ['poison-pill'] })];

test('a first install creates one BundleDeployment per bundle, each recording who needs it', () => {
  const c = new Cluster().add(nhc);
  const changes = c.resolve(nhc, nhcSet);
  assert.deepEqual(changes.apply.map((b) => b.metadata.name), ['nhc-poison-pill', 'nhc-node-healthcheck']);
  assert.deepEqual(c.needs('nhc-poison-pill'), ['nhc:dependency']);
  assert.deepEqual(c.needs('nhc-node-healthcheck'), ['nhc:requested']);
  const dep = c.bds.get('nhc-poison-pill');
  assert.equal(dep?.spec.installNamespace, 'nhc');
  assert.equal(dep?.spec.releaseName, 'nhc-poison-pill');
  assert.deepEqual(dep?.metadata.ownerReferences?.map((r) => `${r.name}/${r.uid}`), ['nhc/uid-nhc']);
  assert.equal(dep?.metadata.annotations?.['binnacle.dev/provides'], 'poison-pill.io/v1/Thing');
  // Level-triggered: the same resolution again writes nothing.
  const before = c.writes;
  assert.deepEqual(c.resolve(nhc, nhcSet.map((b) => ({ ...b, installed: true }))).apply, []);
  assert.equal(c.writes, before);
});

test('an explicit install of an installed dependency takes it over in place: same spec, no new object', () => {
  const c = new Cluster().add(nhc, pp);
  c.resolve(nhc, nhcSet);
  const spec = structuredClone(c.bds.get('nhc-poison-pill')?.spec);
  const generation = c.bds.get('nhc-poison-pill')?.metadata.generation;
  const changes = c.resolve(pp, [chosen('poison-pill', '0.1.0', { installed: true })]);
  assert.deepEqual(changes.takenOver, ['poison-pill']);
  assert.deepEqual(changes.apply.map((b) => b.metadata.name), ['nhc-poison-pill'], 'no new BundleDeployment');
  assert.deepEqual(changes.deployments.get('poison-pill'), 'nhc-poison-pill');
  const bd = c.bds.get('nhc-poison-pill');
  assert.deepEqual(bd?.spec, spec, 'same namespace, release, image: nothing is reinstalled');
  assert.equal(bd?.metadata.generation, generation);
  assert.deepEqual(c.needs('nhc-poison-pill'), ['pp:requested', 'nhc:dependency']);
  assert.equal(bd?.metadata.labels?.['binnacle.dev/owner-name'], 'pp', 'held by the extension that asked for it');
  assert.equal(c.bds.size, 2);
});

test('a shared dependency stays while any extension needs it and goes with the last: requester leaves first', () => {
  const c = new Cluster().add(nhc, pp);
  c.resolve(nhc, nhcSet);
  c.resolve(pp, [chosen('poison-pill', '0.1.0', { installed: true })]);
  const removal = c.remove('pp');
  assert.deepEqual(removal.delete, []);
  assert.deepEqual(c.needs('nhc-poison-pill'), ['nhc:dependency']);
  assert.equal(c.bds.get('nhc-poison-pill')?.metadata.labels?.['binnacle.dev/owner-name'], 'nhc');
  const last = c.remove('nhc');
  assert.deepEqual(last.delete.sort(), ['nhc-node-healthcheck', 'nhc-poison-pill']);
  assert.equal(c.bds.size, 0);
});

test('a shared dependency stays while any extension needs it and goes with the last: dependent leaves first', () => {
  const other = ce('other', 'other-healthcheck');
  const c = new Cluster().add(nhc, other);
  c.resolve(nhc, nhcSet);
  c.resolve(other, [chosen('poison-pill', '0.1.0', { installed: true }), chosen('other-healthcheck', '1.0.0', { dependsOn: ['poison-pill'] })]);
  assert.deepEqual(c.needs('nhc-poison-pill'), ['nhc:dependency', 'other:dependency']);
  assert.equal([...c.bds.keys()].filter((n) => n.includes('poison-pill')).length, 1, 'one copy');
  assert.deepEqual(c.remove('nhc').delete, ['nhc-node-healthcheck']);
  assert.deepEqual(c.needs('nhc-poison-pill'), ['other:dependency']);
  assert.equal(c.bds.get('nhc-poison-pill')?.metadata.labels?.['binnacle.dev/owner-name'], 'other');
  assert.deepEqual(c.bds.get('nhc-poison-pill')?.metadata.ownerReferences?.map((r) => r.name), ['other']);
  assert.deepEqual(c.remove('other').delete.sort(), ['nhc-poison-pill', 'other-other-healthcheck']);
});

test('an upgrade that no longer needs a dependency lets it go', () => {
  const c = new Cluster().add(nhc);
  c.resolve(nhc, nhcSet);
  const changes = c.resolve(nhc, [chosen('node-healthcheck', '0.1.0')]);
  assert.deepEqual(changes.delete, ['nhc-poison-pill']);
  assert.equal(c.bds.get('nhc-node-healthcheck')?.spec.source.image?.ref, 'reg/node-healthcheck:0.1.0');
});

test('nothing is installed while an earlier copy of the package or its API is being removed', () => {
  const c = new Cluster().add(nhc, pp);
  c.resolve(nhc, nhcSet);
  const dep = c.bds.get('nhc-poison-pill');
  assert.ok(dep !== undefined);
  dep.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  const changes = c.resolve(pp, [chosen('poison-pill', '0.2.0')]);
  assert.deepEqual(changes.apply, []);
  assert.match(changes.waiting.join(), /poison-pill: waiting for BundleDeployment nhc-poison-pill to be removed/);
  const fake = changesForResolution(ce('f', 'fake-pill'), c.state(), [chosen('fake-pill', '1.0.0', { provides: ['poison-pill.io/v1/Thing'] })]);
  assert.match(fake.waiting.join(), /fake-pill: waiting for BundleDeployment nhc-poison-pill/);
});

test('BundleDeployments from before needs were recorded count their owner as needing them', () => {
  const legacy: BundleDeployment = {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'BundleDeployment',
    metadata: {
      name: bundleDeploymentName('nhc', 'poison-pill'),
      labels: { 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'nhc', 'binnacle.dev/package': 'poison-pill' },
      annotations: { 'binnacle.dev/bundle-version': '0.1.0' },
      ownerReferences: [{ apiVersion: 'binnacle.dev/v1alpha1', kind: 'ClusterExtension', name: 'nhc', uid: 'uid-nhc', controller: true }],
    },
    spec: { source: { type: 'image', image: { ref: 'reg/poison-pill:0.1.0' } }, format: 'registry+v1', installNamespace: 'nhc' },
  };
  const state = buildInstalledState([legacy], [nhc]);
  assert.deepEqual(state.units[0]?.needs, [{ extension: 'nhc', role: 'dependency' }]);
  assert.deepEqual(orphans(state), []);
  // The next resolution writes the needs down (and drops the old controller reference).
  const changes = changesForResolution(nhc, state, [chosen('poison-pill', '0.1.0', { installed: true })]);
  assert.equal(changes.apply[0]?.metadata.labels?.['needed-by.binnacle.dev/nhc'], 'dependency');
  assert.deepEqual(changes.apply[0]?.metadata.ownerReferences, [{ apiVersion: 'binnacle.dev/v1alpha1', kind: 'ClusterExtension', name: 'nhc', uid: 'uid-nhc', blockOwnerDeletion: false }]);
  // With its extension gone (deleted without its finalizer), it is an orphan.
  assert.deepEqual(orphans(buildInstalledState([legacy], [])), [legacy.metadata.name]);
});

test('a catalog bundle kept in ConfigMaps (configmaps:// image) becomes a configMaps source, and an upgrade switches it', () => {
  const c = new Cluster();
  const ext = ce('dev', 'dev-op');
  c.add(ext);
  const first = c.resolve(ext, [{ ...chosen('dev-op', '1.0.0'), image: 'configmaps://dev/b1-manifests:manifests,b1-metadata:metadata' }]);
  const bd = first.apply[0];
  assert.deepEqual(bd?.spec.source, {
    type: 'configMaps',
    configMaps: [
      { namespace: 'dev', name: 'b1-manifests', path: 'manifests' },
      { namespace: 'dev', name: 'b1-metadata', path: 'metadata' },
    ],
  });
  const next = c.resolve(ext, [{ ...chosen('dev-op', '1.1.0'), image: 'reg/dev-op:1.1.0' }]);
  assert.deepEqual(next.apply[0]?.spec.source, { type: 'image', image: { ref: 'reg/dev-op:1.1.0' } });
});

test("a ServiceAccount in another namespace (a PlatformOperator's shared installer) is carried to every BundleDeployment; installerOf reads it", async () => {
  const { installerOf } = await import('./bundle-deployment.js');
  const c = ce('web', 'web', 'apps', { serviceAccount: { name: 'installer', namespace: 'platform' } });
  const changes = new Cluster().add(c).resolve(c, [chosen('web', '1.0.0'), chosen('db', '2.0.0', { installed: false })]);
  assert.ok(changes.apply.length >= 1);
  for (const bd of changes.apply) {
    assert.deepEqual(bd.spec.serviceAccount, { name: 'installer', namespace: 'platform' });
    assert.deepEqual(installerOf(bd), { namespace: 'platform', name: 'installer' });
  }
  // Without a namespace, the install namespace.
  const plain = ce('api', 'api', 'apis');
  const [bd] = new Cluster().add(plain).resolve(plain, [chosen('api', '1.0.0')]).apply;
  assert.ok(bd !== undefined);
  assert.deepEqual(installerOf(bd), { namespace: 'apis', name: 'installer' });
});

test('an extension’s drift rules go to its BundleDeployments, and go when it drops them', () => {
  const drift = { mode: 'Warn' as const, ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }] };
  const withDrift = ce('nhc', 'node-healthcheck', 'nhc', { drift });
  const c = new Cluster().add(withDrift);
  c.resolve(withDrift, nhcSet);
  assert.deepEqual(c.bds.get('nhc-node-healthcheck')?.spec.drift, drift);
  assert.deepEqual(c.bds.get('nhc-poison-pill')?.spec.drift, drift);
  const without = ce('nhc', 'node-healthcheck');
  c.add(without);
  const changes = c.resolve(without, nhcSet.map((b) => ({ ...b, installed: true })));
  // As for install options: an installed dependency is not re-specced, the extension's own package is.
  assert.deepEqual(changes.apply.map((b) => b.metadata.name), ['nhc-node-healthcheck']);
  assert.equal(c.bds.get('nhc-node-healthcheck')?.spec.drift, undefined);
});

test("a ClusterExtension's verify policy goes to each of its BundleDeployments' sources, dependencies included, and leaves with it", () => {
  const verify = { provider: 'cosign' as const, secretRef: { namespace: 'team', name: 'keys' } };
  const cluster = new Cluster();
  const app = ce('app', 'app', 'app', { verify });
  cluster.add(app);
  const changes = cluster.resolve(app, [chosen('app', '1.0.0', { dependsOn: ['lib'] }), chosen('lib', '1.0.0')]);
  assert.equal(changes.apply.length, 2);
  for (const bd of changes.apply) assert.deepEqual(bd.spec.source, { type: 'image', image: { ref: bd.spec.source.image?.ref ?? '' }, verify });
  const plain = ce('app', 'app');
  cluster.add(plain);
  const again = cluster.resolve(plain, [chosen('app', '1.0.1', { dependsOn: ['lib'] }), chosen('lib', '1.0.0', { installed: true })]);
  const main = again.apply.find((b) => b.spec.source.image?.ref === 'reg/app:1.0.1');
  assert.equal(main?.spec.source.verify, undefined);
});

test("the extension's install.crdUpgradeSafety (and adoptExisting) reach each of its BundleDeployments", () => {
  const strictless = ce('nhc', 'node-healthcheck', 'nhc', { install: { crdUpgradeSafety: 'None', adoptExisting: true } });
  const c = new Cluster().add(strictless);
  c.resolve(strictless, nhcSet);
  for (const name of ['nhc-poison-pill', 'nhc-node-healthcheck']) {
    assert.equal(c.bds.get(name)?.spec.crdUpgradeSafety, 'None', name);
    assert.equal(c.bds.get(name)?.spec.adoptExisting, true, name);
  }
});

test("an OLM v1 ClusterExtension's twin: its main BundleDeployment names it (olmv1Owner, and the uid the twin recorded: what it may take over) and gets its bundleConfig; a dependency and a plain extension get neither", () => {
  const twin = ce('nhc', 'node-healthcheck', 'nhc', { install: { bundleConfig: { watchNamespace: 'nhc' } } });
  twin.metadata.labels = { 'binnacle.dev/olmv1-twin-of': 'uid-v1' };
  // A label alone is a forgery (api/olmv1/twin.ts): its BundleDeployment names no OLM v1 owner.
  const forged = new Cluster().add(structuredClone(twin));
  forged.resolve(twin, nhcSet);
  assert.ok(forged.bds.get('nhc-node-healthcheck') !== undefined, 'its BundleDeployment is made');
  assert.deepEqual([forged.bds.get('nhc-node-healthcheck')?.spec.olmv1Owner, forged.bds.get('nhc-node-healthcheck')?.spec.olmv1OwnerUID], [undefined, undefined], 'label only');
  twin.metadata.ownerReferences = [{ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'nhc', uid: 'uid-v1', controller: true }];
  const c = new Cluster().add(twin);
  c.resolve(twin, nhcSet);
  assert.equal(c.bds.get('nhc-node-healthcheck')?.spec.olmv1Owner, 'nhc');
  assert.equal(c.bds.get('nhc-node-healthcheck')?.spec.olmv1OwnerUID, 'uid-v1');
  assert.equal(c.bds.get('nhc-poison-pill')?.spec.olmv1OwnerUID, undefined);
  assert.deepEqual(c.bds.get('nhc-node-healthcheck')?.spec.bundleConfig, { watchNamespace: 'nhc' });
  assert.equal(c.bds.get('nhc-poison-pill')?.spec.olmv1Owner, undefined, 'a dependency installed fresh is not the extension’s bundle');
  assert.equal(c.bds.get('nhc-poison-pill')?.spec.bundleConfig, undefined);
  const plain = ce('other', 'other', 'other');
  const d = new Cluster().add(plain);
  d.resolve(plain, [chosen('other', '1.0.0')]);
  assert.deepEqual([...d.bds.values()].map((b) => [b.spec.olmv1Owner, b.spec.olmv1OwnerUID]), [[undefined, undefined]]);
});

test('an installed bundle no catalog offers any more stays where it runs: its BundleDeployment keeps its image, and a config change still reaches it', () => {
  const mine = ce('solo', 'solo');
  const c = new Cluster().add(mine);
  c.resolve(mine, [chosen('solo', '1.2.0')]);
  // The resolver keeps the installed bundle with no image of its own (resolver.ts: an `installed` node).
  const kept: ChosenBundle = { ...chosen('solo', '1.2.0', { installed: true }), image: '', catalog: '' };
  assert.deepEqual(c.resolve(mine, [kept]).apply, [], 'nothing to write: not an empty image ref');
  assert.equal(c.bds.get(bundleDeploymentName('solo', 'solo'))?.spec.source.image?.ref, 'reg/solo:1.2.0');
  const configured = ce('solo', 'solo', 'solo', { install: { watchNamespace: 'elsewhere' } });
  c.add(configured);
  const changes = c.resolve(configured, [kept]);
  assert.equal(changes.apply.length, 1);
  assert.equal(changes.apply[0]?.spec.source.image?.ref, 'reg/solo:1.2.0');
  assert.equal(changes.apply[0]?.spec.watchNamespace, 'elsewhere');
});
