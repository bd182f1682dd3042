/**
 * Deadlines for calls that leave the process (API server, registries, git and http sources):
 * recognising a timeout, and saying it the same way everywhere — which host, which deadline.
 */

/** Whether `err` (or its cause) is an abort by a timeout (`AbortSignal.timeout`, a killed child). */
export function isTimeout(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (typeof e !== 'object') return false;
    const { name, code } = e as { name?: unknown; code?: unknown };
    if (name === 'TimeoutError' || code === 'ETIMEDOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** `90 s`, `1.5 s`, `250 ms`, `5 min`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/** "no answer from <host> within <deadline>", the one wording for every timeout. */
export function timeoutReason(host: string, ms: number): string {
  return `no answer from ${host} within ${formatDuration(ms)}`;
}

/**
 * Probes every `intervalMs` until `done` holds for what `probe` answers, or `timeoutMs` has
 * passed; answers the last probe and whether it was done, so that the caller can say what it
 * waited for and what was still in the way.
 */
export async function pollUntil<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  o: { timeoutMs: number; intervalMs: number; sleep?: (ms: number, atMostMs: number) => Promise<void> },
): Promise<{ value: T; done: boolean }> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return { value, done: true };
    if (Date.now() >= deadline) return { value, done: false };
    await (o.sleep === undefined ? new Promise((r) => setTimeout(r, o.intervalMs)) : o.sleep(o.intervalMs, Math.max(0, deadline - Date.now())));
  }
}
