import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBundleDir } from './load.js';
import { parseSelectOptional, validateBundleDir, validateLoadedBundle, validatePackageManifest, validatePath } from './validate.js';
import { UsageError } from '../util/errors.js';
import type { RegistryV1Bundle } from './types.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');
const rules = (ps: { rule: string }[]): string[] => [...new Set(ps.map((p) => p.rule))].sort();

type Obj = Record<string, unknown>;
/** The mapping at `path` inside an untyped object (created on the way if missing). */
function at(o: Obj, ...path: (string | number)[]): Obj {
  let cur: unknown = o;
  for (const k of path) cur = Array.isArray(cur) ? cur[Number(k)] : (cur as Obj)[k];
  assert.ok(typeof cur === 'object' && cur !== null);
  return cur as Obj;
}

function withCsv(b: RegistryV1Bundle, patch: (raw: Obj) => void, csvPatch: Partial<RegistryV1Bundle['csv']> = {}): RegistryV1Bundle {
  const raw = structuredClone(b.csv.raw);
  patch(raw);
  return { ...b, csv: { ...b.csv, ...csvPatch, raw } };
}

describe('validate', () => {
  it('a good bundle has no errors, and full optional suites run', async () => {
    const { result } = await validateBundleDir(join(testdata, 'webhook-operator'), { optional: parseSelectOptional(['suite=operatorframework']) });
    assert.deepEqual(result.errors(), []);
    assert.deepEqual(rules(result.warnings()), ['csv.olm-properties', 'operatorhub.icon']);
  });

  it('collects every CSV problem at once, each with file, field and rule', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    const bad = withCsv(
      b,
      (raw) => {
        delete at(raw, 'spec').displayName;
      },
      {
        name: 'Bad_Name',
        minKubeVersion: '1.21',
        installModes: [{ type: 'AllNamespaces', supported: false }],
        annotations: { ...b.csv.annotations, 'olm.SkipRange': '<1.0.0', 'alm-examples': '[{"apiVersion":"example.com/v9","kind":"Nope"}]' },
      },
    );
    const r = validateLoadedBundle(bad);
    const errs = r.errors();
    assert.deepEqual(rules(errs), ['csv.annotation-case', 'csv.examples', 'csv.install-modes', 'csv.min-kube-version', 'csv.name', 'csv.required-field']);
    assert.ok(errs.every((p) => p.file === 'manifests/webhook-operator.clusterserviceversion.yaml' && p.field !== undefined));
    assert.ok(errs.some((p) => p.field === 'spec.displayName'));
    assert.ok(r.warnings().some((p) => p.rule === 'csv.examples' && /example\.com\/v1\/Widget has no example/.test(p.message)));
  });

  it('bundle checks: owned CRD missing, CRD not owned, service account clash', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    const crd = b.crds[0];
    assert.ok(crd !== undefined);
    const noCrd = validateLoadedBundle({ ...b, crds: [] });
    assert.ok(noCrd.errors().some((p) => p.rule === 'bundle.owned-crd-missing' && p.field === 'spec.customresourcedefinitions.owned[0]'));
    const notOwned = validateLoadedBundle({ ...b, csv: { ...b.csv, ownedCRDs: [] } });
    assert.ok(notOwned.errors().some((p) => p.rule === 'bundle.crd-not-owned' && p.file === crd.file));
    const sa = { file: 'manifests/sa.yaml', index: 0, apiVersion: 'v1', kind: 'ServiceAccount', name: 'webhook-operator', object: {} };
    const clash = validateLoadedBundle({ ...b, others: [...b.others, sa] });
    assert.ok(clash.errors().some((p) => p.rule === 'bundle.service-account' && p.file === 'manifests/sa.yaml'));
  });

  it('CRD checks: names, versions, structural schema', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    const crd = b.crds[0];
    assert.ok(crd !== undefined);
    const obj = structuredClone(crd.object);
    at(obj, 'spec').scope = 'Global';
    at(obj, 'spec', 'versions', 0).storage = false;
    at(obj, 'spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'properties', 'spec', 'properties').size = { description: 'no type' };
    const r = validateLoadedBundle({ ...b, crds: [{ ...crd, name: 'widgets.wrong.com', object: obj }] });
    const errs = r.errors().filter((p) => p.rule.startsWith('crd.'));
    assert.deepEqual(errs.map((p) => `${p.rule} ${p.field ?? ''}`).sort(), [
      'crd.name metadata.name',
      'crd.scope spec.scope',
      'crd.structural spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type',
      'crd.versions spec.versions',
    ]);
  });

  it('v1beta1 CRDs: structural problems are warnings, removed APIs are errors for --k8s-version 1.22', async () => {
    const dir = join(testdata, 'conversion-operator', '1.0.0');
    const soft = (await validateBundleDir(dir, { optional: ['alpha-deprecated-apis'], k8sVersion: '1.21' })).result;
    assert.ok(soft.warnings().some((p) => p.rule === 'crd.structural'));
    // minKubeVersion 1.22.0 already makes it an error
    assert.ok(soft.errors().some((p) => p.rule === 'deprecated-apis'));
    const b = await loadBundleDir(dir);
    const old = validateLoadedBundle({ ...b, csv: { ...b.csv, minKubeVersion: '1.16.0' } }, { optional: ['alpha-deprecated-apis'] });
    assert.ok(old.warnings().some((p) => p.rule === 'deprecated-apis'));
    assert.ok(!old.errors().some((p) => p.rule === 'deprecated-apis'));
  });

  it('load failures are reported as problems, not thrown', async () => {
    const { result, bundle } = await validateBundleDir(join(testdata, 'bad', 'two-csvs'));
    assert.equal(bundle, undefined);
    assert.deepEqual(rules(result.errors()), ['bundle.multiple-csv']);
  });

  it('a package-manifest package: its package.yaml and every version', async () => {
    const r = await validatePath(join(testdata, 'conversion-operator'));
    assert.equal(r.children.length, 2);
    assert.equal(r.children[0]?.subject, 'package manifest conversion-operator.package.yaml');
    const pm = validatePackageManifest('packageName: p\nchannels:\n- name: a\n  currentCSV: p.v1\n- name: a\n  currentCSV: ""\n', 'p.package.yaml', new Set(['p.v1']));
    assert.deepEqual(rules(pm.errors()), ['package.channels', 'package.default-channel']);
  });

  it('--select-optional parsing', () => {
    assert.deepEqual(parseSelectOptional(['name=operatorhub', 'name=good-practices']), ['operatorhub', 'good-practices']);
    assert.equal(parseSelectOptional(['suite=operatorframework']).length, 5);
    assert.throws(() => parseSelectOptional(['name=nope']), UsageError);
    assert.throws(() => parseSelectOptional(['name=constructor']), UsageError);
    assert.throws(() => parseSelectOptional(['name=__proto__']), UsageError);
  });
});
