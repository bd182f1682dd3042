/**
 * The catalogs this manager serves, in memory: the ClusterCatalog controller puts a catalog
 * here once it is unpacked and stored; the HTTP server streams it; the ClusterExtension
 * controller resolves against it. Last good content stays until new content is good.
 */
import type { DeclarativeConfig } from '../catalog/index.js';
import type { StoredCatalog } from '../catalog-store/index.js';

export interface ServedCatalog {
  name: string;
  priority: number;
  labels: Record<string, string>;
  /** Digest of the image the content came from. */
  digest: string;
  /**
   * The catalog as resolution reads it (`resolutionView`: without what only people and installers
   * read). Read only: its bundles' equal properties are one frozen object (`propertySharer`).
   */
  config: DeclarativeConfig;
  stored: StoredCatalog;
}

export class CatalogRegistry {
  private readonly catalogs = new Map<string, ServedCatalog>();
  private readonly listeners: ((name: string) => void)[] = [];

  set(c: ServedCatalog): void {
    this.catalogs.set(c.name, c);
    for (const l of this.listeners) l(c.name);
  }

  delete(name: string): void {
    if (this.catalogs.delete(name)) for (const l of this.listeners) l(name);
  }

  get(name: string): ServedCatalog | undefined {
    return this.catalogs.get(name);
  }

  list(): ServedCatalog[] {
    return [...this.catalogs.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Called whenever a catalog's content changes or goes away. */
  onChange(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  /** For the HTTP handler. */
  lookup = (name: string): StoredCatalog | undefined => this.catalogs.get(name)?.stored;
}
