/**
 * Where an image is pulled from, as containers-registries.conf(5) (v2) says: the cluster admin's
 * `[[registry]]` rules map a name prefix to another location, list mirrors tried first, mark a
 * location plain http (`insecure`) or refuse it (`blocked`). OLM v1 reads the same file
 * (containers/image, `/etc/containers/registries.conf`), so a disconnected cluster's mirror
 * configuration works unchanged. Only image pulls (pull.ts `pullAndUnpack`: catalogs and bundles)
 * consult it; pushes go where they are told. Not yet: signature verification, the digest check of
 * Manual approval and Helm OCI charts, which reach the registry client directly: they use the name
 * as written, so a `blocked` rule does not stop them (the mechanism belongs in the client).
 *
 * Read from BINNACLE_REGISTRIES_CONF, else /etc/containers/registries.conf when it exists; read
 * again when the file changes (a mounted ConfigMap updated). The v1 format is read as
 * containers/image converts it (insecure and blocked hosts). Not read: drop-in directories
 * (registries.conf.d), `unqualified-search-registries` and `[aliases]` (Binnacle never pulls a
 * short name: references are fully qualified).
 */
import { readFileSync, statSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { InputError, errorMessage } from '../util/errors.js';
import { formatReference, parseReference, type ImageReference } from './reference.js';

export const REGISTRIES_CONF_ENV = 'BINNACLE_REGISTRIES_CONF';
export const DEFAULT_REGISTRIES_CONF = '/etc/containers/registries.conf';

export interface MirrorRule {
  location: string;
  insecure: boolean;
  /** `pull-from-mirror`: which references may use this mirror. */
  pullFrom: 'all' | 'digest-only' | 'tag-only';
}

export interface RegistryRule {
  prefix: string;
  location: string;
  insecure: boolean;
  blocked: boolean;
  mirrors: MirrorRule[];
}

export interface RegistriesConf {
  file: string;
  registries: RegistryRule[];
}

/** One place to try, in order: the reference rewritten for it (whether it is plain http is insecureByConf's). */
export interface PullSource {
  ref: ImageReference;
  /** `mirror` or `primary`, for messages. */
  role: 'mirror' | 'primary';
}

const EMPTY: RegistriesConf = { file: '', registries: [] };

function str(v: unknown, file: string, field: string): string {
  if (typeof v !== 'string') throw new InputError('REGISTRIES_CONF', `must be a string, not ${JSON.stringify(v)}`, { file, field });
  return v;
}

function bool(v: unknown, file: string, field: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new InputError('REGISTRIES_CONF', `must be true or false, not ${JSON.stringify(v)}`, { file, field });
  return v;
}

/** A prefix or location: `host[:port][/path]`, or a prefix `*.domain`. Checked as an image name would be. */
function checkName(v: string, file: string, field: string, wildcard: boolean): string {
  if (wildcard && v.startsWith('*.')) {
    if (v.includes('/') || !/^\*\.[a-z0-9.-]+$/i.test(v)) throw new InputError('REGISTRIES_CONF', `"${v}": a wildcard prefix is "*.domain", without a path`, { file, field });
    return v;
  }
  try {
    // A name with a host: parsed as a reference with a placeholder path when it has none.
    parseReference(v.includes('/') ? v : `${v}/x`);
  } catch (err) {
    throw new InputError('REGISTRIES_CONF', `"${v}" is not a host[:port][/path]: ${errorMessage(err)}`, { file, field });
  }
  if (!v.includes('.') && !v.includes(':') && !v.startsWith('localhost')) throw new InputError('REGISTRIES_CONF', `"${v}" must name a registry host (with a "." or a port, or localhost)`, { file, field });
  return v.replace(/\/+$/, '');
}

/** Parses registries.conf text (v2); `file` names it in errors. */
export function parseRegistriesConf(text: string, file: string): RegistriesConf {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text);
  } catch (err) {
    throw new InputError('REGISTRIES_CONF', `not valid TOML: ${errorMessage(err)}`, { file });
  }
  if (doc.registries !== undefined) {
    if (doc.registry !== undefined) throw new InputError('REGISTRIES_CONF', 'mixes the v1 format ([registries.*]) with [[registry]] tables: containers/image refuses that too', { file, field: 'registries' });
    return { file, registries: fromV1(doc.registries, file) };
  }
  const list = doc.registry ?? [];
  if (!Array.isArray(list)) throw new InputError('REGISTRIES_CONF', 'must be an array of tables ([[registry]])', { file, field: 'registry' });
  const registries = list.map((r: unknown, i): RegistryRule => {
    const field = `registry[${i}]`;
    if (typeof r !== 'object' || r === null) throw new InputError('REGISTRIES_CONF', 'must be a table', { file, field });
    const t = r as Record<string, unknown>;
    const location = t.location === undefined || t.location === '' ? undefined : checkName(str(t.location, file, `${field}.location`), file, `${field}.location`, false);
    const prefixText = t.prefix === undefined || t.prefix === '' ? location : str(t.prefix, file, `${field}.prefix`);
    if (prefixText === undefined) throw new InputError('REGISTRIES_CONF', 'needs a prefix or a location', { file, field });
    const prefix = checkName(prefixText, file, `${field}.prefix`, true);
    if (prefix.startsWith('*.') && location !== undefined) throw new InputError('REGISTRIES_CONF', 'a wildcard prefix cannot have a location (there is no one name to rewrite it to)', { file, field: `${field}.location` });
    const digestOnly = bool(t['mirror-by-digest-only'], file, `${field}.mirror-by-digest-only`);
    const mirrorList = t.mirror ?? [];
    if (prefix.startsWith('*.') && Array.isArray(mirrorList) && mirrorList.length > 0) throw new InputError('REGISTRIES_CONF', 'a wildcard prefix takes no mirrors here (blocked and insecure only): name the registry', { file, field: `${field}.mirror` });
    if (!Array.isArray(mirrorList)) throw new InputError('REGISTRIES_CONF', 'must be an array of tables ([[registry.mirror]])', { file, field: `${field}.mirror` });
    const mirrors = mirrorList.map((m: unknown, j): MirrorRule => {
      const mf = `${field}.mirror[${j}]`;
      if (typeof m !== 'object' || m === null) throw new InputError('REGISTRIES_CONF', 'must be a table', { file, field: mf });
      const mt = m as Record<string, unknown>;
      const pullFrom = mt['pull-from-mirror'] === undefined || mt['pull-from-mirror'] === '' ? (digestOnly ? 'digest-only' : 'all') : str(mt['pull-from-mirror'], file, `${mf}.pull-from-mirror`);
      if (pullFrom !== 'all' && pullFrom !== 'digest-only' && pullFrom !== 'tag-only') throw new InputError('REGISTRIES_CONF', `"${pullFrom}" is not one of all, digest-only, tag-only`, { file, field: `${mf}.pull-from-mirror` });
      return { location: checkName(str(mt.location, file, `${mf}.location`), file, `${mf}.location`, false), insecure: bool(mt.insecure, file, `${mf}.insecure`), pullFrom };
    });
    return { prefix, location: location ?? prefix, insecure: bool(t.insecure, file, `${field}.insecure`), blocked: bool(t.blocked, file, `${field}.blocked`), mirrors };
  });
  return { file, registries };
}

/**
 * The v1 format, as containers/image converts it: each host of `[registries.insecure]` plain http,
 * each of `[registries.block]` refused; `[registries.search]` names short-name search registries,
 * which Binnacle never uses.
 */
function fromV1(v1: unknown, file: string): RegistryRule[] {
  const hosts = (table: string): string[] => {
    const t: unknown = (v1 as Record<string, unknown>)[table];
    if (t === undefined) return [];
    const list = typeof t === 'object' && t !== null ? (t as Record<string, unknown>).registries : undefined;
    if (!Array.isArray(list)) throw new InputError('REGISTRIES_CONF', 'must be a list of registry hosts', { file, field: `registries.${table}.registries` });
    return list.map((h, i) => checkName(str(h, file, `registries.${table}.registries[${i}]`), file, `registries.${table}.registries[${i}]`, false));
  };
  if (typeof v1 !== 'object' || v1 === null) throw new InputError('REGISTRIES_CONF', 'must be a table', { file, field: 'registries' });
  const insecure = hosts('insecure');
  const blocked = hosts('block');
  return [...new Set([...insecure, ...blocked])].map((h) => ({ prefix: h, location: h, insecure: insecure.includes(h), blocked: blocked.includes(h), mirrors: [] }));
}

/** How well `prefix` matches the name `host/repository` (its length), or -1: a whole component, or a `*.domain` host. */
function matchLength(prefix: string, name: string, host: string): number {
  if (prefix.startsWith('*.')) return (host.split(':')[0] ?? '').endsWith(prefix.slice(1)) ? prefix.length : -1;
  if (name === prefix || name.startsWith(`${prefix}/`)) return prefix.length;
  return -1;
}

/** The rule for a reference: the longest matching prefix, as containers/image picks it. */
export function ruleFor(conf: RegistriesConf, ref: ImageReference): RegistryRule | undefined {
  const name = `${ref.registry}/${ref.repository}`;
  let best: RegistryRule | undefined;
  let bestLength = -1;
  for (const r of conf.registries) {
    const n = matchLength(r.prefix, name, ref.registry);
    if (n > bestLength) {
      best = r;
      bestLength = n;
    }
  }
  return best;
}

function rewrite(ref: ImageReference, rule: RegistryRule, location: string): ImageReference {
  if (rule.prefix.startsWith('*.')) return ref;
  const name = `${ref.registry}/${ref.repository}`;
  const moved = `${location}${name.slice(rule.prefix.length)}`;
  const parsed = parseReference(moved);
  return { ...parsed, tag: ref.tag, digest: ref.digest };
}

/**
 * Where to pull `ref` from, in order: the mirrors its rule allows for it, then its location.
 * A blocked registry refuses, naming the file and the rule.
 */
export function pullSources(conf: RegistriesConf, ref: ImageReference): PullSource[] {
  const rule = ruleFor(conf, ref);
  if (rule === undefined) return [{ ref, role: 'primary' }];
  const index = conf.registries.indexOf(rule);
  if (rule.blocked) throw new InputError('REGISTRY_BLOCKED', `pulling ${formatReference(ref)} is refused: the registry is blocked (prefix "${rule.prefix}")`, { file: conf.file, field: `registry[${index}].blocked` });
  const byDigest = ref.digest !== undefined;
  const mirrors = rule.mirrors
    .filter((m) => m.pullFrom === 'all' || (m.pullFrom === 'digest-only' ? byDigest : !byDigest))
    .map((m): PullSource => ({ ref: rewrite(ref, rule, m.location), role: 'mirror' }));
  return [...mirrors, { ref: rewrite(ref, rule, rule.location), role: 'primary' }];
}

/** Whether the configuration marks `host` plain http (a location or a mirror with `insecure = true`). */
export function insecureByConf(conf: RegistriesConf, host: string): boolean {
  const hostOf = (location: string): string => location.split('/')[0] ?? '';
  const primary = (r: RegistryRule): boolean => (r.prefix.startsWith('*.') ? matchLength(r.prefix, host, host) >= 0 : hostOf(r.location) === host);
  return conf.registries.some((r) => (r.insecure && primary(r)) || r.mirrors.some((m) => m.insecure && hostOf(m.location) === host));
}

let cached: { path: string; mtimeMs: number; size: number; conf: RegistriesConf } | undefined;

/**
 * The configuration in effect: BINNACLE_REGISTRIES_CONF, else the default file when it exists,
 * else none. Read again when the file changes; a file named but missing, or invalid, throws.
 */
export function registriesConf(env: NodeJS.ProcessEnv = process.env): RegistriesConf {
  const named = env[REGISTRIES_CONF_ENV];
  const path = named === undefined || named === '' ? DEFAULT_REGISTRIES_CONF : named;
  let stat;
  try {
    stat = statSync(path);
  } catch (err) {
    if (path === DEFAULT_REGISTRIES_CONF && (err as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY;
    throw new InputError('REGISTRIES_CONF', `cannot be read: ${errorMessage(err)}`, { file: path });
  }
  if (cached?.path === path && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.conf;
  const conf = parseRegistriesConf(readFileSync(path, 'utf8'), path);
  cached = { path, mtimeMs: stat.mtimeMs, size: stat.size, conf };
  return conf;
}
