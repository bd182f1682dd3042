/**
 * Resolution over the whole cluster: every installed bundle is a fact, so dependencies are
 * shared, an installed dependency can be taken over, an API keeps one owner, and a change that
 * would break another extension's dependency is refused — each explained with who owns what.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { neededBundles, resolve } from './resolver.js';
import { catalog, chain, explain, gvk, picked, requiresGvk, requiresPackage } from './fixtures.test-helper.js';

// node-healthcheck needs the PoisonPillRemediation API, which poison-pill provides.
const medik8s = catalog('c', [
  chain('poison-pill', ['0.1.0', '0.2.0'], () => [gvk('poison-pill.medik8s.io', 'v1alpha1', 'PoisonPillRemediation')]),
  chain('node-healthcheck', ['0.0.2'], () => [gvk('remediation.medik8s.io', 'v1alpha1', 'NodeHealthCheck'), requiresGvk('poison-pill.medik8s.io', 'v1alpha1', 'PoisonPillRemediation')]),
  chain('other-healthcheck', ['1.0.0'], () => [requiresGvk('poison-pill.medik8s.io', 'v1alpha1', 'PoisonPillRemediation')]),
  chain('fake-pill', ['1.0.0'], () => [gvk('poison-pill.medik8s.io', 'v1alpha1', 'PoisonPillRemediation')]),
]);

test('an installed dependency satisfies a new request and is not installed again', () => {
  const installed = [{ package: 'poison-pill', version: '0.1.0', owner: 'needed by extension nhc' }, { package: 'node-healthcheck', version: '0.0.2', owner: 'requested by extension nhc' }];
  const r = resolve({ catalogs: [medik8s], installed, requests: [{ package: 'other-healthcheck', preferUpgrade: true }] });
  const pill = r.bundles.find((b) => b.package === 'poison-pill');
  assert.equal(pill?.version, '0.1.0', 'the installed copy, though 0.2.0 is newer');
  assert.equal(pill?.installed, true);
  // The new request's own set is itself and the shared dependency, nothing of node-healthcheck.
  assert.deepEqual(
    neededBundles(r.bundles, 'other-healthcheck').map((b) => `${b.package}@${b.version}:${b.installed}`),
    ['poison-pill@0.1.0:true', 'other-healthcheck@1.0.0:false'],
  );
  assert.deepEqual(r.bundles.find((b) => b.package === 'other-healthcheck')?.dependsOn, ['poison-pill']);
});

test('a request for a package installed as a dependency takes that copy over: same bundle, no reinstall', () => {
  const installed = [{ package: 'poison-pill', version: '0.1.0', owner: 'needed by extension nhc' }, { package: 'node-healthcheck', version: '0.0.2', owner: 'requested by extension nhc' }];
  const r = resolve({ catalogs: [medik8s], installed, requests: [{ package: 'poison-pill' }] });
  assert.deepEqual(
    neededBundles(r.bundles, 'poison-pill').map((b) => `${b.package}@${b.version}:${b.installed}`),
    ['poison-pill@0.1.0:true'],
  );
});

test('a dependency nobody else needs drops out of the set when the bundle needing it no longer does', () => {
  const cat = catalog('c', [chain('db', ['1.0.0']), { name: 'app', bundles: [{ version: '1.0.0', props: [requiresPackage('db', '>=1.0.0')] }, { version: '2.0.0', replaces: '1.0.0' }] }]);
  const r = resolve({ catalogs: [cat], installed: [{ package: 'app', version: '1.0.0' }, { package: 'db', version: '1.0.0' }], requests: [{ package: 'app', preferUpgrade: true }] });
  assert.deepEqual(picked(r).sort(), ['app@2.0.0', 'db@1.0.0'], 'db stays installed for now…');
  assert.deepEqual(picked({ ...r, bundles: neededBundles(r.bundles, 'app') }), ['app@2.0.0'], '…but app 2.0.0 no longer needs it');
});

test('two packages that provide the same API: the explanation names the installed owner', () => {
  const e = explain({
    catalogs: [medik8s],
    installed: [{ package: 'poison-pill', version: '0.1.0', owner: 'needed by extension nhc' }],
    requests: [{ package: 'fake-pill' }],
  });
  assert.deepEqual(e.sentences, [
    'package fake-pill was requested; its only candidate is fake-pill 1.0.0',
    'poison-pill 0.1.0 is installed (needed by extension nhc) and no request allows it to change',
    'only one bundle may provide the API poison-pill.medik8s.io/v1alpha1/PoisonPillRemediation (fake-pill and poison-pill both do)',
  ]);
});

test('an installed bundle no catalog offers still owns the APIs it was recorded with', () => {
  const e = explain({
    catalogs: [medik8s],
    installed: [{ package: 'gone-pill', version: '3.0.0', owner: 'requested by extension old', provides: ['poison-pill.medik8s.io/v1alpha1/PoisonPillRemediation'] }],
    requests: [{ package: 'poison-pill' }],
  });
  assert.match(e.message, /gone-pill 3\.0\.0 is installed \(requested by extension old\) and no request allows it to change/);
  assert.match(e.message, /only one bundle may provide the API poison-pill\.medik8s\.io\/v1alpha1\/PoisonPillRemediation/);
});

test("an upgrade that would break another extension's dependency is refused, with the explanation", () => {
  const cat = catalog('c', [
    chain('db', ['1.0.0', '2.0.0']),
    chain('app', ['1.0.0'], () => [requiresPackage('db', '<2.0.0')]),
  ]);
  const installed = [
    { package: 'db', version: '1.0.0', owner: 'requested by extension db, needed by extension app' },
    { package: 'app', version: '1.0.0', owner: 'requested by extension app' },
  ];
  const e = explain({ catalogs: [cat], installed, requests: [{ package: 'db', versionRange: '>=2' }] });
  assert.deepEqual(e.sentences, [
    'package db was requested with version range >=2 (installed 1.0.0, upgrade policy CatalogProvided); its only candidate is db 2.0.0',
    'app 1.0.0 is installed (requested by extension app) and no request allows it to change',
    'app 1.0.0 requires package db <2.0.0, offered by db 1.0.0',
    'only one bundle of package db can be installed at a time',
  ]);
  // Following the catalog (no range) the same request just stays where it is.
  const r = resolve({ catalogs: [cat], installed, requests: [{ package: 'db', preferUpgrade: true }] });
  assert.equal(r.bundles.find((b) => b.package === 'db')?.version, '1.0.0');
});

test("an installed bundle's requirement nothing can meet is a warning, not a failure for everyone", () => {
  const cat = catalog('c', [chain('app', ['1.0.0'], () => [requiresGvk('gone.io', 'v1', 'Thing')]), chain('foo', ['1.0.0'])]);
  const r = resolve({ catalogs: [cat], installed: [{ package: 'app', version: '1.0.0' }], requests: [{ package: 'foo' }] });
  assert.deepEqual(picked(r).sort(), ['app@1.0.0', 'foo@1.0.0']);
  assert.ok(r.warnings.some((w) => w.includes('installed app 1.0.0 has a requirement nothing can meet') && w.includes('gone.io/v1/Thing')), r.warnings.join('\n'));
  // Asked for itself, the same requirement is enforced.
  assert.match(explain({ catalogs: [cat], requests: [{ package: 'app' }] }).message, /requires the API gone\.io\/v1\/Thing; no bundle in the catalogs provides it/);
});
