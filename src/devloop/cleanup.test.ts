import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describePlan, type CleanupPlan } from './cleanup.js';

const base: CleanupPlan = { package: 'op', extensions: ['op'], runBundleObjects: [], crds: [{ name: 'things.example.com', customResources: 2 }], deleteCrds: false, catalogUsers: [] };

test('the plan says what goes and what stays: kept CRDs with their custom resources', () => {
  assert.deepEqual(describePlan(base), [
    'cleanup of op will delete:',
    '  ClusterExtension op (and the operator it installed)',
    'and keep:',
    '  CustomResourceDefinition things.example.com (2 custom resources; --delete-crds removes them)',
  ]);
});

test("a catalog other packages' extensions resolve from (run bundle --index-image) is kept, with its namespace, and they are named", () => {
  const lines = describePlan({ ...base, deleteCrds: true, catalogUsers: ['flux (package flux)'], keptNamespace: 'op' });
  assert.ok(lines.includes('  CustomResourceDefinition things.example.com with its 2 custom resources'), lines.join('\n'));
  assert.ok(!lines.some((l) => l.startsWith('  Namespace')), 'the namespace is not deleted');
  assert.equal(lines.at(-2), 'and keep:');
  assert.equal(lines.at(-1), '  ClusterCatalog op-run-bundle and its ConfigMaps, and Namespace op they are in: ClusterExtension flux (package flux) resolves from it (remove it first to remove the catalog)');
});
