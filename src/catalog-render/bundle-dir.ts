/**
 * What the catalog needs from one `registry+v1` bundle directory (bundle layout, or a
 * package-manifest version directory), loaded with `src/bundle`'s `loadBundleDir`: the
 * upgrade-graph facts from the CSV (`replaces`, `skips`, `olm.skipRange`), the channels its
 * annotations declare, the package-level icon and description, and the `olm.bundle` record
 * (`toFbcBundle`, with opm's derived properties).
 */
import { loadBundleDir, toFbcBundle, type RegistryV1Bundle } from '../bundle/index.js';
import type { Bundle, Icon } from '../declcfg/index.js';
import { isRecord } from '../catalog/decode.js';

export { ANNOTATION_MEDIATYPE } from '../bundle/index.js';

export interface BundleDirInfo {
  dir: string;
  /** CSV `metadata.name`: the bundle's name in the catalog. */
  name: string;
  version: string;
  replaces: string | undefined;
  skips: string[];
  skipRange: string | undefined;
  /** From `metadata/annotations.yaml`, when the directory has one. */
  annotationPackage: string | undefined;
  channels: string[];
  defaultChannel: string | undefined;
  icon: Icon | undefined;
  description: string | undefined;
  bundle: RegistryV1Bundle;
}

/** Turns a loaded bundle directory into its `olm.bundle` record. */
export type BundleRenderer = (info: BundleDirInfo, opts: { image?: string; packageName: string }) => Promise<Bundle> | Bundle;

function iconOf(raw: Record<string, unknown>): Icon | undefined {
  const spec = isRecord(raw.spec) ? raw.spec : {};
  const first: unknown = Array.isArray(spec.icon) ? spec.icon[0] : undefined;
  if (!isRecord(first)) return undefined;
  return {
    base64data: typeof first.base64data === 'string' ? first.base64data : '',
    mediatype: typeof first.mediatype === 'string' ? first.mediatype : '',
  };
}

/** Loads one bundle directory; throws `BundleLoadError` (an `InputError`) when it cannot. */
export async function readBundleDir(dir: string, packageName?: string): Promise<BundleDirInfo> {
  const bundle = await loadBundleDir(dir, packageName === undefined ? {} : { packageName });
  const { csv } = bundle;
  const spec = isRecord(csv.raw.spec) ? csv.raw.spec : {};
  const a = bundle.annotations;
  return {
    dir,
    name: bundle.name,
    version: csv.version,
    replaces: csv.replaces === '' ? undefined : csv.replaces,
    skips: csv.skips,
    skipRange: csv.skipRange === '' ? undefined : csv.skipRange,
    annotationPackage: a?.packageName === '' ? undefined : a?.packageName,
    channels: a?.channels ?? [],
    defaultChannel: a?.defaultChannel === '' ? undefined : a?.defaultChannel,
    icon: iconOf(csv.raw),
    description: typeof spec.description === 'string' ? spec.description : undefined,
    bundle,
  };
}

/** The `olm.bundle` record as opm renders it (`src/bundle`'s `toFbcBundle`). */
export const defaultBundleRenderer: BundleRenderer = (info, opts) => toFbcBundle(info.bundle, opts);
