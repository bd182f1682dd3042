/**
 * `binnacle console`: the web console (src/console) on loopback by default. There the console's
 * kubeconfig identity (impersonating --as/--as-group when given) is lent only to a browser that
 * opened the one-time login URL printed on stderr; a browser that sends a bearer token runs as
 * that token. Off loopback it needs TLS and a per-person credential (--require-person-token, or a
 * trusted proxy's identity header), and lends nothing. `binnacle manager --console-listen` serves
 * the same console with the same flags prefixed `--console-`, and never lends the manager's identity.
 */
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Command } from 'commander';
import { cacheDir } from '../../cluster/layout.js';
import { UsageError } from '../../util/errors.js';
import type { CliContext } from '../context.js';
import { collect, readTlsPair } from '../flags.js';
import { addKubeFlags, type KubeFlags } from '../kube.js';


/** The access flags, as `binnacle console` names them (the manager's carry a `console-` prefix). */
export interface ConsoleAccessFlags {
  publicAddress?: string[];
  tlsCert?: string;
  tlsKey?: string;
  tlsSelfSigned?: boolean;
  requirePersonToken?: boolean;
  trustedProxyHeader?: string;
  trustedProxyGroupHeader?: string;
  trustedProxyCidr?: string[];
  unsafeLendIdentity?: boolean;
}

const ACCESS_FLAGS: readonly [keyof ConsoleAccessFlags, string, string, boolean][] = [
  ['publicAddress', 'public-address <host[:port]>', 'a name the console is reached by besides loopback (repeatable, or a comma list); other Host headers get 421', true],
  ['tlsCert', 'tls-cert <file>', 'serve HTTPS with this certificate (PEM; needed off loopback unless --tls-self-signed)', false],
  ['tlsKey', 'tls-key <file>', 'the key of --tls-cert (PEM)', false],
  ['tlsSelfSigned', 'tls-self-signed', 'serve HTTPS with a new self-signed certificate; its SHA-256 fingerprint is printed', false],
  ['requirePersonToken', 'require-person-token', "every request must send the person's own Kubernetes token (Authorization: Bearer); the console lends no identity", false],
  ['trustedProxyHeader', 'trusted-proxy-header <name>', 'believe this header (e.g. X-Forwarded-User) from --trusted-proxy-cidr peers, and impersonate the user it names', false],
  ['trustedProxyGroupHeader', 'trusted-proxy-group-header <name>', "the trusted proxy's header of the user's groups, comma-separated (e.g. X-Forwarded-Groups)", false],
  ['trustedProxyCidr', 'trusted-proxy-cidr <cidr>', 'addresses of the trusted proxy (repeatable, or a comma list)', true],
  ['unsafeLendIdentity', 'unsafe-lend-identity', 'loopback only: lend the kubeconfig identity to every local page without the login token (any process or page reaching loopback acts as you)', false],
];

const camel = (s: string): string => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** What the manager's console has no flag for: it always requires a person's credential and never lends. */
const NOT_FOR_MANAGER = new Set<keyof ConsoleAccessFlags>(['requirePersonToken', 'unsafeLendIdentity']);

/** Adds the access flags to `cmd`, each name prefixed with `prefix` (the manager's: `console-`, without the lending ones). */
export function addConsoleAccessFlags(cmd: Command, prefix = ''): Command {
  for (const [key, spec, help, many] of ACCESS_FLAGS) {
    if (prefix !== '' && NOT_FOR_MANAGER.has(key)) continue;
    const text = prefix === '' ? help : help.replace(/--([a-z])/g, `--${prefix}$1`);
    if (many) cmd.option(`--${prefix}${spec}`, text, collect);
    else cmd.option(`--${prefix}${spec}`, text);
  }
  return cmd;
}

/** The access flags out of a command's parsed flags, by their prefixed names. */
export function consoleAccessFlagsOf(flags: object, prefix = ''): ConsoleAccessFlags {
  const all = flags as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key] of ACCESS_FLAGS) {
    const v = all[prefix === '' ? key : camel(`${prefix}${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

export function registerConsoleCommand(program: Command, ctx: CliContext): void {
  addConsoleAccessFlags(addKubeFlags(program.command('console')))
    .description('Serve the web console: browse catalogs, plan and install operators, follow and uninstall them, as yourself')
    .option('--listen <host:port>', 'address to serve on (loopback unless told otherwise)', '127.0.0.1:8443')
    .option('--as <user>', 'impersonate this user for a logged-in browser that sends no bearer token of its own')
    .option('--as-group <group>', 'impersonate this group too (repeatable)', collect)
    .action(async (flags: KubeFlags & ConsoleAccessFlags & { listen: string; as?: string; asGroup?: string[] }) => {
      const running = await serveConsole(flags, consoleAccessFlagsOf(flags), flags.listen, ctx);
      await new Promise<void>((resolve) => {
        const stop = (): void => void running.stop().finally(resolve);
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });
}

export interface ServeOptions {
  /** `binnacle manager --console-listen`: flags are prefixed `console-`, and the manager's identity is never lent. */
  manager?: boolean;
}

/** Reads --tls-cert/--tls-key, or makes a self-signed certificate for the console's names. */
async function tlsOf(a: ConsoleAccessFlags, host: string, names: readonly string[], flag: (f: string) => string): Promise<{ certPem: string; keyPem: string; selfSigned: boolean } | undefined> {
  if (a.tlsCert !== undefined && a.tlsSelfSigned === true) throw new UsageError(`${flag('tls-self-signed')} or ${flag('tls-cert')}, not both`);
  const given = await readTlsPair({ cert: a.tlsCert, key: a.tlsKey }, { cert: flag('tls-cert'), key: flag('tls-key') });
  if (given !== undefined) return { ...given, selfSigned: false };
  if (a.tlsSelfSigned !== true) return undefined;
  const { createCertificateAuthority, issueCertificate } = await import('../../util/pki.js');
  const ca = await createCertificateAuthority('binnacle console (self-signed)', 365);
  const literal = host !== '0.0.0.0' && host !== '::' && isIP(host) !== 0 ? [host] : [];
  const hosts = [...new Set(['localhost', '127.0.0.1', '::1', ...literal, ...names.map((n) => n.replace(/^\[(.*)\]$/, '$1'))])];
  return { ...(await issueCertificate(ca, { commonName: 'binnacle console', hosts, usage: 'server', validDays: 365 })), selfSigned: true };
}

/** The reverse proxy whose header names the person, when `--trusted-proxy-header` is given (its other flags need it). */
function trustedProxyOf(a: ConsoleAccessFlags, flag: (f: string) => string): { header: string; groupHeader: string | undefined; cidrs: string[] } | undefined {
  if (a.trustedProxyHeader !== undefined) return { header: a.trustedProxyHeader, groupHeader: a.trustedProxyGroupHeader, cidrs: a.trustedProxyCidr ?? [] };
  if (a.trustedProxyCidr !== undefined || a.trustedProxyGroupHeader !== undefined) throw new UsageError(`${flag('trusted-proxy-cidr')} and ${flag('trusted-proxy-group-header')} need ${flag('trusted-proxy-header')}`);
  return undefined;
}

/** Whether the console lends its own identity: never when each person brings theirs (a token, a proxy, the manager's console). */
function lendOf(a: ConsoleAccessFlags, proxied: boolean, manager: boolean, flag: (f: string) => string): 'unsafe' | 'never' | 'login-token' {
  const personal = a.requirePersonToken === true || proxied || manager;
  if (a.unsafeLendIdentity !== true) return personal ? 'never' : 'login-token';
  if (personal) throw new UsageError(`${flag('unsafe-lend-identity')} contradicts ${manager ? "the manager's console, which never lends its identity" : `${flag('require-person-token')} and ${flag('trusted-proxy-header')}`}`);
  return 'unsafe';
}

/** Starts the console for these cluster flags on `listen`; `binnacle manager --console-listen` uses it too. */
export async function serveConsole(flags: KubeFlags & { as?: string; asGroup?: string[] }, a: ConsoleAccessFlags, listen: string, ctx: CliContext, serve: ServeOptions = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  const [{ startConsole, parseListen }, { ensureConsoleAssets }, { clientForToken }, { loadKubeConfig }, { KubeClient }, { blockListOf, checkStart, parsePublicAddresses }] = await Promise.all([
    import('../../console/server.js'),
    import('../../console/assets.js'),
    import('../../console/identity.js'),
    import('../../kube/config.js'),
    import('../../kube/client.js'),
    import('../../console/access.js'),
  ]);
  const prefix = serve.manager === true ? 'console-' : '';
  const flag = (f: string): string => `--${prefix}${f}`;
  const { host, port } = parseListen(flag('listen'), listen);
  const publicAddresses = parsePublicAddresses(a.publicAddress ?? []);
  const trustedProxy = trustedProxyOf(a, flag);
  if (trustedProxy !== undefined) blockListOf(trustedProxy.cidrs, flag('trusted-proxy-cidr'));
  const lend = lendOf(a, trustedProxy !== undefined, serve.manager === true, flag);
  const tls = await tlsOf(a, host, publicAddresses.map((p) => p.hostname), flag);
  checkStart({
    host,
    listenFlag: flag('listen'),
    flags: { tls: `${flag('tls-cert')} and ${flag('tls-key')}, or ${flag('tls-self-signed')}`, lend: flag('unsafe-lend-identity'), bearer: flag('require-person-token'), proxy: flag('trusted-proxy-header'), proxyCidr: flag('trusted-proxy-cidr') },
    tls: tls !== undefined,
    lend,
    requirePersonToken: a.requirePersonToken === true || serve.manager === true,
    trustedProxy,
    manager: serve.manager === true,
  });
  const kc = loadKubeConfig({ kubeconfig: flags.kubeconfig, context: flags.context });
  const base = await KubeClient.fromKubeConfig(kc);
  const running = await startConsole({
    host,
    port,
    base,
    forToken: (token) => clientForToken(kc, token),
    impersonate: flags.as === undefined ? undefined : { user: flags.as, ...(flags.asGroup === undefined ? {} : { groups: flags.asGroup }) },
    logger: ctx.logger,
    cacheDir: join(cacheDir(), 'console-data'),
    // The page, built (when stale) from src/console/web into .cache/console.
    assetsDir: await ensureConsoleAssets({ outDir: join(cacheDir(), 'console') }),
    access: { lend, trustedProxy, publicAddresses },
    tls,
    onLoginUrl: (url) => ctx.err(`console login (one browser, once): ${url}\n`),
  });
  ctx.out(`console serving on ${running.url}\n`);
  if (lend === 'unsafe') ctx.err(`warning: ${flag('unsafe-lend-identity')}: any page or process that reaches ${running.url} acts as your kubeconfig identity\n`);
  if (tls?.selfSigned === true) ctx.err(`console TLS certificate (self-signed) SHA-256 fingerprint: ${new X509Certificate(tls.certPem).fingerprint256}\n`);
  return {
    url: running.url,
    stop: async () => {
      await running.stop();
      base.close();
    },
  };
}
