/**
 * The configuration every operation of the release engine shares, as Helm's
 * `action.Configuration`: the client acting as the release's identity, where the release's
 * history is kept, the server's schemas, the logger and the engine's timings. The operations
 * (install.ts, upgrade through install.ts, repair.ts, rollback.ts, uninstall.ts) are functions
 * over it; run.ts carries out a decision (decide.ts) with them.
 */
import type { Logger } from 'pino';
import { isNotFound } from '../kube/errors.js';
import type { SchemaSource } from '../kube/openapi.js';
import type { ClusterClient } from '../kube/ports.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import type { HistoryStore } from './release-store.js';

export interface ActionConfig {
  /** Acting as the release's identity: what it may not do, the API server refuses. */
  client: ClusterClient;
  /** This release's history (the trusted records, or Helm's Secrets for `binnacle release`). */
  history: HistoryStore;
  logger: Logger;
  /** The server's schemas, to drop fields they do not declare (as OLM does); without them nothing is dropped. */
  schemas?: SchemaSource | undefined;
  /** How long new CRDs may take to be Established. */
  crdTimeoutMs: number;
  /** How long an object deleted to be replaced (force) may take to go. */
  replaceTimeoutMs: number;
  /** How often health and CRDs are probed. */
  pollIntervalMs: number;
  /** Revisions kept after a successful run, oldest dropped first (never the deployed one); 0 keeps all. */
  maxHistory: number;
}

export interface ActionConfigOptions extends Partial<Omit<ActionConfig, 'client' | 'history' | 'logger'>> {
  client: ClusterClient;
  history: HistoryStore;
  logger: Logger;
}

/** A configuration with the engine's defaults: CRDs 60 s, replacement 120 s, probes every second, 10 revisions as operator-controller keeps. */
export function actionConfig(o: ActionConfigOptions): ActionConfig {
  return { crdTimeoutMs: 60_000, replaceTimeoutMs: 120_000, pollIntervalMs: 1000, maxHistory: 10, ...o };
}

/** CRDs to be Established and replaced objects to go are usually quick: probed more often than health. */
export function waitIntervalMs(cfg: ActionConfig): number {
  return Math.min(cfg.pollIntervalMs, 250);
}

/** GET that also answers undefined when the kind itself is not served (its CRD is gone). */
export async function findQuiet(client: Pick<ClusterClient, 'find'>, ref: ObjectRef): Promise<KubeObject | undefined> {
  try {
    return await client.find(ref);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
