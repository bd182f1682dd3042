/**
 * Image references in the docker grammar (distribution/reference): `[host[:port]/]path[:tag][@digest]`.
 * The first path component is a registry host only when it is `localhost` or contains `.` or `:`;
 * otherwise the image lives on Docker Hub, where single-component names get `library/`.
 */
import { InputError } from '../util/errors.js';

export interface ImageReference {
  /** Registry host as written, with port (`docker.io`, `127.0.0.1:5000`, `[::1]:5000`). */
  registry: string;
  /** Repository path inside the registry, e.g. `library/busybox`. */
  repository: string;
  /** Tag; `latest` when neither tag nor digest was given. */
  tag: string | undefined;
  /** Digest `algorithm:hex`, when pinned. */
  digest: string | undefined;
}

export const DOCKER_HUB = 'docker.io';
/** Where Docker Hub's registry API answers: not at docker.io itself. */
export const DOCKER_HUB_API = 'registry-1.docker.io';
const MAX_NAME_LENGTH = 255;

// From distribution/reference/regexp.go, written out piece by piece so each part stays readable.
const ALNUM = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]+)';
const PATH_COMPONENT = `${ALNUM}(?:${SEPARATOR}${ALNUM})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])`;
const DOMAIN_RE = new RegExp(`^${HOST}(?::[0-9]+)?$`);
const PATH_COMPONENT_RE = new RegExp(`^${PATH_COMPONENT}$`);
const TAG_RE = /^[\w][\w.-]{0,127}$/;
const DIGEST_RE = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
const SHA256_RE = /^sha256:[a-f0-9]{64}$/;

// The digest of the reference grammar (any registered algorithm), wider than what we pull (sha256).
const GRAMMAR_DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const NAME = `(?:${HOST}(?::[0-9]+)?/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const REFERENCE_RE = new RegExp(`^(${NAME})(?::[\\w][\\w.-]{0,127})?(?:@${GRAMMAR_DIGEST})?$`);

/**
 * Whether `ref` is a pull spec as docker's `reference.ParseNormalizedNamed` accepts it (what opm
 * and OLM check image and relatedImage fields with). `parseReference` is stricter: it also needs
 * a digest it can verify.
 */
export function isValidImageReference(ref: string): boolean {
  const m = REFERENCE_RE.exec(ref);
  // ParseNormalizedNamed refuses a bare 64-hex name: it reads as an image ID, not a repository.
  if (m === null || (m[1] ?? '').length > MAX_NAME_LENGTH || /^[a-f0-9]{64}$/.test(ref)) return false;
  const at = ref.indexOf('@');
  return at < 0 || isRegisteredDigest(ref.slice(at + 1));
}

/**
 * Hex lengths of the algorithms go-digest registers by default; docker's reference parser runs
 * `digest.Parse`, so a digest of another algorithm (`md5:`, a misspelt `ssha256:`) or of the wrong
 * length or case is not a pull spec.
 */
const REGISTERED_DIGEST_HEX: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };

function isRegisteredDigest(digest: string): boolean {
  const colon = digest.indexOf(':');
  const size = REGISTERED_DIGEST_HEX[digest.slice(0, colon)];
  const hex = digest.slice(colon + 1);
  return size !== undefined && hex.length === size && /^[a-f0-9]+$/.test(hex);
}

function bad(ref: string, why: string): InputError {
  return new InputError('OCI_BAD_REFERENCE', `invalid image reference "${ref}": ${why}`);
}

/** True when `digest` is a well-formed `sha256:<64 lower-case hex>`; the only algorithm we verify. */
export function isSha256Digest(digest: string): boolean {
  return SHA256_RE.test(digest);
}

function checkDigest(ref: string, digest: string): string {
  if (!DIGEST_RE.test(digest)) throw bad(ref, `digest "${digest}" is not of the form algorithm:hex`);
  if (!digest.startsWith('sha256:')) throw bad(ref, `digest algorithm of "${digest}" is not supported (only sha256)`);
  if (!isSha256Digest(digest)) throw bad(ref, `digest "${digest}" must be sha256: followed by 64 lower-case hex digits`);
  return digest;
}

function checkRepository(ref: string, repository: string): void {
  if (repository === '') throw bad(ref, 'the repository name is missing');
  if (repository.toLowerCase() !== repository) throw bad(ref, `repository name "${repository}" must be lower-case`);
  for (const component of repository.split('/')) {
    if (!PATH_COMPONENT_RE.test(component)) {
      throw bad(ref, `repository path component "${component}" must be lower-case letters and digits, separated by ".", "_", "__" or "-"`);
    }
  }
}

export function parseReference(ref: string): ImageReference {
  if (ref === '') throw bad(ref, 'it is empty');
  if (/\s/.test(ref)) throw bad(ref, 'it contains white space');

  const at = ref.indexOf('@');
  const digest = at >= 0 ? checkDigest(ref, ref.slice(at + 1)) : undefined;
  const rest = at >= 0 ? ref.slice(0, at) : ref;

  const { name, tag } = splitTag(ref, rest);
  const { registry, repository } = splitRegistry(ref, name);

  checkRepository(ref, repository);
  if (registry.length + 1 + repository.length > MAX_NAME_LENGTH) throw bad(ref, `the name is longer than ${MAX_NAME_LENGTH} characters`);

  return { registry, repository, tag: tag ?? (digest === undefined ? 'latest' : undefined), digest };
}

/** A tag is after the last ':' that comes after the last '/'; a ':' before it belongs to host:port. */
function splitTag(ref: string, rest: string): { name: string; tag: string | undefined } {
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.indexOf(':', lastSlash + 1);
  if (colon < 0) return { name: rest, tag: undefined };
  const tag = rest.slice(colon + 1);
  if (!TAG_RE.test(tag)) throw bad(ref, `tag "${tag}" must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`);
  return { name: rest.slice(0, colon), tag };
}

/** The registry host (Docker Hub unless the first component is a host) and the repository in it, as Docker normalizes them. */
function splitRegistry(ref: string, name: string): { registry: string; repository: string } {
  if (name === '') throw bad(ref, 'the repository name is missing');
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  const isHost = slash >= 0 && (first === 'localhost' || first.includes('.') || first.includes(':'));
  let registry = isHost ? first : DOCKER_HUB;
  let repository = isHost ? name.slice(slash + 1) : name;
  if (isHost && !DOMAIN_RE.test(registry)) throw bad(ref, `registry host "${registry}" is not a valid host[:port]`);
  registry = canonicalRegistry(registry);
  if (registry === DOCKER_HUB && !repository.includes('/')) repository = `library/${repository}`;
  return { registry, repository };
}

/** `host/repo[:tag][@digest]`, always with the registry host, so it round-trips through parseReference. */
export function formatReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag === undefined ? '' : `:${ref.tag}`}${ref.digest === undefined ? '' : `@${ref.digest}`}`;
}

/** What to ask the registry for: the digest when pinned (it wins over the tag), else the tag. */
export function manifestSelector(ref: ImageReference): string {
  return ref.digest ?? ref.tag ?? 'latest';
}

/** The same repository pinned to `digest`. */
export function withDigest(ref: ImageReference, digest: string): ImageReference {
  return { ...ref, tag: undefined, digest };
}

/** Docker Hub's other names are docker.io, as references name it. */
function canonicalRegistry(host: string): string {
  return host === 'index.docker.io' || host === DOCKER_HUB_API ? DOCKER_HUB : host;
}

/** Whether `value` is a registry host as an image reference names it (`host[:port]`, the port 1-65535). */
export function isRegistryHost(value: string): boolean {
  if (!DOMAIN_RE.test(value)) return false;
  const port = /:([0-9]+)$/.exec(value)?.[1];
  return port === undefined || value.endsWith(']') || (Number(port) >= 1 && Number(port) <= 65535);
}
