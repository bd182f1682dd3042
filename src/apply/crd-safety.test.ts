import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCrdUpgrade } from './crd-safety.js';

type Json = Record<string, unknown>;

interface VersionSpec {
  name: string;
  served?: boolean;
  storage?: boolean;
  spec?: Json;
}

/** A CRD whose versions each have `spec` as the schema of `.spec`. */
function crd(versions: VersionSpec[], opts: { scope?: string; stored?: string[] } = {}): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: opts.scope ?? 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: versions.map((v) => ({
        name: v.name,
        served: v.served ?? true,
        storage: v.storage ?? false,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: v.spec ?? { type: 'object' } } } },
      })),
    },
    status: { storedVersions: opts.stored ?? versions.filter((v) => v.storage === true).map((v) => v.name) },
  };
}

const one = (spec: Json, opts: { scope?: string } = {}): Json => crd([{ name: 'v1', storage: true, spec }], opts);
const obj = (properties: Json, extra: Json = {}): Json => ({ type: 'object', properties, ...extra });

function rules(oldCrd: Json, newCrd: Json): string[] {
  return checkCrdUpgrade(oldCrd, newCrd).errors().map((p) => p.rule).sort();
}

test('an identical CRD is safe', () => {
  const c = one(obj({ size: { type: 'integer', minimum: 1 } }));
  const r = checkCrdUpgrade(c, structuredClone(c));
  assert.equal(r.ok, true);
  assert.equal(r.all().length, 0);
});

test('additive changes are safe: new optional field, new version, looser limits, more enum values', () => {
  const before = crd([{ name: 'v1', storage: true, spec: obj({ size: { type: 'integer', maximum: 5, minimum: 2 }, mode: { type: 'string', enum: ['a'] }, name: { type: 'string', maxLength: 10 } }) }]);
  const after = crd([
    { name: 'v1', storage: true, spec: obj({ size: { type: 'integer', maximum: 10, minimum: 1 }, mode: { type: 'string', enum: ['a', 'b'] }, name: { type: 'string', maxLength: 20 }, extra: { type: 'string' } }) },
    { name: 'v2', spec: obj({}) },
  ]);
  assert.deepEqual(rules(before, after), []);
});

test('scope change is refused', () => {
  const r = checkCrdUpgrade(one(obj({})), one(obj({}), { scope: 'Cluster' }));
  assert.deepEqual(r.errors().map((p) => p.rule), ['crd.scope-changed']);
  assert.match(r.render(), /scope changed from Namespaced to Cluster/);
  assert.equal(r.errors()[0]?.field, 'spec.scope');
});

test('removing a stored version is refused, once', () => {
  const before = crd([{ name: 'v1alpha1' }, { name: 'v1', storage: true }], { stored: ['v1alpha1', 'v1'] });
  const after = crd([{ name: 'v1', storage: true }]);
  const r = checkCrdUpgrade(before, after);
  assert.deepEqual(r.errors().map((p) => p.rule), ['crd.stored-version-removed']);
  assert.match(r.render(), /v1alpha1 is in status\.storedVersions/);
});

test('removing or unserving a served version that was never stored is refused as served-version-removed', () => {
  const before = crd([{ name: 'v1beta1' }, { name: 'v1', storage: true }], { stored: ['v1'] });
  assert.deepEqual(rules(before, crd([{ name: 'v1', storage: true }])), ['crd.served-version-removed']);
  assert.deepEqual(rules(before, crd([{ name: 'v1beta1', served: false }, { name: 'v1', storage: true }])), ['crd.served-version-removed']);
  // A version that was not served can go.
  const unserved = crd([{ name: 'v1beta1', served: false }, { name: 'v1', storage: true }], { stored: ['v1'] });
  assert.deepEqual(rules(unserved, crd([{ name: 'v1', storage: true }])), []);
});

test('removing a field is refused with its path', () => {
  const r = checkCrdUpgrade(one(obj({ size: { type: 'integer' }, color: { type: 'string' } })), one(obj({ color: { type: 'string' } })));
  assert.deepEqual(r.errors().map((p) => [p.rule, p.field]), [['crd.field-removed', '.spec.size']]);
  assert.match(r.render(), /version v1: field \.spec\.size was removed/);
});

test('removing a nested field inside arrays and maps is found', () => {
  const before = one(obj({ items: { type: 'array', items: obj({ a: { type: 'string' }, b: { type: 'string' } }) }, labels: { type: 'object', additionalProperties: obj({ x: { type: 'string' } }) } }));
  const after = one(obj({ items: { type: 'array', items: obj({ a: { type: 'string' } }) }, labels: { type: 'object', additionalProperties: obj({}) } }));
  const fields = checkCrdUpgrade(before, after).errors().map((p) => p.field).sort();
  assert.deepEqual(fields, ['.spec.items[*].b', '.spec.labels.*.x']);
});

test('removing a field under x-kubernetes-preserve-unknown-fields is allowed: values are kept', () => {
  const before = one(obj({ size: { type: 'integer' } }));
  const after = one({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(rules(before, after), []);
});

test('type changes and narrowing are refused', () => {
  assert.deepEqual(rules(one(obj({ size: { type: 'integer' } })), one(obj({ size: { type: 'string' } }))), ['crd.type-changed']);
  assert.deepEqual(rules(one(obj({ size: {} })), one(obj({ size: { type: 'string' } }))), ['crd.type-changed']);
  assert.deepEqual(rules(one(obj({ port: { 'x-kubernetes-int-or-string': true } })), one(obj({ port: { type: 'integer' } }))), ['crd.type-changed']);
  const msg = checkCrdUpgrade(one(obj({ size: { type: 'integer' } })), one(obj({ size: { type: 'number' } }))).render();
  assert.match(msg, /field \.spec\.size: type changed from integer to number/);
});

test('enum values removed, or an enum added, are refused', () => {
  const r = checkCrdUpgrade(one(obj({ mode: { type: 'string', enum: ['a', 'b', 'c'] } })), one(obj({ mode: { type: 'string', enum: ['a'] } })));
  assert.deepEqual(r.errors().map((p) => p.rule), ['crd.enum-removed']);
  assert.match(r.render(), /enum values removed: "b", "c"/);
  assert.deepEqual(rules(one(obj({ mode: { type: 'string' } })), one(obj({ mode: { type: 'string', enum: ['a'] } }))), ['crd.enum-added']);
});

test('a new required field is refused, an existing one is fine', () => {
  const before = one(obj({ a: { type: 'string' }, b: { type: 'string' } }, { required: ['a'] }));
  const after = one(obj({ a: { type: 'string' }, b: { type: 'string' } }, { required: ['a', 'b'] }));
  const r = checkCrdUpgrade(before, after);
  assert.deepEqual(r.errors().map((p) => [p.rule, p.field]), [['crd.required-added', '.spec.b']]);
  assert.deepEqual(rules(before, structuredClone(before)), []);
});

test('tighter numeric limits are refused: maximum lowered or added, minimum raised or added', () => {
  assert.deepEqual(rules(one(obj({ n: { type: 'integer', maximum: 10 } })), one(obj({ n: { type: 'integer', maximum: 5 } }))), ['crd.maximum-decreased']);
  assert.deepEqual(rules(one(obj({ n: { type: 'integer' } })), one(obj({ n: { type: 'integer', maximum: 5 } }))), ['crd.maximum-added']);
  assert.deepEqual(rules(one(obj({ n: { type: 'integer', minimum: 1 } })), one(obj({ n: { type: 'integer', minimum: 2 } }))), ['crd.minimum-increased']);
  assert.deepEqual(rules(one(obj({ n: { type: 'integer' } })), one(obj({ n: { type: 'integer', minimum: 0 } }))), ['crd.minimum-added']);
  assert.deepEqual(rules(one(obj({ n: { type: 'integer', maximum: 10 } })), one(obj({ n: { type: 'integer', maximum: 10, exclusiveMaximum: true } }))), ['crd.exclusivemaximum-added']);
});

test('tighter string, array and map limits are refused', () => {
  assert.deepEqual(rules(one(obj({ s: { type: 'string', maxLength: 10 } })), one(obj({ s: { type: 'string', maxLength: 3 } }))), ['crd.maxlength-decreased']);
  assert.deepEqual(rules(one(obj({ s: { type: 'string' } })), one(obj({ s: { type: 'string', minLength: 1 } }))), ['crd.minlength-added']);
  assert.deepEqual(rules(one(obj({ l: { type: 'array', items: { type: 'string' } } })), one(obj({ l: { type: 'array', items: { type: 'string' }, maxItems: 3 } }))), ['crd.maxitems-added']);
  assert.deepEqual(rules(one(obj({ l: { type: 'array', items: { type: 'string' }, minItems: 1 } })), one(obj({ l: { type: 'array', items: { type: 'string' }, minItems: 2 } }))), ['crd.minitems-increased']);
  assert.deepEqual(rules(one(obj({ m: { type: 'object' } })), one(obj({ m: { type: 'object', maxProperties: 2 } }))), ['crd.maxproperties-added']);
});

test('a pattern added or changed is refused; the same pattern is fine', () => {
  assert.deepEqual(rules(one(obj({ s: { type: 'string' } })), one(obj({ s: { type: 'string', pattern: '^[a-z]+$' } }))), ['crd.pattern-added']);
  assert.deepEqual(rules(one(obj({ s: { type: 'string', pattern: '^[a-z]+$' } })), one(obj({ s: { type: 'string', pattern: '^[a-c]+$' } }))), ['crd.pattern-changed']);
  assert.deepEqual(rules(one(obj({ s: { type: 'string', pattern: '^a$' } })), one(obj({ s: { type: 'string', pattern: '^a$' } }))), []);
});

test('default added, removed or changed is refused; nullable removed is refused', () => {
  assert.deepEqual(rules(one(obj({ s: { type: 'string' } })), one(obj({ s: { type: 'string', default: 'x' } }))), ['crd.default-changed']);
  assert.deepEqual(rules(one(obj({ s: { type: 'string', default: 'x' } })), one(obj({ s: { type: 'string', default: 'y' } }))), ['crd.default-changed']);
  assert.deepEqual(rules(one(obj({ s: { type: 'string', default: 'x' } })), one(obj({ s: { type: 'string' } }))), ['crd.default-changed']);
  assert.deepEqual(rules(one(obj({ s: { type: 'string', nullable: true } })), one(obj({ s: { type: 'string' } }))), ['crd.nullable-removed']);
});

test('every problem is collected, across versions, with file and version named', () => {
  const before = crd([
    { name: 'v1beta1', spec: obj({ a: { type: 'string' } }) },
    { name: 'v1', storage: true, spec: obj({ b: { type: 'integer', maximum: 3 }, c: { type: 'string' } }) },
  ]);
  const after = crd(
    [
      { name: 'v1beta1', spec: obj({}) },
      { name: 'v1', storage: true, spec: obj({ b: { type: 'string', maximum: 2 } }) },
    ],
    { scope: 'Cluster' },
  );
  const r = checkCrdUpgrade(before, after, 'bundle/manifests/widgets.crd.yaml');
  assert.deepEqual(r.errors().map((p) => p.rule).sort(), ['crd.field-removed', 'crd.field-removed', 'crd.maximum-decreased', 'crd.scope-changed', 'crd.type-changed']);
  assert.ok(r.errors().every((p) => p.file === 'bundle/manifests/widgets.crd.yaml'));
  assert.match(r.render(), /version v1beta1: field \.spec\.a was removed/);
  assert.match(r.render(), /version v1: field \.spec\.c was removed/);
});

test('malformed input gives no crash: unknown shapes are treated as empty', () => {
  assert.doesNotThrow(() => checkCrdUpgrade(null, 'nonsense'));
  assert.equal(checkCrdUpgrade({ spec: { versions: 'x' } }, { spec: { versions: [{ nope: 1 }] } }).ok, true);
});
