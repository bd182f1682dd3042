/**
 * Renders one operator package directory into FBC: either the package-manifest layout
 * (`<pkg>/<pkg>.package.yaml` + one directory per version) or the bundle layout (version
 * directories with `manifests/` + `metadata/annotations.yaml`). Channels come from
 * `package.yaml` (walking from each `currentCSV` along `replaces`/`skips`) or from the bundles'
 * channel annotations. `<pkg>/ci.yaml` `updateGraph: semver-mode` recomputes `replaces` by
 * semver order within each channel; `replaces-mode` (the default) keeps the CSVs' own edges.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { BinnacleError, InputError } from '../util/errors.js';
import {
  SCHEMA_CHANNEL,
  SCHEMA_PACKAGE,
  emptyDeclarativeConfig,
  type Channel,
  type ChannelEntry,
  type DeclarativeConfig,
  type Package,
} from '../declcfg/index.js';
import { findPackageManifestFile, readPackageManifest, walkFromHead, type PackageManifest } from '../bundle/package-manifest.js';
import { readBundleDir, type BundleDirInfo, type BundleRenderer } from './bundle-dir.js';
import { parseStrictSemver } from '../catalog/model.js';
import { readAhead } from '../util/read-ahead.js';

// The package file's reader lives with the bundle loader, which needs it for a lone version directory.
export { findPackageManifestFile, readPackageManifest, type PackageManifest } from '../bundle/package-manifest.js';

export type UpdateGraphMode = 'replaces-mode' | 'semver-mode';

/** A bundle directory of the package that could not be read, and why. */
export interface BundleFailure {
  dir: string;
  code: string;
  message: string;
}

export interface PackageDirFbcResult {
  config: DeclarativeConfig;
  packageName: string;
  mode: UpdateGraphMode;
  /** Bundles that could not be read; when any exist the package is rejected. */
  failures: BundleFailure[];
  /** Bundles left out because no channel reaches them. */
  unreachable: string[];
}

/** Reads `ci.yaml`'s `updateGraph`; tolerant of the stray `---` the corpus has after values. */
export async function readUpdateGraphMode(dir: string): Promise<UpdateGraphMode> {
  let text: string;
  try {
    text = await readFile(path.join(dir, 'ci.yaml'), 'utf8');
  } catch {
    return 'replaces-mode';
  }
  const m = /^updateGraph:\s*["']?([A-Za-z-]+?)["']?\s*(?:---.*)?$/m.exec(text);
  const mode = m?.[1];
  if (mode === undefined) return 'replaces-mode';
  if (mode !== 'replaces-mode' && mode !== 'semver-mode') {
    throw new InputError('CI_UPDATE_GRAPH', `unknown mode "${mode}", expected replaces-mode or semver-mode`, { file: path.join(dir, 'ci.yaml'), field: 'updateGraph' });
  }
  return mode;
}

function entryOf(b: BundleDirInfo): ChannelEntry {
  const e: ChannelEntry = { name: b.name };
  if (b.replaces !== undefined) e.replaces = b.replaces;
  if (b.skips.length > 0) e.skips = [...b.skips];
  if (b.skipRange !== undefined) e.skipRange = b.skipRange;
  return e;
}

function compareVersions(a: BundleDirInfo, b: BundleDirInfo): number {
  const va = parseStrictSemver(a.version);
  const vb = parseStrictSemver(b.version);
  if (va === undefined || vb === undefined) return a.name < b.name ? -1 : 1;
  return va.compare(vb);
}

/** semver-mode: each bundle replaces the next lower version in its channel. */
function semverEntries(members: BundleDirInfo[]): ChannelEntry[] {
  const sorted = [...members].sort(compareVersions);
  return sorted.map((b, i) => {
    const e: ChannelEntry = { name: b.name };
    const prev = sorted[i - 1];
    if (prev !== undefined) e.replaces = prev.name;
    const skips = b.skips.filter((s) => s !== e.replaces);
    if (skips.length > 0) e.skips = skips;
    if (b.skipRange !== undefined) e.skipRange = b.skipRange;
    return e;
  });
}

export interface PackageDirOptions {
  renderBundle: BundleRenderer;
  /** Image reference for each bundle, when the caller knows where bundles are published. */
  imageFor?: (pkg: string, bundle: BundleDirInfo) => string | undefined;
}

/** The directories of a package that hold a bundle (a CSV, or manifests/ + metadata/). */
export async function bundleDirsOf(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.isDirectory() && !e.name.startsWith('.')) out.push(path.join(dir, e.name));
  }
  return out;
}

interface LoadedBundles {
  byName: Map<string, BundleDirInfo>;
  failures: BundleFailure[];
}

/** Bundle directories read ahead of the one being parsed: a few suffice to keep the thread busy. */
const BUNDLES_AHEAD = 2;

async function loadBundles(dir: string, packageName: string): Promise<LoadedBundles> {
  const failures: BundleFailure[] = [];
  const byName = new Map<string, BundleDirInfo>();
  // The next bundles' files are read while this one is parsed (util/read-ahead.ts).
  const reads = readAhead(await bundleDirsOf(dir), BUNDLES_AHEAD, async (bdir): Promise<BundleDirInfo | BundleFailure> => {
    try {
      return await readBundleDir(bdir, packageName, { packageContext: false });
    } catch (err) {
      if (!(err instanceof BinnacleError)) throw err;
      return { dir: bdir, code: err.code, message: err.message };
    }
  });
  for await (const b of reads) {
    if ('code' in b) {
      failures.push(b);
      continue;
    }
    const other = byName.get(b.name);
    if (other !== undefined) failures.push({ dir: b.dir, code: 'BUNDLE_DUPLICATE', message: `${b.dir}: CSV name "${b.name}" is also used in ${other.dir}` });
    else byName.set(b.name, b);
  }
  return { byName, failures };
}

/** Channel name → member bundles: from package.yaml heads when there is one, else annotations. */
function channelMembers(manifest: PackageManifest | undefined, byName: Map<string, BundleDirInfo>, dir: string, failures: BundleFailure[]): Map<string, BundleDirInfo[]> {
  const members = new Map<string, BundleDirInfo[]>();
  if (manifest !== undefined) {
    for (const c of manifest.channels) {
      if (!byName.has(c.currentCSV)) {
        failures.push({ dir, code: 'CHANNEL_HEAD_MISSING', message: `${manifest.file}: channel "${c.name}" currentCSV "${c.currentCSV}" is not a bundle of this package` });
        continue;
      }
      members.set(c.name, walkFromHead(c.currentCSV, byName));
    }
    return members;
  }
  for (const b of byName.values()) {
    if (b.channels.length === 0) failures.push({ dir: b.dir, code: 'BUNDLE_NO_CHANNELS', message: `${b.dir}: bundle declares no channels (operators.operatorframework.io.bundle.channels.v1)` });
    for (const c of b.channels) members.set(c, [...(members.get(c) ?? []), b]);
  }
  return members;
}

function pickDefaultChannel(manifest: PackageManifest | undefined, byName: Map<string, BundleDirInfo>, members: Map<string, BundleDirInfo[]>): string | undefined {
  if (manifest?.defaultChannel !== undefined) return manifest.defaultChannel;
  // Bundle layout: the newest bundle's default-channel annotation wins, like the registry did.
  const newest = [...byName.values()].sort(compareVersions).reverse().find((b) => b.defaultChannel !== undefined && b.defaultChannel !== '');
  return newest?.defaultChannel ?? (members.size === 1 ? [...members.keys()][0] : undefined);
}

function packageRecord(name: string, defaultChannel: string | undefined, members: Map<string, BundleDirInfo[]>): Package {
  const pkg: Package = { schema: SCHEMA_PACKAGE, name };
  if (defaultChannel === undefined) return pkg;
  pkg.defaultChannel = defaultChannel;
  // Icon and description come from the head of the default channel, as opm does.
  const head = [...(members.get(defaultChannel) ?? [])].sort(compareVersions).at(-1);
  if (head?.description !== undefined && head.description !== '') pkg.description = head.description;
  if (head?.icon !== undefined) pkg.icon = head.icon;
  return pkg;
}

/** Renders one package directory. Throws `InputError` only for package-level files. */
export async function fbcFromPackageDir(dir: string, opts: PackageDirOptions): Promise<PackageDirFbcResult> {
  const manifestFile = await findPackageManifestFile(dir);
  const manifest = manifestFile === undefined ? undefined : await readPackageManifest(manifestFile);
  const mode = await readUpdateGraphMode(dir);
  const { byName, failures } = await loadBundles(dir, manifest?.packageName ?? path.basename(dir));
  const packageName = manifest?.packageName ?? [...byName.values()].find((b) => b.annotationPackage !== undefined)?.annotationPackage ?? path.basename(dir);
  for (const b of byName.values()) {
    if (b.annotationPackage !== undefined && b.annotationPackage !== packageName) {
      failures.push({ dir: b.dir, code: 'BUNDLE_PACKAGE_MISMATCH', message: `${b.dir}/metadata/annotations.yaml: ${b.annotationPackage} does not match package "${packageName}"` });
    }
  }
  const members = channelMembers(manifest, byName, dir, failures);
  const cfg = emptyDeclarativeConfig();
  cfg.packages.push(packageRecord(packageName, pickDefaultChannel(manifest, byName, members), members));
  const included = new Set<string>();
  for (const [name, list] of [...members.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const entries = mode === 'semver-mode' ? semverEntries(list) : [...list].sort(compareVersions).map(entryOf);
    for (const e of entries) included.add(e.name);
    const channel: Channel = { schema: SCHEMA_CHANNEL, package: packageName, name, entries };
    cfg.channels.push(channel);
  }
  const unreachable: string[] = [];
  for (const b of [...byName.values()].sort((x, y) => (x.name < y.name ? -1 : 1))) {
    if (!included.has(b.name)) {
      unreachable.push(b.name);
      continue;
    }
    const image = opts.imageFor?.(packageName, b);
    cfg.bundles.push(await opts.renderBundle(b, image === undefined ? { packageName } : { packageName, image }));
  }
  return { config: cfg, packageName, mode, failures, unreachable };
}
