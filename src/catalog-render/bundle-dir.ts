/**
 * What the catalog needs from one `registry+v1` bundle directory (bundle layout, or a
 * package-manifest version directory), loaded with `src/bundle`'s `loadBundleDir`: the
 * upgrade-graph facts from the CSV (`replaces`, `skips`, `olm.skipRange`), the channels its
 * annotations declare, the package-level icon and description, and the `olm.bundle` record
 * (`toFbcBundle`, with opm's derived properties).
 */
import { loadBundleDir, toFbcBundle, type RegistryV1Bundle } from '../bundle/index.js';
import { SCHEMA_CHANNEL, SCHEMA_PACKAGE, type Bundle, type ChannelEntry, type DeclarativeConfig, type Icon } from '../declcfg/index.js';
import { isRecord } from '../util/object.js';

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
  /** From the annotations, else from the package file beside a package-manifest version directory. */
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

/**
 * Loads one bundle directory; throws `BundleLoadError` (an `InputError`) when it cannot. A caller
 * that reads the package file itself passes `packageContext: false` (see `LoadOptions`).
 */
export async function readBundleDir(dir: string, packageName?: string, opts: { packageContext?: boolean } = {}): Promise<BundleDirInfo> {
  const bundle = await loadBundleDir(dir, { ...(packageName === undefined ? {} : { packageName }), ...opts });
  const { csv } = bundle;
  const spec = isRecord(csv.raw.spec) ? csv.raw.spec : {};
  const a = bundle.annotations;
  const pm = bundle.packageManifest;
  return {
    dir,
    name: bundle.name,
    version: csv.version,
    replaces: csv.replaces === '' ? undefined : csv.replaces,
    skips: csv.skips,
    skipRange: csv.skipRange === '' ? undefined : csv.skipRange,
    annotationPackage: a?.packageName === '' ? undefined : a?.packageName,
    channels: a?.channels ?? pm?.channels ?? [],
    defaultChannel: (a === undefined ? pm?.defaultChannel : a.defaultChannel) || undefined,
    icon: iconOf(csv.raw),
    description: typeof spec.description === 'string' ? spec.description : undefined,
    bundle,
  };
}

/** The `olm.bundle` record as opm renders it (`src/bundle`'s `toFbcBundle`). */
export const defaultBundleRenderer: BundleRenderer = (info, opts) => toFbcBundle(info.bundle, opts);

/** The channel entry of a bundle, with its CSV's upgrade edges. */
export function channelEntryOfInfo(info: BundleDirInfo): ChannelEntry {
  return {
    name: info.name,
    ...(info.replaces === undefined ? {} : { replaces: info.replaces }),
    ...(info.skips.length > 0 ? { skips: [...info.skips] } : {}),
    ...(info.skipRange === undefined ? {} : { skipRange: info.skipRange }),
  };
}

/**
 * Adds one bundle to `cfg` (`run bundle`, publishing a lone version directory): its package if
 * new (default channel: the bundle's when it is one of its channels, else its first channel), its
 * entry in each of its channels (`fallbackChannel` when it declares none), its `olm.bundle`
 * record, which is returned.
 */
export async function addBundleToConfig(cfg: DeclarativeConfig, info: BundleDirInfo, o: { packageName: string; image: string; fallbackChannel?: string }): Promise<Bundle> {
  const pkg = o.packageName;
  const channels = info.channels.length > 0 ? info.channels : [info.defaultChannel ?? o.fallbackChannel ?? 'stable'];
  if (!cfg.packages.some((p) => p.name === pkg)) {
    const def = info.defaultChannel !== undefined && channels.includes(info.defaultChannel) ? info.defaultChannel : channels[0];
    cfg.packages.push({ schema: SCHEMA_PACKAGE, name: pkg, ...(def === undefined ? {} : { defaultChannel: def }), ...(info.icon === undefined ? {} : { icon: info.icon }) });
  }
  cfg.bundles = cfg.bundles.filter((b) => !(b.package === pkg && b.name === info.name));
  const record = await defaultBundleRenderer(info, { image: o.image, packageName: pkg });
  cfg.bundles.push(record);
  for (const name of channels) {
    const ch = cfg.channels.find((c) => c.package === pkg && c.name === name);
    if (ch === undefined) cfg.channels.push({ schema: SCHEMA_CHANNEL, package: pkg, name, entries: [channelEntryOfInfo(info)] });
    else ch.entries = [...ch.entries.filter((e) => e.name !== info.name), channelEntryOfInfo(info)];
  }
  return record;
}
