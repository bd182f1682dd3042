/**
 * The render cache: what Helm's engine answered for one input, kept so that the same input is
 * not rendered twice (an operator looks at every CR every reconcile period; a render that
 * generates keys costs seconds). Bounded in entries and in bytes, least recently used first
 * out, so no writer of values can grow the manager's memory through it. Callers copy what they
 * put in and take out (the cached value is never handed to code that might change it).
 */
export interface RenderCacheLimits {
  maxEntries: number;
  /** The sum of the entries' sizes as their writer measured them. */
  maxBytes: number;
}

export interface RenderCacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
  evictions: number;
}

/** 64 releases or 64 MiB (one render's output is bounded at 64 MiB by the engine). */
export const DEFAULT_RENDER_CACHE_LIMITS: RenderCacheLimits = { maxEntries: 64, maxBytes: 64 * 1024 * 1024 };

export class RenderCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(private readonly limits: RenderCacheLimits = DEFAULT_RENDER_CACHE_LIMITS) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Map order is insertion order: moving the entry to the end makes it the most recent.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value`, unless it alone is larger than the cache; evicts the least recently used past a bound. */
  set(key: string, value: V, bytes: number): void {
    this.drop(key);
    if (bytes > this.limits.maxBytes || this.limits.maxEntries < 1) return;
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.drop(oldest);
      this.evictions++;
    }
  }

  stats(): RenderCacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size, bytes: this.bytes, evictions: this.evictions };
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}
