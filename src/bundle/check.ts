/**
 * `bundle check`: the part of operator-sdk's scorecard (basic and OLM suites) that needs no
 * running operator, done on the bundle's files. Each test answers pass/fail with its problems;
 * tests the bundle's `tests/scorecard/config.yaml` names that only a live cluster can run (custom
 * images, kuttl) are listed as not run, with why.
 *
 * - basic-check-spec: every alm-examples custom resource has a spec block;
 * - olm-bundle-validation: the bundle validators find no error;
 * - olm-crds-have-validation: each owned CRD version has a schema, and each alm-example of it
 *   validates against that schema;
 * - olm-crds-have-resources: each owned CRD lists the resources its operator makes;
 * - olm-spec-descriptors: each field of an owned CRD's spec has a spec descriptor;
 * - olm-status-descriptors: each field of an owned CRD's status has a status descriptor (the
 *   scorecard reads a live CR's status; this reads the CRD's status schema).
 *
 * Checking a value against a schema is passed in (`validateValue`), so this layer does not depend
 * on the schema engine above it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';
import { readYaml, YamlError } from '../util/yaml.js';
import { loadBundleDir } from './load.js';
import type { RegistryV1Bundle } from './types.js';
import { validateLoadedBundle } from './validate.js';

export const STATIC_TESTS = ['basic-check-spec', 'olm-bundle-validation', 'olm-crds-have-validation', 'olm-crds-have-resources', 'olm-spec-descriptors', 'olm-status-descriptors'] as const;
export type StaticTest = (typeof STATIC_TESTS)[number];

export interface CheckTestResult {
  name: string;
  suite: string;
  state: 'pass' | 'fail' | 'not-run';
  problems: string[];
  /** Why a test was not run. */
  reason?: string;
}

export interface BundleCheckResult {
  bundle: string;
  /** `tests/scorecard/config.yaml`, when the bundle has one. */
  config?: string;
  results: CheckTestResult[];
}

/** Violations of `schema` by `value`, each with the value's path. */
export type ValueValidator = (schema: unknown, value: unknown) => { path: string; message: string }[];

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Owned {
  name: string;
  version: string;
  kind: string;
  resources: unknown[];
  specPaths: string[];
  statusPaths: string[];
}

function ownedCrds(b: RegistryV1Bundle): Owned[] {
  const spec = isRec(b.csv.raw.spec) ? b.csv.raw.spec : {};
  const crds = isRec(spec.customresourcedefinitions) ? spec.customresourcedefinitions : {};
  const owned = Array.isArray(crds.owned) ? crds.owned : [];
  const paths = (v: unknown): string[] => (Array.isArray(v) ? v.filter(isRec).map((d) => (typeof d.path === 'string' ? d.path : '')) : []);
  return owned.filter(isRec).map((o) => ({
    name: typeof o.name === 'string' ? o.name : '',
    version: typeof o.version === 'string' ? o.version : '',
    kind: typeof o.kind === 'string' ? o.kind : '',
    resources: Array.isArray(o.resources) ? o.resources : [],
    specPaths: paths(o.specDescriptors),
    statusPaths: paths(o.statusDescriptors),
  }));
}

/** The CRD version's openAPIV3Schema, if the bundle has it. */
function schemaOf(b: RegistryV1Bundle, crdName: string, version: string): Rec | undefined {
  const crd = b.crds.find((c) => c.name === crdName);
  const spec = isRec(crd?.object.spec) ? crd.object.spec : {};
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRec) : [];
  const v = versions.find((x) => x.name === version);
  const schema = isRec(v?.schema) ? v.schema.openAPIV3Schema : isRec(spec.validation) ? spec.validation.openAPIV3Schema : undefined;
  return isRec(schema) ? schema : undefined;
}

function fieldsOf(schema: Rec | undefined, field: 'spec' | 'status'): string[] {
  const props = isRec(schema?.properties) ? schema.properties : {};
  const sub = props[field];
  return isRec(sub) && isRec(sub.properties) ? Object.keys(sub.properties).sort() : [];
}

function examples(b: RegistryV1Bundle): Rec[] {
  const text = b.csv.annotations['alm-examples'] ?? b.csv.annotations['olm.examples'];
  if (text === undefined || text.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter(isRec) : [];
  } catch {
    return [];
  }
}

/** A descriptor covers a field when its path is the field or starts with it (`a` covers `a`, `a.b`, `a[0]`). */
function covered(field: string, paths: readonly string[]): boolean {
  return paths.some((p) => p === field || p.startsWith(`${field}.`) || p.startsWith(`${field}[`));
}

function runStatic(name: StaticTest, b: RegistryV1Bundle, validateValue: ValueValidator): string[] {
  const owned = ownedCrds(b);
  const ex = examples(b);
  switch (name) {
    case 'basic-check-spec':
      return examplesWithoutSpec(ex);
    case 'olm-bundle-validation':
      return bundleValidationProblems(b);
    case 'olm-crds-have-validation':
      return examplesAgainstSchemas(b, owned, ex, validateValue);
    case 'olm-crds-have-resources':
      return crdsWithoutResources(owned);
    case 'olm-spec-descriptors':
      return missingSpecDescriptors(b, owned);
    case 'olm-status-descriptors':
      return missingStatusDescriptors(b, owned);
  }
  return [];
}

/** basic-check-spec: there are alm-examples, and each has a spec block. */
function examplesWithoutSpec(ex: Rec[]): string[] {
  const problems: string[] = [];
  if (ex.length === 0) problems.push('no alm-examples: nothing to check');
  for (const e of ex) if (!isRec(e.spec)) problems.push(`alm-examples ${String(e.kind)} ${String(isRec(e.metadata) ? e.metadata.name : '')}: has no spec block`);
  return problems;
}

/** olm-bundle-validation: the errors of Binnacle's own bundle validation. */
function bundleValidationProblems(b: RegistryV1Bundle): string[] {
  const problems: string[] = [];
  for (const p of validateLoadedBundle(b).errors()) problems.push(`${p.file === undefined ? '' : `${p.file}: `}${p.field === undefined ? '' : `${p.field}: `}${p.message}`);
  return problems;
}

/** olm-crds-have-validation: each owned CRD has a schema, and the alm-examples of its kind satisfy it. */
function examplesAgainstSchemas(b: RegistryV1Bundle, owned: Owned[], ex: Rec[], validateValue: ValueValidator): string[] {
  const problems: string[] = [];
  for (const o of owned) {
    const schema = schemaOf(b, o.name, o.version);
    if (schema === undefined) {
      problems.push(`${o.name} ${o.version}: no openAPIV3Schema`);
      continue;
    }
    const group = o.name.slice(o.name.indexOf('.') + 1);
    for (const e of ex.filter((x) => x.kind === o.kind && x.apiVersion === `${group}/${o.version}`)) {
      const name = isRec(e.metadata) && typeof e.metadata.name === 'string' ? e.metadata.name : '';
      for (const v of validateValue(schema, { ...e, metadata: {} })) problems.push(`alm-examples ${o.kind} ${name}: ${v.path === '' ? '' : `${v.path}: `}${v.message}`);
    }
  }
  return problems;
}

/** olm-crds-have-resources: each owned CRD lists the objects its operator makes. */
function crdsWithoutResources(owned: Owned[]): string[] {
  const problems: string[] = [];
  for (const o of owned) if (o.resources.length === 0) problems.push(`${o.name}: spec.customresourcedefinitions.owned[${o.name}].resources lists none of the objects its operator makes`);
  return problems;
}

/** olm-spec-descriptors: every spec field of an owned CRD has a spec descriptor. */
function missingSpecDescriptors(b: RegistryV1Bundle, owned: Owned[]): string[] {
  const problems: string[] = [];
  for (const o of owned) {
    const missing = fieldsOf(schemaOf(b, o.name, o.version), 'spec').filter((f) => !covered(f, o.specPaths));
    if (missing.length > 0) problems.push(`${o.kind} (${o.name}): no spec descriptor for spec.${missing.join(', spec.')}`);
  }
  return problems;
}

/** olm-status-descriptors: every status field of an owned CRD has a status descriptor. */
function missingStatusDescriptors(b: RegistryV1Bundle, owned: Owned[]): string[] {
  const problems: string[] = [];
  for (const o of owned) {
    const fields = fieldsOf(schemaOf(b, o.name, o.version), 'status');
    if (fields.length > 0 && o.statusPaths.length === 0) problems.push(`${o.kind} (${o.name}): has status fields (${fields.join(', ')}) but no status descriptors`);
    else {
      const missing = fields.filter((f) => !covered(f, o.statusPaths));
      if (missing.length > 0) problems.push(`${o.kind} (${o.name}): no status descriptor for status.${missing.join(', status.')}`);
    }
  }
  return problems;
}

const SUITE: Record<StaticTest, string> = {
  'basic-check-spec': 'basic',
  'olm-bundle-validation': 'olm',
  'olm-crds-have-validation': 'olm',
  'olm-crds-have-resources': 'olm',
  'olm-spec-descriptors': 'olm',
  'olm-status-descriptors': 'olm',
};

interface ConfiguredTest {
  name: string;
  suite: string;
  image: string;
  static?: StaticTest;
}

/** The tests `tests/scorecard/config.yaml` lists (operator-sdk's v1alpha3 Configuration). */
async function configuredTests(file: string): Promise<ConfiguredTest[] | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  let doc: unknown;
  try {
    doc = readYaml(text, file);
  } catch (err) {
    throw new InputError('BUNDLE_CHECK_CONFIG', err instanceof YamlError ? err.reason : `not YAML: ${err instanceof Error ? err.message : String(err)}`, { file, cause: err });
  }
  const stages = isRec(doc) && Array.isArray(doc.stages) ? doc.stages.filter(isRec) : undefined;
  if (stages === undefined) throw new InputError('BUNDLE_CHECK_CONFIG', 'expected a scorecard Configuration with stages', { file, field: 'stages' });
  const out: ConfiguredTest[] = [];
  for (const st of stages) {
    for (const t of Array.isArray(st.tests) ? st.tests.filter(isRec) : []) {
      const entry = Array.isArray(t.entrypoint) ? t.entrypoint.map(String) : [];
      const labels = isRec(t.labels) ? t.labels : {};
      const image = typeof t.image === 'string' ? t.image : '';
      const name = typeof labels.test === 'string' ? labels.test : (entry.at(-1) ?? image);
      const known = entry[0] === 'scorecard-test' ? STATIC_TESTS.find((s) => s === entry[1]) : undefined;
      out.push({ name, suite: typeof labels.suite === 'string' ? labels.suite : '', image, ...(known === undefined ? {} : { static: known }) });
    }
  }
  return out;
}

export async function checkBundle(dir: string, o: { validateValue: ValueValidator }): Promise<BundleCheckResult> {
  const bundle = await loadBundleDir(dir);
  const configFile = join(dir, 'tests', 'scorecard', 'config.yaml');
  const configured = await configuredTests(configFile);
  const results: CheckTestResult[] = [];
  const runOne = (name: StaticTest): void => {
    const problems = runStatic(name, bundle, o.validateValue);
    results.push({ name, suite: SUITE[name], state: problems.length === 0 ? 'pass' : 'fail', problems });
  };
  if (configured === undefined) for (const t of STATIC_TESTS) runOne(t);
  else {
    for (const t of configured) {
      if (t.static !== undefined) runOne(t.static);
      else results.push({ name: t.name, suite: t.suite, state: 'not-run', problems: [], reason: `needs a live cluster: it runs image ${t.image === '' ? '(none given)' : t.image} against a running operator` });
    }
  }
  return { bundle: bundle.name, ...(configured === undefined ? {} : { config: configFile }), results };
}
