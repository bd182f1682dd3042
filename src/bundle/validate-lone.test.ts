import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { loadBundleDir } from './load.js';
import { convertRegistryV1 } from './convert.js';
import { validateBundleDir, validateLoadedBundle, validatePackageManifest, validatePath } from './validate.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');
const WEBHOOK = join(testdata, 'webhook-operator');
const CSV = 'manifests/webhook-operator.clusterserviceversion.yaml';
const CRD = 'manifests/example.com_widgets.yaml';
type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => v as Obj;

async function scratch(t: { after: (f: () => Promise<void>) => void }): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'validate-lone-'));
  t.after(() => rm(d, { recursive: true, force: true }));
  return d;
}
const rules = (ps: { rule: string }[]): string[] => [...new Set(ps.map((p) => p.rule))].sort();

describe('lone objects: a file, or a directory without a CSV', () => {
  it('a lone CSV file is checked as a CSV, without asking for its owned CRDs', async (t) => {
    const d = await scratch(t);
    await cp(join(WEBHOOK, CSV), join(d, 'csv.yaml'));
    const r = await validatePath(join(d, 'csv.yaml'));
    assert.deepEqual(r.errors(), [], r.render());
    assert.ok(!rules(r.all()).some((x) => x.startsWith('bundle.') || x.startsWith('render.')), r.render());
    // Its own problems are still found.
    const csv = parse(await readFile(join(WEBHOOK, CSV), 'utf8')) as Obj;
    o(csv.metadata).name = 'Bad_Name';
    o(csv.spec).installModes = [];
    await writeFile(join(d, 'bad.yaml'), stringify(csv));
    assert.deepEqual(rules((await validatePath(join(d, 'bad.yaml'))).errors()), ['csv.install-modes', 'csv.name']);
  });

  it('a lone CRD file and a directory of objects without a CSV are checked by kind', async (t) => {
    const d = await scratch(t);
    const crd = parse(await readFile(join(WEBHOOK, CRD), 'utf8')) as Obj;
    const versions = o(crd.spec).versions as Obj[];
    versions.push({ ...structuredClone(versions[0]), name: versions[0]?.name });
    await writeFile(join(d, 'crd.yaml'), stringify(crd));
    assert.deepEqual(rules((await validatePath(join(d, 'crd.yaml'))).errors()), ['crd.versions']);

    const objs = join(d, 'objs');
    await mkdir(objs);
    await writeFile(join(objs, 'pdb.yaml'), 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p\nspec:\n  maxUnavailable: 0\n');
    await writeFile(join(objs, 'pc.yaml'), 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: pc\nvalue: 1\nglobalDefault: true\n');
    await writeFile(join(objs, 'role.yaml'), 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  verbs: [update]\n  resourceNames: [anyuid]\n');
    await writeFile(join(objs, 'og.yaml'), 'apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  annotations:\n    olm.providedapis: x\n');
    const r = await validatePath(objs);
    assert.deepEqual(rules(r.errors()), ['object.pdb', 'object.priority-class', 'object.rbac', 'operatorgroup.annotation-case'], r.render());
    assert.ok(!r.all().some((p) => /no ClusterServiceVersion/.test(p.message)));
  });

  it('a file that is no Kubernetes object, and a missing path, are errors', async (t) => {
    const d = await scratch(t);
    await writeFile(join(d, 'x.yaml'), '- just\n- a list\n');
    assert.deepEqual(rules((await validatePath(join(d, 'x.yaml'))).errors()), ['manifest.object']);
    assert.deepEqual(rules((await validatePath(join(d, 'missing.yaml'))).errors()), ['bundle.not-found']);
  });
});

describe('stricter than operator-framework/api: validation warns, the install refuses', () => {
  it('an unsupported kind (HorizontalPodAutoscaler) is a warning in validation and refused by convertRegistryV1', async (t) => {
    const d = await scratch(t);
    await cp(WEBHOOK, d, { recursive: true });
    await writeFile(join(d, 'manifests', 'hpa.yaml'), 'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: hpa\nspec: {}\n');
    const { result, bundle } = await validateBundleDir(d);
    assert.deepEqual(result.errors(), [], result.render());
    const w = result.warnings().find((p) => p.rule === 'render.object-kind');
    assert.match(w?.message ?? '', /HorizontalPodAutoscaler.*refuse to install/);
    assert.ok(bundle !== undefined);
    assert.throws(() => convertRegistryV1(bundle, { installNamespace: 'ns', watchNamespaces: [] }), /HorizontalPodAutoscaler/);
  });

  it('a v1 CRD version without a schema is a warning in validation and refused by convertRegistryV1', async (t) => {
    const d = await scratch(t);
    await cp(WEBHOOK, d, { recursive: true });
    const crd = parse(await readFile(join(d, CRD), 'utf8')) as Obj;
    for (const v of o(crd.spec).versions as Obj[]) delete v.schema;
    await writeFile(join(d, CRD), stringify(crd));
    const { result, bundle } = await validateBundleDir(d);
    assert.deepEqual(result.errors(), [], result.render());
    assert.match(result.warnings().find((p) => p.rule === 'crd.schema')?.message ?? '', /will not install/);
    assert.ok(bundle !== undefined);
    assert.throws(() => convertRegistryV1(bundle, { installNamespace: 'ns', watchNamespaces: [] }), /has no schema/);
  });

  it('a bundle directory without a package name validates (with a warning) but is not installed', async (t) => {
    const d = await scratch(t);
    await cp(join(WEBHOOK, 'manifests'), d, { recursive: true });
    const { result, bundle } = await validateBundleDir(d);
    assert.deepEqual(result.errors(), [], result.render());
    assert.ok(result.warnings().some((p) => p.rule === 'render.package-name'));
    assert.ok(bundle !== undefined);
    assert.throws(() => convertRegistryV1(bundle, { installNamespace: 'ns', watchNamespaces: [] }), /package name is empty/);
  });

  it("a channel's currentCSV that no version directory holds is a warning", () => {
    const r = validatePackageManifest('packageName: p\nchannels:\n- name: a\n  currentCSV: p.v2.0.0\n', 'p.package.yaml', new Set(['p.v1.0.0']));
    assert.deepEqual(r.errors(), []);
    assert.match(r.warnings()[0]?.message ?? '', /no version directory contains; rendering or publishing this package will fail/);
  });

  it('what the reference also refuses stays an error: a ServiceAccount the CSV creates, no displayName, no install strategy', async () => {
    const b = await loadBundleDir(WEBHOOK);
    const sa = b.csv.deployments[0]?.spec.template;
    const saName = String(o(o(sa).spec).serviceAccountName);
    const withSa = { ...b, others: [...b.others, { file: 'manifests/sa.yaml', index: 0, apiVersion: 'v1', kind: 'ServiceAccount', name: saName, object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: saName } } }] };
    assert.ok(rules(validateLoadedBundle(withSa).errors()).includes('bundle.service-account'));
    const raw = structuredClone(b.csv.raw);
    delete o(raw.spec).displayName;
    assert.ok(validateLoadedBundle({ ...b, csv: { ...b.csv, raw, strategy: '' } }).errors().some((p) => p.field === 'spec.displayName'));
    assert.ok(validateLoadedBundle({ ...b, csv: { ...b.csv, strategy: '' } }).errors().some((p) => p.field === 'spec.install.strategy'));
  });
});

describe("the reference's loader rules", () => {
  it('a subdirectory or hidden file beside the manifests is an error; a v1 CRD with only spec.version provides no API', async (t) => {
    const d = await scratch(t);
    await cp(WEBHOOK, d, { recursive: true });
    await mkdir(join(d, 'manifests', 'extra'));
    await writeFile(join(d, 'manifests', '.hidden'), 'x');
    const { result } = await validateBundleDir(d);
    assert.deepEqual(result.errors().map((p) => `${p.rule} ${p.file ?? ''}`).sort(), ['bundle.manifests-dir manifests/.hidden', 'bundle.manifests-dir manifests/extra']);

    const d2 = await scratch(t);
    await cp(WEBHOOK, d2, { recursive: true });
    const crd = parse(await readFile(join(d2, CRD), 'utf8')) as Obj;
    const spec = o(crd.spec);
    spec.version = (spec.versions as Obj[])[0]?.name;
    delete spec.versions;
    await writeFile(join(d2, CRD), stringify(crd));
    const r2 = (await validateBundleDir(d2)).result;
    assert.ok(rules(r2.errors()).includes('bundle.owned-crd-missing'), r2.render());
  });
});
