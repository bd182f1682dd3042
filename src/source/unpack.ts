/**
 * `unpackSource`: one source in, one content-addressed tree out. Each kind fetches into a work
 * directory; commitTree then scans, digests and renames it into `trees/<hex>`. Pinned references
 * (image digests, git commits, http with sha256) that were unpacked before are answered from the
 * cache without touching the network.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseReference } from '../oci/index.js';
import { BinnacleError } from '../util/errors.js';
import { redactUrl } from '../util/redact.js';
import { bundleSourceFrom, bundleSourceToJson } from './validate.js';
import { commitTree, immutableKey, lookupRef, ociCacheDir, rememberRef, workDir } from './cache.js';
import { fetchConfigMaps } from './configmaps.js';
import { fetchGit } from './git.js';
import { fetchHttp } from './http.js';
import { pullImage, pullSecretCredentials, verifiedImageRef } from './image.js';
import { basicAuthFromSecret, secretReader, type SecretReader } from './secrets.js';
import { fetchLocal } from './local.js';
import { DEFAULT_MAX_TREE_BYTES, copyTree } from './tree.js';
import type { BundleSource, GitSource, HttpSource, ResolvedSource, UnpackOptions, UnpackedSource } from './types.js';

/** What we can know about a source before fetching it: its cache key, if it is pinned. */
function pinnedKey(source: BundleSource): string | undefined {
  if (source.type === 'image') {
    const digest = parseReference(source.ref).digest;
    return digest === undefined ? undefined : immutableKey({ type: 'image', image: { ref: source.ref, digest } });
  }
  if (source.type === 'git' && source.ref.commit !== undefined) {
    return immutableKey({ type: 'git', git: { repository: redactUrl(source.repository), commit: source.ref.commit } }, source.directory ?? '');
  }
  if (source.type === 'http' && source.sha256 !== undefined) {
    return immutableKey({ type: 'http', http: { url: redactUrl(source.url), sha256: source.sha256 } });
  }
  return undefined;
}

/** Whether the source reads this machine's own files rather than something remote. */
function readsHostPaths(source: BundleSource): boolean {
  return source.type === 'local' || (source.type === 'git' && /^file:/i.test(source.repository));
}

/** Who reads the Secrets a source names: the reader given, else the client as itself. */
function secretsOf(opts: UnpackOptions): SecretReader | undefined {
  if (opts.secrets !== undefined) return opts.secrets;
  return opts.client === undefined ? undefined : secretReader(opts.client, 'the client\'s own identity');
}

/** The basic-auth credentials an http or git source's `secret` names, read by the caller's reader. */
async function sourceCredentials(source: HttpSource | GitSource, opts: UnpackOptions): Promise<{ username: string; password: string } | undefined> {
  if (source.secret === undefined) return undefined;
  const reader = secretsOf(opts);
  if (reader === undefined) throw new BinnacleError('input', 'SOURCE_NO_CLIENT', `a ${source.type} source with a secret needs a connection to the cluster`);
  return basicAuthFromSecret(reader, source.secret, `${source.type} credentials`);
}

/** Reads every Secret the source names (which checks its reader may); an http or git source's credentials. */
async function readSourceSecrets(source: BundleSource, opts: UnpackOptions): Promise<Credentials> {
  if (source.type === 'http' || source.type === 'git') return sourceCredentials(source, opts);
  if (source.type !== 'image' || source.pullSecret === undefined) return undefined;
  const reader = secretsOf(opts);
  if (reader === undefined) throw new BinnacleError('input', 'SOURCE_NO_CLIENT', 'an image source with a pullSecret needs a connection to the cluster');
  await pullSecretCredentials(reader, source.pullSecret);
  return undefined;
}

/** A pinned source unpacked before, from the cache. */
async function cachedTree(source: BundleSource, key: string, opts: UnpackOptions): Promise<UnpackedSource | undefined> {
  const hit = await lookupRef(opts.cacheDir, key);
  if (hit === undefined) return undefined;
  opts.logger.debug({ digest: hit.digest }, 'source already unpacked');
  // The same image may have been pulled first under another name: report the one asked for.
  if (source.type === 'image' && hit.resolved.image !== undefined) return { ...hit, resolved: { type: 'image', image: { ref: source.ref, digest: hit.resolved.image.digest } } };
  return hit;
}

export async function unpackSource(input: BundleSource, opts: UnpackOptions): Promise<UnpackedSource> {
  // Callers may build a BundleSource in code: hold it to the same rules as one from a CRD
  // (and take its normal form, e.g. a lower-case sha256).
  const source = bundleSourceFrom(bundleSourceToJson(input), { field: 'source' });
  if (source.type !== 'image' || source.verify === undefined) return unpackParsed(source, opts);
  // Verified before the cache is asked: cached content is served only to a policy its signature satisfies.
  const pinned = await verifiedImageRef({ ...source, verify: source.verify }, { secrets: secretsOf(opts), logger: opts.logger });
  const unpacked = await unpackParsed({ ...source, ref: pinned }, opts);
  return { ...unpacked, resolved: { type: 'image', image: { ref: source.ref, digest: unpacked.resolved.image?.digest ?? '' } } };
}

async function unpackParsed(source: BundleSource, opts: UnpackOptions): Promise<UnpackedSource> {
  if (readsHostPaths(source) && opts.allowHostPaths !== true) {
    throw new BinnacleError('input', 'SOURCE_HOST_PATH_DENIED', `${describeSource(source)}: sources that read this machine's files are not allowed here`);
  }
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_TREE_BYTES;
  // Secrets are read before the cache is asked: a source that names a Secret its reader may not
  // read fails, even when the same content was fetched before with someone else's Secret.
  const credentials = await readSourceSecrets(source, opts);
  const key = pinnedKey(source);
  const hit = key === undefined ? undefined : await cachedTree(source, key, opts);
  if (hit !== undefined) return hit;
  const work = await workDir(opts.cacheDir, source.type);
  try {
    const limits = { maxBytes, what: describeSource(source) };
    const { tree, resolved, extra } = await fetchTree(source, work, opts, credentials, limits);
    opts.onProgress?.({ phase: 'commit' });
    const { dir, digest } = await commitTree(opts.cacheDir, tree, limits);
    const unpacked: UnpackedSource = { dir, digest, resolved };
    const keys = new Set([key, immutableKey(resolved, extra)]);
    for (const k of keys) if (k !== undefined) await rememberRef(opts.cacheDir, k, unpacked);
    opts.logger.debug({ source: describeSource(source), digest }, 'source unpacked');
    return unpacked;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

type Credentials = { username: string; password: string } | undefined;
type TreeLimits = { maxBytes: number; what: string };
/** A fetched tree in the work dir, what it resolved to, and (git) the directory within it that is the bundle. */
type FetchedTree = { tree: string; resolved: ResolvedSource; extra: string };

/** Fetches the source's files into `work`. */
async function fetchTree(source: BundleSource, work: string, opts: UnpackOptions, credentials: Credentials, limits: TreeLimits): Promise<FetchedTree> {
  switch (source.type) {
    case 'image':
      return pullTree(source, work, opts, limits);
    case 'git':
      return gitTree(source, work, opts, credentials);
    case 'http':
      return httpTree(source, work, opts, credentials, limits.maxBytes);
    case 'configMaps':
      return { tree: (await fetchConfigMaps(source, join(work, 'tree'), { client: opts.client, maxBytes: limits.maxBytes })).tree, resolved: { type: 'configMaps' }, extra: '' };
    case 'local':
      return { tree: (await fetchLocal(source, join(work, 'tree'), limits.maxBytes)).tree, resolved: { type: 'local' }, extra: '' };
  }
}

async function pullTree(source: Extract<BundleSource, { type: 'image' }>, work: string, opts: UnpackOptions, limits: TreeLimits): Promise<FetchedTree> {
  opts.onProgress?.({ phase: 'pull' });
  const pulled = await pullImage(source, {
    ociCacheDir: ociCacheDir(opts.cacheDir),
    secrets: secretsOf(opts),
    logger: opts.logger,
    maxBytes: limits.maxBytes,
    ...(opts.onProgress === undefined ? {} : { onProgress: opts.onProgress }),
  });
  // The oci cache keeps its own tree; ours is a copy so its digest and lifetime are ours.
  const tree = join(work, 'tree');
  await copyTree(pulled.dir, tree, limits);
  return { tree, resolved: { type: 'image', image: { ref: source.ref, digest: pulled.digest } }, extra: '' };
}

async function gitTree(source: Extract<BundleSource, { type: 'git' }>, work: string, opts: UnpackOptions, credentials: Credentials): Promise<FetchedTree> {
  opts.onProgress?.({ phase: 'fetch' });
  const fetched = await fetchGit(source, work, { logger: opts.logger, ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }), ...(credentials === undefined ? {} : { credentials }) });
  return { tree: fetched.tree, resolved: { type: 'git', git: { repository: redactUrl(source.repository), commit: fetched.commit } }, extra: source.directory ?? '' };
}

async function httpTree(source: Extract<BundleSource, { type: 'http' }>, work: string, opts: UnpackOptions, credentials: Credentials, maxBytes: number): Promise<FetchedTree> {
  opts.onProgress?.({ phase: 'download' });
  const fetched = await fetchHttp(source, work, {
    maxBytes,
    ...(credentials === undefined ? {} : { credentials }),
    ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
    ...(opts.onProgress === undefined ? {} : { onProgress: opts.onProgress }),
  });
  return { tree: fetched.tree, resolved: { type: 'http', http: { url: redactUrl(source.url), sha256: fetched.sha256 } }, extra: '' };
}

/** A one-line name of a source for messages and logs. */
export function describeSource(source: BundleSource): string {
  switch (source.type) {
    case 'image':
      return `image ${source.ref}`;
    case 'git': {
      const ref = source.ref.branch ?? source.ref.tag ?? source.ref.commit ?? '';
      return `git ${redactUrl(source.repository)}@${ref}${source.directory === undefined ? '' : ` (${source.directory})`}`;
    }
    case 'http':
      return `http ${redactUrl(source.url)}`;
    case 'configMaps':
      return `configMaps ${source.configMaps.map((c) => `${c.namespace}/${c.name}`).join(', ')}`;
    case 'local':
      return `local ${source.path}`;
  }
}
