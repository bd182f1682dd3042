/**
 * `binnacle console`: the web console (src/console) on loopback by default. Requests without
 * a bearer token run as this command's kubeconfig identity (impersonating --as/--as-group when
 * given); a browser that sends a token runs as that token.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { cacheDir } from '../../cluster/layout.js';
import type { CliContext } from '../context.js';
import { addKubeFlags, type KubeFlags } from '../kube.js';

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

export function registerConsoleCommand(program: Command, ctx: CliContext): void {
  addKubeFlags(program.command('console'))
    .description('Serve the web console: browse catalogs, plan and install operators, follow and uninstall them, as yourself')
    .option('--listen <host:port>', 'address to serve on (loopback unless told otherwise)', '127.0.0.1:8443')
    .option('--as <user>', 'impersonate this user for requests that send no bearer token')
    .option('--as-group <group>', 'impersonate this group too (repeatable)', collect)
    .action(async (flags: KubeFlags & { listen: string; as?: string; asGroup?: string[] }) => {
      const running = await serveConsole(flags, flags.listen, ctx);
      await new Promise<void>((resolve) => {
        const stop = (): void => void running.stop().finally(resolve);
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });
}

/** Starts the console for these cluster flags on `listen`; `binnacle manager --console-listen` uses it too. */
export async function serveConsole(flags: KubeFlags & { as?: string; asGroup?: string[] }, listen: string, ctx: CliContext): Promise<{ url: string; stop: () => Promise<void> }> {
  const [{ startConsole, parseListen }, { clientForToken }, { loadKubeConfig }, { KubeClient }] = await Promise.all([
    import('../../console/server.js'),
    import('../../console/identity.js'),
    import('../../kube/config.js'),
    import('../../kube/client.js'),
  ]);
  const { host, port } = parseListen('--listen', listen);
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
  });
  ctx.out(`console serving on ${running.url}\n`);
  return {
    url: running.url,
    stop: async () => {
      await running.stop();
      base.close();
    },
  };
}
