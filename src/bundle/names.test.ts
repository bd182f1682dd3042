import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nameForBaseAndSuffix, permissionObjectName } from './names.js';

/*
 * The expected hashes are Go's: this program (Go 1.26) prints them, with rbac/v1 PolicyRule and
 * operator-framework/api StrategyDeploymentPermissions copied with their JSON tags:
 *
 *   hs := sha256.New224(); json.NewEncoder(hs).Encode(perm); var i big.Int; i.SetBytes(hs.Sum(nil)); i.Text(36)
 *
 *   1. Perm{"", []PolicyRule{{Verbs: {"get"}, APIGroups: {}, Resources: {"pods"}}}}
 *   2. Perm{"op", []PolicyRule{{Resources: {"a<b>&c", "é\u2028"}}, {Verbs: {}, NonResourceURLs: {"/metrics"}}}}
 *   3. Perm{"op", []PolicyRule{}}
 */
test("permissionObjectName hashes a permission as operator-controller does: Go's JSON of the typed struct, SHA-224, base 36", () => {
  assert.equal(
    permissionObjectName('csv-default', { serviceAccountName: '', rules: [{ apiGroups: [], resources: ['pods'], verbs: ['get'] }] }),
    'csv-default-k9kn8u5q6or3y8v5mlkkrfsaseme5l2jzqpvquzvots',
  );
  // Missing verbs are null, an empty omitempty list is left out, fields the type lacks are dropped; HTML and U+2028 escaped.
  const odd = permissionObjectName('x', {
    serviceAccountName: 'op',
    rules: [
      { resources: ['a<b>&c', 'é\u2028'], extra: 'dropped' },
      { verbs: [], nonResourceURLs: ['/metrics'], apiGroups: [] },
    ],
  });
  assert.equal(odd, 'x-1brnyam91gk2etwin1vnacdjyl2ieef0i214pf71gj3h');
  assert.equal(permissionObjectName('x', { serviceAccountName: 'op', rules: [] }), 'x-1yg43yi2g00frsh5rabixvxrkranbgjt9lxred2tv5sy');
});

test('permissionObjectName cuts the base only past 63 characters, as util.ObjectNameForBaseAndSuffix', () => {
  const rules = [{ verbs: ['get'], resources: ['pods'] }];
  const hash = permissionObjectName('', { serviceAccountName: 'sa', rules }).slice(1);
  const fits = 'b'.repeat(63 - hash.length);
  assert.equal(permissionObjectName(fits, { serviceAccountName: 'sa', rules }), `${fits}-${hash}`, 'base + hash = 63: kept whole (64 with the dash)');
  const long = `${fits}b`;
  assert.equal(permissionObjectName(long, { serviceAccountName: 'sa', rules }), `${long.slice(0, 62 - hash.length)}-${hash}`);
  // The webhook Service name stays a valid 63-character label where OLM's would be 64.
  assert.equal(nameForBaseAndSuffix('d'.repeat(56), 'service').length, 63);
});
