/**
 * Garbage collection of the manager's on-disk stores, on a schedule: the unpacked-source cache
 * (`<data>/sources`: content-addressed trees, the refs that point at them, work directories)
 * and the catalog store (`<data>/catalogs/<catalog>/<digest>`). Nothing an object refers to is
 * removed: a tree whose digest a BundleDeployment records, a catalog directory the manager
 * serves. Anything touched within the grace period stays too (an unpack whose status is not
 * written yet). The sizes are exported as gauges for /metrics.
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Gauge, type Registry } from 'prom-client';

export interface StoreStats {
  /** Entries kept: trees for sources, stored catalog versions for catalogs. */
  entries: number;
  bytes: number;
  /** Entries removed in this pass. */
  removed: number;
}

interface Options {
  /** Entries touched more recently than this stay (default one hour). */
  graceMs?: number;
  now?: number;
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

async function ageMs(path: string, now: number): Promise<number> {
  try {
    return now - (await stat(path)).mtimeMs;
  } catch {
    return 0;
  }
}

/** Bytes under `path` (files only; links not followed). */
export async function diskUsage(path: string): Promise<number> {
  let total = 0;
  let st;
  try {
    st = await stat(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.size;
  for (const e of await entries(path)) total += await diskUsage(join(path, e));
  return total;
}

/**
 * Collects the source cache: trees no BundleDeployment records (`inUse`: `sha256:<hex>`
 * digests) and older than the grace period, refs whose tree is gone, stale work directories.
 */
export async function collectSourceCache(cacheDir: string, inUse: ReadonlySet<string>, o: Options = {}): Promise<StoreStats> {
  const now = o.now ?? Date.now();
  const grace = o.graceMs ?? 60 * 60_000;
  let removed = 0;
  const trees = join(cacheDir, 'trees');
  const kept = new Set<string>();
  for (const hex of await entries(trees)) {
    const path = join(trees, hex);
    if (inUse.has(`sha256:${hex}`) || (await ageMs(path, now)) < grace) {
      kept.add(hex);
      continue;
    }
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  const refs = join(cacheDir, 'refs');
  for (const f of await entries(refs)) {
    let digest: unknown;
    try {
      digest = (JSON.parse(await readFile(join(refs, f), 'utf8')) as { digest?: unknown }).digest;
    } catch {
      digest = undefined;
    }
    if (typeof digest === 'string' && kept.has(digest.replace(/^sha256:/, ''))) continue;
    if ((await ageMs(join(refs, f), now)) < grace) continue;
    await rm(join(refs, f), { force: true });
  }
  const tmp = join(cacheDir, 'tmp');
  for (const d of await entries(tmp)) if ((await ageMs(join(tmp, d), now)) >= grace) await rm(join(tmp, d), { recursive: true, force: true });
  return { entries: kept.size, bytes: await diskUsage(cacheDir), removed };
}

/**
 * Collects the catalog store: every stored version except the one each served catalog serves
 * (`served`: catalog name → the stored file), older than the grace period; directories of
 * catalogs that no longer exist go the same way.
 */
export async function collectCatalogStore(storeDir: string, served: ReadonlyMap<string, string>, o: Options = {}): Promise<StoreStats> {
  const now = o.now ?? Date.now();
  const grace = o.graceMs ?? 60 * 60_000;
  let removed = 0;
  let kept = 0;
  for (const name of await entries(storeDir)) {
    const catalogDir = join(storeDir, name);
    const file = served.get(name);
    for (const version of await entries(catalogDir)) {
      const path = join(catalogDir, version);
      if ((file !== undefined && file.startsWith(path + '/')) || (await ageMs(path, now)) < grace) {
        if (!version.startsWith('.')) kept++;
        continue;
      }
      await rm(path, { recursive: true, force: true });
      removed++;
    }
    if ((await entries(catalogDir)).length === 0 && !served.has(name)) await rm(catalogDir, { recursive: true, force: true });
  }
  return { entries: kept, bytes: await diskUsage(storeDir), removed };
}

/** `binnacle_store_bytes{store}` and `binnacle_store_entries{store}`, updated after each pass. */
export class StoreMetrics {
  private readonly bytes: Gauge<'store'>;
  private readonly entries: Gauge<'store'>;
  private readonly removed: Gauge<'store'>;

  constructor(registry: Registry) {
    this.bytes = new Gauge({ name: 'binnacle_store_bytes', help: 'Bytes on disk in each of the manager stores (sources, catalogs).', labelNames: ['store'], registers: [registry] });
    this.entries = new Gauge({ name: 'binnacle_store_entries', help: 'Entries kept in each store: unpacked source trees, stored catalog versions.', labelNames: ['store'], registers: [registry] });
    this.removed = new Gauge({ name: 'binnacle_store_removed_last_pass', help: 'Entries the last garbage collection pass removed from each store.', labelNames: ['store'], registers: [registry] });
  }

  record(store: 'sources' | 'catalogs', s: StoreStats): void {
    this.bytes.set({ store }, s.bytes);
    this.entries.set({ store }, s.entries);
    this.removed.set({ store }, s.removed);
  }
}
