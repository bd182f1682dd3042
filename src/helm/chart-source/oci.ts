/**
 * Charts in OCI registries, through src/oci's RegistryClient. Helm stores a chart as an artifact:
 * a manifest whose config has media type `application/vnd.cncf.helm.config.v1+json` and whose
 * chart layer (`application/vnd.cncf.helm.chart.content.v1.tar+gzip`, or the legacy
 * `application/tar+gzip`) is the `.tgz` itself, under the tag = chart version with `+` as `_`.
 * A range is resolved against the tags list, as `helm pull --version` does.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import semver from 'semver';
import { BinnacleError } from '../../util/errors.js';
import { MediaType, RegistryClient, credentialsFromAuthFiles, defaultAuthFiles, verifyImageSignature, type Descriptor, type ImageManifest, type ImageReference } from '../../oci/index.js';
import { readArchiveChartMetadata } from './chart-file.js';
import { cachedArchive, lookupPin, rememberPin, storeArchive } from './cache.js';
import { ChartSourceError, NoMatchingVersionError, type ChartSourceCode } from './errors.js';
import { describeChartRef, ociBase, parseOciLocation, type OciChartRef, type OciLocation } from './reference.js';
import { DEFAULT_MAX_ARCHIVE_BYTES, type ChartSourceOptions, type FetchedChart, type ListVersionsOptions } from './types.js';
import { ociTagToVersion, sameChartVersion, selectChartVersion, sortChartVersions, versionToOciTag } from './version.js';

export const HelmMediaType = {
  config: MediaType.helmConfig,
  chart: MediaType.helmChart,
  legacyChart: MediaType.helmChartLegacy,
  provenance: MediaType.helmProvenance,
} as const;

/** Where `helm registry login` keeps credentials (docker config format). */
export function helmRegistryConfig(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HELM_REGISTRY_CONFIG !== undefined && env.HELM_REGISTRY_CONFIG !== '') return env.HELM_REGISTRY_CONFIG;
  const config = env.HELM_CONFIG_HOME ?? (env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? join(env.XDG_CONFIG_HOME, 'helm') : join(homedir(), '.config', 'helm'));
  return join(config, 'registry', 'config.json');
}

function clientFor(ref: OciChartRef, opts: ListVersionsOptions): RegistryClient {
  if (opts.registryClient !== undefined) return opts.registryClient;
  return new RegistryClient({
    // A chart is read where the cluster admin's registries.conf sends it, as images are.
    registries: 'system',
    ...(ref.insecure === true ? { insecure: true } : {}),
    // Docker's credentials first, then those of `helm registry login`.
    auth: opts.auth ?? credentialsFromAuthFiles([...defaultAuthFiles(), helmRegistryConfig()]),
    ...(opts.logger === undefined ? {} : { logger: opts.logger }),
  });
}

/** A registry failure in chart terms; errors that are already ours pass through. */
function ociFailure(err: unknown, ref: string): unknown {
  if (err instanceof ChartSourceError || !(err instanceof BinnacleError)) return err;
  const map: Record<string, ChartSourceCode | undefined> = {
    OCI_NOT_FOUND: 'HELM_CHART_NOT_FOUND',
    OCI_UNREACHABLE: 'HELM_CHART_UNREACHABLE',
    OCI_TIMEOUT: 'HELM_CHART_UNREACHABLE',
    OCI_UNAUTHORIZED: 'HELM_CHART_DENIED',
    OCI_DENIED: 'HELM_CHART_DENIED',
    OCI_AUTH: 'HELM_CHART_DENIED',
    OCI_DIGEST_MISMATCH: 'HELM_CHART_DIGEST_MISMATCH',
    OCI_SIZE_MISMATCH: 'HELM_CHART_DIGEST_MISMATCH',
    OCI_TOO_LARGE: 'HELM_CHART_TOO_LARGE',
  };
  return new ChartSourceError(map[err.code] ?? 'HELM_CHART_REGISTRY', ref, err.message, { cause: err });
}

async function oci<T>(ref: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw ociFailure(err, ref);
  }
}

function imageRef(loc: OciLocation, tag: string | undefined, digest: string | undefined): ImageReference {
  return { registry: loc.registry, repository: loc.repository, tag, digest };
}

/** Every version the repository has a tag for, highest first (tags that are not versions are left out). */
export async function listOciVersions(ref: OciChartRef, opts: ListVersionsOptions): Promise<string[]> {
  const loc = parseOciLocation(ref.ref);
  const label = describeChartRef(ref);
  const tags = await oci(label, () => clientFor(ref, opts).listTags(imageRef(loc, undefined, undefined)));
  return sortChartVersions(tags.map(ociTagToVersion)).valid;
}

function isChartManifest(m: ImageManifest): boolean {
  return m.config.mediaType === HelmMediaType.config;
}

/** The chart manifest a tag or digest names; an index is searched for its chart manifest. */
async function chartManifest(client: RegistryClient, loc: OciLocation, ref: ImageReference, label: string): Promise<{ manifest: ImageManifest; digest: string }> {
  const top = await oci(label, () => client.getManifest(ref));
  if (top.manifest.kind === 'manifest') return { manifest: top.manifest, digest: top.digest };
  for (const child of top.manifest.manifests.slice(0, 16)) {
    const m = await oci(label, () => client.getManifest(imageRef(loc, undefined, child.digest)));
    if (m.manifest.kind === 'manifest' && isChartManifest(m.manifest)) return { manifest: m.manifest, digest: top.digest };
  }
  throw new ChartSourceError('HELM_CHART_NOT_A_CHART', label, 'the reference names an image index without a Helm chart manifest in it');
}

function chartLayer(manifest: ImageManifest, label: string): Descriptor {
  if (!isChartManifest(manifest)) {
    throw new ChartSourceError(
      'HELM_CHART_NOT_A_CHART',
      label,
      `this artifact is not a Helm chart: its config media type is "${manifest.config.mediaType}", not ${HelmMediaType.config} (is it a container image?)`,
    );
  }
  const layers = manifest.layers.filter((l) => l.mediaType === HelmMediaType.chart || l.mediaType === HelmMediaType.legacyChart);
  const layer = layers[0];
  if (layer === undefined || layers.length > 1) {
    throw new ChartSourceError('HELM_CHART_NOT_A_CHART', label, `expected exactly one chart layer (${HelmMediaType.chart}), found ${layers.length}`);
  }
  return layer;
}

/** An exact version without a tag: what exists instead, when the registry will list it. */
async function missingVersion(client: RegistryClient, loc: OciLocation, label: string, version: string, notFound: ChartSourceError): Promise<ChartSourceError> {
  try {
    const tags = await client.listTags(imageRef(loc, undefined, undefined));
    return new NoMatchingVersionError(label, version, sortChartVersions(tags.map(ociTagToVersion)).valid);
  } catch {
    return notFound;
  }
}

function pinKey(loc: OciLocation, manifestDigest: string): string {
  return `oci\n${loc.registry}/${loc.repository}@${manifestDigest}`;
}

/** What a reference asks the registry for: its tag (or digest), and the version the tag was chosen for. */
interface Target {
  tag: string | undefined;
  /** Set when the tag was derived from a version: the chart in it must be that version. */
  selected: string | undefined;
  /** The version was exact, so no tags list was read. */
  exact: boolean;
}

async function resolveTarget(client: RegistryClient, loc: OciLocation, ref: OciChartRef, label: string): Promise<Target> {
  if (loc.digest !== undefined || loc.tag !== undefined) return { tag: loc.tag, selected: undefined, exact: false };
  if (ref.version !== undefined && semver.valid(ref.version) === ref.version) {
    // An exact version is its tag, as Helm takes it: no tags list needed (some registries refuse to list).
    return { tag: versionToOciTag(ref.version), selected: ref.version, exact: true };
  }
  const tags = await oci(label, () => client.listTags(imageRef(loc, undefined, undefined)));
  const versions = sortChartVersions(tags.map(ociTagToVersion)).valid;
  const selected = selectChartVersion(versions, ref.version);
  if (selected === undefined) throw new NoMatchingVersionError(label, ref.version ?? '*', versions);
  return { tag: versionToOciTag(selected), selected, exact: false };
}

/** A digest reference fetched before: answered from the cache, without the network. */
async function pinnedHit(ref: OciChartRef, loc: OciLocation, opts: ChartSourceOptions): Promise<FetchedChart | undefined> {
  if (loc.digest === undefined) return undefined;
  const hit = await lookupPin(opts.cacheDir, pinKey(loc, loc.digest));
  if (hit === undefined) return undefined;
  opts.logger?.debug({ chart: ref.ref, digest: hit.record.digest }, 'pinned chart already cached');
  const { digest, name, version, appVersion } = hit.record;
  const source = `${ociBase(loc)}${loc.tag === undefined ? '' : `:${loc.tag}`}@${loc.digest}`;
  return { path: hit.path, kind: 'archive', digest, name, version, appVersion, ref, source, manifestDigest: loc.digest };
}

export async function fetchOciChart(ref: OciChartRef, opts: ChartSourceOptions): Promise<FetchedChart> {
  const loc = parseOciLocation(ref.ref);
  const label = describeChartRef(ref);
  const maxBytes = opts.maxArchiveBytes ?? DEFAULT_MAX_ARCHIVE_BYTES;
  // A verified fetch always asks the registry for the signature: the cache is not proof of one.
  const hit = opts.verifyKeys === undefined ? await pinnedHit(ref, loc, opts) : undefined;
  if (hit !== undefined) return hit;

  const client = clientFor(ref, opts);
  const { tag, selected, exact } = await resolveTarget(client, loc, ref, label);
  let found: { manifest: ImageManifest; digest: string };
  try {
    found = await chartManifest(client, loc, imageRef(loc, loc.digest === undefined ? tag : undefined, loc.digest), label);
  } catch (err) {
    if (exact && err instanceof ChartSourceError && err.code === 'HELM_CHART_NOT_FOUND') throw await missingVersion(client, loc, label, ref.version ?? '', err);
    throw err;
  }
  const { manifest, digest: manifestDigest } = found;
  if (opts.verifyKeys !== undefined) await verifyImageSignature(client, imageRef(loc, tag, undefined), manifestDigest, opts.verifyKeys);
  const layer = chartLayer(manifest, label);
  if (layer.size > maxBytes) throw new ChartSourceError('HELM_CHART_TOO_LARGE', label, `the chart layer is ${layer.size} bytes, over the limit of ${maxBytes}`);

  const pinned = imageRef(loc, undefined, manifestDigest);
  const path =
    (await cachedArchive(opts.cacheDir, layer.digest)) ??
    (await oci(label, async () => {
      const blob = await client.getBlob(pinned, layer.digest, layer.size);
      return (await storeArchive(opts.cacheDir, blob, { ref: label, from: `layer ${layer.digest}`, maxBytes, expectedDigest: layer.digest })).path;
    }));
  const meta = await readArchiveChartMetadata(path, label, maxBytes);
  if (selected !== undefined && !sameChartVersion(meta.version, selected)) {
    throw new ChartSourceError('HELM_CHART_MISMATCH', label, `tag "${tag ?? ''}" was chosen for version ${selected}, but the chart in it says version ${meta.version}`);
  }
  const source = `${ociBase(loc)}${tag === undefined ? '' : `:${tag}`}@${manifestDigest}`;
  const record = { digest: layer.digest, name: meta.name, version: meta.version, ...(meta.appVersion === undefined ? {} : { appVersion: meta.appVersion }) };
  await rememberPin(opts.cacheDir, pinKey(loc, manifestDigest), record);
  opts.logger?.debug({ chart: ref.ref, source, digest: layer.digest }, 'chart fetched');
  return { path, kind: 'archive', digest: layer.digest, name: meta.name, version: meta.version, appVersion: meta.appVersion, ref, source, manifestDigest };
}
