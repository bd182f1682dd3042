import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Plan } from '../../actions/plan.js';
import { planText } from './plan.js';

test('the plan text shows objects, the CRD-safety verdict of existing CRDs, and the RBAC the ServiceAccount lacks', () => {
  const bundle = { name: 'op.v2.0.0', package: 'op', version: '2.0.0', image: 'img', catalog: 'c' } as Plan['bundles'][number]['bundle'];
  const plan: Plan = {
    warnings: [],
    bundles: [
      {
        bundle,
        bundleDeployment: 'ext-op',
        from: '1.0.0',
        objects: [{ action: 'update', kind: 'CustomResourceDefinition', name: 'things.example.com', changes: ['spec.versions'] }],
        crdSafety: [{ crd: 'things.example.com', safe: false, problems: [{ rule: 'crd.stored-version-removed', message: 'version v1 is in status.storedVersions but the new CRD drops it' }] }],
        missingPermissions: ['create deployments.apps in namespace ns'],
        imageDigest: 'sha256:1',
        manifestDigest: 'sha256:2',
      },
    ],
  };
  const text = planText(plan, 'installer');
  assert.match(text, /op\.v2\.0\.0 \(op 2\.0\.0, catalog c\): upgrade from 1\.0\.0/);
  assert.match(text, /CRD things\.example\.com: unsafe, the manager will refuse it:\n {4}- version v1 is in status\.storedVersions but the new CRD drops it \(crd\.stored-version-removed\)/);
  assert.match(text, /RBAC installer lacks:\n {4}- create deployments\.apps in namespace ns/);
  assert.match(text, /0 to create, 1 to change, 0 to delete, 0 unchanged\n$/);
  const fine = planText({ warnings: [], bundles: [{ ...plan.bundles[0]!, crdSafety: [{ crd: 'things.example.com', safe: true, problems: [] }], missingPermissions: [] }] }, 'installer');
  assert.match(fine, /CRD things\.example\.com: upgrade safe\n {2}RBAC: installer lacks nothing/);
});
