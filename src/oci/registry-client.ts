/**
 * A client for the OCI distribution API (`/v2/`): manifests, blobs, uploads. It handles auth the
 * way docker does (anonymous first; on 401 follow the challenge: Basic with stored credentials,
 * or the Bearer token flow against the challenge's realm) and verifies every byte it downloads
 * against its digest.
 */
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { formatDuration, isTimeout, timeoutReason } from '../util/deadline.js';
import { BinnacleError, errorMessage, httpStatusClass } from '../util/errors.js';
import { httpRequest, networkReason, noAnswerReason, readBodyLimited, type HttpAnswer } from '../util/http-request.js';
import { proxyFailure } from '../util/proxy-env.js';
import { redactUrl } from '../util/redact.js';
import { basicAuthHeader, credentialsFromAuthFiles, parseChallenges, type AuthOption, type Credentials } from './auth.js';
import { DigestMismatchError, sha256Digest, verifyStream } from './digest.js';
import {
  MANIFEST_ACCEPT,
  parseManifestDocument,
  platformString,
  selectPlatform,
  DEFAULT_PLATFORM,
  type ImageIndex,
  type ImageManifest,
  type Platform,
} from './manifest.js';
import { DOCKER_HUB, DOCKER_HUB_API, formatReference, isSha256Digest, manifestSelector, parseReference, type ImageReference } from './reference.js';
import { insecureByConf, pullSources, registriesConf, type RegistriesConf } from './registries-conf.js';
import { isRecord } from '../util/object.js';

export interface RegistryClientOptions {
  /** Use plain http: for every host, none, or those the function picks. Default: insecureByDefault (loopback, this machine's addresses, INSECURE_REGISTRIES_ENV) or registries.conf's `insecure = true`. */
  insecure?: boolean | ((host: string) => boolean);
  /** Credentials; default: REGISTRY_AUTH_FILE, then the docker config file. */
  auth?: AuthOption;
  logger?: Logger;
  /** Largest manifest accepted, in bytes (default 4 MiB, as containerd). */
  maxManifestBytes?: number;
  /** Per-request timeout for everything but blob bodies (default 60 s). */
  timeoutMs?: number;
  /**
   * Where reads go (containers-registries.conf: a prefix moved, its mirrors in order, a blocked
   * one refused): 'system' for the file in effect (registries-conf.ts, read again when it
   * changes), or a parsed one. Writes (push) go where their reference says. Default: none.
   */
  registries?: RegistriesConf | 'system';
}

export interface ManifestResult {
  digest: string;
  mediaType: string;
  bytes: Buffer;
  manifest: ImageManifest | ImageIndex;
}

export interface ResolvedImage {
  /** The platform image's manifest digest (the index's child, or the manifest itself). */
  digest: string;
  manifest: ImageManifest;
  manifestBytes: Buffer;
  /** Set when the reference named an index / manifest list. */
  index?: ManifestResult;
}

export interface BlobSource {
  digest: string;
  size: number;
  /** Called once per attempt; a fresh body each time. */
  open: () => Readable | Buffer;
}

export type UploadOutcome = 'exists' | 'mounted' | 'uploaded';

type Actions = 'pull' | 'pull,push';

interface RequestSpec {
  ref: Pick<ImageReference, 'registry' | 'repository'>;
  /** Scopes the token must cover, e.g. `repository:foo:pull`. Empty for `/v2/`. */
  scopes: string[];
  method: string;
  /** A path under the registry (`/v2/…`) or an absolute URL (upload Location). */
  url: string;
  headers?: Record<string, string>;
  body?: () => Readable | Buffer;
  /** Status codes that are success; anything else becomes an error. */
  ok: number[];
  /** For 404s on lookups that are allowed to miss. */
  allowNotFound?: boolean;
  /** No timeout: the body is streamed by the caller. */
  streaming?: boolean;
  /** For streaming requests: the caller's own abort (an idle timer). */
  signal?: AbortSignal;
}

interface CachedToken {
  header: string;
  expiresAt: number;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/;

export function hostOf(registry: string): string {
  if (registry.startsWith('[')) return registry.slice(0, registry.indexOf(']') + 1);
  const colon = registry.lastIndexOf(':');
  return colon < 0 ? registry : registry.slice(0, colon);
}

/**
 * Registries reached over plain http besides loopback ones, as containers' registries.conf
 * `insecure = true`: `host` or `host:port`, comma-separated. The cluster admin's setting (the
 * manager's environment, `install-self --insecure-registry`), never a catalog's.
 */
export const INSECURE_REGISTRIES_ENV = 'BINNACLE_INSECURE_REGISTRIES';

/**
 * The IPv4 addresses the kernel delivers locally (Linux's local routing table, /proc/net/fib_trie:
 * each `|-- ADDRESS` followed by `/32 host LOCAL`), whatever their interface's state: a bridge
 * without ports has no carrier, and Node's networkInterfaces() leaves it out.
 */
export function localIpv4Addresses(fibTrie: string): string[] {
  const out = new Set<string>();
  let last = '';
  for (const line of fibTrie.split('\n')) {
    const node = /\|-- (\d+\.\d+\.\d+\.\d+)$/.exec(line.trim());
    if (node?.[1] !== undefined) last = node[1];
    else if (/^\/32 host LOCAL$/.test(line.trim()) && last !== '') out.add(last);
  }
  return [...out];
}

/** The addresses of this machine's (or Pod's) own interfaces, as registry hosts write them. */
function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const a of Object.values(networkInterfaces()).flat()) if (a !== undefined) out.add(a.family === 'IPv6' ? `[${a.address}]` : a.address);
  try {
    for (const a of localIpv4Addresses(readFileSync('/proc/net/fib_trie', 'utf8'))) out.add(a);
  } catch {
    // not Linux: the interfaces Node lists
  }
  return out;
}

/**
 * Plain http unless told otherwise for: loopback; an address of this machine's own interfaces
 * (the traffic never leaves it, as on loopback: a real node's registry on its bridge address);
 * and the registries INSECURE_REGISTRIES_ENV names. Everything else is https.
 */
export function insecureByDefault(registry: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const host = hostOf(registry);
  if (LOOPBACK.test(host)) return true;
  const named = (env[INSECURE_REGISTRIES_ENV] ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');
  if (named.some((n) => n === registry || n === host)) return true;
  return ownAddresses().has(host);
}

/** Whether the registries.conf in effect marks `host` plain http; a file that cannot be read says nothing here (a pull reports it). */
function insecureInConf(host: string): boolean {
  try {
    return insecureByConf(registriesConf(), host);
  } catch {
    return false;
  }
}

function repoScope(repository: string, actions: Actions): string {
  return `repository:${repository}:${actions}`;
}

function asRef(ref: ImageReference | string): ImageReference {
  return typeof ref === 'string' ? parseReference(ref) : ref;
}

/**
 * The whole body, at most `limit` bytes. A body that stops coming (the deadline, a connection
 * reset) fails as an unreachable registry does, transient: not as the invalid document its
 * caller would otherwise take the partial bytes for.
 */
function readLimited(res: HttpAnswer, limit: number, what: string, timeoutMs: number): Promise<Buffer> {
  return readBodyLimited(res, limit, timeoutMs, {
    tooLarge: (declared) => new BinnacleError('input', 'OCI_TOO_LARGE', declared === undefined ? `${what}: over the ${limit}-byte limit` : `${what}: ${declared} bytes is over the ${limit}-byte limit`),
    failed: (reason, cause) => new BinnacleError('transient', 'OCI_UNREACHABLE', `${what}: reading the answer from ${res.url.host} failed: ${reason}`, { cause }),
  });
}

/** The registry's error document, as one line: `MANIFEST_UNKNOWN: manifest unknown`. */
async function registryErrorText(res: HttpAnswer, timeoutMs: number): Promise<string> {
  let text = '';
  try {
    text = (await readLimited(res, 64 * 1024, 'error body', timeoutMs)).toString('utf8');
    const doc: unknown = JSON.parse(text);
    if (isRecord(doc) && Array.isArray(doc.errors)) {
      return doc.errors
        .map((e) => (isRecord(e) ? `${String(e.code)}: ${String(e.message)}` : String(e)))
        .join('; ');
    }
  } catch {
    // Not JSON: fall back to the raw text below.
  }
  return text.trim().slice(0, 300) || res.statusText;
}

/** `f`, asked once per registry (the default looks at the machine's addresses: not on every request). */
function memoized(f: (registry: string) => boolean): (registry: string) => boolean {
  const seen = new Map<string, boolean>();
  return (registry) => {
    const known = seen.get(registry);
    if (known !== undefined) return known;
    const v = f(registry);
    seen.set(registry, v);
    return v;
  };
}

export class RegistryClient {
  private readonly insecure: (host: string) => boolean;
  private readonly credentials: (host: string) => Credentials | undefined;
  private readonly logger: Logger | undefined;
  private readonly maxManifestBytes: number;
  private readonly timeoutMs: number;
  private readonly registries: (() => RegistriesConf) | undefined;
  /** Per registry: the Authorization header to send for a scope set ('' key = Basic for the host). */
  private readonly tokens = new Map<string, CachedToken>();

  constructor(opts: RegistryClientOptions = {}) {
    const insecure = opts.insecure;
    this.insecure =
      typeof insecure === 'function' ? insecure : insecure === undefined ? memoized((host) => insecureByDefault(host) || insecureInConf(host)) : () => insecure;
    const auth = opts.auth ?? credentialsFromAuthFiles();
    this.credentials = typeof auth === 'function' ? auth : () => auth;
    this.logger = opts.logger;
    this.maxManifestBytes = opts.maxManifestBytes ?? 4 * 1024 * 1024;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    const conf = opts.registries;
    this.registries = conf === undefined ? undefined : conf === 'system' ? () => registriesConf() : () => conf;
  }

  /**
   * A read of `ref` where registries.conf sends it: its mirrors in order, then its location; the
   * first that answers wins (a mirror without the image falls through, as containers/image does).
   * Throws REGISTRY_BLOCKED for a blocked prefix, OCI_PULL_FAILED naming every place tried.
   */
  private async read<T>(refIn: ImageReference | string, at: (ref: ImageReference) => Promise<T>, found: (v: T) => boolean = () => true): Promise<T> {
    const ref = asRef(refIn);
    const sources = this.registries === undefined ? undefined : pullSources(this.registries(), ref);
    const only = sources?.[0];
    if (sources === undefined || only === undefined || (sources.length === 1 && formatReference(only.ref) === formatReference(ref))) return at(ref);
    const failures: string[] = [];
    let answer: { value: T } | undefined;
    for (const source of sources) {
      try {
        const value = await at(source.ref);
        if (found(value)) return value;
        answer = { value };
        failures.push(`${source.role} ${formatReference(source.ref)}: not found`);
      } catch (err) {
        failures.push(`${source.role} ${formatReference(source.ref)}: ${errorMessage(err)}`);
      }
    }
    // Some place answered that it has no such thing (a HEAD's 404): that is the answer.
    if (answer !== undefined) return answer.value;
    throw new BinnacleError('transient', 'OCI_PULL_FAILED', `${formatReference(ref)} could not be read from any place registries.conf gives for it: ${failures.join('; ')}`);
  }

  /** Base URL for a registry: Docker Hub's API host differs from its name. */
  baseUrl(registry: string): string {
    const host = registry === DOCKER_HUB ? DOCKER_HUB_API : registry;
    return `${this.insecure(registry) ? 'http' : 'https'}://${host}`;
  }

  /** `GET /v2/`: the registry answers and speaks the v2 API (401 counts: auth comes per request). */
  async ping(registry: string): Promise<void> {
    const res = await this.request({ ref: { registry, repository: '' }, scopes: [], method: 'GET', url: '/v2/', ok: [200] });
    res.discard();
  }

  async getManifest(refIn: ImageReference | string, accept: readonly string[] = MANIFEST_ACCEPT): Promise<ManifestResult> {
    return this.read(refIn, (ref) => this.getManifestAt(ref, accept));
  }

  private async getManifestAt(ref: ImageReference, accept: readonly string[] = MANIFEST_ACCEPT): Promise<ManifestResult> {
    const what = `manifest ${formatReference(ref)}`;
    const res = await this.manifestRequest(ref, 'GET', accept);
    const bytes = await readLimited(res, this.maxManifestBytes, what, this.timeoutMs);
    const digest = sha256Digest(bytes);
    const expected = ref.digest ?? res.headers.get('docker-content-digest') ?? undefined;
    // A tag's manifest is checked against the digest the registry announces; a digest ref against itself.
    if (expected !== undefined && isSha256Digest(expected) && expected !== digest) throw new DigestMismatchError(what, expected, digest);
    const contentType = res.headers.get('content-type')?.split(';')[0]?.trim();
    const manifest = parseManifestDocument(what, bytes, contentType);
    return { digest, mediaType: manifest.mediaType, bytes, manifest };
  }

  /** Resolve a reference to one platform's image manifest, following an index / manifest list. */
  async resolveImage(refIn: ImageReference | string, platform: Platform = DEFAULT_PLATFORM): Promise<ResolvedImage> {
    return this.read(refIn, (ref) => this.resolveImageAt(ref, platform));
  }

  private async resolveImageAt(ref: ImageReference, platform: Platform): Promise<ResolvedImage> {
    const top = await this.getManifestAt(ref);
    if (top.manifest.kind === 'manifest') return { digest: top.digest, manifest: top.manifest, manifestBytes: top.bytes };
    const chosen = selectPlatform(top.manifest, platform);
    if (chosen === undefined) {
      const offered = top.manifest.manifests.map((m) => (m.platform ? platformString(m.platform) : '(no platform)')).join(', ');
      throw new BinnacleError('input', 'OCI_NO_PLATFORM', `${formatReference(ref)} is an index without ${platformString(platform)}; it offers: ${offered || 'nothing'}`);
    }
    const child = await this.getManifestAt({ ...ref, tag: undefined, digest: chosen.digest });
    if (child.manifest.kind !== 'manifest') {
      throw new BinnacleError('terminal', 'OCI_BAD_MANIFEST', `${formatReference(ref)}: the ${platformString(platform)} entry is itself an index`);
    }
    return { digest: child.digest, manifest: child.manifest, manifestBytes: child.bytes, index: top };
  }

  /**
   * `GET /v2/<name>/tags/list`: every tag of the repository, in the registry's order, following
   * `Link: <…>; rel="next"` pages (at most `maxPages`, each at most 4 MiB).
   */
  async listTags(refIn: ImageReference | string, opts: { maxPages?: number } = {}): Promise<string[]> {
    return this.read(refIn, (ref) => this.listTagsAt(ref, opts));
  }

  private async listTagsAt(ref: ImageReference, opts: { maxPages?: number }): Promise<string[]> {
    const what = `tags of ${ref.registry}/${ref.repository}`;
    const tags: string[] = [];
    let url: string | undefined = `/v2/${ref.repository}/tags/list`;
    for (let page = 0; url !== undefined; page++) {
      if (page >= (opts.maxPages ?? 100)) throw new BinnacleError('terminal', 'OCI_TOO_LARGE', `${what}: more than ${opts.maxPages ?? 100} pages`);
      const res = await this.request({ ref, scopes: [repoScope(ref.repository, 'pull')], method: 'GET', url, ok: [200] });
      const link = res.headers.get('link');
      let doc: unknown;
      try {
        doc = JSON.parse((await readLimited(res, 4 * 1024 * 1024, what, this.timeoutMs)).toString('utf8'));
      } catch (err) {
        if (err instanceof BinnacleError) throw err;
        throw new BinnacleError('terminal', 'OCI_REGISTRY_ERROR', `${what}: the registry answered with invalid JSON`);
      }
      const list = isRecord(doc) ? doc.tags : undefined;
      // distribution answers `"tags": null` for a repository whose tags were all deleted.
      if (list !== null && list !== undefined && !Array.isArray(list)) throw new BinnacleError('terminal', 'OCI_REGISTRY_ERROR', `${what}: "tags" is not a list`);
      for (const t of list ?? []) if (typeof t === 'string') tags.push(t);
      const next = link === null ? undefined : /<([^>]+)>\s*;\s*rel="?next"?/i.exec(link)?.[1];
      if (next === undefined) url = undefined;
      else {
        // Only pages of the same registry: credentials must not follow a link to another host.
        const base = new URL(this.baseUrl(ref.registry));
        const u = new URL(next, base);
        if (u.origin !== base.origin) throw new BinnacleError('terminal', 'OCI_REGISTRY_ERROR', `${what}: the next page is on another host (${u.origin})`);
        url = `${u.pathname}${u.search}`;
      }
    }
    return tags;
  }

  /** HEAD a manifest: its digest, media type and size, or undefined when it does not exist. */
  async headManifest(refIn: ImageReference | string): Promise<{ digest: string; mediaType: string; size: number } | undefined> {
    return this.read(refIn, (ref) => this.headManifestAt(ref), (v) => v !== undefined);
  }

  private async headManifestAt(ref: ImageReference): Promise<{ digest: string; mediaType: string; size: number } | undefined> {
    const res = await this.manifestRequest(ref, 'HEAD', MANIFEST_ACCEPT, { allowNotFound: true });
    if (res.status === 404) return undefined;
    const digest = res.headers.get('docker-content-digest') ?? ref.digest;
    if (digest === undefined) {
      throw new BinnacleError('terminal', 'OCI_REGISTRY_ERROR', `${formatReference(ref)}: the registry sent no Docker-Content-Digest for HEAD; use getManifest`);
    }
    return {
      digest,
      mediaType: res.headers.get('content-type')?.split(';')[0]?.trim() ?? '',
      size: Number(res.headers.get('content-length') ?? '0'),
    };
  }

  /**
   * Stream a blob. The stream errors (OCI_DIGEST_MISMATCH / OCI_SIZE_MISMATCH) at its end unless
   * the bytes match, so consumers must not trust what they wrote until the stream finished cleanly.
   */
  async getBlob(refIn: ImageReference | string, digest: string, size?: number): Promise<Readable> {
    return this.read(refIn, (ref) => this.getBlobAt(ref, digest, size));
  }

  private async getBlobAt(ref: ImageReference, digest: string, size?: number): Promise<Readable> {
    if (!isSha256Digest(digest)) throw new BinnacleError('input', 'OCI_BAD_DIGEST', `blob digest "${digest}" is not sha256:<64 hex digits>`);
    const what = `blob ${digest} of ${ref.registry}/${ref.repository}`;
    // An idle timer, not a total one: big layers may take long, a stalled registry must not hang us.
    const idleMs = this.timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), idleMs).unref();
    let res: HttpAnswer;
    try {
      res = await this.request({
        ref,
        scopes: [repoScope(ref.repository, 'pull')],
        method: 'GET',
        url: `/v2/${ref.repository}/blobs/${digest}`,
        ok: [200],
        streaming: true,
        signal: controller.signal,
      });
    } catch (err) {
      clearTimeout(timer);
      throw err;
    }
    const body = res.body;
    async function* watched(): AsyncGenerator {
      try {
        for await (const chunk of body) {
          timer.refresh();
          yield chunk;
        }
      } catch (err) {
        if (controller.signal.aborted) throw new BinnacleError('transient', 'OCI_TIMEOUT', `${what}: no data from ${ref.registry} for ${formatDuration(idleMs)}`, { cause: err });
        throw err;
      } finally {
        clearTimeout(timer);
      }
    }
    return verifyStream(watched(), what, digest, size);
  }

  /** A small blob (a config) into memory, verified. */
  async getBlobBytes(ref: ImageReference | string, digest: string, size?: number, limit = 16 * 1024 * 1024): Promise<Buffer> {
    if (size !== undefined && size > limit) throw new BinnacleError('input', 'OCI_TOO_LARGE', `blob ${digest}: ${size} bytes is over the ${limit}-byte limit`);
    const chunks: Buffer[] = [];
    for await (const chunk of await this.getBlob(ref, digest, size)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async blobExists(refIn: ImageReference | string, digest: string, actions: Actions = 'pull'): Promise<boolean> {
    const ref = asRef(refIn);
    const res = await this.request({
      ref,
      scopes: [repoScope(ref.repository, actions)],
      method: 'HEAD',
      url: `/v2/${ref.repository}/blobs/${digest}`,
      ok: [200],
      allowNotFound: true,
    });
    return res.status === 200;
  }

  /**
   * Upload a blob unless the repository has it: cross-repo mount from `mountFrom` (a repository
   * on the same registry) when given, else POST then one monolithic PUT.
   */
  async uploadBlob(refIn: ImageReference | string, blob: BlobSource, opts: { mountFrom?: string } = {}): Promise<UploadOutcome> {
    const ref = asRef(refIn);
    const push = repoScope(ref.repository, 'pull,push');
    if (await this.blobExists(ref, blob.digest, 'pull,push')) return 'exists';
    const mount = opts.mountFrom !== undefined && opts.mountFrom !== ref.repository ? opts.mountFrom : undefined;
    const start = await this.request({
      ref,
      scopes: mount === undefined ? [push] : [push, repoScope(mount, 'pull')],
      method: 'POST',
      url:
        mount === undefined
          ? `/v2/${ref.repository}/blobs/uploads/`
          : `/v2/${ref.repository}/blobs/uploads/?mount=${encodeURIComponent(blob.digest)}&from=${encodeURIComponent(mount)}`,
      headers: { 'content-length': '0' },
      ok: [201, 202],
    });
    start.discard();
    if (start.status === 201) return 'mounted';
    const location = start.headers.get('location');
    if (location === null) throw new BinnacleError('terminal', 'OCI_REGISTRY_ERROR', `${ref.registry}: upload started without a Location header`);
    const url = new URL(location, this.baseUrl(ref.registry));
    url.searchParams.set('digest', blob.digest);
    const done = await this.request({
      ref,
      scopes: [push],
      method: 'PUT',
      url: url.toString(),
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(blob.size) },
      body: blob.open,
      ok: [201],
    });
    done.discard();
    const stored = done.headers.get('docker-content-digest');
    if (stored !== null && stored !== blob.digest) throw new DigestMismatchError(`upload of ${blob.digest}`, blob.digest, stored);
    return 'uploaded';
  }

  /** PUT a manifest or index under the reference's tag (or digest); returns its digest. */
  async putManifest(refIn: ImageReference | string, bytes: Buffer, mediaType: string): Promise<string> {
    const ref = asRef(refIn);
    const digest = sha256Digest(bytes);
    const res = await this.request({
      ref,
      scopes: [repoScope(ref.repository, 'pull,push')],
      method: 'PUT',
      url: `/v2/${ref.repository}/manifests/${ref.tag ?? ref.digest ?? digest}`,
      headers: { 'content-type': mediaType },
      body: () => bytes,
      ok: [201],
    });
    res.discard();
    const stored = res.headers.get('docker-content-digest');
    if (stored !== null && stored !== digest) throw new DigestMismatchError(`manifest put to ${formatReference(ref)}`, digest, stored);
    return digest;
  }

  // --- transport and auth ---

  private cachedAuth(registry: string, scopes: string[]): string | undefined {
    const now = Date.now();
    const bearer = this.tokens.get(`${registry} bearer ${scopes.join(' ')}`);
    if (bearer !== undefined && bearer.expiresAt > now) return bearer.header;
    return this.tokens.get(`${registry} basic`)?.header;
  }

  /** The one way a manifest is asked for (GET or HEAD), by tag or digest, with the media types accepted. */
  private manifestRequest(ref: ImageReference, method: 'GET' | 'HEAD', accept: readonly string[], opts: { allowNotFound?: boolean } = {}): Promise<HttpAnswer> {
    return this.request({
      ref,
      scopes: [repoScope(ref.repository, 'pull')],
      method,
      url: `/v2/${ref.repository}/manifests/${manifestSelector(ref)}`,
      headers: { accept: accept.join(', ') },
      ok: [200],
      ...opts,
    });
  }

  private async request(spec: RequestSpec): Promise<HttpAnswer> {
    const { registry } = spec.ref;
    let res = await this.send(spec, this.cachedAuth(registry, spec.scopes));
    if (res.status === 401) {
      const challengeHeader = res.headers.get('www-authenticate') ?? '';
      res.discard();
      const header = await this.answerChallenge(registry, challengeHeader, spec.scopes);
      if (header === undefined) {
        throw new BinnacleError(
          'transient',
          'OCI_UNAUTHORIZED',
          `${registry} requires authentication and no credentials were found for it (checked explicit options, REGISTRY_AUTH_FILE and the docker config file)`,
        );
      }
      res = await this.send(spec, header);
      if (res.status === 401) {
        const detail = await registryErrorText(res, this.timeoutMs);
        const elsewhere = spec.url.startsWith('/') ? undefined : new URL(spec.url).origin;
        if (elsewhere !== undefined && elsewhere !== new URL(this.baseUrl(registry)).origin) {
          throw new BinnacleError('transient', 'OCI_UNAUTHORIZED', `${registry}: the upload location ${elsewhere} asked for credentials, and the registry's are not sent off its own origin: ${detail}`);
        }
        throw new BinnacleError('transient', 'OCI_UNAUTHORIZED', `${registry} rejected the credentials for ${spec.method} ${spec.url}: ${detail}`);
      }
    }
    if (spec.ok.includes(res.status) || (spec.allowNotFound === true && res.status === 404)) return res;
    const detail = spec.method === 'HEAD' ? res.statusText : await registryErrorText(res, this.timeoutMs);
    const what = `${spec.method} ${registry}${spec.url.startsWith('/') ? spec.url : new URL(spec.url).pathname}`;
    if (res.status === 404) throw new BinnacleError('transient', 'OCI_NOT_FOUND', `${what}: not found (${detail})`);
    if (res.status === 403) throw new BinnacleError('transient', 'OCI_DENIED', `${what}: access denied (${detail})`);
    throw new BinnacleError(httpStatusClass(res.status), 'OCI_REGISTRY_ERROR', `${what}: HTTP ${res.status} (${detail})`);
  }

  private async send(spec: RequestSpec, authorization: string | undefined): Promise<HttpAnswer> {
    const base = this.baseUrl(spec.ref.registry);
    const url = spec.url.startsWith('/') ? `${base}${spec.url}` : spec.url;
    const headers: Record<string, string> = { ...spec.headers };
    // The registry's credentials go to the registry alone: an upload Location on another origin
    // (a storage front) gets none, as go-containerregistry's transport sends them by host.
    if (authorization !== undefined && new URL(url).origin === new URL(base).origin) headers.authorization = authorization;
    const init = {
      method: spec.method,
      headers,
      ...(spec.body === undefined ? {} : { body: spec.body }),
      signal: (spec.streaming === true ? spec.signal : undefined) ?? AbortSignal.timeout(this.timeoutMs),
    };
    this.logger?.debug({ method: spec.method, url }, 'registry request');
    try {
      return await httpRequest(url, init);
    } catch (err) {
      // A blob's idle timer fired before the registry even answered.
      if (spec.streaming === true && spec.signal?.aborted === true) {
        throw new BinnacleError('transient', 'OCI_TIMEOUT', `registry ${spec.ref.registry} (${spec.method} ${redactUrl(url)}): ${timeoutReason(spec.ref.registry, this.timeoutMs)}`, { cause: err });
      }
      // A proxy that could not be reached (HTTPS_PROXY): said in Go's words (`proxyconnect …`), naming the proxy.
      const viaProxy = proxyFailure(err, url);
      // Same code as any unreachable registry (callers branch on it); the message says it was the deadline.
      if (viaProxy === undefined && isTimeout(err)) throw new BinnacleError('transient', 'OCI_UNREACHABLE', `registry ${spec.ref.registry} (${spec.method} ${redactUrl(url)}): ${timeoutReason(spec.ref.registry, this.timeoutMs)}`, { cause: err });
      const code = viaProxy ?? networkReason(err);
      const hint = url.startsWith('https:') && /SSL|EPROTO|TLS/i.test(code) ? ' (is it a plain-http registry? use the insecure option)' : '';
      throw new BinnacleError('transient', 'OCI_UNREACHABLE', `cannot reach registry ${spec.ref.registry} (${spec.method} ${redactUrl(url)}): ${code}${hint}`, { cause: err });
    }
  }

  /** Turn a 401 challenge into an Authorization header, fetching a token when it is Bearer. */
  private async answerChallenge(registry: string, header: string, scopes: string[]): Promise<string | undefined> {
    const creds = this.credentials(registry);
    const challenges = parseChallenges(header);
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    if (bearer !== undefined) {
      const realm = bearer.params.realm;
      if (realm === undefined || realm === '') throw new BinnacleError('terminal', 'OCI_AUTH', `${registry}: Bearer challenge without a realm`);
      return this.fetchToken(registry, realm, bearer.params.service, scopes.length > 0 ? scopes : [bearer.params.scope ?? ''].filter((s) => s !== ''), creds);
    }
    if (challenges.some((c) => c.scheme === 'basic')) {
      if (creds === undefined || !('username' in creds)) return undefined;
      const value = basicAuthHeader(creds);
      this.tokens.set(`${registry} basic`, { header: value, expiresAt: Number.POSITIVE_INFINITY });
      return value;
    }
    throw new BinnacleError('terminal', 'OCI_AUTH', `${registry}: unsupported authentication challenge "${header}"`);
  }

  private async fetchToken(
    registry: string,
    realm: string,
    service: string | undefined,
    scopes: string[],
    creds: Credentials | undefined,
  ): Promise<string> {
    let url: URL;
    try {
      url = new URL(realm);
    } catch {
      throw new BinnacleError('terminal', 'OCI_AUTH', `${registry}: token realm "${realm}" is not a URL`);
    }
    const headers: Record<string, string> = {};
    let init: { method: string; headers: Record<string, string>; body?: () => Buffer };
    if (creds !== undefined && 'identityToken' in creds) {
      // docker's OAuth2 refresh-token grant for identity tokens.
      const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: creds.identityToken, client_id: 'binnacle' });
      if (service !== undefined) form.set('service', service);
      if (scopes.length > 0) form.set('scope', scopes.join(' '));
      const body = Buffer.from(form.toString());
      init = { method: 'POST', body: () => body, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    } else {
      if (service !== undefined) url.searchParams.set('service', service);
      for (const s of scopes) url.searchParams.append('scope', s);
      if (creds !== undefined) headers.authorization = basicAuthHeader(creds);
      init = { method: 'GET', headers };
    }
    let res: HttpAnswer;
    try {
      res = await httpRequest(url, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      const why = noAnswerReason(err, url, this.timeoutMs);
      throw new BinnacleError('transient', 'OCI_UNREACHABLE', `cannot reach the token server ${url.origin} for ${registry}: ${why}`, { cause: err });
    }
    if (res.status !== 200) {
      const detail = await registryErrorText(res, this.timeoutMs);
      throw new BinnacleError('transient', 'OCI_UNAUTHORIZED', `token server ${url.origin} refused a token for ${registry} (HTTP ${res.status}: ${detail})`);
    }
    let doc: unknown;
    try {
      doc = JSON.parse((await readLimited(res, 1024 * 1024, `token response from ${url.origin}`, this.timeoutMs)).toString('utf8'));
    } catch (err) {
      if (err instanceof BinnacleError) throw err;
      throw new BinnacleError('terminal', 'OCI_AUTH', `token server ${url.origin} answered with invalid JSON`);
    }
    const token = isRecord(doc) ? (typeof doc.token === 'string' ? doc.token : doc.access_token) : undefined;
    if (typeof token !== 'string' || token === '') throw new BinnacleError('terminal', 'OCI_AUTH', `token server ${url.origin} answered without a token`);
    const expiresIn = isRecord(doc) && typeof doc.expires_in === 'number' ? doc.expires_in : 60;
    const header = `Bearer ${token}`;
    // Renew a little early so a token does not expire in flight.
    this.tokens.set(`${registry} bearer ${scopes.join(' ')}`, { header, expiresAt: Date.now() + Math.max(expiresIn - 10, 5) * 1000 });
    return header;
  }
}
