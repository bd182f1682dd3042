/**
 * Bundle validation: runs the default checks (CSV, CRDs, bundle, metadata, and what the
 * converter needs) and any optional validators over one bundle, or over a whole
 * package-manifest package, and returns every problem as a `ValidationResult` tree.
 * Loading failures become problems too, so one call reports on many bundles.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { UsageError, ValidationResult, type Problem } from '../util/errors.js';
import { Decoder } from './decode.js';
import { isRecord } from '../util/object.js';
import { BundleLoadError, loadBundleDir, loadManifestObjects, PACKAGE_FILE } from './load.js';
import { renderChecks } from './render-checks.js';
import type { RegistryV1Bundle } from './types.js';
import { validateBundleLevel, type BundleSize } from './validate-bundle.js';
import { validateCrd } from './validate-crd.js';
import { validateCsv } from './validate-csv.js';
import { validateLoneObjects } from './validate-lone.js';
import { OPTIONAL_VALIDATORS, runOptional, type OptionalValidator } from './validate-optional.js';
import { parseYamlDocuments } from './yaml-docs.js';

export interface ValidateOptions {
  optional?: readonly OptionalValidator[];
  /** Kubernetes version to check removed APIs against (`--k8s-version`). */
  k8sVersion?: string;
  /** The community suite's `index-path`: the bundle image's Dockerfile, whose OpenShift versions label it checks. */
  indexPath?: string;
  packageName?: string;
}

const ALIASES: Record<string, OptionalValidator> = {
  operatorhub: 'operatorhub',
  'operatorhubv2': 'operatorhubv2',
  'operatorhub/v2': 'operatorhubv2',
  community: 'community',
  object: 'object',
  operatorgroup: 'operatorgroup',
  capabilities: 'capabilities',
  standardcapabilities: 'capabilities',
  categories: 'categories',
  standardcategories: 'categories',
  'good-practices': 'good-practices',
  'alpha-deprecated-apis': 'alpha-deprecated-apis',
  'deprecated-apis': 'alpha-deprecated-apis',
};

/** `suite=operatorframework` or `name=<validator>`, repeatable. */
export function parseSelectOptional(values: readonly string[]): OptionalValidator[] {
  const out = new Set<OptionalValidator>();
  for (const v of values) {
    for (const part of v.split(',')) {
      const [key, val] = part.split('=', 2).map((s) => s.trim());
      // Own keys only: `name=constructor` names no validator.
      const alias = key === 'name' && val !== undefined && Object.hasOwn(ALIASES, val) ? ALIASES[val] : undefined;
      if (key === 'suite' && val === 'operatorframework') OPTIONAL_VALIDATORS.forEach((x) => out.add(x));
      else if (alias !== undefined) out.add(alias);
      else {
        throw new UsageError(
          `--select-optional ${part}: expected suite=operatorframework or name=<${Object.keys(ALIASES).join('|')}>`,
        );
      }
    }
  }
  return [...out];
}

const REPORTED_ELSEWHERE = new Set(['render.owned-crd-present', 'render.conversion-webhook-all-namespaces', 'render.crd-schema']);

/**
 * Install checks operator-framework/api does not make: validation gives its verdict (a warning),
 * and the install (convertRegistryV1, the BundleDeployment and `run bundle` path) still refuses.
 */
const INSTALL_ONLY: Record<string, string> = {
  'render.package-name': 'a bundle is valid without one, but Binnacle installs only bundles of a package (metadata/annotations.yaml or a package manifest beside the version directory)',
  'render.object-kind': 'a bundle is valid with it, but OLM and Binnacle refuse to install it',
};

/** `--optional-values k8s-version=1.25,index-path=./bundle.Dockerfile`, repeatable (operator-sdk's keys). */
export function parseOptionalValues(values: readonly string[]): { k8sVersion?: string; indexPath?: string } {
  const out: { k8sVersion?: string; indexPath?: string } = {};
  for (const v of values) {
    for (const part of v.split(',')) {
      const eq = part.indexOf('=');
      const key = part.slice(0, eq).trim();
      const val = part.slice(eq + 1).trim();
      if (eq > 0 && key === 'k8s-version' && val !== '') out.k8sVersion = val;
      else if (eq > 0 && key === 'index-path' && val !== '') out.indexPath = val;
      else throw new UsageError(`--optional-values ${part}: expected k8s-version=<version> or index-path=<file>`);
    }
  }
  return out;
}

/** Every check on an already loaded bundle. */
export function validateLoadedBundle(bundle: RegistryV1Bundle, opts: ValidateOptions = {}, size?: BundleSize): ValidationResult {
  const r = new ValidationResult(`bundle ${bundle.name} (${bundle.dir})`);
  for (const p of bundle.loadWarnings) r.add(p);
  validateCsv(bundle, r.child(`csv ${bundle.csv.file}`));
  const crds = r.child('crds');
  for (const crd of bundle.crds) validateCrd(crd, crds);
  validateBundleLevel(bundle, r.child('bundle'), size);
  const install = r.child('install');
  for (const p of renderChecks(bundle)) {
    // The same facts as csv/bundle/crd checks already reported are not repeated.
    if (REPORTED_ELSEWHERE.has(p.rule)) continue;
    const why = INSTALL_ONLY[p.rule];
    install.add(why === undefined ? p : { ...p, severity: 'warning', message: `${p.message}; ${why}` });
  }
  for (const name of opts.optional ?? []) runOptional(name, bundle, r.child(name), opts);
  return r;
}

export interface DirValidation {
  result: ValidationResult;
  bundle?: RegistryV1Bundle;
}

/** Loads and validates one bundle directory; load failures are reported, not thrown. */
export async function validateBundleDir(dir: string, opts: ValidateOptions = {}): Promise<DirValidation> {
  try {
    const bundle = await loadBundleDir(dir, opts.packageName === undefined ? {} : { packageName: opts.packageName });
    const result = validateLoadedBundle(bundle, opts, await bundleSize(dir));
    const level = result.children.find((c) => c.subject === 'bundle') ?? result;
    for (const p of await strayEntries(bundle.layout === 'bundle' ? join(dir, 'manifests') : dir, bundle.layout === 'bundle' ? 'manifests/' : '')) level.add(p);
    return { result, bundle };
  } catch (e) {
    if (!(e instanceof BundleLoadError)) throw e;
    const r = new ValidationResult(`bundle ${dir}`);
    for (const p of e.problems) r.add(p);
    return { result: r };
  }
}

/**
 * Subdirectories and hidden files beside the manifests: Binnacle's loader skips them, but
 * operator-framework/api (`operator-sdk bundle validate`) refuses to load such a bundle, and
 * whatever was meant to be in them is not part of the bundle.
 */
async function strayEntries(manifestDir: string, prefix: string): Promise<Problem[]> {
  const entries = await readdir(manifestDir, { withFileTypes: true }).catch(() => []);
  const out: Problem[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isDirectory()) out.push({ severity: 'error', rule: 'bundle.manifests-dir', message: 'is a directory inside the manifests directory: its files are not part of the bundle, and operator-framework/api refuses to load it', file: `${prefix}${e.name}` });
    else if (e.name.startsWith('.')) out.push({ severity: 'error', rule: 'bundle.manifests-dir', message: 'is a hidden file in the manifests directory: it is not part of the bundle, and operator-framework/api refuses to load it', file: `${prefix}${e.name}` });
  }
  return out;
}

/** Bytes of every file of the bundle, and their gzip size (what OLM's limit is about). */
export async function bundleSize(dir: string): Promise<BundleSize> {
  const chunks: Buffer[] = [];
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true });
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) {
        if (d === dir && e.name !== 'manifests' && e.name !== 'metadata') continue;
        await walk(join(d, e.name));
      } else if (e.isFile()) chunks.push(await readFile(join(d, e.name)));
    }
  };
  await walk(dir);
  const all = Buffer.concat(chunks);
  return { bytes: all.length, compressed: gzipSync(all).length };
}

/** Checks of a `<pkg>.package.yaml` (operator-framework/api `package_manifest.go`). */
export function validatePackageManifest(text: string, file: string, csvNames?: ReadonlySet<string>): ValidationResult {
  const r = new ValidationResult(`package manifest ${file}`);
  const parsed = parseYamlDocuments(text, file);
  for (const p of parsed.problems) r.add(p);
  const doc = parsed.documents[0]?.value;
  if (!isRecord(doc)) {
    if (!parsed.problems.some((p) => p.severity === 'error')) r.error('package.format', 'must be a mapping with packageName, channels, defaultChannel', { file });
    return r;
  }
  const d = new Decoder(file);
  const name = d.str(doc, 'packageName', '');
  if (name === undefined || name === '') r.error('package.name', 'is required', { file, field: 'packageName' });
  const channels = d.records(doc, 'channels', '');
  const def = d.str(doc, 'defaultChannel', '');
  for (const p of d.problems) r.add(p);
  if (channels.length === 0) {
    r.error('package.channels', 'must list at least one channel', { file, field: 'channels' });
    return r;
  }
  if ((def === undefined || def === '') && channels.length > 1) {
    r.error('package.default-channel', 'is required when there is more than one channel', { file, field: 'defaultChannel' });
  }
  const seen = checkChannels(channels, file, csvNames, r);
  if (def !== undefined && def !== '' && !seen.has(def)) {
    r.error('package.default-channel', `"${def}" is not one of the channels`, { file, field: 'defaultChannel' });
  }
  return r;
}

/** Each channel named once, with a currentCSV that (when the versions are known) one of them is; answers the names. */
function checkChannels(channels: ReturnType<Decoder['records']>, file: string, csvNames: ReadonlySet<string> | undefined, r: ValidationResult): Set<string> {
  const seen = new Set<string>();
  for (const { value, path } of channels) {
    const cn = typeof value.name === 'string' ? value.name : '';
    const current = typeof value.currentCSV === 'string' ? value.currentCSV : '';
    if (cn === '') r.error('package.channels', 'is required', { file, field: `${path}.name` });
    if (current === '') r.error('package.channels', `channel "${cn}" has no currentCSV`, { file, field: `${path}.currentCSV` });
    else if (csvNames !== undefined && !csvNames.has(current)) {
      // operator-framework/api accepts it; rendering or publishing the package refuses it (CHANNEL_HEAD_MISSING).
      r.warning('package.current-csv', `channel "${cn}" names currentCSV "${current}", which no version directory contains; rendering or publishing this package will fail`, { file, field: `${path}.currentCSV` });
    }
    if (seen.has(cn)) r.error('package.channels', `channel "${cn}" is listed twice`, { file, field: `${path}.name` });
    seen.add(cn);
  }
  return seen;
}

/**
 * Validates what `path` holds: a bundle directory, a package-manifest version directory, a
 * package-manifest package (its `*.package.yaml` and every version directory), or lone
 * manifests (one file, or a directory without a CSV), each by the validators for its kind.
 */
export async function validatePath(path: string, opts: ValidateOptions = {}): Promise<ValidationResult> {
  const st = await stat(path).catch(() => undefined);
  if (st === undefined) return new ValidationResult(`bundle ${path}`).error('bundle.not-found', 'no such file or directory', { file: path });
  if (!st.isDirectory()) return validateLonePath(path);
  const entries = await readdir(path, { withFileTypes: true });
  const pkgFile = entries.filter((e) => e.isFile() && PACKAGE_FILE.test(e.name)).sort((a, b) => a.name.localeCompare(b.name))[0];
  if (pkgFile === undefined) {
    const v = await validateBundleDir(path, opts);
    // A directory without a CSV is not a bundle: its objects are validated one by one.
    const rules = new Set(v.result.errors().map((p) => p.rule));
    if (v.bundle === undefined && rules.has('bundle.no-csv') && [...rules].every((r) => r === 'bundle.no-csv' || r === 'bundle.no-annotations')) return validateLonePath(path);
    return v.result;
  }

  const text = await readFile(join(path, pkgFile.name), 'utf8');
  const parsed = parseYamlDocuments(text, pkgFile.name).documents[0]?.value;
  const packageName = isRecord(parsed) && typeof parsed.packageName === 'string' ? parsed.packageName : undefined;
  const root = new ValidationResult(`package ${packageName ?? path}`);
  const csvNames = new Set<string>();
  const dirs = entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
  for (const dir of dirs) {
    const v = await validateBundleDir(join(path, dir), { ...opts, ...(packageName === undefined ? {} : { packageName }) });
    if (v.bundle !== undefined) csvNames.add(v.bundle.name);
    root.children.push(v.result);
  }
  root.children.unshift(validatePackageManifest(text, pkgFile.name, csvNames));
  return root;
}

/** A file, or a directory without a CSV: each object by the validators for its kind. */
export async function validateLonePath(path: string): Promise<ValidationResult> {
  const { objects, problems } = await loadManifestObjects(path);
  return validateLoneObjects(path, objects, problems);
}
