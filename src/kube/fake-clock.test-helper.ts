/** A clock for the limiter's and the retries' tests: it moves only when told, or when something sleeps on it (no real time passes). */
import type { Clock } from './rate-limit.js';

export class FakeClock implements Clock {
  t = 0;
  readonly slept: number[] = [];
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    this.slept.push(ms);
    this.t += ms;
    return Promise.resolve();
  }
}
