import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesSelector, type CatalogSelector, type LabelSelectorRequirement } from './catalog-selector.js';

const prod = { name: 'prod', labels: { tier: 'gold', team: 'a' } };
const dev = { name: 'dev', labels: { tier: 'silver' } };
const bare = { name: 'bare', labels: {} };
const chosen = (sel: CatalogSelector | undefined): string[] => [prod, dev, bare].filter((c) => matchesSelector(c, sel)).map((c) => c.name);

test('no selector, or an empty one, takes every catalog', () => {
  assert.deepEqual(chosen(undefined), ['prod', 'dev', 'bare']);
  assert.deepEqual(chosen({}), ['prod', 'dev', 'bare']);
});

test("matchLabels; the catalog's name answers to olm.operatorframework.io/metadata.name unset", () => {
  assert.deepEqual(chosen({ matchLabels: { tier: 'gold' } }), ['prod']);
  assert.deepEqual(chosen({ matchLabels: { 'olm.operatorframework.io/metadata.name': 'dev' } }), ['dev']);
});

test("a catalog labelled with another catalog's name does not answer to it (the name label is its own name)", () => {
  const pin = { matchLabels: { 'olm.operatorframework.io/metadata.name': 'operatorhub' } };
  assert.equal(matchesSelector({ name: 'operatorhub', labels: {} }, pin), true);
  assert.equal(matchesSelector({ name: 'evil', labels: { 'olm.operatorframework.io/metadata.name': 'operatorhub' } }, pin), false);
  assert.equal(matchesSelector({ name: 'evil', labels: { 'olm.operatorframework.io/metadata.name': 'operatorhub' } }, { matchLabels: { 'olm.operatorframework.io/metadata.name': 'evil' } }), true);
});

test('matchExpressions as Kubernetes reads them: In, NotIn (a missing key matches), Exists, DoesNotExist; ANDed with matchLabels', () => {
  assert.deepEqual(chosen({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold', 'silver'] }] }), ['prod', 'dev']);
  assert.deepEqual(chosen({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] }), ['dev', 'bare']);
  assert.deepEqual(chosen({ matchExpressions: [{ key: 'team', operator: 'Exists' }] }), ['prod']);
  assert.deepEqual(chosen({ matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }), ['dev', 'bare']);
  assert.deepEqual(chosen({ matchExpressions: [{ key: 'olm.operatorframework.io/metadata.name', operator: 'NotIn', values: ['prod', 'dev'] }] }), ['bare']);
  assert.deepEqual(chosen({ matchLabels: { tier: 'silver' }, matchExpressions: [{ key: 'team', operator: 'Exists' }] }), [], 'both must hold');
  const unknownOperator = JSON.parse('{"key":"tier","operator":"Gt","values":["1"]}') as LabelSelectorRequirement;
  assert.deepEqual(chosen({ matchExpressions: [unknownOperator] }), [], 'an operator nobody knows selects nothing');
});
