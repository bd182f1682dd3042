import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BILLION_LAUGHS, bombMessage } from '../../util/yaml.test-helper.js';
import { MAX_NESTING } from '../../util/nesting.js';
import { expandEnv, specValues, valuesOf } from './helm-release.js';

describe('helm release reconciler helpers', () => {
  test('overrideValues expand ${ENV} and $ENV as Go os.ExpandEnv (unset is empty)', () => {
    const env = { IMAGE: 'quay.io/x/y', TAG: 'v1' };
    assert.equal(expandEnv('${IMAGE}:$TAG', env), 'quay.io/x/y:v1');
    assert.equal(expandEnv('${UNSET}-x', env), '-x');
    assert.equal(expandEnv('plain', env), 'plain');
  });

  test('valuesFrom text: more than 100 YAML aliases are read; an alias bomb is HELM_VALUES_FROM naming the object and key', () => {
    const values = valuesOf(`base: &b {replicas: 2}\nshards: [${Array.from({ length: 400 }, () => '*b').join(', ')}]\n`, 'ConfigMap ns/vals key values.yaml');
    assert.equal((values?.shards as unknown[]).length, 400);
    assert.equal(valuesOf('# nothing\n', 'ConfigMap ns/vals key values.yaml'), undefined);
    assert.throws(() => valuesOf(BILLION_LAUGHS, 'Secret ns/vals key values.yaml'), { code: 'HELM_VALUES_FROM', message: bombMessage('valuesFrom: Secret ns/vals key values.yaml') });
  });

  test('a custom resource spec nested past the limit is HELM_VALUES_TOO_DEEP naming spec; one at the limit is its values', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 1; i < MAX_NESTING - 1; i++) deep = { level: deep }; // the spec around it makes MAX_NESTING
    assert.equal(specValues({ top: deep }).top, deep);
    assert.deepEqual(specValues(undefined), {});
    assert.throws(() => specValues({ top: deep, more: { top: deep } }), { code: 'HELM_VALUES_TOO_DEEP', message: `spec: nests deeper than ${MAX_NESTING} levels` });
  });
});
