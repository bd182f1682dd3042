/**
 * HTTPS_PROXY, HTTP_PROXY and NO_PROXY (upper or lower case, lower first as Node and curl read
 * them) for Binnacle's outbound requests, as Go's net/http honours them for OLM v1's
 * operator-controller and catalogd. The command line's entry (src/cli/main.ts) calls
 * `useProxyFromEnv` once, and only when `namesProxy` says a proxy variable is set (nothing is
 * loaded otherwise): it gives node:http(s) global agents that proxy (as `http.setGlobalProxyFromEnv`
 * of Node >= 24.14 would; looked for, not the version), and so every outbound request (registry pulls and token servers,
 * catalog servers, chart and source downloads: src/util/http-request.ts), through the proxy,
 * NO_PROXY excepted. `NODE_USE_ENV_PROXY=1`
 * does the same on the Nodes that know it.
 *
 * The Kubernetes API server is never reached through it: src/kube/client.ts connects with its
 * own agent, which the global settings leave alone. client-go would proxy it unless NO_PROXY
 * names it; a manager in a cluster has the API server's Service in NO_PROXY anyway, and a CLI
 * behind a proxy reaches its API server directly.
 *
 * Node's rules (its agents'), not quite Go's: a NO_PROXY entry is a host name or address, with or
 * without `:port`; a name covers its subdomains as in Go (noProxyOf adds `.name`, which is how
 * Node's agents say it), as do `.example.com` and `*.example.com`; `*` covers all; an IPv4 range
 * (`10.0.0.0-10.0.0.255`) covers its addresses; a CIDR (`10.96.0.0/12`) covers nothing. As in
 * Go, an https:// request takes HTTPS_PROXY and an http:// one HTTP_PROXY, each alone (fetch, used
 * until 2026-12-07, sent https:// through HTTP_PROXY when only that was set). As Go does, `localhost`, `127.0.0.1` and
 * `::1` always go direct (LOOPBACK_NO_PROXY: a local cluster's components and registry are
 * reached there), and a proxy without a scheme (`proxy.corp:3128`) is an http:// one. (Go goes
 * direct to all of 127.0.0.0/8; Node's NO_PROXY cannot say a range.)
 */
import { BinnacleError } from './errors.js';
import { redactText } from './redact.js';

/** Go's ProxyFromEnvironment never proxies loopback: always added to NO_PROXY. */
// `::1` as node:http's agents match an IPv6 host (its brackets taken off), `[::1]` as a URL writes it.
const LOOPBACK_NO_PROXY = 'localhost,127.0.0.1,::1,[::1]';

/** A NO_PROXY entry that is a host name alone: no leading `.` or `*`, no port, not an address or a range. */
function isBareName(entry: string): boolean {
  return /^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$/i.test(entry) && !/^\d+\.\d+\.\d+\.\d+(-\d+\.\d+\.\d+\.\d+)?$/.test(entry) && !entry.includes('..');
}

/**
 * NO_PROXY as node:http(s)'s agents are given it: as set, each bare name also as `.name`, and
 * loopback. Go (and curl, and undici) read `example.com` as that host and its subdomains; Node's
 * agents read it as that host alone, and `.example.com` as both.
 */
export function noProxyOf(env: Env): string {
  const given = (env.no_proxy || env.NO_PROXY || '').trim();
  if (given === '*') return '*';
  const entries = given.split(/[,\s]+/).filter((e) => e !== '');
  return [...entries.flatMap((e) => (isBareName(e) ? [e, `.${e}`] : [e])), LOOPBACK_NO_PROXY].join(',');
}

const HTTPS_PROXY_VARS = ['https_proxy', 'HTTPS_PROXY'] as const;
const HTTP_PROXY_VARS = ['http_proxy', 'HTTP_PROXY'] as const;

type Env = Readonly<Record<string, string | undefined>>;

/** Whether the process was started with Node's own switch (Node applied the variables itself). */
function nodeAppliesProxy(env: Env): boolean {
  return env.NODE_USE_ENV_PROXY === '1' || process.execArgv.includes('--use-env-proxy') || /(?:^|\s)--use-env-proxy\b/.test(env.NODE_OPTIONS ?? '');
}

let applied = false;

function first(env: Env, names: readonly string[]): string | undefined {
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

/** Go's rule: `proxy.corp:3128` is `http://proxy.corp:3128`. */
function withScheme(proxy: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`;
}

/** Whether the environment names a proxy (HTTPS_PROXY or HTTP_PROXY, either case). */
export function namesProxy(env: Env = process.env): boolean {
  return first(env, HTTPS_PROXY_VARS) !== undefined || first(env, HTTP_PROXY_VARS) !== undefined;
}

/**
 * Sends this process's outbound requests through the proxy the environment names. Answers a
 * warning when this Node cannot (they go direct); throws an input error for a proxy that is not
 * a usable URL.
 */
export async function useProxyFromEnv(env: Env = process.env): Promise<string | undefined> {
  if (!namesProxy(env)) return undefined;
  const { nodeHttp: http } = await import('./node-http.js');
  // Node >= 24.14, whose agents take `proxyEnv` too (the option is newer than @types/node 20).
  const setGlobalProxyFromEnv = (http as { setGlobalProxyFromEnv?: (env: Env) => unknown }).setGlobalProxyFromEnv;
  if (typeof setGlobalProxyFromEnv !== 'function') {
    if (nodeAppliesProxy(env)) {
      applied = true;
      return undefined;
    }
    return `a proxy is set (HTTPS_PROXY/HTTP_PROXY) but Node ${process.version} cannot route requests through it: they go direct (Node >= 24.14 does; or set NODE_USE_ENV_PROXY=1 where this Node supports it)`;
  }
  const httpsProxy = first(env, HTTPS_PROXY_VARS);
  const httpProxy = first(env, HTTP_PROXY_VARS);
  const proxyEnv = {
    ...(httpsProxy === undefined ? {} : { https_proxy: withScheme(httpsProxy) }),
    ...(httpProxy === undefined ? {} : { http_proxy: withScheme(httpProxy) }),
    no_proxy: noProxyOf(env),
  };
  for (const [name, proxy] of [['HTTPS_PROXY', proxyEnv.https_proxy], ['HTTP_PROXY', proxyEnv.http_proxy]] as const) {
    if (proxy !== undefined && !URL.canParse(proxy)) throw new BinnacleError('input', 'PROXY_INVALID', `${name}: not a usable proxy: ${redactText(proxy)} is not a URL`);
  }
  // The global agents setGlobalProxyFromEnv would make, without their 5 s socket timeout (there
  // the whole time a proxy has to answer CONNECT, whatever the request's own deadline) and
  // without fetch's dispatcher (loading undici): every request goes through http-request.ts,
  // under its caller's deadline. Each agent reads its own variable, as Go does: HTTPS_PROXY for
  // https://, HTTP_PROXY for http://.
  const { default: https } = await import('node:https');
  const options = { keepAlive: true, scheduling: 'lifo' as const, proxyEnv };
  if (httpProxy !== undefined) http.globalAgent = new http.Agent(options);
  if (httpsProxy !== undefined) https.globalAgent = new https.Agent(options);
  applied = true;
  return undefined;
}

function ipv4Number(address: string): number | undefined {
  const parts = address.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) < 256)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** Whether one NO_PROXY entry exempts `host` (lower case, no brackets) at `port`, as Node's agents decide it. */
function entryExempts(entry: string, host: string, port: number): boolean {
  const name = entry.toLowerCase();
  if (name === '*' || name === host || name === `${host}:${port}`) return true;
  if (name.startsWith('.')) return host === name.slice(1) || host.endsWith(name);
  if (name.startsWith('*.')) return host.endsWith(name.slice(1));
  // An IPv4 range, `192.168.1.0-192.168.1.255`.
  const [from, to] = name.split('-').map((x) => ipv4Number(x.trim()));
  const at = ipv4Number(host);
  return from !== undefined && to !== undefined && at !== undefined && at >= from && at <= to;
}

/** Whether NO_PROXY (`noProxy`, as noProxyOf gives it) exempts `url`, as node:http(s)'s agents decide it. */
function exempt(url: URL, noProxy: string): boolean {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  return noProxy.split(',').some((entry) => entry !== '' && entryExempts(entry.trim(), host, port));
}

function parseUrl(u: string | URL): URL | undefined {
  try {
    return new URL(u);
  } catch {
    return undefined;
  }
}

/**
 * The proxy a request for `target` goes through, as Node picks it (see above); undefined when
 * it goes direct or no proxy was put in place for this process.
 */
export function proxyFor(target: string | URL, env: Env = process.env): URL | undefined {
  if (!applied && !nodeAppliesProxy(env)) return undefined;
  const url = parseUrl(target);
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
  const raw = first(env, url.protocol === 'https:' ? HTTPS_PROXY_VARS : HTTP_PROXY_VARS);
  if (raw === undefined || exempt(url, noProxyOf(env))) return undefined;
  return parseUrl(withScheme(raw));
}

/** Go's words for the errors of a connection that could not be made. */
const CONNECT_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by peer',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network is unreachable',
  ETIMEDOUT: 'i/o timeout',
  UND_ERR_CONNECT_TIMEOUT: 'i/o timeout',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'temporary failure in name resolution',
};

interface NetworkErrorFields {
  code?: unknown;
  syscall?: unknown;
  address?: unknown;
  hostname?: unknown;
  port?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** What one error of a request's chain (fetch's or node:http(s)'s) says about the proxy at `hostname`:`port`, if anything. */
function proxyProblem(f: NetworkErrorFields, hostname: string, port: number, where: string, target: string): string | undefined {
  const code = typeof f.code === 'string' ? f.code : '';
  const message = typeof f.message === 'string' ? f.message : '';
  const toProxy =
    (f.syscall === 'getaddrinfo' && f.hostname === hostname) ||
    // A proxy given by name: its address is not known here, its port is.
    (f.syscall === 'connect' && f.port === port && (f.address === hostname || !/^[\d.]+$|:/.test(hostname))) ||
    (code === 'UND_ERR_CONNECT_TIMEOUT' && message.includes(`:${port}`));
  if (toProxy) {
    const words = CONNECT_FAILURES[code];
    return `proxyconnect ${where}: ${words === undefined ? code || message : `${words} (${code})`}`;
  }
  // undici's words for a refused CONNECT, then node:http(s)'s (ERR_PROXY_TUNNEL): `… via http://proxy:3128: HTTP/1.1 403 Forbidden`.
  const refused = /^Proxy response \((\d+)\)/.exec(message) ?? (code === 'ERR_PROXY_TUNNEL' ? /: HTTP\/[\d.]+ (\d{3})\b/.exec(message) : null);
  if (refused !== null) return `the proxy ${where} refused to open a tunnel to ${target}: HTTP ${refused[1]}`;
  // node:http(s): the proxy hung up (or sent too much) instead of answering the CONNECT.
  return code === 'ERR_PROXY_TUNNEL' ? `the proxy ${where} did not open a tunnel to ${target}: ${message.replace(/^Proxy response headers exceeded/, 'its answer exceeded')}` : undefined;
}

/**
 * When a request for `target` failed because the proxy could not be reached, or refused the
 * tunnel, says so in Go's words, naming the proxy (never its credentials):
 * `proxyconnect 127.0.0.1:3128: connection refused (ECONNREFUSED)`, as OLM v1's messages (and
 * alert rules matching `proxyconnect`) read. Undefined for any other failure.
 */
export function proxyFailure(err: unknown, target: string | URL, env: Env = process.env): string | undefined {
  const proxy = proxyFor(target, env);
  if (proxy === undefined) return undefined;
  const port = Number(proxy.port) || (proxy.protocol === 'https:' ? 443 : 80);
  const hostname = proxy.hostname.replace(/^\[(.*)\]$/, '$1');
  const where = `${proxy.hostname}:${port}`;
  const host = new URL(target).host;
  // fetch's TypeError or node:http's error, its cause, and the cause's own (or happy eyeballs' several attempts).
  const chain: unknown[] = [err];
  for (let i = 0; i < chain.length && i < 16; i++) {
    const e = chain[i];
    if (typeof e !== 'object' || e === null) continue;
    const f = e as NetworkErrorFields;
    const problem = proxyProblem(f, hostname, port, where, host);
    if (problem !== undefined) return problem;
    if (f.cause !== undefined) chain.push(f.cause);
    if (Array.isArray(f.errors)) chain.push(...(f.errors as unknown[]));
  }
  return undefined;
}
