/**
 * The caching engine: a wrapper over Helm's engine that answers a render it has answered before
 * from a bounded cache, so that the same input is not rendered twice (an operator looks at every
 * CR every reconcile period; a render that generates keys costs seconds). A render is keyed by
 * everything Helm's answer depends on: the chart by digest (not by path), the request, and who
 * `lookup` reads as, so renders for different identities never share an entry; a render whose
 * chart has no digest is not cached. Values nested past MAX_NESTING are refused before anything
 * walks them (hashing, merging, the engine's JSON). It sits beside the engine's TypeScript host
 * and calls only down, into the engine it wraps; its state is its own (one per renderer), never
 * the module's.
 *
 * The cache itself (RenderCache) is bounded in entries and in bytes, least recently used first
 * out, so no writer of values can grow the manager's memory through it. Callers copy what they
 * put in and take out (the cached value is never handed to code that might change it).
 */
import { createHash } from 'node:crypto';
import { sharedChart } from '../apply/chart-intern.js';
import { canonicalJson } from '../util/canonical-json.js';
import { InputError } from '../util/errors.js';
import { copyJson, jsonSize } from '../util/object.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import type { ChartDescription, HelmEngine, TemplateRequest, RenderResult, TemplateResult } from './engine.js';
import type { HelmChart } from './release-types.js';

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

  /** Whether an entry of `bytes` would be kept (no larger than the cache itself). */
  accepts(bytes: number): boolean {
    return bytes <= this.limits.maxBytes && this.limits.maxEntries >= 1;
  }

  /** Keeps `value`, unless it alone is larger than the cache; evicts the least recently used past a bound. */
  set(key: string, value: V, bytes: number): void {
    this.drop(key);
    if (!this.accepts(bytes)) return;
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

/** What a render is cached under besides its request. */
export interface CacheKey {
  /** Digest of the chart's source; empty: nothing says what the chart holds, so nothing is cached. */
  chartDigest: string;
  /** Who `lookup` reads as, by name; renders for different identities never share an entry. */
  lookupAs?: string | undefined;
  /** Without a name, the client `lookup` reads through: only renders through the same client object share an entry. */
  lookupClient?: object | undefined;
}

/** How often the engine was asked, and the cache's counts (for tests and metrics). */
export interface CachingEngineStats {
  renders: number;
  templates: number;
  cache: RenderCacheStats;
}

/**
 * Helm's engine with a render cache in front (see the top of this file). `base` is the engine,
 * or how to load it on first use (Helm's engine is loaded only when something is rendered).
 */
export class CachingEngine implements HelmEngine {
  private readonly cache: RenderCache<RenderResult>;
  private readonly clientIds = new WeakMap<object, number>();
  private nextClientId = 0;
  private loaded: HelmEngine | undefined;
  private readonly counts = { renders: 0, templates: 0 };

  constructor(
    private readonly base: HelmEngine | (() => Promise<HelmEngine>),
    limits: RenderCacheLimits = DEFAULT_RENDER_CACHE_LIMITS,
  ) {
    this.cache = new RenderCache<RenderResult>(limits);
    if (typeof base !== 'function') this.loaded = base;
  }

  /** Helm's release for `req`: from the cache under `key` and the request; rendered and kept otherwise. Uncached without a key or a chart digest. */
  async render(req: TemplateRequest, key?: CacheKey): Promise<RenderResult> {
    this.counts.renders++;
    checkValues(req.values);
    const engine = await this.engine();
    if (key === undefined || key.chartDigest === '') return engine.render(req);
    const who = req.lookup === undefined ? '' : (key.lookupAs ?? `client ${this.clientId(key.lookupClient ?? req.lookup)}`);
    const cacheKey = renderKey(req, key.chartDigest, who);
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) return copyOf(hit);
    const rendered = await engine.render(req);
    const res: RenderResult = { ...rendered, release: { ...rendered.release, chart: sharedChart(rendered.release.chart as unknown as Record<string, unknown>) as unknown as HelmChart } };
    // The chart is shared with every record of it (chart-intern), so an entry costs the rest of the answer.
    // Measured and copied without writing or cloning its manifests: a render of 100,000 objects held the loop for ~150 ms here.
    const bytes = jsonSize({ ...res, release: { ...res.release, chart: null } });
    if (this.cache.accepts(bytes)) this.cache.set(cacheKey, copyOf(res), bytes);
    return res;
  }

  /** `helm template`: never cached (what it prints is the answer, read once). */
  async template(req: TemplateRequest): Promise<TemplateResult> {
    this.counts.templates++;
    checkValues(req.values);
    return (await this.engine()).template(req);
  }

  async inspect(chart: string): Promise<ChartDescription[]> {
    return (await this.engine()).inspect(chart);
  }

  threads(): number {
    return this.loaded?.threads() ?? 0;
  }

  memory(): { bytes: number; recycled: number } {
    return this.loaded?.memory() ?? { bytes: 0, recycled: 0 };
  }

  async close(): Promise<void> {
    await this.loaded?.close();
  }

  /**
   * This engine as code that takes a HelmEngine sees it (helm/chart-render.ts, publish/helm-bundle,
   * publish/helm-release), its renders cached under `key`. A view that calls only this engine: down.
   */
  keyed(key: CacheKey): HelmEngine {
    return {
      render: (req) => this.render(req, key),
      template: (req) => this.template(req),
      inspect: (chart) => this.inspect(chart),
      threads: () => this.threads(),
      memory: () => this.memory(),
      close: () => this.close(),
    };
  }

  stats(): CachingEngineStats {
    return { ...this.counts, cache: this.cache.stats() };
  }

  /** Empties the cache. */
  clear(): void {
    this.cache.clear();
  }

  private async engine(): Promise<HelmEngine> {
    if (this.loaded !== undefined) return this.loaded;
    const load = this.base;
    if (typeof load !== 'function') return load;
    this.loaded = await load();
    return this.loaded;
  }

  /** A client object's number: renders that looked up through different clients of unknown identity never share an entry. */
  private clientId(client: object): number {
    let id = this.clientIds.get(client);
    if (id === undefined) {
      id = ++this.nextClientId;
      this.clientIds.set(client, id);
    }
    return id;
  }
}

/** Walkers (merging, hashing, the engine's JSON) must not meet values deeper than they can follow. */
export function checkValues(values: Record<string, unknown> | undefined): void {
  if (nestsDeeperThan(values)) throw new InputError('HELM_VALUES_TOO_DEEP', `nests deeper than ${MAX_NESTING} levels`, { field: 'values' });
}

/** A deep copy of a render's answer that shares its chart (a shared chart is never changed). */
function copyOf(res: RenderResult): RenderResult {
  const { chart, ...release } = res.release;
  const copy = copyJson({ ...res, release });
  return { ...copy, release: { ...copy.release, chart } };
}

/** Everything Helm's answer depends on: the chart by digest (not by path), the request, and who `lookup` reads as. */
function renderKey(req: TemplateRequest, chartDigest: string, lookupAs: string): string {
  const { lookup: _lookup, chart: _path, ...request } = req;
  return createHash('sha256').update(canonicalJson({ chartDigest, request, lookupAs })).digest('hex');
}
