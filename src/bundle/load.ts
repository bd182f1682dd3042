/**
 * Loading a `registry+v1` bundle from a directory, in either layout:
 * - bundle layout: `manifests/` (one CSV, CRDs, other objects) and `metadata/annotations.yaml`
 *   (+ optional `dependencies.yaml`, `properties.yaml`);
 * - package-manifest layout: one version directory with every YAML file directly in it; the
 *   package name comes from the caller or from the `*.package.yaml` one level up, and so do its
 *   channels (those whose `currentCSV` reaches it) and the default channel (`packageManifest`);
 * - a package-manifest package directory (`<pkg>/` with `<pkg>.package.yaml`) stands for the
 *   head of its default channel, loaded as that version directory.
 * Every problem that stops loading is collected and thrown at once as a `BundleLoadError`.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { InputError, errorMessage, type Problem } from '../util/errors.js';
import { Decoder, typeName } from './decode.js';
import { isRecord } from '../util/object.js';
import { CSV_KIND, decodeCsv } from './csv.js';
import { csvNameErrors } from './validate-csv.js';
import { parseYamlDocuments } from './yaml-docs.js';
import { channelsContaining, defaultChannelOf, defaultHeadDir, findPackageManifestFile, packageGraph, readPackageManifest, versionDirsOf, type PackageContext, type PackageManifest } from './package-manifest.js';
import { readAhead } from '../util/read-ahead.js';
import {
  ANNOTATION_CHANNELS,
  ANNOTATION_DEFAULT_CHANNEL,
  ANNOTATION_MEDIATYPE,
  ANNOTATION_PACKAGE,
  PACKAGE_FILE,
  type BundleAnnotations,
  type BundleProperty,
  type ClusterServiceVersion,
  type ManifestObject,
  type RegistryV1Bundle,
} from './types.js';

/** Codes of `BundleLoadError`, by the rule of its first error. */
const CODE_BY_RULE: Record<string, string> = {
  'bundle.no-csv': 'BUNDLE_NO_CSV',
  'bundle.multiple-csv': 'BUNDLE_MULTIPLE_CSV',
  'yaml.syntax': 'BUNDLE_YAML',
  'bundle.not-found': 'BUNDLE_NOT_FOUND',
  'bundle.no-annotations': 'BUNDLE_NO_ANNOTATIONS',
};

/** The bundle could not be loaded; `problems` has every reason, each with file and field. */
export class BundleLoadError extends InputError {
  readonly problems: Problem[];
  constructor(dir: string, problems: Problem[]) {
    const first = problems[0];
    const rest = problems.slice(1).map((p) => `\n  ${[p.file, p.field].filter(Boolean).join(': ')}: ${p.message}`);
    super(
      CODE_BY_RULE[first?.rule ?? ''] ?? 'BUNDLE_INVALID',
      `${first?.message ?? 'cannot load bundle'} (bundle ${dir})${rest.join('')}`,
      { file: first?.file, field: first?.field },
    );
    this.problems = problems;
  }
}

export interface LoadOptions {
  /** Package name for the package-manifest layout, which has no metadata of its own. */
  packageName?: string;
  /**
   * Read the package file beside a version directory without annotations for its channels and
   * default channel, and take a package directory as its default channel's head (default true).
   * The catalog renderer, which reads the package file once for every version, turns it off.
   */
  packageContext?: boolean;
}

/** Manifest files read ahead of the one being parsed (bounded, so a directory of thousands of files does not exhaust file handles). */
const READ_AHEAD = 16;
const YAML_FILE = /\.(ya?ml|json)$/i;
export { PACKAGE_FILE } from './types.js';

export async function loadBundleDir(dir: string, opts: LoadOptions = {}): Promise<RegistryV1Bundle> {
  const st = await stat(dir).catch(() => undefined);
  if (st === undefined || !st.isDirectory()) {
    throw new BundleLoadError(dir, [{ severity: 'error', rule: 'bundle.not-found', message: 'not a directory', file: dir }]);
  }
  const hasManifests = (await stat(join(dir, 'manifests')).catch(() => undefined))?.isDirectory() ?? false;
  if (!hasManifests && opts.packageContext !== false) {
    const head = await packageHeadDir(dir);
    if (head !== undefined) return loadBundleDir(head, opts);
  }
  const problems: Problem[] = [];
  const { objects, ignoredFiles } = await readManifests(dir, hasManifests, problems);
  const meta: Metadata = hasManifests ? await loadMetadata(join(dir, 'metadata'), problems) : { dependencies: [], properties: [] };
  const csv = decodeTheCsv(objects, hasManifests ? 'manifests/' : dir, problems);
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  for (const crd of crds) checkCrdShape(crd, problems);

  const { packageName, context } = await packageOf(dir, hasManifests, meta, opts, csv?.name, problems);
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0 || csv === undefined) {
    // The CSV's name is still checked, so one run reports it with the load problems.
    throw new BundleLoadError(dir, [...errors, ...csvNameProblems(objects.find((o) => o.kind === CSV_KIND))]);
  }

  return {
    dir,
    layout: hasManifests ? 'bundle' : 'package-manifest',
    name: csv.name,
    packageName: packageName ?? '',
    csv,
    crds,
    others: objects.filter((o) => o.kind !== CSV_KIND && o.kind !== 'CustomResourceDefinition'),
    objects,
    ...(meta.annotations === undefined ? {} : { annotations: meta.annotations }),
    ...(context === undefined ? {} : { packageManifest: context.context }),
    dependencies: meta.dependencies,
    properties: meta.properties,
    ignoredFiles,
    loadWarnings: problems.filter((p) => p.severity === 'warning'),
  };
}

function csvNameProblems(csv: { name: string; file: string } | undefined): Problem[] {
  if (csv === undefined) return [];
  return csvNameErrors(csv.name).map((e) => ({ severity: 'error', rule: 'csv.name', message: `metadata.name "${csv.name}" ${e}`, file: csv.file, field: 'metadata.name' }));
}

/**
 * The package name (annotations, else the caller's, else a package file: beside `manifests/`, or
 * one level up as opm's directory loader finds it) and, without annotations, what the package
 * file one level up says of this version.
 */
async function packageOf(
  dir: string,
  hasManifests: boolean,
  meta: Metadata,
  opts: LoadOptions,
  csvName: string | undefined,
  problems: Problem[],
): Promise<{ packageName: string | undefined; context: { packageName: string; context: PackageContext } | undefined }> {
  const context = meta.annotations === undefined && opts.packageContext !== false ? await packageContextOf(dir, csvName, problems) : undefined;
  const packageName =
    meta.annotations?.packageName ?? opts.packageName ?? (hasManifests ? await packageNameIn(dir) : undefined) ?? context?.packageName ?? (await packageNameFromParent(dir));
  if (hasManifests && meta.annotations === undefined && packageName === undefined) {
    problems.push({
      severity: 'error',
      rule: 'bundle.no-annotations',
      message: `metadata/annotations.yaml with "annotations.${ANNOTATION_PACKAGE}" is required (or a package.yaml / <name>.package.yaml naming the package)`,
      file: 'metadata/annotations.yaml',
    });
  }
  return { packageName, context };
}

/**
 * The objects a path holds without requiring a bundle: the documents of one manifest file, or
 * of every manifest file of a directory (`manifests/` when there is one). For validating lone
 * objects (a CRD, a CSV, an OperatorGroup, ...) as operator-framework/api's per-kind validators do.
 */
export async function loadManifestObjects(path: string): Promise<{ objects: ManifestObject[]; problems: Problem[] }> {
  const problems: Problem[] = [];
  const st = await stat(path).catch(() => undefined);
  if (st === undefined) return { objects: [], problems: [{ severity: 'error', rule: 'bundle.not-found', message: 'no such file or directory', file: path }] };
  if (st.isDirectory()) {
    const hasManifests = (await stat(join(path, 'manifests')).catch(() => undefined))?.isDirectory() ?? false;
    return { objects: (await readManifests(path, hasManifests, problems)).objects, problems };
  }
  const name = basename(path);
  const text = await readBundleFile(path, name, problems);
  const objects: ManifestObject[] = [];
  if (text !== undefined) addManifestObjects(objects, text, name, problems);
  return { objects, problems };
}

/** Adds the objects of one manifest file's YAML documents to `objects`; what is wrong goes to `problems`. */
function addManifestObjects(objects: ManifestObject[], text: string, file: string, problems: Problem[]): void {
  const parsed = parseYamlDocuments(text, file);
  problems.push(...parsed.problems);
  for (const doc of parsed.documents) {
    const obj = toManifestObject(doc.value, file, doc.index, problems);
    if (obj !== undefined) objects.push(obj);
  }
}

/** Every object of every manifest file: `manifests/` in the bundle layout, else the YAML files of `dir`. */
async function readManifests(dir: string, hasManifests: boolean, problems: Problem[]): Promise<{ objects: ManifestObject[]; ignoredFiles: string[] }> {
  const objects: ManifestObject[] = [];
  const ignoredFiles: string[] = [];
  const manifestDir = hasManifests ? join(dir, 'manifests') : dir;
  const prefix = hasManifests ? 'manifests/' : '';
  const names = await listFiles(manifestDir);
  // Parsed in order, with the next files already being read (util/read-ahead.ts).
  const reads = readAhead(names, READ_AHEAD, async (name) => {
    const readProblems: Problem[] = [];
    const text = !hasManifests && !YAML_FILE.test(name) ? undefined : await readBundleFile(join(manifestDir, name), `${prefix}${name}`, readProblems);
    return { name, text, readProblems };
  });
  for await (const { name, text, readProblems } of reads) {
    const rel = `${prefix}${name}`;
    if (!hasManifests && !YAML_FILE.test(name)) {
      ignoredFiles.push(rel);
      continue;
    }
    problems.push(...readProblems);
    if (text !== undefined) addManifestObjects(objects, text, rel, problems);
  }
  return { objects, ignoredFiles };
}

/** Exactly one CSV, decoded with every field problem recorded. */
function decodeTheCsv(objects: ManifestObject[], where: string, problems: Problem[]): ClusterServiceVersion | undefined {
  const csvObjects = objects.filter((o) => o.kind === CSV_KIND);
  if (csvObjects.length === 0 && !problems.some((p) => p.severity === 'error')) {
    problems.push({ severity: 'error', rule: 'bundle.no-csv', message: `no ClusterServiceVersion found in ${where === 'manifests/' ? 'manifests/' : 'the directory'}`, file: where });
  }
  if (csvObjects.length > 1) {
    problems.push({
      severity: 'error',
      rule: 'bundle.multiple-csv',
      message: `more than one ClusterServiceVersion: ${csvObjects.map((o) => `${o.file} (${o.name})`).join(', ')}; a bundle has exactly one`,
      file: csvObjects[1]?.file ?? '',
      field: 'kind',
    });
  }
  const csvObj = csvObjects[0];
  if (csvObj === undefined) return undefined;
  const d = new Decoder(csvObj.file);
  const csv = decodeCsv(csvObj.object, d);
  problems.push(...d.problems);
  return csv;
}

/**
 * A listed file's text, or a problem when it cannot be read: a symlink to a directory, a dangling
 * or looping symlink, no permission.
 */
async function readBundleFile(path: string, rel: string, problems: Problem[]): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
    const why = { EISDIR: 'is (a symlink to) a directory', ENOENT: 'is a symlink to nothing', ELOOP: 'is a symlink loop', EACCES: 'cannot be read (permission denied)' }[code];
    problems.push({ severity: 'error', rule: 'bundle.unreadable', message: why ?? `cannot be read: ${err instanceof Error ? err.message : String(err)}`, file: rel });
    return undefined;
  }
}

/** Regular files, no dotfiles, sorted so output never depends on directory order. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

function toManifestObject(value: unknown, file: string, index: number, problems: Problem[]): ManifestObject | undefined {
  const field = index > 0 ? `[document ${index}]` : '';
  const at = (f: string): string => (field === '' ? f : `${field}.${f}`);
  if (!isRecord(value)) {
    problems.push({ severity: 'error', rule: 'manifest.object', message: `must be a Kubernetes object (a mapping), got ${typeName(value)}`, file, ...(field === '' ? {} : { field }) });
    return undefined;
  }
  const d = new Decoder(file);
  const kind = d.str(value, 'kind', field, true);
  const apiVersion = d.str(value, 'apiVersion', field, true);
  const meta = d.record(value, 'metadata', field);
  const name = meta === undefined ? undefined : d.str(meta, 'name', at('metadata'));
  const namespace = meta === undefined ? undefined : d.str(meta, 'namespace', at('metadata'));
  problems.push(...d.problems);
  if (kind === undefined || apiVersion === undefined) return undefined;
  const out: ManifestObject = { file, index, apiVersion, kind, name: name ?? '', object: value };
  if (namespace !== undefined) out.namespace = namespace;
  return out;
}

/** A CRD must at least say its group, kind and versions: everything else keys off them. */
function checkCrdShape(crd: ManifestObject, problems: Problem[]): void {
  const d = new Decoder(crd.file);
  if (crd.apiVersion !== 'apiextensions.k8s.io/v1' && crd.apiVersion !== 'apiextensions.k8s.io/v1beta1') {
    d.bad('apiVersion', `CustomResourceDefinition apiVersion must be apiextensions.k8s.io/v1 or v1beta1, got "${crd.apiVersion}"`, 'crd.api-version');
  }
  const spec = d.record(crd.object, 'spec', '', true) ?? {};
  d.str(spec, 'group', 'spec', true);
  const names = d.record(spec, 'names', 'spec', true) ?? {};
  d.str(names, 'kind', 'spec.names', true);
  d.str(names, 'plural', 'spec.names', true);
  const versions = d.records(spec, 'versions', 'spec');
  for (const v of versions) d.str(v.value, 'name', v.path, true);
  const single = d.str(spec, 'version', 'spec');
  if (versions.length === 0 && single === undefined) d.bad('spec.versions', 'must list at least one version', 'field.required');
  problems.push(...d.problems);
}

interface Metadata {
  annotations?: BundleAnnotations;
  dependencies: BundleProperty[];
  properties: BundleProperty[];
}

/** Each metadata file is recognised by its top-level key, as opm does, not by its name. */
async function loadMetadata(metaDir: string, problems: Problem[]): Promise<Metadata> {
  const out: Metadata = { dependencies: [], properties: [] };
  for (const name of await listFiles(metaDir)) {
    if (!YAML_FILE.test(name)) continue;
    const rel = `metadata/${name}`;
    const text = await readBundleFile(join(metaDir, name), rel, problems);
    if (text === undefined) continue;
    const parsed = parseYamlDocuments(text, rel);
    problems.push(...parsed.problems);
    const doc = parsed.documents[0]?.value;
    if (!isRecord(doc)) continue;
    const d = new Decoder(rel);
    if (doc.annotations !== undefined && out.annotations === undefined) {
      const all = d.stringMap(doc, 'annotations', '');
      const a: BundleAnnotations = {
        channels: (all[ANNOTATION_CHANNELS] ?? '').split(',').map((c) => c.trim()).filter((c) => c !== ''),
        all,
      };
      const pkg = all[ANNOTATION_PACKAGE];
      if (pkg !== undefined) a.packageName = pkg;
      else d.bad(`annotations.${ANNOTATION_PACKAGE}`, 'is required', 'field.required');
      const def = all[ANNOTATION_DEFAULT_CHANNEL];
      if (def !== undefined) a.defaultChannel = def;
      const mt = all[ANNOTATION_MEDIATYPE];
      if (mt !== undefined) a.mediatype = mt;
      out.annotations = a;
    }
    if (doc.dependencies !== undefined) out.dependencies.push(...propertyList(d, doc, 'dependencies'));
    if (doc.properties !== undefined) out.properties.push(...propertyList(d, doc, 'properties'));
    problems.push(...d.problems);
  }
  return out;
}

function propertyList(d: Decoder, doc: Record<string, unknown>, key: string): BundleProperty[] {
  return d.records(doc, key, '').flatMap(({ value, path }) => {
    const type = d.str(value, 'type', path, true);
    if (type === undefined) return [];
    if (value.value === undefined) {
      d.bad(`${path}.value`, 'is required', 'field.required');
      return [];
    }
    return [{ type, value: value.value }];
  });
}

/** Package-manifest layout: `<pkg>/<version>/` next to `<pkg>/<pkg>.package.yaml`. */
async function packageNameFromParent(dir: string): Promise<string | undefined> {
  return packageNameIn(dirname(dir));
}

/** The `packageName` of the package manifest in `parent`, preferring `<parent>.package.yaml`. */
async function packageNameIn(parent: string): Promise<string | undefined> {
  const candidates = (await listFiles(parent)).filter((n) => PACKAGE_FILE.test(n));
  const file = candidates.find((n) => n.startsWith(`${basename(parent)}.`)) ?? candidates[0];
  if (file === undefined) return undefined;
  const parsed = parseYamlDocuments(await readFile(join(parent, file), 'utf8'), file);
  const doc = parsed.documents[0]?.value;
  if (!isRecord(doc) || typeof doc.packageName !== 'string') return undefined;
  return doc.packageName;
}

/** An `InputError` of the package file as a load problem, keeping its file and field. */
function packageFileProblem(err: unknown, file: string): Problem {
  if (!(err instanceof InputError)) throw err;
  const where = [err.file, err.field].filter((x) => x !== undefined && x !== '').join(': ');
  const message = where !== '' && err.message.startsWith(`${where}: `) ? err.message.slice(where.length + 2) : errorMessage(err);
  return { severity: 'error', rule: 'package.manifest', message, file: err.file ?? file, ...(err.field === undefined ? {} : { field: err.field }) };
}

/**
 * When `dir` is a package-manifest package directory (a package file and version directories),
 * the version directory it stands for: its default channel's head. Undefined for anything else.
 */
async function packageHeadDir(dir: string): Promise<string | undefined> {
  const file = await findPackageManifestFile(dir);
  if (file === undefined || (await versionDirsOf(dir)).length === 0) return undefined;
  try {
    return await defaultHeadDir(dir, await readPackageManifest(file));
  } catch (err) {
    throw new BundleLoadError(dir, [packageFileProblem(err, file)]);
  }
}

/**
 * What the package file one level up says of a version directory without annotations: the
 * package name, the channels that reach its CSV, the default channel. A version no channel
 * reaches loads with a warning (it can be validated, not published or run).
 */
async function packageContextOf(dir: string, csvName: string | undefined, problems: Problem[]): Promise<{ packageName: string; context: PackageContext } | undefined> {
  const parent = dirname(dir);
  const file = await findPackageManifestFile(parent);
  if (file === undefined) return undefined;
  let manifest: PackageManifest;
  try {
    manifest = await readPackageManifest(file);
  } catch (err) {
    problems.push(packageFileProblem(err, file));
    return undefined;
  }
  const channels = csvName === undefined ? [] : channelsContaining(csvName, manifest, await packageGraph(parent));
  if (csvName !== undefined && channels.length === 0) {
    problems.push({ severity: 'warning', rule: 'package.no-channel', message: `no channel's currentCSV reaches ${csvName} along replaces/skips (channels: ${manifest.channels.map((c) => `${c.name} → ${c.currentCSV}`).join(', ') || 'none'}), so no catalog can offer it`, file, field: 'channels' });
  }
  return { packageName: manifest.packageName, context: { file, channels, defaultChannel: defaultChannelOf(manifest) } };
}
