/**
 * Registry credentials and challenges: reading `~/.docker/config.json` (or `REGISTRY_AUTH_FILE`,
 * `DOCKER_CONFIG`), and parsing `WWW-Authenticate` headers for the Basic and Bearer token flows.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';
import { DOCKER_HUB } from './reference.js';
import { isRecord } from '../util/object.js';

export type Credentials = { username: string; password: string } | { identityToken: string };

/** Explicit credentials, or a lookup by registry host. */
export type AuthOption = Credentials | ((host: string) => Credentials | undefined);

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/**
 * Parse `WWW-Authenticate`: `Bearer realm="…",service="…",scope="…"` or `Basic realm="…"`.
 * Quoted values may hold commas (scopes do), so this is a small scanner, not a split.
 */
export function parseChallenges(header: string): Challenge[] {
  const out: Challenge[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < header.length && /[\s,]/.test(header.charAt(i))) i++;
  };
  while (i < header.length) {
    skipSpace();
    const schemeMatch = /^[A-Za-z][A-Za-z0-9_-]*/.exec(header.slice(i));
    if (schemeMatch === null) break;
    const challenge: Challenge = { scheme: schemeMatch[0].toLowerCase(), params: {} };
    out.push(challenge);
    i += schemeMatch[0].length;
    for (;;) {
      skipSpace();
      const keyMatch = /^([A-Za-z0-9_-]+)\s*=\s*/.exec(header.slice(i));
      if (keyMatch === null) break;
      i += keyMatch[0].length;
      let value = '';
      if (header.charAt(i) === '"') {
        i++;
        while (i < header.length && header.charAt(i) !== '"') {
          if (header.charAt(i) === '\\') i++;
          value += header.charAt(i);
          i++;
        }
        i++;
      } else {
        while (i < header.length && header.charAt(i) !== ',') value += header.charAt(i++);
        value = value.trim();
      }
      challenge.params[(keyMatch[1] ?? '').toLowerCase()] = value;
    }
  }
  return out;
}

/** Hosts under which `docker login` stores Docker Hub credentials. */
const HUB_KEYS = ['https://index.docker.io/v1/', 'index.docker.io', 'registry-1.docker.io', 'docker.io'];

function normalizeAuthKey(key: string): string {
  return key.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
}

/** The auth files to read, in order: REGISTRY_AUTH_FILE, then DOCKER_CONFIG/config.json or ~/.docker/config.json. */
export function defaultAuthFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  const files: string[] = [];
  if (env.REGISTRY_AUTH_FILE !== undefined && env.REGISTRY_AUTH_FILE !== '') files.push(env.REGISTRY_AUTH_FILE);
  const dockerDir = env.DOCKER_CONFIG !== undefined && env.DOCKER_CONFIG !== '' ? env.DOCKER_CONFIG : join(homedir(), '.docker');
  files.push(join(dockerDir, 'config.json'));
  return files;
}

function readAuthFile(file: string): Map<string, Credentials> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (isRecord(err) && err.code === 'ENOENT') return new Map();
    throw new InputError('OCI_AUTH_FILE', `cannot read registry auth file: ${err instanceof Error ? err.message : String(err)}`, { file });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new InputError('OCI_AUTH_FILE', `not valid JSON (${err instanceof Error ? err.message : String(err)})`, { file });
  }
  const out = new Map<string, Credentials>();
  if (!isRecord(doc)) throw new InputError('OCI_AUTH_FILE', 'expected a JSON object', { file });
  if (doc.auths === undefined) return out;
  if (!isRecord(doc.auths)) throw new InputError('OCI_AUTH_FILE', 'expected an object of registries', { file, field: 'auths' });
  for (const [key, entry] of Object.entries(doc.auths)) {
    const field = `auths["${key}"]`;
    if (!isRecord(entry)) throw new InputError('OCI_AUTH_FILE', 'expected an object', { file, field });
    const host = normalizeAuthKey(key);
    if (typeof entry.identitytoken === 'string' && entry.identitytoken !== '') {
      out.set(host, { identityToken: entry.identitytoken });
    } else if (typeof entry.auth === 'string' && entry.auth !== '') {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new InputError('OCI_AUTH_FILE', 'expected base64 of "user:password"', { file, field: `${field}.auth` });
      out.set(host, { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) });
    } else if (typeof entry.username === 'string' && typeof entry.password === 'string') {
      out.set(host, { username: entry.username, password: entry.password });
    }
  }
  return out;
}

/**
 * A credential lookup over the given auth files (first file with the host wins). Credential
 * helpers (`credsStore`, `credHelpers`) are not run: Binnacle does not execute external programs
 * for auth.
 */
export function credentialsFromAuthFiles(files: readonly string[] = defaultAuthFiles()): (host: string) => Credentials | undefined {
  let loaded: Map<string, Credentials>[] | undefined;
  return (host) => {
    loaded ??= files.map(readAuthFile);
    const keys = host === DOCKER_HUB ? HUB_KEYS : [host];
    for (const map of loaded) {
      for (const k of keys) {
        const c = map.get(normalizeAuthKey(k));
        if (c !== undefined) return c;
      }
    }
    return undefined;
  };
}

export function basicAuthHeader(c: { username: string; password: string }): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}
