/**
 * How the release reconcilers (BundleDeployment, the Helm operator's kinds) reach the release
 * engine: each release's trusted history (keyed by its owner's UID, in the manager's namespace,
 * mirrored as Helm's records in the release namespace as the release's identity) and the
 * operations' configuration acting as that identity; and how what a history read found wrong
 * (records refused by their bounds or checks, a mirror changed by hand) is said on the owner.
 */
import type { Logger } from 'pino';
import { actionConfig, ReleaseStore, type ActionConfig, type MigrationCheck, type RecordOwner, type ReleaseRecords, type ReleaseRef, type TrustedHistory, type TrustedRead } from '../apply/index.js';
import type { SchemaSource } from '../kube/openapi.js';
import type { ClusterClient } from '../kube/ports.js';
import type { Renderer } from '../render/index.js';
import type { Conditions } from './common.js';

/** Said while records of the release could not be read or moved over (their bounds, their owner, their scope). */
export const RECORDS_REFUSED_CONDITION = 'ReleaseRecordsRefused';
/** Said when the release's Helm records (the mirror) were found changed or added by hand, and put back. */
export const MIRROR_DRIFTED_CONDITION = 'ReleaseRecordsDrifted';

export interface ReleaseEngineOptions {
  /** The trusted store, written as the manager itself. */
  records: ReleaseRecords;
  /** The server's schemas (fields they do not declare are dropped before applying). */
  schemas?: SchemaSource;
  /** How often health and CRDs are probed; default 1 s. */
  pollIntervalMs?: number;
  /**
   * What new revisions are rendered with: one renderer per process, so that every reconciler's
   * renders share its cache (default: one of the reconciler's own, made on first render).
   */
  renderer?: Renderer;
}

export interface OpenRelease {
  history: TrustedHistory;
  cfg: ActionConfig;
}

/** The release's trusted history and the engine's configuration, acting as `identity`. */
export function openRelease(o: ReleaseEngineOptions, owner: RecordOwner, release: ReleaseRef, identity: ClusterClient, logger: Logger, migrate?: MigrationCheck): OpenRelease {
  const history = o.records.bind(owner, release, new ReleaseStore(identity), migrate);
  return { history, cfg: actionConfig({ client: identity, history, logger, schemas: o.schemas, ...(o.pollIntervalMs === undefined ? {} : { pollIntervalMs: o.pollIntervalMs }) }) };
}

/** Says on the owner what the read found: records refused (by name and why), the mirror put back; each condition removed once there is nothing to say. */
export function reportHistoryRead(read: TrustedRead, conditions: Conditions, logger: Logger): void {
  if (read.refused.length === 0) conditions.remove(RECORDS_REFUSED_CONDITION);
  else {
    const shown = read.refused.slice(0, 5).map((r) => `${r.secret}: ${r.reason}`);
    const more = read.refused.length > 5 ? `; and ${read.refused.length - 5} more` : '';
    conditions.set(RECORDS_REFUSED_CONDITION, true, 'RecordRefused', `${read.refused.length} release record${read.refused.length === 1 ? '' : 's'} not used (nothing in ${read.refused.length === 1 ? 'it' : 'them'} is applied): ${shown.join('; ')}${more}`);
    logger.warn({ refused: read.refused }, 'release records refused');
  }
  if (read.mirrorDrift.length === 0) conditions.remove(MIRROR_DRIFTED_CONDITION);
  else {
    const what = read.mirrorDrift.map((d) => (d.stray !== undefined ? `record ${d.stray} added by hand` : `revision ${d.revision} ${d.change === 'added' ? 'added' : 'changed'} by hand`)).join(', ');
    conditions.set(MIRROR_DRIFTED_CONDITION, true, 'HelmRecordsChanged', `the release's Helm records were changed outside Binnacle (${what}); nothing in them was run, and they were put back as Binnacle's history says`);
  }
}

/** The owner's metadata.generation, for the release decision and the revision's record (none when the server set none). */
export function generationOf(owner: { metadata: { generation?: number } }): { generation?: number } {
  const g = owner.metadata.generation;
  return typeof g === 'number' && Number.isSafeInteger(g) && g > 0 ? { generation: g } : {};
}
