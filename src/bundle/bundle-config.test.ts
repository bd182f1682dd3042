import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkBundleConfig, olmv1ConfigMessage, watchNamespaceRule } from './bundle-config.js';

/** The install modes a bundle's CSV supports (install-modes.ts `supportedInstallModes`). */
const bundle = (...modes: string[]): ReadonlySet<string> => new Set(modes);

const NS = 'ns-install';
const errs = (b: ReadonlySet<string>, cfg: unknown): string[] => {
  const r = checkBundleConfig(b, NS, cfg);
  assert.equal(r.ok, false, `expected refusal of ${JSON.stringify(cfg)}`);
  return r.ok ? [] : r.errors;
};
const watch = (b: ReadonlySet<string>, cfg: unknown): string[] => {
  const r = checkBundleConfig(b, NS, cfg);
  assert.ok(r.ok, `expected acceptance: ${r.ok ? '' : r.errors.join('; ')}`);
  return r.watchNamespaces;
};

// Expected messages: operator-controller v1.11.0 internal/operator-controller/config/config_test.go
// and test/e2e/features/install.feature:93, 149, 289, 319.
describe('OLM v1 bundle configuration (watchNamespace rules)', () => {
  it('derives the rule from the install modes as registryv1.go does', () => {
    assert.deepEqual(watchNamespaceRule(bundle('AllNamespaces')), { configurable: false, required: false });
    assert.deepEqual(watchNamespaceRule(bundle('AllNamespaces', 'MultiNamespace')), { configurable: false, required: false });
    assert.deepEqual(watchNamespaceRule(bundle('OwnNamespace')), { configurable: true, required: true, format: 'own' });
    assert.deepEqual(watchNamespaceRule(bundle('SingleNamespace')), { configurable: true, required: true, format: 'single' });
    assert.deepEqual(watchNamespaceRule(bundle('SingleNamespace', 'OwnNamespace')), { configurable: true, required: true });
    assert.deepEqual(watchNamespaceRule(bundle('AllNamespaces', 'OwnNamespace')), { configurable: true, required: false, format: 'own' });
  });

  it('requires watchNamespace for Single/OwnNamespace-only bundles: no default is picked (missing, null, or no config at all)', () => {
    for (const b of [bundle('SingleNamespace'), bundle('OwnNamespace'), bundle('SingleNamespace', 'OwnNamespace'), bundle('MultiNamespace', 'OwnNamespace')]) {
      assert.deepEqual(errs(b, undefined), ['required field "watchNamespace" is missing']);
      assert.deepEqual(errs(b, {}), ['required field "watchNamespace" is missing']);
      assert.deepEqual(errs(b, { watchNamespace: null }), ['required field "watchNamespace" is missing']);
    }
  });

  it('refuses watchNamespace for bundles that cannot be scoped (AllNamespaces and/or MultiNamespace only) as an unknown field', () => {
    assert.deepEqual(errs(bundle('AllNamespaces'), { watchNamespace: NS }), ['unknown field "watchNamespace"']);
    assert.deepEqual(errs(bundle('MultiNamespace'), { watchNamespace: NS }), ['unknown field "watchNamespace"']);
    assert.deepEqual(errs(bundle('AllNamespaces', 'MultiNamespace'), { watchNamespace: 'x' }), ['unknown field "watchNamespace"']);
    assert.deepEqual(watch(bundle('AllNamespaces'), {}), ['']);
    assert.deepEqual(watch(bundle('AllNamespaces'), undefined), ['']);
  });

  it('OwnNamespace only: watchNamespace must equal the install namespace', () => {
    const [m] = errs(bundle('OwnNamespace'), { watchNamespace: 'some-ns' });
    assert.ok(m?.includes(`invalid value "some-ns": must be "${NS}"`), m);
    assert.equal(m, `invalid format for field "watchNamespace": 'some-ns' is not valid ownNamespaceInstallMode: invalid value "some-ns": must be "${NS}" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`);
    assert.deepEqual(watch(bundle('OwnNamespace'), { watchNamespace: NS }), [NS]);
  });

  it('SingleNamespace only: watchNamespace must differ from the install namespace', () => {
    const [m] = errs(bundle('SingleNamespace'), { watchNamespace: NS });
    assert.ok(m?.includes(`invalid value "${NS}": must be different from "${NS}"`), m);
    assert.deepEqual(watch(bundle('SingleNamespace'), { watchNamespace: 'other' }), ['other']);
  });

  it('validates watchNamespace as a DNS-1123 label (pattern, length, type)', () => {
    assert.deepEqual(errs(bundle('SingleNamespace'), { watchNamespace: 'invalid-namespace-' }), ['field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"']);
    assert.deepEqual(errs(bundle('SingleNamespace'), { watchNamespace: 'a'.repeat(64) }), ['field "watchNamespace" must have maximum length of 63 (len=64)']);
    assert.deepEqual(errs(bundle('SingleNamespace'), { watchNamespace: '' }), ['field "watchNamespace" must have minimum length of 1 (len=0)', 'field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"']);
    assert.deepEqual(errs(bundle('SingleNamespace'), { watchNamespace: 42 }), ['invalid type for field "watchNamespace": got integer, want string']);
    assert.deepEqual(errs(bundle('SingleNamespace', 'OwnNamespace'), { watchNamespace: 'Upper' }), ['field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"']);
  });

  it('with AllNamespaces too, watchNamespace is optional (null or absent: all namespaces) but still checked when given', () => {
    const b = bundle('AllNamespaces', 'OwnNamespace', 'SingleNamespace');
    assert.deepEqual(watch(b, {}), ['']);
    assert.deepEqual(watch(b, { watchNamespace: null }), ['']);
    assert.deepEqual(watch(b, { watchNamespace: 'team-a' }), ['team-a']);
    assert.ok(errs(b, { watchNamespace: 'Bad_' }).includes('field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"'));
  });

  it('knows only watchNamespace and deploymentConfig', () => {
    assert.deepEqual(errs(bundle('AllNamespaces'), { somekey: 1 }), ['unknown field "somekey"']);
    assert.deepEqual(errs(bundle('AllNamespaces'), { deploymentConfig: 'x' }), ['invalid type for field "deploymentConfig": got string, want object']);
    const ok = checkBundleConfig(bundle('AllNamespaces'), NS, { deploymentConfig: { env: [{ name: 'A', value: 'b' }] } });
    assert.deepEqual(ok, { ok: true, watchNamespaces: [''], deploymentConfig: { env: [{ name: 'A', value: 'b' }] } });
    assert.deepEqual(errs(bundle('AllNamespaces'), [1]), ['invalid type: got array, want object']);
  });

  it('words the condition message as operator-controller does', () => {
    assert.equal(olmv1ConfigMessage(['required field "watchNamespace" is missing']), 'invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing');
    assert.equal(olmv1ConfigMessage(['a', 'b']), 'invalid ClusterExtension configuration: invalid configuration: multiple errors found:\n  - a\n  - b');
  });
});
