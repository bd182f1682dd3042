import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OLMV1_CRD_VARIANT, loadOlmv1Crd, loadOlmv1Crds, olmv1CrdDir } from './crds.js';
import { OLMV1_GROUP } from './types.js';

type Schema = { properties?: Record<string, Schema> } & Record<string, unknown>;

/** The v1 openAPIV3Schema of a loaded CRD. */
function schemaOf(crd: Record<string, unknown>): Schema {
  const versions = (crd.spec as { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] }).versions;
  const v1 = versions.find((v) => v.name === 'v1');
  assert.ok(v1 !== undefined);
  return v1.schema.openAPIV3Schema;
}

const at = (s: Schema, ...path: string[]): Schema | undefined => path.reduce<Schema | undefined>((cur, k) => cur?.properties?.[k], s);

test('the served OLM v1 CRDs load from the vendored files: ClusterCatalog, then ClusterExtension, in olm.operatorframework.io', () => {
  const crds = loadOlmv1Crds();
  assert.deepEqual(
    crds.map((c) => c.metadata.name),
    [`clustercatalogs.${OLMV1_GROUP}`, `clusterextensions.${OLMV1_GROUP}`],
  );
  assert.equal(OLMV1_CRD_VARIANT, 'experimental');
  for (const c of crds) assert.equal(c.metadata.annotations?.['olm.operatorframework.io/generator'], OLMV1_CRD_VARIANT);
});

test('experimental ClusterExtension has what Binnacle needs and standard lacks: spec.config.inline, spec.progressDeadlineMinutes, status.activeRevisions, bundle.release', () => {
  const exp = schemaOf(loadOlmv1Crd('ClusterExtension', 'experimental'));
  const std = schemaOf(loadOlmv1Crd('ClusterExtension', 'standard'));
  const extra: string[][] = [
    ['spec', 'config', 'inline'],
    ['spec', 'progressDeadlineMinutes'],
    ['status', 'activeRevisions'],
    ['status', 'install', 'bundle', 'release'],
  ];
  for (const path of extra) {
    assert.ok(at(exp, ...path) !== undefined, `experimental has ${path.join('.')}`);
    assert.equal(at(std, ...path), undefined, `standard lacks ${path.join('.')}`);
  }
  // Everything else of standard's spec is in experimental unchanged.
  const stdSpec = at(std, 'spec')?.properties ?? {};
  for (const [k, v] of Object.entries(stdSpec)) assert.deepEqual(at(exp, 'spec', k), v, `spec.${k}`);
});

test('the two ClusterCatalog variants differ only in their generator annotation', () => {
  const strip = (c: ReturnType<typeof loadOlmv1Crd>): unknown => ({ ...c, metadata: { ...c.metadata, annotations: { ...c.metadata.annotations, 'olm.operatorframework.io/generator': '' } } });
  assert.deepEqual(strip(loadOlmv1Crd('ClusterCatalog', 'experimental')), strip(loadOlmv1Crd('ClusterCatalog', 'standard')));
});

test('the CRD folder is found beside the module', () => {
  assert.match(olmv1CrdDir(), /api[\\/]olmv1[\\/]crds$/);
});
