/**
 * The release engine over the one fake cluster for the operations' tests: each call builds the
 * operation's configuration (the fake's client, the release's history as Helm's Secrets) and
 * runs the real operation, as `binnacle release` does.
 */
import { pino } from 'pino';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { ClusterClient } from '../kube/ports.js';
import { actionConfig, type ActionConfig } from './action-config.js';
import { ReleaseStore } from './release-store.js';
import { rollback } from './rollback.js';
import { applyRelease, requestDigest, runDecision } from './run.js';
import { decideRelease, needsRender } from './decide.js';
import { uninstall, type UninstallOptions } from './uninstall.js';
import type { ApplyRequest, ReleaseRef, ReleaseRevision } from './types.js';

export const silent = pino({ level: 'silent' });

/** The engine over the fake cluster (its admin client), or over any client (an e2e test's real one). */
export function releaseEngine(source: FakeCluster | ClusterClient, opts: Partial<Omit<ActionConfig, 'client' | 'history'>> = {}) {
  const client = source instanceof FakeCluster ? source.client() : source;
  const store = new ReleaseStore(client);
  const cfg = (release: ReleaseRef): ActionConfig => actionConfig({ logger: silent, pollIntervalMs: 10, ...opts, client, history: store.bind(release) });
  return {
    cfg,
    apply: (req: ApplyRequest) => applyRelease(cfg(req.release), req),
    history: async (release: ReleaseRef): Promise<ReleaseRevision[]> => (await store.read(release)).revisions,
    rollback: (o: Parameters<typeof rollback>[1]) => rollback(cfg(o.release), o),
    uninstall: (o: UninstallOptions) => uninstall(cfg(o.release), o),
    /** One reconcile over a history already read (as the reconcilers do): decide, then carry it out. */
    reconcile: async (req: ApplyRequest, history: ReleaseRevision[]) => {
      const inputDigest = req.inputDigest ?? requestDigest(req);
      const decision = decideRelease(history, { owner: req.owner, inputDigest, ...(req.autoRollback === undefined ? {} : { autoRollback: req.autoRollback }) });
      return runDecision(cfg(req.release), decision, req, history, needsRender(decision) ? { ...req, inputDigest } : undefined);
    },
  };
}
