import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CelError, compileCel } from './cel.js';

const props = [
  { type: 'olm.package', value: { packageName: 'db', version: '2.3.0' } },
  { type: 'olm.gvk', value: { group: 'db.io', version: 'v1', kind: 'Database' } },
  { type: 'olm.label', value: 'tier=gold' },
];
const m = (rule: string): boolean => compileCel(rule).matches(props);

test('OLM-style rules over properties', () => {
  assert.equal(m('properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "2.0.0") >= 0)'), true);
  assert.equal(m('properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "2.4.0") >= 0)'), false);
  assert.equal(m("properties.exists(p, p.type == 'olm.gvk' && p.value.kind == 'Database') && !properties.exists(p, p.type == 'olm.deprecated')"), true);
  assert.equal(m('properties.exists(p, p.type == "olm.label" && p.value == "tier=gold") || false'), true);
  assert.equal(m('properties.all(p, p.type.startsWith("olm."))'), true);
  assert.equal(m('size(properties) == 3 && properties.size() > 2'), true);
  assert.equal(m('"db" in ["a", "db"]'), true);
});

test('errors inside && are absorbed by a false side, as in CEL', () => {
  // p.value.kind does not exist on olm.package, but the type check short-circuits.
  assert.equal(m('properties.exists(p, p.value.kind == "Database" && p.type == "olm.gvk")'), true);
  assert.equal(m('properties.exists(p, p.value.nope == 1)'), false);
});

test('bad rules fail to compile with a position', () => {
  assert.throws(() => compileCel('properties.exists(p,'), CelError);
  assert.throws(() => compileCel('a == "x'), /unterminated string/);
  assert.throws(() => compileCel('a # b'), /unexpected character "#" at 2/);
  // Unknown functions and non-bool results do not match rather than crash.
  assert.equal(m('nope(1)'), false);
  assert.equal(m('1 + 1'), false);
});

test('rules may read cluster facts; references lists what a rule reads', () => {
  const rule = compileCel('semver_compare(cluster.kubeVersion, "1.25.0") >= 0 && properties.exists(p, p.type == "olm.package")');
  assert.deepEqual([...rule.references].sort(), ['cluster', 'properties']);
  assert.equal(rule.matches(props, { kubeVersion: '1.30.0' }), true);
  assert.equal(rule.matches(props, { kubeVersion: '1.20.0' }), false);
  // Without cluster facts the rule cannot hold.
  assert.equal(rule.matches(props), false);
  assert.deepEqual([...compileCel('cluster.platform == "OpenShift"').references], ['cluster']);
  assert.equal(compileCel('"openShiftVersion" in cluster').test({ cluster: { openShiftVersion: '4.14.0' } }), true);
  assert.equal(compileCel('"openShiftVersion" in cluster').test({ cluster: { kubeVersion: '1.30.0' } }), false);
});

test('a deeply nested or very long rule is refused with a CelError, not a stack overflow (found by test/fuzz)', () => {
  for (const rule of [`${'!'.repeat(10_000)}true`, `${'('.repeat(10_000)}1${')'.repeat(10_000)}`, `${'['.repeat(5_000)}${']'.repeat(5_000)}`, Array.from({ length: 5_000 }, () => '1').join(' + ')]) {
    assert.throws(() => compileCel(rule), (e: unknown) => e instanceof CelError && /too long|nests more than/.test(e.message), rule.slice(0, 20));
  }
  assert.equal(compileCel(`${'!'.repeat(40)}true`).matches([]), true);
});

test('matches() refuses patterns that backtrack for ever, so a catalog rule cannot hang the resolver (found by test/fuzz)', () => {
  const subject = `"${'a'.repeat(40)}!"`;
  for (const re of ['(a+)+$', '(a|a)*$', '((a|b)c)*', 'a*a*a*a*b', '(\\\\w+\\\\s?)*$', '\\\\1', '(?=a)']) {
    // A refused pattern is an error: false, and false negated too.
    assert.equal(compileCel(`${subject}.matches("${re}")`).test({}), false, re);
    assert.equal(compileCel(`!${subject}.matches("${re}")`).test({}), false, re);
  }
  assert.equal(m('properties.exists(p, p.type == "olm.label" && p.value.matches("^tier=(gold|silver)$"))'), true);
  assert.equal(compileCel('"abab".matches("^(?:ab)+$")').test({}), true);
  assert.equal(compileCel(`"${'a'.repeat(1001)}".matches("a")`).test({}), false);
});

test('string() and int() of a list or map are a CelError, not a TypeError (found by test/fuzz)', () => {
  const bare = Object.create(null) as Record<string, unknown>;
  for (const rule of ['string(x) == "a"', 'int(x) == 1']) {
    assert.equal(compileCel(rule).test({ x: [bare] }), false);
    assert.equal(compileCel(`!(${rule})`).test({ x: [bare] }), false);
  }
  assert.equal(compileCel('string(1) == "1" && int("7") == 7').test({}), true);
});

test('semver_compare of a map without a prototype is a CelError, not a TypeError (found by test/fuzz)', () => {
  const bare = Object.create(null) as Record<string, unknown>;
  assert.equal(compileCel('semver_compare(x, "1.0.0") == 0').test({ x: [bare] }), false);
  assert.equal(compileCel('!(semver_compare(x, "1.0.0") == 0)').test({ x: [bare] }), false);
});

test('map literals: equal to a JSON object with the same keys; string keys, each once; a trailing comma as in CEL', () => {
  assert.equal(m("properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'db.io', 'version': 'v1', 'kind': 'Database'})"), true);
  assert.equal(m("properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'db.io', 'kind': 'Database'})"), false);
  assert.equal(compileCel('{"a": [1, 2,], "b": {"c": true},}.b.c').test({}), true);
  assert.equal(compileCel('"a" in {"a": 1} && !("constructor" in {"a": 1})').test({}), true);
  assert.equal(compileCel('{"a": 1, "a": 2}.a == 1').test({}), false);
  assert.equal(compileCel('!({"a": 1, "a": 2}.a == 1)').test({}), false);
  assert.equal(compileCel('{1: "a"}.size() == 1').test({}), false);
  assert.throws(() => compileCel('{"a" 1}'), /expected ":"/);
  assert.deepEqual([...compileCel('{"k": cluster.platform}.k == "x"').references], ['cluster']);
});

test('?: binds loosest, runs only the branch it picks, and needs a bool', () => {
  assert.equal(m('properties.exists(p, p.type == "olm.package" ? p.value.packageName == "db" : false)'), true);
  assert.equal(compileCel('true ? 1 == 1 : nope()').test({}), true);
  assert.equal(compileCel('false || false ? false : true').test({}), true);
  assert.equal(compileCel('false ? false : true ? true : false').test({}), true);
  assert.equal(compileCel('1 ? true : true').test({}), false);
  assert.throws(() => compileCel('true ? 1'), /expected ":"/);
});

test('has(x.f): whether the map has the key, its own; anything but one field selection does not compile', () => {
  assert.equal(m('properties.exists(p, p.type == "olm.package" && has(p.value.version))'), true);
  assert.equal(m('properties.exists(p, p.type == "olm.package" && has(p.value.kind))'), false);
  assert.equal(compileCel('has(cluster.openShiftVersion)').test({ cluster: { kubeVersion: '1.30.0' } }), false);
  assert.equal(compileCel('has(cluster.toString)').test({ cluster: {} }), false);
  assert.equal(compileCel('has(x.f)').test({ x: 'text' }), false);
  assert.equal(compileCel('!has(x.f)').test({ x: 'text' }), false);
  assert.deepEqual([...compileCel('has(cluster.platform)').references], ['cluster']);
  for (const bad of ['has(x)', 'has(x.f, y.g)', 'has()', 'has(x.f())']) assert.throws(() => compileCel(bad), /has\(\) needs one field selection/, bad);
});
