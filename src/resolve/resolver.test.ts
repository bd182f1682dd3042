import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from './resolver.js';
import { InputError } from '../util/errors.js';
import type { Property } from '../declcfg/index.js';
import { SatBudgetError } from './sat/errors.js';
import { catalog, chain, constraint, explain, gvk, picked, requiresGvk, requiresPackage } from './fixtures.test-helper.js';

const foo = chain('foo', ['1.0.0', '1.1.0', '2.0.0']);

test('picks the channel head when nothing is installed', () => {
  const r = resolve({ catalogs: [catalog('c', [foo])], requests: [{ package: 'foo' }] });
  assert.deepEqual(picked(r), ['foo@2.0.0']);
  assert.equal(r.bundles[0]?.image, 'quay.io/test/foo-bundle:v2.0.0');
  assert.equal(r.bundles[0]?.catalog, 'c');
});

test('channel and Masterminds version range filter the candidates', () => {
  const cat = catalog('c', [
    {
      name: 'foo',
      bundles: [
        { version: '1.0.0', channels: ['stable', 'fast'] },
        { version: '1.5.0', channels: ['fast'], replaces: '1.0.0' },
        { version: '2.0.0', channels: ['fast'], replaces: '1.5.0' },
      ],
    },
  ]);
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 'foo', channels: ['stable'] }] })), ['foo@1.0.0']);
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 'foo', versionRange: '>=1.2, <2' }] })), ['foo@1.5.0']);
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 'foo', versionRange: '~1.0 || ^2' }] })), ['foo@2.0.0']);
});

test('the installed version is preferred over an upgrade', () => {
  const r = resolve({ catalogs: [catalog('c', [foo])], installed: [{ package: 'foo', version: '1.0.0' }], requests: [{ package: 'foo' }] });
  assert.deepEqual(picked(r), ['foo@1.0.0']);
  assert.equal(r.bundles[0]?.installed, true);
});

test('preferUpgrade picks the best allowed successor, still only along upgrade edges', () => {
  const r = resolve({ catalogs: [catalog('c', [foo])], installed: [{ package: 'foo', version: '1.0.0' }], requests: [{ package: 'foo', preferUpgrade: true }] });
  // 1.1.0 replaces 1.0.0; 2.0.0 replaces 1.1.0, so it is not a direct successor of 1.0.0.
  assert.deepEqual(picked(r), ['foo@1.1.0']);
  assert.equal(r.bundles[0]?.installed, false);
  const top = resolve({ catalogs: [catalog('c', [foo])], installed: [{ package: 'foo', version: '1.1.0' }], requests: [{ package: 'foo', preferUpgrade: true }] });
  assert.deepEqual(picked(top), ['foo@2.0.0']);
  const head = resolve({ catalogs: [catalog('c', [foo])], installed: [{ package: 'foo', version: '2.0.0' }], requests: [{ package: 'foo', preferUpgrade: true }] });
  assert.deepEqual(picked(head), ['foo@2.0.0'], 'at the head it stays');
});

test('upgrade along replaces', () => {
  const r = resolve({ catalogs: [catalog('c', [foo])], installed: [{ package: 'foo', version: '1.0.0' }], requests: [{ package: 'foo', versionRange: '>1.0.0' }] });
  assert.deepEqual(picked(r), ['foo@1.1.0']);
});

test('upgrade along skips and skipRange; a non-successor is refused', () => {
  const cat = catalog('c', [
    {
      name: 'foo',
      bundles: [
        { version: '1.0.0' },
        { version: '1.1.0', replaces: '1.0.0' },
        { version: '1.2.0', replaces: '1.1.0', skips: ['1.0.0'] },
        { version: '2.0.0', replaces: '1.2.0', skipRange: '>=1.1.0 <2.0.0' },
      ],
    },
  ]);
  const from = (v: string, range: string): string[] =>
    picked(resolve({ catalogs: [cat], installed: [{ package: 'foo', version: v }], requests: [{ package: 'foo', versionRange: range }] }));
  assert.deepEqual(from('1.0.0', '>=1.2.0'), ['foo@1.2.0']); // skips
  assert.deepEqual(from('1.1.0', '>=2.0.0'), ['foo@2.0.0']); // skipRange
  const e = explain({ catalogs: [cat], installed: [{ package: 'foo', version: '1.0.0' }], requests: [{ package: 'foo', versionRange: '>=2.0.0' }] });
  assert.match(e.message, /upgrade of foo from 1\.0\.0 is not allowed: no bundle within version range >=2\.0\.0 replaces, skips or has a skipRange covering 1\.0\.0/);
  assert.match(e.message, /use upgrade policy SelfCertified to allow it/);
  assert.equal(e.code, 'RESOLUTION_FAILED');
  assert.ok(e.facts.some((f) => f.kind === 'request' && f.empty?.kind === 'no-upgrade-edge'));
  // SelfCertified allows any version.
  const r = resolve({
    catalogs: [cat],
    installed: [{ package: 'foo', version: '1.0.0' }],
    requests: [{ package: 'foo', versionRange: '>=2.0.0', upgradePolicy: 'SelfCertified' }],
  });
  assert.deepEqual(picked(r), ['foo@2.0.0']);
});

test('installed by bundle name, and a downgrade needs SelfCertified', () => {
  const cat = catalog('c', [foo]);
  const e = explain({ catalogs: [cat], installed: [{ bundle: 'foo.v2.0.0' }], requests: [{ package: 'foo', versionRange: '<2' }] });
  assert.match(e.sentences.join('\n'), /upgrade of foo from 2\.0\.0 is not allowed/);
  const r = resolve({ catalogs: [cat], installed: [{ bundle: 'foo.v2.0.0' }], requests: [{ package: 'foo', versionRange: '<2', upgradePolicy: 'SelfCertified' }] });
  assert.deepEqual(picked(r), ['foo@1.1.0']);
  assert.throws(() => resolve({ catalogs: [cat], installed: [{ bundle: 'nope.v1' }], requests: [] }), InputError);
});

test('package dependency: dependencies come first in install order', () => {
  const cat = catalog('c', [
    chain('prometheus', ['0.22.2', '0.27.0', '2.1.0']),
    chain('etcd', ['0.9.4'], () => [requiresPackage('prometheus', '>=0.20.0 <1.0.0')]),
  ]);
  const r = resolve({ catalogs: [cat], requests: [{ package: 'etcd' }] });
  assert.deepEqual(picked(r), ['prometheus@0.27.0', 'etcd@0.9.4']);
});

test('explains a package dependency nothing offers', () => {
  const cat = catalog('c', [chain('prometheus', ['0.22.2', '0.27.0']), chain('etcd', ['0.9.4'], () => [requiresPackage('prometheus', '>=2.0.0')])]);
  const e = explain({ catalogs: [cat], requests: [{ package: 'etcd' }] });
  assert.ok(e.sentences.includes('etcd 0.9.4 requires package prometheus >=2.0.0; the catalogs offer only 0.22.2 and 0.27.0'), e.message);
  const f = e.facts.find((x) => x.kind === 'requires-package');
  assert.equal(f?.kind === 'requires-package' ? f.package : '', 'prometheus');
});

test('explains a version range no bundle in the channel matches', () => {
  const cat = catalog('c', [chain('foo', ['1.0.0', '2.1.0'])]);
  const e = explain({ catalogs: [cat], requests: [{ package: 'foo', channels: ['stable'], versionRange: '>=3.0' }] });
  assert.deepEqual(e.sentences, ['no bundle of package foo in channel "stable" matches version range >=3.0 (channel offers 1.0.0, 2.1.0)']);
});

test('explains an unknown package and an unknown channel', () => {
  const cat = catalog('c', [foo]);
  assert.deepEqual(explain({ catalogs: [cat], requests: [{ package: 'nope' }] }).sentences, ['no catalog offers package nope']);
  assert.match(explain({ catalogs: [cat], requests: [{ package: 'foo', channels: ['beta'] }] }).message, /package foo has no channel "beta" \(it has "stable"\)/);
});

test('GVK dependency picks a provider; a missing API is explained', () => {
  const cat = catalog('c', [
    chain('db', ['1.0.0'], () => [gvk('db.example.com', 'v1', 'Database')]),
    chain('app', ['1.0.0'], () => [requiresGvk('db.example.com', 'v1', 'Database')]),
    chain('lonely', ['1.0.0'], () => [requiresGvk('x.example.com', 'v1', 'Thing')]),
  ]);
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 'app' }] })), ['db@1.0.0', 'app@1.0.0']);
  const e = explain({ catalogs: [cat], requests: [{ package: 'lonely' }] });
  assert.deepEqual(e.sentences, [
    'package lonely was requested; its only candidate is lonely 1.0.0',
    'lonely 1.0.0 requires the API x.example.com/v1/Thing; no bundle in the catalogs provides it',
  ]);
});

test('olm.constraint: gvk, package, cel and compound all/any/not', () => {
  const dbs = chain('db', ['1.0.0', '2.0.0', '3.0.0'], (v) => [gvk('db.example.com', v === '3.0.0' ? 'v2' : 'v1', 'Database')]);
  const withConstraint = (c: Record<string, unknown>): string[] =>
    picked(resolve({ catalogs: [catalog('c', [dbs, chain('app', ['1.0.0'], () => [constraint(c)])])], requests: [{ package: 'app' }] }));
  assert.deepEqual(withConstraint({ gvk: { group: 'db.example.com', version: 'v1', kind: 'Database' } }), ['db@2.0.0', 'app@1.0.0']);
  assert.deepEqual(withConstraint({ package: { packageName: 'db', versionRange: '<2.0.0' } }), ['db@1.0.0', 'app@1.0.0']);
  assert.deepEqual(
    withConstraint({
      cel: { rule: 'properties.exists(p, p.type == "olm.package" && p.value.packageName == "db" && semver_compare(p.value.version, "2.0.0") <= 0)' },
    }),
    ['db@2.0.0', 'app@1.0.0'],
  );
  assert.deepEqual(
    withConstraint({
      all: { constraints: [{ package: { packageName: 'db', versionRange: '>=1.0.0' } }, { not: { constraints: [{ gvk: { group: 'db.example.com', version: 'v2', kind: 'Database' } }] } }] },
    }),
    ['db@2.0.0', 'app@1.0.0'],
  );
  assert.deepEqual(
    withConstraint({ any: { constraints: [{ package: { packageName: 'db', versionRange: '>=9.0.0' } }, { package: { packageName: 'db', versionRange: '1.0.0' } }] } }),
    ['db@1.0.0', 'app@1.0.0'],
  );
  const e = explain({
    catalogs: [catalog('c', [dbs, chain('app', ['1.0.0'], () => [constraint({ failureMessage: 'app needs db 9 or newer', package: { packageName: 'db', versionRange: '>=9.0.0' } })])])],
    requests: [{ package: 'app' }],
  });
  assert.deepEqual(e.sentences, ['package app was requested; its only candidate is app 1.0.0', 'app 1.0.0: app needs db 9 or newer; no bundle in the catalogs satisfies it']);
  const bad = explain({ catalogs: [catalog('c', [chain('app', ['1.0.0'], () => [constraint({ cel: { rule: 'properties.exists(p,' } })])])], requests: [{ package: 'app' }] });
  assert.match(bad.message, /app 1\.0\.0 has an unusable olm\.constraint: unexpected end of rule/);
});

test('an unreadable olm.gvk.required or olm.constraint is an unmet requirement that says why', () => {
  const unreadable = (prop: Property): string => explain({ catalogs: [catalog('c', [chain('app', ['1.0.0'], () => [prop])])], requests: [{ package: 'app' }] }).message;
  assert.match(unreadable({ type: 'olm.gvk.required', value: { group: 'x.io', version: 1 } }), /app 1\.0\.0 has an unusable olm\.constraint: olm\.gvk\.required needs string fields version and kind/);
  assert.match(unreadable(constraint({ failureMessage: 'two kinds at once', gvk: { group: 'x.io', version: 'v1', kind: 'T' }, package: { packageName: 'db', versionRange: '1' } })), /app 1\.0\.0 has an unusable olm\.constraint: it must set exactly one of gvk, package, cel, all, any, not/);
});

test('an installed package nobody asked to change stays, and the clash is explained', () => {
  const cat = catalog('c', [chain('db', ['1.0.0', '2.0.0']), chain('app', ['1.0.0'], () => [requiresPackage('db', '>=2.0.0')])]);
  const e = explain({ catalogs: [cat], installed: [{ package: 'db', version: '1.0.0' }], requests: [{ package: 'app' }] });
  const text = e.sentences.join('\n');
  assert.match(text, /db 1\.0\.0 is installed and no request allows it to change/);
  assert.match(text, /app 1\.0\.0 requires package db >=2\.0\.0, offered by db 2\.0\.0/);
  assert.match(text, /only one bundle of package db can be installed at a time/);
  // Requesting db too lets it move (2.0.0 replaces 1.0.0).
  const r = resolve({ catalogs: [cat], installed: [{ package: 'db', version: '1.0.0' }], requests: [{ package: 'app' }, { package: 'db', versionRange: '>=2' }] });
  assert.deepEqual(picked(r).sort(), ['app@1.0.0', 'db@2.0.0']);
});

test('deprecated bundles lose to others; catalog priority breaks ties', () => {
  const a = catalog('a', [foo], 0);
  a.config.deprecations.push({ schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.bundle', name: 'foo.v2.0.0' }, message: 'use 1.1' }] });
  assert.deepEqual(picked(resolve({ catalogs: [a], requests: [{ package: 'foo' }] })), ['foo@1.1.0']);
  const low = catalog('low', [foo], 1);
  const high = catalog('high', [foo], 5);
  const r = resolve({ catalogs: [low, high], requests: [{ package: 'foo' }] });
  assert.equal(r.bundles[0]?.catalog, 'high');
});

test('one provider per API', () => {
  const cat = catalog('c', [
    chain('a', ['1.0.0'], () => [gvk('x.io', 'v1', 'Thing')]),
    chain('b', ['1.0.0'], () => [gvk('x.io', 'v1', 'Thing')]),
  ]);
  const e = explain({ catalogs: [cat], requests: [{ package: 'a' }, { package: 'b' }] });
  assert.match(e.message, /only one bundle may provide the API x\.io\/v1\/Thing/);
});

test('bad request input is an InputError naming the field', () => {
  const cat = catalog('c', [foo]);
  assert.throws(
    () => resolve({ catalogs: [cat], requests: [{ package: 'foo', versionRange: '>=>=1' }] }),
    (e: unknown) => e instanceof InputError && e.field === 'requests[0].versionRange',
  );
  assert.throws(() => resolve({ catalogs: [cat], requests: [{ package: 'foo' }, { package: 'foo' }] }), InputError);
});

// --- adversarial --------------------------------------------------------------------------

test('a dependency cycle resolves', () => {
  const cat = catalog('c', [
    chain('a', ['1.0.0'], () => [requiresPackage('b', '>=1.0.0')]),
    chain('b', ['1.0.0'], () => [requiresPackage('c', '>=1.0.0')]),
    chain('c', ['1.0.0'], () => [requiresPackage('a', '>=1.0.0')]),
  ]);
  const r = resolve({ catalogs: [cat], requests: [{ package: 'a' }] });
  assert.deepEqual(picked(r).sort(), ['a@1.0.0', 'b@1.0.0', 'c@1.0.0']);
});

test('10,000 versions of one package resolve within bounds', () => {
  const versions = Array.from({ length: 10_000 }, (_, i) => `1.${Math.floor(i / 100)}.${i % 100}`);
  const big = chain('big', versions);
  const cat = catalog('c', [big, chain('user', ['1.0.0'], () => [requiresPackage('big', '>=1.50.0 <1.60.0')])]);
  const started = performance.now();
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 'big' }] })), ['big@1.99.99']);
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 'user' }] })), ['big@1.59.99', 'user@1.0.0']);
  const r = resolve({ catalogs: [cat], installed: [{ package: 'big', version: '1.20.5' }], requests: [{ package: 'big', versionRange: '>1.20.5' }] });
  assert.deepEqual(picked(r), ['big@1.20.6']);
  assert.ok(performance.now() - started < 20_000);
});

test('a catalog where every bundle conflicts ends with an explanation', () => {
  const pkgs = Array.from({ length: 60 }, (_, i) => chain(`p${i}`, ['1.0.0', '2.0.0'], () => [gvk('x.io', 'v1', 'Same')]));
  const cat = catalog('c', pkgs);
  const started = performance.now();
  const e = explain({ catalogs: [cat], requests: pkgs.map((p) => ({ package: p.name })) });
  // Minimal: two requests (each mandatory, with its candidates) and the one-provider rule.
  assert.equal(e.facts.length, 5);
  assert.equal(e.sentences.length, 3);
  assert.match(e.message, /only one bundle may provide the API x\.io\/v1\/Same/);
  assert.ok(performance.now() - started < 20_000);
});

test('a range that excludes prerelease bundles says so', () => {
  const cat = catalog('c', [chain('t', ['0.15.2', '0.23.0-2'])]);
  const e = explain({ catalogs: [cat], requests: [{ package: 't', versionRange: '>0.15.2' }] });
  assert.match(e.message, /the catalogs offer 0\.15\.2, 0\.23\.0-2\); prerelease versions such as 0\.23\.0-2 match only ranges that name a prerelease .* \(e\.g\. >=0\.23\.0-0\)/);
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 't', versionRange: '>=0.23.0-0' }] })), ['t@0.23.0-2']);
});

test('odd catalog and bundle names do not collide with rule variables; duplicates are dropped with a warning', () => {
  const cat = catalog('request', [chain('foo', ['1.0.0'])]);
  cat.config.bundles.push({ ...(cat.config.bundles[0] ?? { schema: 'olm.bundle', package: 'foo', name: 'x', image: '', properties: [] }) });
  const r = resolve({ catalogs: [cat], requests: [{ package: 'foo' }] });
  assert.deepEqual(picked(r), ['foo@1.0.0']);
  assert.ok(r.warnings.some((w) => w.includes('defined twice')));
});

test('an installed bundle no catalog offers any more stays, and can be upgraded from by version', () => {
  const cat = catalog('c', [{ name: 'foo', bundles: [{ version: '2.0.0', skipRange: '>=1.0.0 <2.0.0' }] }]);
  const stay = resolve({ catalogs: [cat], installed: [{ package: 'foo', version: '1.5.0' }], requests: [] });
  assert.deepEqual(stay.bundles.map((b) => `${b.name}:${b.installed}`), ['foo.v1.5.0:true']);
  const up = resolve({ catalogs: [cat], installed: [{ package: 'foo', version: '1.5.0' }], requests: [{ package: 'foo', versionRange: '>=2' }] });
  assert.deepEqual(picked(up), ['foo@2.0.0']);
});

test('a hard problem ends in a clear budget error, not a hang', () => {
  // Nine packages must each take a version, version j of any package provides API j, and an
  // API has one provider: the pigeonhole principle, exponential for clause learning.
  const pkgs = Array.from({ length: 9 }, (_, i) => ({
    name: `p${i}`,
    bundles: Array.from({ length: 8 }, (_, j) => ({ version: `1.0.${j}`, props: [gvk('hole.io', 'v1', `Hole${j}`)] })),
  }));
  const started = performance.now();
  assert.throws(
    () => resolve({ catalogs: [catalog('c', pkgs)], requests: pkgs.map((p) => ({ package: p.name })), solver: { maxConflicts: 3000 } }),
    (e: unknown) => e instanceof SatBudgetError && e.code === 'RESOLVE_BUDGET_EXCEEDED' && /gave up after \d+ conflicts/.test(e.message),
  );
  assert.ok(performance.now() - started < 15_000);
});

test('deprecated channels and packages lose to others', () => {
  const cat = catalog('c', [
    {
      name: 'foo',
      bundles: [
        { version: '1.5.0', channels: ['fast'] },
        { version: '2.0.0', channels: ['stable'] },
      ],
    },
    chain('olddb', ['9.0.0'], () => [gvk('db.io', 'v1', 'DB')]),
    chain('newdb', ['1.0.0'], () => [gvk('db.io', 'v1', 'DB')]),
    chain('app', ['1.0.0'], () => [requiresGvk('db.io', 'v1', 'DB')]),
  ]);
  cat.config.deprecations.push(
    { schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.channel', name: 'stable' }, message: 'stable is retired' }] },
    { schema: 'olm.deprecations', package: 'olddb', entries: [{ reference: { schema: 'olm.package' }, message: 'use newdb' }] },
  );
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 'foo' }] })), ['foo@1.5.0']);
  // Asking for the deprecated channel still works, and the result says it is deprecated.
  assert.deepEqual(picked(resolve({ catalogs: [cat], requests: [{ package: 'foo', channels: ['stable'] }] })), ['foo@2.0.0']);
  const r = resolve({ catalogs: [cat], requests: [{ package: 'app' }] });
  assert.deepEqual(picked(r), ['newdb@1.0.0', 'app@1.0.0']);
  const forced = resolve({ catalogs: [cat], requests: [{ package: 'olddb' }] });
  assert.equal(forced.bundles[0]?.deprecated, 'use newdb');
});

test('two requests that need different versions of one package are explained together', () => {
  const cat = catalog('c', [
    chain('db', ['1.0.0', '2.0.0']),
    chain('a', ['1.0.0'], () => [requiresPackage('db', '<2.0.0')]),
    chain('b', ['1.0.0'], () => [requiresPackage('db', '>=2.0.0')]),
  ]);
  const e = explain({ catalogs: [cat], requests: [{ package: 'a' }, { package: 'b' }] });
  assert.deepEqual(e.sentences, [
    'package a was requested; its only candidate is a 1.0.0',
    'package b was requested; its only candidate is b 1.0.0',
    'a 1.0.0 requires package db <2.0.0, offered by db 1.0.0',
    'b 1.0.0 requires package db >=2.0.0, offered by db 2.0.0',
    'only one bundle of package db can be installed at a time',
  ]);
});

test('the same bundle in two catalogs is named once in an explanation', () => {
  const a = catalog('a', [chain('app', ['1.0.0'], () => [requiresPackage('db', '>=1.0.0')])]);
  const b = catalog('b', [chain('app', ['1.0.0'], () => [requiresPackage('db', '>=1.0.0')])]);
  const e = explain({ catalogs: [a, b], requests: [{ package: 'app' }] });
  assert.deepEqual(e.sentences, ['package app was requested; its only candidate is app 1.0.0', 'app 1.0.0 requires package db >=1.0.0; no catalog offers package db']);
});

test('skipRange is read as OLM reads it (blang/semver): one it cannot parse skips nothing', () => {
  const offered = (skipRange: string): string[] => {
    const cat = catalog('c', [{ name: 'foo', bundles: [{ version: '2.0.0', skipRange }] }]);
    return picked(resolve({ catalogs: [cat], installed: [{ package: 'foo', version: '1.2.5' }], requests: [{ package: 'foo', versionRange: '>=2.0.0' }] }));
  };
  assert.deepEqual(offered('>=1.2.0 <1.3.0'), ['foo@2.0.0']);
  // npm and Masterminds read `~1.2` as >=1.2.0 <1.3.0; blang refuses it, so OLM offers no upgrade.
  assert.throws(() => offered('~1.2'), /no bundle within version range >=2.0.0 replaces, skips or has a skipRange covering 1.2.5/);
});

test('olm.package.required ranges are read as OLM reads them (blang/semver): ">=1" is not a range there', () => {
  const needs = (range: string): string[] => {
    const cat = catalog('c', [chain('db', ['1.0.0']), chain('app', ['1.0.0'], () => [requiresPackage('db', range)])]);
    return picked(resolve({ catalogs: [cat], requests: [{ package: 'app' }] }));
  };
  assert.deepEqual(needs('>=1.0.0').sort(), ['app@1.0.0', 'db@1.0.0']);
  assert.throws(() => needs('>=1'), /">=1" is not a version range OLM can parse/);
});

test('an installed bundle no catalog offers any more is upgraded along an edge that names it (package@version with its bundle name); without the name it stays', () => {
  const cat = catalog('c', [{ name: 'foo', bundles: [{ version: '1.3.0', channels: ['beta'], replaces: '1.2.0' }] }]);
  const named = resolve({ catalogs: [cat], installed: [{ package: 'foo', version: '1.2.0', bundleName: 'foo.v1.2.0' }], requests: [{ package: 'foo', preferUpgrade: true }] });
  assert.deepEqual(picked(named), ['foo@1.3.0']);
  const stays = resolve({ catalogs: [cat], installed: [{ package: 'foo', version: '1.2.0', bundleName: 'foo.v1.2.0' }], requests: [{ package: 'foo' }] });
  assert.deepEqual(picked(stays), ['foo@1.2.0'], 'the installed bundle is still preferred without preferUpgrade');
  const unnamed = resolve({ catalogs: [cat], installed: [{ package: 'foo', version: '1.2.0' }], requests: [{ package: 'foo', preferUpgrade: true }] });
  assert.deepEqual(picked(unnamed), ['foo@1.2.0'], 'no edge names a bundle of unknown name');
});
