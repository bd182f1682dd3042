/**
 * Collection of the trusted release records (apply/release-records.ts) whose owner is gone.
 *
 * An owner's uninstall removes its records itself; what this collects is what an uninstall never
 * ran for: an owner whose finalizer someone removed by hand, a CRD deleted with its objects, an
 * owner deleted and re-created under the same name (a new UID: the old UID's records are not its
 * history), records restored from a backup whose UIDs no longer exist. An owner counts as gone
 * when a live GET finds no object of its kind and name, or one with another UID (a kind no longer
 * served answers NotFound too). Records go only after the owner was seen gone by two sweeps at
 * least `graceMs` apart, so a discovery hiccup or a re-creation in flight removes nothing.
 */
import type { Logger } from 'pino';
import type { ReleaseRecords } from '../apply/release-records.js';
import type { ObjectReader } from '../kube/ports.js';
import { errorMessage } from '../util/errors.js';

export interface RecordsSweep {
  /** Owners whose records stay. */
  kept: number;
  /** Owners whose records were removed in this sweep. */
  removed: number;
}

export interface RecordsCollectorOptions {
  records: Pick<ReleaseRecords, 'owners' | 'removeOwner'>;
  /** Reads owners as the manager (a live GET, not a cache that may lag a creation). */
  client: Pick<ObjectReader, 'find'>;
  logger: Logger;
  /** How long an owner stays gone before its records go (default ten minutes). */
  graceMs?: number;
  now?: () => number;
}

export class ReleaseRecordsCollector {
  /** Owner UID → when a sweep first saw it gone. */
  private readonly goneSince = new Map<string, number>();
  private readonly graceMs: number;
  private readonly now: () => number;

  constructor(private readonly o: RecordsCollectorOptions) {
    this.graceMs = o.graceMs ?? 10 * 60_000;
    this.now = o.now ?? Date.now;
  }

  async sweep(): Promise<RecordsSweep> {
    const out: RecordsSweep = { kept: 0, removed: 0 };
    const owners = await this.o.records.owners();
    const seen = new Set<string>();
    for (const owner of owners) {
      seen.add(owner.uid);
      let live;
      try {
        // Records from before the owner's apiVersion was kept name none: such an owner is never judged gone.
        live = owner.apiVersion === '' ? undefined : await this.o.client.find({ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, ...(owner.namespace === undefined ? {} : { namespace: owner.namespace }) });
      } catch (err) {
        this.o.logger.debug({ owner: owner.uid, err: errorMessage(err) }, 'release records kept: the owner could not be read');
        out.kept++;
        continue;
      }
      if (owner.apiVersion === '' || live?.metadata.uid === owner.uid) {
        this.goneSince.delete(owner.uid);
        out.kept++;
        continue;
      }
      const since = this.goneSince.get(owner.uid);
      if (since === undefined || this.now() - since < this.graceMs) {
        if (since === undefined) this.goneSince.set(owner.uid, this.now());
        out.kept++;
        continue;
      }
      const n = await this.o.records.removeOwner(owner.uid);
      this.goneSince.delete(owner.uid);
      out.removed++;
      this.o.logger.info({ kind: owner.kind, name: owner.name, namespace: owner.namespace, uid: owner.uid, revisions: n, replacedBy: live?.metadata.uid }, 'release records removed: their owner is gone');
    }
    for (const uid of this.goneSince.keys()) if (!seen.has(uid)) this.goneSince.delete(uid);
    return out;
  }

  /** A sweep whose outcome is logged, never thrown (a timer's). */
  async sweepLogged(): Promise<void> {
    try {
      const r = await this.sweep();
      if (r.removed > 0) this.o.logger.info(r, 'release records collected');
    } catch (err) {
      this.o.logger.warn({ err: errorMessage(err) }, 'release records collection failed');
    }
  }
}

/** Sweeps every `intervalMs` until `signal` (helm-operator run's; the manager chains it after its stores' collection). */
export function collectRecordsEvery(collector: ReleaseRecordsCollector, intervalMs: number, signal: AbortSignal): void {
  const timer = setInterval(() => void collector.sweepLogged(), intervalMs);
  timer.unref();
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
