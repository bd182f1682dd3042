/**
 * `binnacle helm-operator run --watches watches.yaml`: an operator-sdk Helm operator, unchanged,
 * as one process (the entry point of a Helm operator's container image). Each watch serves its
 * kind with the Helm release reconciler; leader election as in `binnacle manager`. As
 * operator-sdk's, it serves the namespaces in WATCH_NAMESPACE (comma-separated, as OLM's
 * `olm.targetNamespaces` annotation gives them), every namespace when that is empty or unset.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { addHelmEngineFlags, helmEngineOptionsOf, type HelmEngineFlags } from '../flags.js';
import { addKubeFlags, clientFor, type KubeFlags } from '../kube.js';
import type { WriteFence } from '../../kube/client.js';

/** The digest of a chart directory (tree) or archive (bytes). */
async function chartDigest(path: string): Promise<string> {
  if (statSync(path).isFile()) return `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
  const { digestTree } = await import('../../source/index.js');
  return (await digestTree(path)).digest;
}

export function registerHelmOperatorCommands(program: Command, ctx: CliContext): void {
  const ho = program.command('helm-operator').description("Run operator-sdk Helm operators (watches.yaml) on Binnacle's Helm engine");
  addHelmEngineFlags(addKubeFlags(ho.command('run')))
    .description('Reconcile the custom resources of every kind in watches.yaml as Helm releases of its chart')
    .option('--watches <file>', 'watches.yaml (operator-sdk format)', './watches.yaml')
    .option('--leader-elect', 'elect a leader with a Lease before reconciling')
    .option('--leader-election-namespace <ns>', 'namespace of the leader Lease', 'default')
    .option('--leader-election-id <name>', 'name of the leader Lease')
    .option('--watch-namespace <list>', 'namespaces to serve, comma-separated (default: $WATCH_NAMESPACE; empty: all)')
    .action(async (flags: KubeFlags & { watches: string; leaderElect?: boolean; leaderElectionNamespace: string; leaderElectionId?: string; watchNamespace?: string; } & HelmEngineFlags) => {
      // Liftoff only: this process should fit operator-sdk's 128 MiB-class limits (see HelmEngineOptions).
      (await import('../../helm/engine.js')).configureHelmEngine({ ...helmEngineOptionsOf(flags), optimizingCompiler: false });
      const { loadWatches } = await import('../../helm/watches.js');
      const { runHelmKind } = await import('../../controllers/helm-kinds.js');
      const { parseDuration } = await import('../../controllers/helm-release.js');
      const { LeaderElector } = await import('../../kube/leader-election.js');
      const watches = loadWatches(flags.watches);
      const client = await clientFor(flags);
      const charts = new Map<string, { path: string; digest: string; version: string }>();
      for (const w of watches) charts.set(w.chart, { path: w.chart, digest: await chartDigest(w.chart), version: '' });
      const stop = new AbortController();
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
      const listed = (flags.watchNamespace ?? process.env.WATCH_NAMESPACE ?? '').split(',').map((n) => n.trim());
      // One namespace each, or [undefined]: every namespace.
      const namespaces = listed.includes('') ? [undefined] : [...new Set(listed)];
      // With leader election every write passes the leadership fence: none once the lease may be lost.
      const serve = async (signal: AbortSignal, fence?: WriteFence): Promise<void> => {
        const writer = fence === undefined ? client : client.fenced(fence);
        const running = watches.flatMap((w) => namespaces.map((namespace) =>
          runHelmKind(
            {
              group: w.group,
              version: w.version,
              kind: w.kind,
              chart: () => charts.get(w.chart),
              // operator-sdk's model: releases act as this process, confined by the RBAC its bundle grants.
              identity: { type: 'own' },
              overrideValues: w.overrideValues,
              watchDependentResources: w.watchDependentResources,
              ...(w.reconcilePeriod === undefined ? {} : { reconcilePeriodMs: parseDuration(w.reconcilePeriod) ?? 60_000 }),
            },
            { client: writer, logger: ctx.logger, maxConcurrentReconciles: w.maxConcurrentReconciles, ...(w.selector === undefined ? {} : { selector: w.selector }), ...(namespace === undefined ? {} : { namespace }) },
          ),
        ));
        ctx.logger.info({ kinds: watches.map((w) => `${w.kind}.${w.version}.${w.group}`), namespaces: namespaces[0] === undefined ? 'all' : namespaces }, 'serving Helm operator kinds');
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        await Promise.all(running.map((r) => r.stop()));
      };
      if (flags.leaderElect === true) {
        const elector = new LeaderElector({
          client,
          namespace: flags.leaderElectionNamespace,
          name: flags.leaderElectionId ?? `helm-operator-${watches.map((w) => w.kind.toLowerCase()).join('-')}`.slice(0, 63),
          identity: `${process.env.HOSTNAME ?? 'local'}_${process.pid}`,
          logger: ctx.logger,
          onStartedLeading: serve,
          // Lost (not released at a SIGTERM): stop at once and fail, so the Pod restarts and campaigns again.
          onStoppedLeading: (lost) => {
            if (!lost) return;
            ctx.logger.error('leader election lost; stopping');
            stop.abort();
            process.exitCode = 1;
          },
        });
        await elector.run(stop.signal);
      } else {
        await serve(stop.signal);
      }
      client.close();
    });
}
