/**
 * Which reconcile is running, carried through everything it starts (AsyncLocalStorage): a
 * promise it leaves behind that rejects unhandled is reported with its controller and key
 * (unhandled.ts), not as an anonymous crash of the whole manager.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface ReconcileScope {
  controller: string;
  key: string;
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
