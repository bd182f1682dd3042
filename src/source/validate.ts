/**
 * Turning a BundleDeployment's `spec.source` (unknown JSON) into a BundleSource. The wire shape
 * is rukpak's: a `type` and one member named after it, e.g.
 * `{type: git, git: {repository, ref: {branch}, directory}}`. Every problem is collected with
 * its field path; nothing stops at the first.
 */
import { ValidationError, ValidationResult } from '../util/errors.js';
import { parseReference } from '../oci/reference.js';
import { BARE_USERINFO, carriesCredential, credentialInReferenceMessage, redactReference } from '../util/redact.js';
import type { BundleSource, ConfigMapRef, GitSource } from './types.js';
import { parseVerifyPolicy, unverifiableSourceReason, verifyPolicyToJson } from './verify.js';
import { isRecord } from '../util/object.js';

const TYPES = ['image', 'git', 'http', 'configMaps', 'local'] as const;

export interface ParsedSource {
  /** Set only when there were no errors. */
  source: BundleSource | undefined;
  result: ValidationResult;
}

export interface ParseSourceOptions {
  /** Field path of the source object, for messages (default `spec.source`). */
  field?: string;
  /** The file it came from, if any. */
  file?: string;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const HEX_SHA1_OR_256 = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** Why `p` is not a safe relative path inside a tree, or undefined when it is. */
export function relativePathProblem(p: string): string | undefined {
  if (p.includes('\0')) return 'contains a NUL byte';
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p)) return 'must be a relative path, not absolute';
  if (p.split(/[/\\]/).includes('..')) return 'must not contain ".."';
  return undefined;
}

function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Why `name` is not an acceptable git branch or tag name (a subset of git check-ref-format). */
function refNameProblem(name: string): string | undefined {
  if (name.startsWith('-')) return 'must not start with "-"';
  if (name.startsWith('refs/')) return 'give the short name, without "refs/"';
  if (/[\s~^:?*[\\]/.test(name) || hasControlChar(name)) return 'contains a character git does not allow in ref names';
  if (name.includes('..') || name.includes('@{') || name.includes('//')) return 'is not a valid git ref name';
  if (name.startsWith('/') || name.endsWith('/') || name.endsWith('.') || name.endsWith('.lock')) return 'is not a valid git ref name';
  return undefined;
}

/** Why `url` is not a git repository location Binnacle will fetch, or undefined. */
export function gitRepositoryProblem(url: string): string | undefined {
  if (url.startsWith('-')) return 'must not start with "-"';
  // `ext::` and friends run programs; only plain transports are allowed.
  if (/^[a-z][a-z0-9+.-]*::/i.test(url)) return 'remote helpers ("<transport>::") are not allowed';
  if (/^(https?|ssh|git|file):\/\//i.test(url)) {
    try {
      new URL(url);
    } catch {
      return 'is not a valid URL';
    }
    return undefined;
  }
  if (/^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/.test(url)) return undefined; // scp-like ssh: git@host:org/repo
  return 'expected an https://, http://, ssh://, git:// or file:// URL, or user@host:path';
}

class Checker {
  constructor(
    private readonly result: ValidationResult,
    private readonly file: string | undefined,
  ) {}

  error(rule: string, field: string, message: string): void {
    this.result.error(rule, message, this.file === undefined ? { field } : { file: this.file, field });
  }

  /** Unknown keys are errors: a typo such as `branh` must not silently mean "no branch". */
  known(obj: Record<string, unknown>, field: string, keys: readonly string[]): void {
    for (const k of Object.keys(obj)) {
      if (!keys.includes(k)) this.error('source.unknown-field', `${field}.${k}`, `unknown field; expected one of ${keys.join(', ')}`);
    }
  }

  string(obj: Record<string, unknown>, key: string, field: string, required: boolean): string | undefined {
    const v = obj[key];
    if (v === undefined) {
      if (required) this.error('source.required', `${field}.${key}`, 'is required');
      return undefined;
    }
    if (typeof v !== 'string') {
      this.error('source.type-mismatch', `${field}.${key}`, `expected a string, got ${describe(v)}`);
      return undefined;
    }
    if (v.trim() === '') {
      this.error('source.required', `${field}.${key}`, 'must not be empty');
      return undefined;
    }
    return v;
  }

  object(obj: Record<string, unknown>, key: string, field: string, required: boolean): Record<string, unknown> | undefined {
    const v = obj[key];
    if (v === undefined) {
      if (required) this.error('source.required', `${field}.${key}`, 'is required');
      return undefined;
    }
    if (!isRecord(v)) {
      this.error('source.type-mismatch', `${field}.${key}`, `expected an object, got ${describe(v)}`);
      return undefined;
    }
    return v;
  }
}

/** Where each source type's credentials go instead of its URL. */
export const CREDENTIALS_INSTEAD = {
  image: (f: string) => `a kubernetes.io/dockerconfigjson Secret named in ${f}.pullSecret`,
  http: (f: string) => `a kubernetes.io/basic-auth Secret (username, password) named in ${f}.secret`,
  git: (f: string) => `a kubernetes.io/basic-auth Secret (username, password) named in ${f}.secret`,
  /** A ClusterCatalog's image is pulled by the manager, which has no Secrets of its own to read. */
  catalog: (f: string) => `the manager's registry auth file (REGISTRY_AUTH_FILE or $DOCKER_CONFIG/config.json, mounted from a Secret by the cluster admin), not ${f}`,
} as const;

/**
 * Why an image reference (a BundleDeployment's, a ClusterCatalog's) is refused for carrying a
 * credential (`user:pass@host/…`, `https://token@host/…`), or undefined; `instead` says where the
 * credential goes. The message masks it.
 */
export function imageRefCredentialProblem(ref: string, instead: string): string | undefined {
  // An image reference has no user: anything before `@` and the host is a credential (`busybox@sha256:…` is a digest).
  return carriesCredential(ref) || BARE_USERINFO.test(ref) ? credentialInReferenceMessage(ref, instead) : undefined;
}

/**
 * A `{namespace, name}` Secret reference at `obj[key]`: the reference, `null` when absent, or
 * undefined when it is wrong (the problems are recorded).
 */
function secretRefAt(c: Checker, obj: Record<string, unknown>, key: string, f: string, rule: string): { namespace: string; name: string } | null | undefined {
  const ps = c.object(obj, key, f, false);
  if (ps === undefined) return obj[key] === undefined ? null : undefined;
  const pf = `${f}.${key}`;
  c.known(ps, pf, ['namespace', 'name']);
  const name = c.string(ps, 'name', pf, true);
  const namespace = c.string(ps, 'namespace', pf, true);
  let ok = name !== undefined && namespace !== undefined;
  if (name !== undefined && !DNS_SUBDOMAIN.test(name)) {
    c.error(rule, `${pf}.name`, `"${name}" is not a valid Secret name`);
    ok = false;
  }
  if (namespace !== undefined && !DNS_LABEL.test(namespace)) {
    c.error(rule, `${pf}.namespace`, `"${namespace}" is not a valid namespace name`);
    ok = false;
  }
  return ok && name !== undefined && namespace !== undefined ? { namespace, name } : undefined;
}

/** Refuses a URL or reference with credentials in it, saying where they go; true when refused. */
function refusedForCredential(c: Checker, ref: string, field: string, instead: string): boolean {
  if (!carriesCredential(ref)) return false;
  c.error('source.url-credentials', field, credentialInReferenceMessage(ref, instead));
  return true;
}

function parseImage(c: Checker, o: Record<string, unknown>, f: string): BundleSource | undefined {
  c.known(o, f, ['ref', 'pullSecret', 'insecure']);
  const ref = c.string(o, 'ref', f, true);
  let ok = ref !== undefined;
  const credential = ref === undefined ? undefined : imageRefCredentialProblem(ref, CREDENTIALS_INSTEAD.image(f));
  if (credential !== undefined) {
    c.error('source.url-credentials', `${f}.ref`, credential);
    ok = false;
  } else if (ref !== undefined) {
    try {
      parseReference(ref);
    } catch (err) {
      c.error('source.image.ref', `${f}.ref`, `not a valid image reference: ${err instanceof Error ? err.message : String(err)}`);
      ok = false;
    }
  }
  const ps = secretRefAt(c, o, 'pullSecret', f, 'source.image.pull-secret');
  const pullSecret = ps ?? undefined;
  if (ps === undefined) ok = false;
  const insecure = o.insecure;
  if (insecure !== undefined && typeof insecure !== 'boolean') {
    c.error('source.type-mismatch', `${f}.insecure`, `expected true or false, got ${describe(insecure)}`);
    ok = false;
  }
  if (!ok || ref === undefined) return undefined;
  return {
    type: 'image',
    ref,
    ...(pullSecret === undefined ? {} : { pullSecret }),
    ...(typeof insecure === 'boolean' ? { insecure } : {}),
  };
}

function parseGit(c: Checker, o: Record<string, unknown>, f: string): BundleSource | undefined {
  c.known(o, f, ['repository', 'ref', 'directory', 'secret']);
  const repository = c.string(o, 'repository', f, true);
  let ok = repository !== undefined && checkGitRepository(c, repository, f);
  const secret = secretRefAt(c, o, 'secret', f, 'source.secret');
  if (secret === undefined) ok = false;
  const refObj = c.object(o, 'ref', f, true);
  const parsed = refObj === undefined ? undefined : parseGitRef(c, refObj, `${f}.ref`);
  if (parsed?.ok !== true) ok = false;
  const directory = c.string(o, 'directory', f, false);
  if (!checkGitDirectory(c, o, directory, f)) ok = false;
  if (!ok || repository === undefined || parsed === undefined) return undefined;
  return { type: 'git', repository, ref: parsed.ref, ...(directory === undefined ? {} : { directory }), ...(secret === null || secret === undefined ? {} : { secret }) };
}

/** A repository URL without credentials in it, of a form git fetches. */
function checkGitRepository(c: Checker, repository: string, f: string): boolean {
  if (refusedForCredential(c, repository, `${f}.repository`, CREDENTIALS_INSTEAD.git(f))) return false;
  const p = gitRepositoryProblem(repository);
  if (p === undefined) return true;
  c.error('source.git.repository', `${f}.repository`, p);
  return false;
}

/** Exactly one of branch, tag (valid ref names) and commit (a full sha). */
function parseGitRef(c: Checker, refObj: Record<string, unknown>, rf: string): { ref: GitSource['ref']; ok: boolean } {
  let ok = true;
  const ref: GitSource['ref'] = {};
  c.known(refObj, rf, ['branch', 'tag', 'commit']);
  const set = (['branch', 'tag', 'commit'] as const).filter((k) => refObj[k] !== undefined);
  if (set.length !== 1) {
    c.error('source.git.ref', rf, `exactly one of branch, tag, commit${set.length === 0 ? '' : ` (got ${set.join(', ')})`}`);
    ok = false;
  }
  for (const k of set) {
    const v = c.string(refObj, k, rf, true);
    if (v === undefined) {
      ok = false;
      continue;
    }
    const problem = k === 'commit' ? (HEX_SHA1_OR_256.test(v) ? undefined : 'expected a full commit sha (40 or 64 lower-case hex digits)') : refNameProblem(v);
    if (problem !== undefined) {
      c.error('source.git.ref', `${rf}.${k}`, `"${v}" ${problem.startsWith('expected') ? `: ${problem}` : problem}`);
      ok = false;
    }
    ref[k] = v;
  }
  return { ref, ok };
}

/** The directory, when given, is a relative path inside the repository. */
function checkGitDirectory(c: Checker, o: Record<string, unknown>, directory: string | undefined, f: string): boolean {
  if (directory === undefined) return o.directory === undefined;
  const p = relativePathProblem(directory);
  if (p === undefined) return true;
  c.error('source.git.directory', `${f}.directory`, p);
  return false;
}

/** `sha256:HEX` or `HEX` → lower-case hex, or undefined when it is neither. */
export function normalizeSha256(v: string): string | undefined {
  const hex = (v.startsWith('sha256:') ? v.slice(7) : v).toLowerCase();
  return HEX_SHA256.test(hex) ? hex : undefined;
}

function parseHttp(c: Checker, o: Record<string, unknown>, f: string): BundleSource | undefined {
  c.known(o, f, ['url', 'sha256', 'secret']);
  const url = c.string(o, 'url', f, true);
  let ok = url !== undefined;
  if (url !== undefined && refusedForCredential(c, url, `${f}.url`, CREDENTIALS_INSTEAD.http(f))) ok = false;
  else if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      c.error('source.http.url', `${f}.url`, `"${redactReference(url)}" is not a valid URL`);
      ok = false;
    }
    if (parsed !== undefined && parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      c.error('source.http.url', `${f}.url`, `scheme ${parsed.protocol} is not supported; expected http: or https:`);
      ok = false;
    }
  }
  const raw = c.string(o, 'sha256', f, false);
  let sha256: string | undefined;
  if (raw !== undefined) {
    sha256 = normalizeSha256(raw);
    if (sha256 === undefined) {
      c.error('source.http.sha256', `${f}.sha256`, 'expected 64 hex digits (optionally prefixed with "sha256:")');
      ok = false;
    }
  } else if (o.sha256 !== undefined) ok = false;
  const secret = secretRefAt(c, o, 'secret', f, 'source.secret');
  if (secret === undefined) ok = false;
  if (!ok || url === undefined) return undefined;
  return { type: 'http', url, ...(sha256 === undefined ? {} : { sha256 }), ...(secret === null || secret === undefined ? {} : { secret }) };
}

function parseConfigMaps(c: Checker, v: unknown, f: string): BundleSource | undefined {
  if (!Array.isArray(v)) {
    c.error('source.type-mismatch', f, `expected a list of ConfigMap references, got ${describe(v)}`);
    return undefined;
  }
  if (v.length === 0) {
    c.error('source.configmaps', f, 'must name at least one ConfigMap');
    return undefined;
  }
  let ok = true;
  const out: ConfigMapRef[] = [];
  const seen = new Map<string, number>();
  v.forEach((item: unknown, i) => {
    const itf = `${f}[${i}]`;
    if (!isRecord(item)) {
      c.error('source.type-mismatch', itf, `expected an object, got ${describe(item)}`);
      ok = false;
      return;
    }
    c.known(item, itf, ['namespace', 'name', 'path']);
    const name = c.string(item, 'name', itf, true);
    const namespace = c.string(item, 'namespace', itf, true);
    const path = c.string(item, 'path', itf, false);
    if (name !== undefined && !DNS_SUBDOMAIN.test(name)) {
      c.error('source.configmaps', `${itf}.name`, `"${name}" is not a valid ConfigMap name`);
      ok = false;
    }
    if (namespace !== undefined && !DNS_LABEL.test(namespace)) {
      c.error('source.configmaps', `${itf}.namespace`, `"${namespace}" is not a valid namespace name`);
      ok = false;
    }
    if (path !== undefined) {
      const p = relativePathProblem(path);
      if (p !== undefined) {
        c.error('source.configmaps', `${itf}.path`, p);
        ok = false;
      }
    }
    if (name === undefined || namespace === undefined || (item.path !== undefined && path === undefined)) {
      ok = false;
      return;
    }
    const key = `${namespace}/${name}`;
    const first = seen.get(key);
    if (first !== undefined) {
      c.error('source.configmaps', itf, `ConfigMap ${key} is already listed at ${f}[${first}]`);
      ok = false;
    } else seen.set(key, i);
    out.push({ namespace, name, ...(path === undefined ? {} : { path }) });
  });
  return ok ? { type: 'configMaps', configMaps: out } : undefined;
}

function parseLocal(c: Checker, o: Record<string, unknown>, f: string): BundleSource | undefined {
  c.known(o, f, ['path']);
  const path = c.string(o, 'path', f, true);
  return path === undefined ? undefined : { type: 'local', path };
}

/** Check `value` as a source; all problems land in `result`, `source` is set only when it is valid. */
export function parseBundleSource(value: unknown, opts: ParseSourceOptions = {}): ParsedSource {
  const field = opts.field ?? 'spec.source';
  const result = new ValidationResult(opts.file ?? field);
  const c = new Checker(result, opts.file);
  if (!isRecord(value)) {
    c.error('source.type-mismatch', field, `expected an object, got ${describe(value)}`);
    return { source: undefined, result };
  }
  c.known(value, field, ['type', ...TYPES, 'verify']);
  const type = value.type;
  if (type === undefined) {
    c.error('source.type', `${field}.type`, `is required; one of ${TYPES.join(', ')}`);
    return { source: undefined, result };
  }
  if (typeof type !== 'string' || !(TYPES as readonly string[]).includes(type)) {
    c.error('source.type', `${field}.type`, `${JSON.stringify(type)} is not a source type; expected one of ${TYPES.join(', ')}`);
    return { source: undefined, result };
  }
  for (const other of TYPES) {
    if (other !== type && value[other] !== undefined) c.error('source.one-of', `${field}.${other}`, `must not be set when type is ${type}`);
  }
  const f = `${field}.${type}`;
  let source: BundleSource | undefined;
  if (type === 'configMaps') {
    if (value.configMaps === undefined) c.error('source.required', f, `is required when type is ${type}`);
    else source = parseConfigMaps(c, value.configMaps, f);
  } else {
    const member = c.object(value, type, field, false);
    if (value[type] === undefined) c.error('source.required', f, `is required when type is ${type}`);
    else if (member !== undefined) {
      if (type === 'image') source = parseImage(c, member, f);
      else if (type === 'git') source = parseGit(c, member, f);
      else if (type === 'http') source = parseHttp(c, member, f);
      else source = parseLocal(c, member, f);
    }
  }
  if (value.verify !== undefined) source = withVerify(c, source, value.verify, type, `${field}.verify`);
  return { source: result.ok ? source : undefined, result };
}

/** The source with its verification policy; a type that cannot carry a signature is refused by name. */
function withVerify(c: Checker, source: BundleSource | undefined, value: unknown, type: string, f: string): BundleSource | undefined {
  const refusal = unverifiableSourceReason(type);
  if (refusal !== undefined) {
    c.error('source.verify.unsupported', f, refusal);
    return undefined;
  }
  const verify = parseVerifyPolicy(value, f, (field, message) => c.error('source.verify', field, message));
  return verify === undefined || source?.type !== 'image' ? undefined : { ...source, verify };
}

/** Like parseBundleSource, but throws a ValidationError listing every problem. */
export function bundleSourceFrom(value: unknown, opts: ParseSourceOptions = {}): BundleSource {
  const { source, result } = parseBundleSource(value, opts);
  if (source === undefined || !result.ok) throw new ValidationError(result);
  return source;
}

/** The wire (CRD) form of a source: the inverse of parseBundleSource. */
export function bundleSourceToJson(source: BundleSource): Record<string, unknown> {
  if (source.type === 'configMaps') return { type: source.type, configMaps: source.configMaps };
  if (source.type === 'image' && source.verify !== undefined) {
    const { type, verify, ...rest } = source;
    return { type, [type]: rest, verify: verifyPolicyToJson(verify) };
  }
  const { type, ...rest } = source;
  return { type, [type]: rest };
}
