/**
 * The `image` source: src/oci pulls and unpacks the image into `<cacheDir>/oci`; credentials
 * come from a `kubernetes.io/dockerconfigjson` (or legacy `kubernetes.io/dockercfg`) Secret read
 * through a SecretReader (src/source/secrets.ts: the caller chooses whose identity reads it).
 * Blob downloads are counted for progress reports.
 */
import { Transform, pipeline, type Readable } from 'node:stream';
import type { Logger } from 'pino';
import { BinnacleError, InputError } from '../util/errors.js';
import { RegistryClient, parseReference, pullAndUnpack, verifyImageSignature, withDigest, formatReference, type Credentials, type ImageReference, type Platform, type ResolvedImage } from '../oci/index.js';
import { readSecret, type SecretReader, type SecretRef } from './secrets.js';
import type { ImageSource, ProgressEvent } from './types.js';
import { trustedKeysFromSecret, type VerifyPolicy } from './verify.js';
import { isRecord } from '../util/object.js';

function hostOf(key: string): string {
  return key.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
}

const HUB_ALIASES = ['index.docker.io', 'registry-1.docker.io', 'docker.io'];

/**
 * Credentials by registry host from a docker config document (`{auths: {host: {auth}}}`, or the
 * legacy dockercfg map without `auths`). `what` names the Secret for errors.
 */
export function parseDockerConfig(doc: unknown, what: string, legacy: boolean): Map<string, Credentials> {
  const out = new Map<string, Credentials>();
  if (!isRecord(doc)) throw new InputError('SOURCE_PULL_SECRET', 'expected a JSON object', { file: what });
  const auths = legacy ? doc : doc.auths;
  const field = legacy ? '' : 'auths';
  if (!isRecord(auths)) throw new InputError('SOURCE_PULL_SECRET', 'expected an object of registries', { file: what, field: field || undefined });
  for (const [key, entry] of Object.entries(auths)) {
    const f = `${field === '' ? '' : `${field}.`}${key}`;
    if (!isRecord(entry)) throw new InputError('SOURCE_PULL_SECRET', 'expected an object', { file: what, field: f });
    let creds: Credentials | undefined;
    if (typeof entry.identitytoken === 'string' && entry.identitytoken !== '') creds = { identityToken: entry.identitytoken };
    else if (typeof entry.auth === 'string' && entry.auth !== '') {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new InputError('SOURCE_PULL_SECRET', 'expected base64 of "user:password"', { file: what, field: `${f}.auth` });
      creds = { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    } else if (typeof entry.username === 'string' && typeof entry.password === 'string') creds = { username: entry.username, password: entry.password };
    if (creds === undefined) throw new InputError('SOURCE_PULL_SECRET', 'has neither auth, username/password nor identitytoken', { file: what, field: f });
    const host = hostOf(key);
    out.set(host, creds);
    if (HUB_ALIASES.includes(host)) for (const alias of HUB_ALIASES) if (!out.has(alias)) out.set(alias, creds);
  }
  return out;
}

/**
 * Credentials from the pull Secret, by registry host, read through `reader` (the installing
 * identity in a controller: a spec can use only a pull secret that identity may read).
 */
export async function pullSecretCredentials(reader: SecretReader, ref: SecretRef): Promise<Map<string, Credentials>> {
  const what = `Secret ${ref.namespace}/${ref.name}`;
  const raw = await readSecret(reader, ref, 'pull secret', 'SOURCE_PULL_SECRET_NOT_FOUND');
  const type = raw.type;
  const legacy = type === 'kubernetes.io/dockercfg';
  if (type !== 'kubernetes.io/dockerconfigjson' && !legacy) {
    throw new InputError('SOURCE_PULL_SECRET', `type is ${JSON.stringify(type)}; expected kubernetes.io/dockerconfigjson`, { file: what, field: 'type' });
  }
  const key = legacy ? '.dockercfg' : '.dockerconfigjson';
  const data = raw.data;
  const encoded = isRecord(data) ? data[key] : undefined;
  if (typeof encoded !== 'string') throw new InputError('SOURCE_PULL_SECRET', 'is missing', { file: what, field: `data["${key}"]` });
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    // JSON.parse quotes the text it choked on, credentials and all: say only where (no cause kept).
    throw new InputError('SOURCE_PULL_SECRET', 'is not valid JSON', { file: what, field: `data["${key}"]` });
  }
  return parseDockerConfig(doc, `${what} data["${key}"]`, legacy);
}

/** A RegistryClient that reports blob bytes as they arrive. */
class ProgressRegistryClient extends RegistryClient {
  private bytes = 0;
  private total: number | undefined;

  constructor(
    opts: ConstructorParameters<typeof RegistryClient>[0],
    private readonly report: (p: ProgressEvent) => void,
  ) {
    super(opts);
  }

  override async resolveImage(refIn: ImageReference | string, platform?: Platform): Promise<ResolvedImage> {
    const r = await super.resolveImage(refIn, platform);
    this.total = r.manifest.layers.reduce((n, l) => n + l.size, r.manifest.config.size);
    return r;
  }

  override async getBlob(refIn: ImageReference | string, digest: string, size?: number): Promise<Readable> {
    const inner = await super.getBlob(refIn, digest, size);
    let last = 0;
    const counter = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        this.bytes += chunk.length;
        if (this.bytes - last >= 256 * 1024) {
          last = this.bytes;
          this.report({ phase: 'pull', bytes: this.bytes, ...(this.total === undefined ? {} : { total: this.total }) });
        }
        cb(null, chunk);
      },
      flush: (cb) => {
        this.report({ phase: 'pull', bytes: this.bytes, ...(this.total === undefined ? {} : { total: this.total }) });
        cb();
      },
    });
    // pipeline passes the inner stream's errors (digest mismatch) on to the counter.
    pipeline(inner, counter, () => undefined);
    return counter;
  }
}

export interface PulledSource {
  dir: string;
  digest: string;
}

/** The registry credentials a source's pull secret gives, read through `secrets`. */
async function sourceAuth(source: ImageSource, secrets: SecretReader | undefined): Promise<((host: string) => Credentials | undefined) | undefined> {
  if (source.pullSecret === undefined) return undefined;
  if (secrets === undefined) throw new BinnacleError('input', 'SOURCE_NO_CLIENT', 'an image source with a pullSecret needs a connection to the cluster');
  const creds = await pullSecretCredentials(secrets, source.pullSecret);
  return (host) => creds.get(host);
}

/**
 * Verifies an image source's signature and returns the reference pinned at the digest that was
 * verified, so the pull that follows gets exactly that content. The keys are read through
 * `secrets` (the installing identity), as the pull secret is; the tag is resolved to the digest
 * cosign signs (the manifest or index the reference names).
 */
export async function verifiedImageRef(source: ImageSource & { verify: VerifyPolicy }, opts: { secrets: SecretReader | undefined; logger: Logger }): Promise<string> {
  if (opts.secrets === undefined) throw new BinnacleError('input', 'SOURCE_NO_CLIENT', 'a verified image source needs a connection to the cluster to read its keys');
  const keys = await trustedKeysFromSecret(opts.secrets, source.verify.secretRef);
  const auth = await sourceAuth(source, opts.secrets);
  const client = new RegistryClient({ logger: opts.logger, registries: 'system', ...(auth === undefined ? {} : { auth }), ...(source.insecure === true ? { insecure: true } : {}) });
  const ref = parseReference(source.ref);
  const digest = ref.digest ?? (await client.getManifest(ref)).digest;
  const verified = await verifyImageSignature(client, ref, digest, keys);
  opts.logger.info({ image: source.ref, digest, key: verified.keyName }, 'signature verified');
  return formatReference(withDigest(ref, digest));
}

export async function pullImage(
  source: ImageSource,
  opts: { ociCacheDir: string; secrets: SecretReader | undefined; logger: Logger; maxBytes: number; onProgress?: (p: ProgressEvent) => void },
): Promise<PulledSource> {
  const auth = await sourceAuth(source, opts.secrets);
  const clientOpts = { logger: opts.logger, registries: 'system' as const, ...(auth === undefined ? {} : { auth }), ...(source.insecure === true ? { insecure: true } : {}) };
  const registry = opts.onProgress === undefined ? new RegistryClient(clientOpts) : new ProgressRegistryClient(clientOpts, opts.onProgress);
  const pulled = await pullAndUnpack(source.ref, { cacheDir: opts.ociCacheDir, client: registry, maxBytes: opts.maxBytes });
  return { dir: pulled.dir, digest: pulled.digest };
}
