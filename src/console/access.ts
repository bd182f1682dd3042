/**
 * Who may reach the console, and as whom a request runs. Three gates, checked before any page,
 * token or API answer (as Jupyter's local server: `local_hostnames`, the token in the first URL):
 *
 * - **Host allow-list.** Only a `Host` that is a loopback name (localhost, 127.0.0.0/8, [::1]), the
 *   literal address the console listens on, or a configured `--public-address` is served; any
 *   other gets 421. A page on another site that re-points its own name at 127.0.0.1 (DNS
 *   rebinding) sends its own name as Host, so it never sees the page or its CSRF token.
 * - **A person.** A request runs as the person's own bearer token; or as the user a trusted
 *   proxy names in its identity header (only from a peer inside `--trusted-proxy-cidr`, by
 *   impersonation); or, on loopback only, as the console's own kubeconfig identity, lent to a
 *   browser holding a session cookie it got by presenting the one-time login token printed at
 *   start (or to anyone, with `--unsafe-lend-identity`). Anything else is 401.
 * - **Start-up.** Off loopback the console needs TLS and a per-person credential mode, and never
 *   lends its identity; `binnacle manager --console-listen` never lends the manager's.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP, isIPv4 } from 'node:net';
import { UsageError } from '../util/errors.js';
import { bearerToken } from '../util/http-server.js';

/** `host[:port]` as written in a Host header or --public-address: lower-case, IPv6 in brackets. */
export interface HostPort {
  hostname: string;
  port?: number;
}

const HOST_RE = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(\d{1,5}))?$/;

/** A Host header (or --public-address) split into name and port; undefined when it is neither. */
export function parseHostPort(value: string): HostPort | undefined {
  const m = HOST_RE.exec(value.trim().toLowerCase());
  if (m === null) return undefined;
  const hostname = (m[1] ?? '').replace(/\.$/, '');
  if (hostname === '' || (hostname.startsWith('[') && isIP(hostname.slice(1, -1)) !== 6)) return undefined;
  if (m[2] === undefined) return { hostname };
  const port = Number(m[2]);
  return port > 0 && port <= 65535 ? { hostname, port } : undefined;
}

/** localhost, 127.0.0.0/8 or ::1 (with or without brackets). */
export function isLoopbackName(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === 'localhost.' || h === '::1') return true;
  return isIPv4(h) && h.startsWith('127.');
}

/** What the console serves as, from the address it listens on and the --public-address flags. */
export class HostAllowList {
  private readonly listen: string | undefined;

  constructor(
    listenHost: string,
    private readonly publicAddresses: readonly HostPort[],
    private readonly scheme: 'http' | 'https',
  ) {
    // A wildcard listen address names no host; a literal one is a name the console answers to.
    const bare = listenHost.toLowerCase();
    this.listen = bare === '0.0.0.0' || bare === '::' || bare === '' ? undefined : isIP(bare) === 6 ? `[${bare}]` : bare;
  }

  /** Why a request with this Host header is not served here, or undefined when it is. */
  problem(host: string | undefined): string | undefined {
    if (host === undefined || host === '') return 'no Host header';
    const hp = parseHostPort(host);
    if (hp === undefined) return `Host ${JSON.stringify(host.slice(0, 100))} is not a host name`;
    if (isLoopbackName(hp.hostname) || hp.hostname === this.listen) return undefined;
    const defaultPort = this.scheme === 'https' ? 443 : 80;
    const ok = this.publicAddresses.some((pa) => pa.hostname === hp.hostname && (pa.port === undefined || pa.port === (hp.port ?? defaultPort)));
    return ok ? undefined : `Host ${hp.hostname} is not this console's address (loopback${this.publicAddresses.length === 0 ? '' : ' or --public-address'}); start it with --public-address ${hp.hostname} to serve that name`;
  }
}

/** --public-address values (each a comma list of host[:port]), checked. */
export function parsePublicAddresses(values: readonly string[]): HostPort[] {
  const out: HostPort[] = [];
  for (const v of values.flatMap((x) => x.split(',')).map((x) => x.trim()).filter((x) => x !== '')) {
    const hp = parseHostPort(v);
    if (hp === undefined) throw new UsageError(`--public-address ${JSON.stringify(v)}: expected HOST or HOST:PORT, such as console.example.com:8443`);
    out.push(hp);
  }
  return out;
}

/** Who a request runs as. `key` names the person for rate limits and stream caps. */
export type Person =
  /** The console's own identity, lent: to a logged-in browser, or to anyone with --unsafe-lend-identity. */
  | { kind: 'lent'; key: string }
  | { kind: 'bearer'; token: string; key: string }
  | { kind: 'proxy'; user: string; groups: string[]; key: string };

export interface TrustedProxy {
  /** The header carrying the user name, e.g. X-Forwarded-User. */
  header: string;
  /** A header carrying the user's groups (comma-separated), e.g. X-Forwarded-Groups. */
  groupHeader?: string | undefined;
  /** Peers (CIDRs) whose identity headers are believed. */
  cidrs: readonly string[];
}

/** How the console's own identity is lent: on loopback after the login token, to anyone (unsafe), or never. */
export type LendMode = 'login-token' | 'unsafe' | 'never';

export interface AccessOptions {
  lend: LendMode;
  trustedProxy?: TrustedProxy | undefined;
  publicAddresses?: readonly HostPort[];
}

const SESSION_IDLE_MS = 12 * 60 * 60_000;
const MAX_SESSIONS = 256;
const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The cookies of a request, by name (first wins). */
export function cookiesOf(req: Pick<IncomingMessage, 'headers'>): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * The login token and the sessions it opened. The token is one-time: presenting it opens one
 * browser session and spends it, and a new token is made (and announced) for the next browser.
 * Sessions live in memory, so a restart logs everyone out.
 */
export class LoginSessions {
  private token = randomBytes(32).toString('base64url');
  private readonly sessions = new Map<string, number>();

  constructor(
    readonly cookieName: string,
    private readonly secure: boolean,
    private readonly onNewToken: (token: string) => void = () => undefined,
  ) {}

  /** The login token not yet spent. */
  get current(): string {
    return this.token;
  }

  /** Spends `presented` when it is the current token: the Set-Cookie value of a new session. */
  redeem(presented: string): string | undefined {
    if (!sameSecret(presented, this.token)) return undefined;
    this.token = randomBytes(32).toString('base64url');
    const id = randomBytes(32).toString('base64url');
    this.evict(Date.now());
    this.sessions.set(sha(id), Date.now());
    this.onNewToken(this.token);
    return `${this.cookieName}=${id}; Path=/; HttpOnly; SameSite=Strict${this.secure ? '; Secure' : ''}`;
  }

  /** The session key of a request's cookie, when it names a live session. */
  sessionOf(req: Pick<IncomingMessage, 'headers'>): string | undefined {
    const id = cookiesOf(req).get(this.cookieName);
    if (id === undefined || id === '') return undefined;
    const key = sha(id);
    const used = this.sessions.get(key);
    const now = Date.now();
    if (used === undefined || now - used > SESSION_IDLE_MS) return undefined;
    this.sessions.set(key, now);
    return key;
  }

  private evict(now: number): void {
    for (const [k, used] of this.sessions) if (now - used > SESSION_IDLE_MS) this.sessions.delete(k);
    // Oldest first (a Map keeps insertion order).
    for (const k of this.sessions.keys()) {
      if (this.sessions.size < MAX_SESSIONS) break;
      this.sessions.delete(k);
    }
  }
}

/** The person of a request, or why there is none (the key then names the peer, for rate limits). */
export type Who = { person: Person; key: string } | { problem: string; key: string };

/** Finds the person of each request by the configured modes. */
export class Authenticator {
  private readonly proxyPeers: BlockList | undefined;

  constructor(
    private readonly opts: AccessOptions,
    readonly login: LoginSessions | undefined,
  ) {
    this.proxyPeers = opts.trustedProxy === undefined ? undefined : blockListOf(opts.trustedProxy.cidrs);
  }

  /** Whether the page itself needs a person (the login-token mode: it carries the lent identity's CSRF token). */
  get pageNeedsPerson(): boolean {
    return this.opts.lend === 'login-token';
  }

  /** Whether a request without a token of its own may run as the console's identity at all. */
  get lends(): boolean {
    return this.opts.lend !== 'never';
  }

  who(req: Pick<IncomingMessage, 'headers' | 'socket'>): Who {
    const peer = `peer:${req.socket.remoteAddress ?? ''}`;
    const { token, problem } = bearerToken(req);
    if (problem !== undefined) return { problem, key: peer };
    if (token !== undefined) return this.found({ kind: 'bearer', token, key: `bearer:${sha(token)}` });
    const proxied = this.proxied(req);
    if (proxied !== undefined) return 'problem' in proxied ? { ...proxied, key: peer } : this.found(proxied);
    if (this.opts.lend === 'unsafe') return this.found({ kind: 'lent', key: peer });
    if (this.opts.lend === 'login-token' && this.login !== undefined) {
      const session = this.login.sessionOf(req);
      if (session !== undefined) return this.found({ kind: 'lent', key: `session:${session}` });
      return { problem: 'not logged in: open the login URL `binnacle console` printed (http://127.0.0.1:PORT/?token=…)', key: peer };
    }
    return { problem: this.opts.trustedProxy === undefined ? 'send your own Kubernetes token (Authorization: Bearer TOKEN): this console lends no identity' : `sign in through the proxy (it sends ${this.opts.trustedProxy.header}) or send your own Kubernetes token (Authorization: Bearer TOKEN)`, key: peer };
  }

  private found(person: Person): Who {
    return { person, key: person.key };
  }

  private proxied(req: Pick<IncomingMessage, 'headers' | 'socket'>): Person | { problem: string } | undefined {
    const tp = this.opts.trustedProxy;
    if (tp === undefined) return undefined;
    const raw = req.headers[tp.header.toLowerCase()];
    if (raw === undefined) return undefined;
    const addr = req.socket.remoteAddress ?? '';
    const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    if (this.proxyPeers?.check(addr.replace(/^::ffff:/, ''), addr.startsWith('::ffff:') ? 'ipv4' : family) !== true) return { problem: `${tp.header} from ${addr}, which is not a trusted proxy (--trusted-proxy-cidr)` };
    const user = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? '';
    if (user === '' || user.length > 256 || hasControl(user)) return { problem: `${tp.header}: expected a user name` };
    const g = tp.groupHeader === undefined ? undefined : req.headers[tp.groupHeader.toLowerCase()];
    const groups = (Array.isArray(g) ? g.join(',') : g ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '' && !hasControl(x));
    return { kind: 'proxy', user, groups, key: `user:${user}` };
  }
}

/** Whether `s` has a control character (no user or group name has). */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) < 0x20 || s.charCodeAt(i) === 0x7f) return true;
  return false;
}

/** --trusted-proxy-cidr values (comma lists of CIDRs or single addresses), as a BlockList. */
export function blockListOf(cidrs: readonly string[], flag = '--trusted-proxy-cidr'): BlockList {
  const list = new BlockList();
  for (const c of cidrs.flatMap((x) => x.split(',')).map((x) => x.trim()).filter((x) => x !== '')) {
    const [addr = '', bits] = c.split('/');
    const family = isIP(addr);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) throw new UsageError(`${flag} ${JSON.stringify(c)}: expected a CIDR such as 10.0.0.0/8 or fd00::/8`);
    list.addSubnet(addr, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

export interface StartChecks {
  /** The --listen host. */
  host: string;
  listenFlag: string;
  /** Flag names as this command spells them (the manager prefixes them with console-). */
  flags: { tls: string; lend: string; bearer: string; proxy: string; proxyCidr: string };
  tls: boolean;
  lend: LendMode;
  requirePersonToken: boolean;
  trustedProxy?: TrustedProxy | undefined;
  /** `binnacle manager`: never lend the manager's identity. */
  manager: boolean;
}

/** Refuses, with one line naming the flag, a start that would serve the console unsafely. */
export function checkStart(c: StartChecks): void {
  if (c.trustedProxy !== undefined && c.trustedProxy.cidrs.length === 0) throw new UsageError(`${c.flags.proxy} needs ${c.flags.proxyCidr}: the addresses of the proxy whose identity header is believed`);
  if (c.manager && c.lend !== 'never') throw new UsageError(`${c.listenFlag}: the manager's console never lends the manager's identity; people send their own token or come through a trusted proxy (${c.flags.proxy})`);
  if (isLoopbackName(c.host)) return;
  if (!c.tls) throw new UsageError(`${c.listenFlag} ${c.host} is not loopback: serving the console off loopback needs TLS (${c.flags.tls})`);
  if (c.lend === 'unsafe') throw new UsageError(`${c.flags.lend} is for loopback only: off loopback every person uses their own credential`);
  if (!c.requirePersonToken && c.trustedProxy === undefined) throw new UsageError(`${c.listenFlag} ${c.host} is not loopback: say how each person proves who they are (${c.flags.bearer}, or ${c.flags.proxy} with ${c.flags.proxyCidr})`);
}
