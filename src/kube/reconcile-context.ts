/**
 * Which reconcile is running, carried through everything it starts (AsyncLocalStorage): a
 * promise it leaves behind that rejects unhandled is reported with its controller and key
 * (unhandled.ts), not as an anonymous crash of the whole manager; and how code deep in a
 * reconcile waits for the world without holding one of its controller's workers.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ReconcileScope {
  controller: string;
  key: string;
  /** Sleeps with the reconcile's worker given back (controller.ts); the key stays in flight. */
  sleepWithoutWorker?: (ms: number, atMostMs?: number) => Promise<void>;
}

const scope = new AsyncLocalStorage<ReconcileScope>();

/** Runs `fn` as the reconcile of `key` by `controller`. */
export function inReconcile<T>(s: ReconcileScope, fn: () => T): T {
  return scope.run(s, fn);
}

/** The reconcile the current code runs in (or was started from), if any. */
export function currentReconcile(): ReconcileScope | undefined {
  return scope.getStore();
}

/**
 * Waits about `ms` between two looks at the world (is the hook Job done? is the object gone?)
 * without holding a worker of the running reconcile's controller: one tenant's Jobs that never
 * finish must not stop every other tenant's reconciles of the kind. With many such sleepers
 * the controller stretches the sleep, never past `atMostMs` (what is left of the caller's
 * deadline) nor 30 s. Outside a controller's worker (the CLI, a test calling a reconciler), a
 * plain sleep of `ms`.
 */
export function sleepWithoutWorker(ms: number, atMostMs?: number): Promise<void> {
  const s = scope.getStore()?.sleepWithoutWorker;
  return s === undefined ? sleep(ms) : s(ms, atMostMs);
}
