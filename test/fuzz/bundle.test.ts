/**
 * Fuzzing the registry+v1 bundle loader (src/bundle/load.ts loadBundleDir, through
 * src/catalog-render/bundle-dir.ts readBundleDir) with bundle directories written to a temp dir: the
 * webhook-operator test bundle with its CSV, annotations.yaml, CRD and other manifests as they
 * are, or changed by targeted corruptions, structure-aware mutations and text damage, files
 * removed, replaced by directories or by symlinks out of the bundle, extra metadata files, and the
 * package-manifest layout. What loads goes on to the `olm.bundle` record and the bundle
 * validators; a valid bundle to the conversion to plain manifests (what an install applies), an
 * invalid one is refused with the validators' ValidationError. Three loaders, one for each file
 * the changes aim at: the CSV, the annotations, anything.
 */
import { after, test } from 'node:test';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { convertRegistryV1, toFbcBundle, validateLoadedBundle } from '../../src/bundle/index.js';
import { readBundleDir } from '../../src/catalog-render/bundle-dir.js';
import { ValidationError } from '../../src/util/errors.js';
import { Sandbox, type Corruption, type Mutation, byteMutationArb, corrupt, corruptionArb, fc, fuzz, mutate, mutateText, mutationArb, nastyString } from './harness.js';

const TEMPLATE = join(import.meta.dirname, '..', '..', 'src', 'bundle', 'testdata', 'webhook-operator');

/** The template bundle: relative path → its YAML documents. */
async function readTemplate(): Promise<Map<string, unknown[]>> {
  const out = new Map<string, unknown[]>();
  for (const sub of ['manifests', 'metadata']) {
    for (const name of (await readdir(join(TEMPLATE, sub))).sort()) {
      const text = await readFile(join(TEMPLATE, sub, name), 'utf8');
      out.set(`${sub}/${name}`, parseAllDocuments(text).map((d) => d.toJS() as unknown));
    }
  }
  return out;
}

const template = await readTemplate();
const FILES = [...template.keys()];
const CSV_FILE = FILES.find((f) => f.includes('clusterserviceversion')) ?? '';
const ANNOTATIONS_FILE = 'metadata/annotations.yaml';
if (CSV_FILE === '' || !template.has(ANNOTATIONS_FILE)) throw new Error(`the template bundle ${TEMPLATE} needs a CSV and metadata/annotations.yaml`);

const sandbox = await Sandbox.create('bundle');
after(() => sandbox.dispose());

const layoutArb = fc.record({
  remove: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...FILES) }),
  asDir: fc.oneof({ weight: 10, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...FILES) }),
  linkOut: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...FILES, 'manifests/extra.yaml') }),
  extra: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ['metadata/dependencies.yaml', 'dependencies:\n- type: olm.package\n  value: {packageName: x, version: ">=1.0.0"}\n- type: olm.gvk\n  value: {group: a, kind: B, version: v1}\n- type: olm.constraint\n  value: {cel: {rule: "true"}}\n'],
        ['metadata/properties.yaml', 'properties:\n- type: olm.maxOpenShiftVersion\n  value: 4.9\n- type: olm.label\n  value: x\n'],
        ['metadata/dependencies.yaml', 'dependencies: 7\n'],
        ['metadata/properties.yaml', 'properties: [null, 1, {type: 5}]\n'],
        ['manifests/empty.yaml', ''],
        ['manifests/list.yaml', 'apiVersion: v1\nkind: List\nitems: []\n'],
        ['manifests/.hidden.yaml', 'junk: ['],
        ['manifests/second-csv.yaml', 'apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: second}\nspec: {}\n'],
        ['manifests/notes.txt', 'not yaml at all: [\n'],
        ['metadata/other.yaml', 'annotations:\n  operators.operatorframework.io.bundle.package.v1: other\n'],
      ),
    },
  ),
  packageManifest: fc.nat({ max: 12 }).map((n) => n === 0),
  packageName: fc.oneof(fc.constant(undefined), nastyString),
});

function bundleArb(target: 'csv' | 'annotations' | 'any') {
  const file = target === 'csv' ? fc.constant(CSV_FILE) : target === 'annotations' ? fc.constant(ANNOTATIONS_FILE) : fc.constantFrom(...FILES);
  return fc.record({
    file,
    // The file as it is, with one or two things wrong (a field null, missing, of the wrong type, oversized or almost valid; a list element repeated), or randomly mutated.
    corruptions: fc.oneof({ weight: 1, arbitrary: fc.constant<Corruption[]>([]) }, { weight: 2, arbitrary: fc.array(corruptionArb, { minLength: 1, maxLength: 2 }) }),
    mutations: fc.oneof({ weight: 1, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 1, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 4 }) }),
    damage: byteMutationArb,
    layout: target === 'any' ? layoutArb : layoutArb.map((l) => ({ ...l, remove: undefined, asDir: undefined })),
    watch: fc.constantFrom([], [''], ['ns'], ['other'], ['ns', 'other'], ['a', 'b', 'c']),
  });
}

let n = 0;
type BundleInput = BundleArb extends fc.Arbitrary<infer I> ? I : never;
type BundleArb = ReturnType<typeof bundleArb>;

async function writeBundle(input: BundleInput): Promise<string> {
  const dir = join(sandbox.work, `bundle-${n++}`, input.layout.packageManifest ? '0.1.0' : 'b');
  for (const [file, docs] of template) {
    const changed = file === input.file ? docs.map((d, i) => (i === 0 ? input.mutations.reduce<unknown>((x, m) => mutate(x, m), input.corruptions.reduce<unknown>((x, c) => corrupt(x, c), d)) : d)) : docs;
    let text = changed.map((d) => {
      const y: unknown = stringify(d); // undefined for undefined
      return typeof y === 'string' ? y : '';
    }).join('---\n');
    if (file === input.file) text = mutateText(text, input.damage);
    const rel = input.layout.packageManifest ? file.replace(/^(manifests|metadata)\//, '') : file;
    await mkdir(join(dir, rel, '..'), { recursive: true });
    if (file === input.layout.remove) continue;
    if (file === input.layout.asDir) await mkdir(join(dir, rel), { recursive: true });
    else await writeFile(join(dir, rel), text);
  }
  if (input.layout.packageManifest) await writeFile(join(dir, '..', 'webhook.package.yaml'), 'packageName: webhook-operator\nchannels:\n- name: alpha\n  currentCSV: webhook-operator.v0.0.1\n');
  if (input.layout.extra !== undefined) {
    const [name = 'x', text = ''] = input.layout.extra;
    await mkdir(join(dir, name, '..'), { recursive: true });
    // The extra file replaces what is there (a template file the layout turned into a directory).
    await rm(join(dir, name), { force: true, recursive: true });
    await writeFile(join(dir, name), text);
  }
  if (input.layout.linkOut !== undefined) {
    const at = join(dir, input.layout.linkOut);
    await rm(at, { force: true, recursive: true });
    await mkdir(join(at, '..'), { recursive: true });
    await symlink(sandbox.targets[n % 2] ?? '', at);
  }
  return dir;
}

async function loadAll(input: BundleInput): Promise<unknown> {
  const dir = await writeBundle(input);
  const info = await readBundleDir(dir, input.layout.packageName);
  const record = toFbcBundle(info.bundle, { packageName: info.annotationPackage ?? input.layout.packageName ?? 'webhook-operator' });
  const result = validateLoadedBundle(info.bundle);
  // An invalid bundle is refused, as `bundle validate` refuses it: a ValidationError naming each problem's file, field and rule.
  if (!result.ok) throw new ValidationError(result);
  const converted = convertRegistryV1(info.bundle, { installNamespace: 'ns', watchNamespaces: [...input.watch] }).objects.length;
  return { name: record.name, converted };
}

for (const [target, ciRuns] of [
  ['csv', 100],
  ['annotations', 80],
  ['any', 120],
] as const) {
  test(`fuzz: bundle directories, mutations aimed at ${target === 'any' ? 'any file and the layout' : `the ${target === 'csv' ? 'CSV' : 'annotations.yaml'}`}`, { timeout: 30 * 60_000 }, async () => {
    await fuzz(`bundle-${target}`, bundleArb(target), loadAll, { ciRuns, sandbox });
  });
}
