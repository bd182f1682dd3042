/**
 * A long-running process's last line against promises nobody awaited (one started before the
 * code that awaits it threw, say): Node's default ends the whole process, every controller and
 * its lease with it, for one reconcile's lost error. The handler logs the error with the
 * reconcile that started it (reconcile-context.ts), counts it in
 * `binnacle_unhandled_rejections_total{controller}`, and keeps the process running. Such an
 * error is a bug to fix (the count says it happened); the reconcile itself already ended, was
 * retried or requeued by its own outcome.
 */
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { errorMessage } from '../util/errors.js';
import { currentReconcile } from './reconcile-context.js';

export interface RejectionHandler {
  /** How many rejections it has handled, by controller ('' outside any reconcile). */
  counts(): Map<string, number>;
  /** Stops handling (tests; the process default comes back). */
  remove(): void;
}

/** Installs the process-level handler (see the top of this file). */
export function handleUnhandledRejections(logger: Logger, registry?: Registry): RejectionHandler {
  const counts = new Map<string, number>();
  const metric = registry === undefined ? undefined : new Counter({ name: 'binnacle_unhandled_rejections_total', help: 'Promises that rejected with nobody handling them, by the controller whose reconcile started them', labelNames: ['controller'], registers: [registry] });
  const handler = (reason: unknown): void => {
    const where = currentReconcile();
    const controller = where?.controller ?? '';
    counts.set(controller, (counts.get(controller) ?? 0) + 1);
    metric?.inc({ controller });
    logger.error({ controller: where?.controller, key: where?.key, err: errorMessage(reason), stack: reason instanceof Error ? reason.stack : undefined }, 'a promise rejected with nobody handling it (a bug); the process goes on');
  };
  process.on('unhandledRejection', handler);
  return { counts: () => new Map(counts), remove: () => void process.off('unhandledRejection', handler) };
}
