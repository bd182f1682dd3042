/**
 * The catalogs as the console shows them: the content every serving ClusterCatalog offers
 * (loaded with `loadCatalog`, the resolver's own loader, and kept while the catalog's content
 * is unchanged), cut into package summaries for the list and one package's detail.
 */
import { API_VERSION, type ClusterCatalog } from '../api/types.js';
import {
  PROP_BUNDLE_OBJECT,
  PROP_CSV_METADATA,
  PROP_GVK,
  PROP_GVK_REQUIRED,
  PROP_PACKAGE,
  PROP_PACKAGE_REQUIRED,
  type Bundle,
  type Channel,
  type DeclarativeConfig,
  type Package,
} from '../declcfg/index.js';
import type { ConsoleClient } from './client.js';
import { findCondition } from '../kube/types.js';
import { loadCatalog } from '../resolve/catalog-source.js';
import { errorMessage } from '../util/errors.js';
import type { Gvk, PackageDetail, PackageSummary } from './contract/api-types.js';
import { isRecord } from '../util/object.js';

export interface ServedCatalog {
  name: string;
  priority: number;
  config: DeclarativeConfig;
  /** The ClusterCatalog's labels, which extensions' catalog selectors match. */
  labels?: Record<string, string>;
}

type Rec = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** Loaded catalog content, keyed by what identifies it (name, URL and when it was unpacked). */
/** Reads a catalog server's content (the bench passes one that answers from memory). */
export type CatalogLoader = (base: string, name: string, priority: number) => Promise<ServedCatalog>;

const loadServed: CatalogLoader = async (base, name, priority) => {
  const l = await loadCatalog(base, { name, priority });
  return { name, priority: l.catalog.priority ?? 0, config: l.catalog.config };
};

export class CatalogCache {
  private readonly loaded = new Map<string, Promise<ServedCatalog>>();

  constructor(private readonly load: CatalogLoader = loadServed) {}

  /** The catalogs `client` may list that are serving; catalogs that cannot be read become warnings. */
  async served(client: ConsoleClient): Promise<{ catalogs: ServedCatalog[]; warnings: string[] }> {
    const list = await client.list<ClusterCatalog>(API_VERSION, 'ClusterCatalog');
    const warnings: string[] = [];
    const catalogs: ServedCatalog[] = [];
    const keys = new Set<string>();
    for (const cc of list.items) {
      const name = cc.metadata.name ?? '';
      const base = cc.status?.urls?.base;
      if (findCondition(cc.status?.conditions, 'Serving')?.status !== 'True' || base === undefined) continue;
      const labels = cc.metadata.labels ?? {};
      const key = `${name}\0${base}\0${cc.status?.lastUnpacked ?? ''}\0${cc.status?.resolvedSource?.image.ref ?? ''}\0${JSON.stringify(labels)}`;
      keys.add(key);
      let p = this.loaded.get(key);
      if (p === undefined) {
        p = this.load(base, name, cc.spec.priority ?? 0).then((c) => ({ ...c, labels }));
        this.loaded.set(key, p);
        p.catch(() => this.loaded.delete(key));
      }
      try {
        catalogs.push(await p);
      } catch (err) {
        warnings.push(`catalog ${name} is not reachable at ${base}: ${errorMessage(err)}`);
      }
    }
    // Content no catalog serves any more is dropped.
    for (const k of this.loaded.keys()) if (!keys.has(k)) this.loaded.delete(k);
    return { catalogs, warnings };
  }
}

/** The CSV fields a console shows, from `olm.csv.metadata` or else the CSV in `olm.bundle.object`. */
export function csvMetadataOf(b: Bundle | undefined): Rec {
  if (b === undefined) return {};
  for (const p of b.properties) if (p.type === PROP_CSV_METADATA && isRecord(p.value)) return p.value;
  for (const p of b.properties) {
    if (p.type !== PROP_BUNDLE_OBJECT || !isRecord(p.value) || typeof p.value.data !== 'string') continue;
    try {
      const obj: unknown = JSON.parse(Buffer.from(p.value.data, 'base64').toString('utf8'));
      if (isRecord(obj) && obj.kind === 'ClusterServiceVersion' && isRecord(obj.spec)) {
        const meta = isRecord(obj.metadata) ? obj.metadata : {};
        return { ...obj.spec, annotations: meta.annotations, crdDescriptions: obj.spec.customresourcedefinitions };
      }
    } catch {
      // Not a CSV the console can read; the bundle is shown without its description.
    }
  }
  return {};
}

export function bundleVersion(b: Bundle): string {
  for (const p of b.properties) if (p.type === PROP_PACKAGE && isRecord(p.value)) return str(p.value.version) ?? '';
  return '';
}

function gvks(b: Bundle, type: string): Gvk[] {
  return b.properties.filter((p) => p.type === type && isRecord(p.value)).map((p) => {
    const v = p.value as Rec;
    return { group: text(v.group), version: text(v.version), kind: text(v.kind) };
  });
}

function requiredPackages(b: Bundle): { packageName: string; versionRange: string }[] {
  return b.properties.filter((p) => p.type === PROP_PACKAGE_REQUIRED && isRecord(p.value)).map((p) => {
    const v = p.value as Rec;
    return { packageName: text(v.packageName), versionRange: text(v.versionRange) };
  });
}

/** The channel's head: the entry nothing replaces or skips (the newest of several). */
export function headOf(c: Channel): string | undefined {
  const incoming = new Set<string>();
  for (const e of c.entries) {
    if (e.replaces !== undefined) incoming.add(e.replaces);
    for (const s of e.skips ?? []) incoming.add(s);
  }
  return c.entries.map((e) => e.name).filter((n) => !incoming.has(n)).at(-1);
}

const ICON_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/svg+xml']);

/** The icon's bytes and type, when it is one of the image types a page may show. */
export function iconOf(p: Package): { type: string; data: Buffer } | undefined {
  const icon = p.icon;
  if (icon === undefined || !ICON_TYPES.has(icon.mediatype) || !/^[A-Za-z0-9+/=\s]+$/.test(icon.base64data)) return undefined;
  const data = Buffer.from(icon.base64data, 'base64');
  return data.length === 0 ? undefined : { type: icon.mediatype, data };
}

interface PackageParts {
  pkg: Package;
  channels: Channel[];
  bundles: Map<string, Bundle>;
  deprecations: { reference: { schema: string; name?: string }; message: string }[];
}

function partsOf(cfg: DeclarativeConfig, name: string): PackageParts | undefined {
  const pkg = cfg.packages.find((p) => p.name === name);
  if (pkg === undefined) return undefined;
  return {
    pkg,
    channels: cfg.channels.filter((c) => c.package === name),
    bundles: new Map(cfg.bundles.filter((b) => b.package === name).map((b) => [b.name, b])),
    deprecations: cfg.deprecations.filter((d) => d.package === name).flatMap((d) => d.entries),
  };
}

/** The bundle a package page describes: its default channel's head. */
function featured(parts: PackageParts): Bundle | undefined {
  const channel = parts.channels.find((c) => c.name === parts.pkg.defaultChannel) ?? parts.channels[0];
  const head = channel === undefined ? undefined : headOf(channel);
  return head === undefined ? undefined : parts.bundles.get(head);
}

function listOf(v: unknown): string[] {
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return [];
}

function supportedModes(meta: Rec): string[] {
  return Array.isArray(meta.installModes) ? meta.installModes.filter((m): m is Rec => isRecord(m) && m.supported === true).map((m) => String(m.type)) : [];
}

function summaryOf(catalog: string, parts: PackageParts): PackageSummary {
  const head = featured(parts);
  const meta = csvMetadataOf(head);
  const ann = isRecord(meta.annotations) ? meta.annotations : {};
  const provider = isRecord(meta.provider) ? str(meta.provider.name) : undefined;
  return {
    catalog,
    name: parts.pkg.name,
    displayName: str(meta.displayName) ?? parts.pkg.name,
    shortDescription: str(ann.description) ?? '',
    hasIcon: iconOf(parts.pkg) !== undefined,
    provider: provider ?? '',
    categories: listOf(ann.categories),
    capability: str(ann.capabilities) ?? '',
    installModes: supportedModes(meta),
    keywords: listOf(meta.keywords),
    hasDependencies: head !== undefined && (gvks(head, PROP_GVK_REQUIRED).length > 0 || requiredPackages(head).length > 0),
    defaultChannel: parts.pkg.defaultChannel ?? '',
    headVersion: head === undefined ? '' : bundleVersion(head),
    deprecated: parts.deprecations.some((d) => d.reference.schema === 'olm.package'),
  };
}

/** Every package of every catalog, sorted by display name. */
export function packageSummaries(catalogs: readonly ServedCatalog[]): PackageSummary[] {
  const out: PackageSummary[] = [];
  for (const c of catalogs) {
    for (const p of c.config.packages) {
      const parts = partsOf(c.config, p.name);
      if (parts !== undefined) out.push(summaryOf(c.name, parts));
    }
  }
  return out.sort((a, b) => a.displayName.localeCompare(b.displayName) || a.catalog.localeCompare(b.catalog));
}

export function packageDetail(catalog: ServedCatalog, name: string): PackageDetail | undefined {
  const parts = partsOf(catalog.config, name);
  if (parts === undefined) return undefined;
  const meta = csvMetadataOf(featured(parts));
  const depOf = (schema: string, n?: string): string | undefined => parts.deprecations.find((d) => d.reference.schema === schema && (n === undefined || d.reference.name === n))?.message;
  const crd = isRecord(meta.crdDescriptions) && Array.isArray(meta.crdDescriptions.owned) ? meta.crdDescriptions.owned.filter(isRecord) : [];
  return {
    ...summaryOf(catalog.name, parts),
    description: str(meta.description) ?? parts.pkg.description ?? '',
    links: Array.isArray(meta.links) ? meta.links.filter(isRecord).map((l) => ({ name: text(l.name), url: text(l.url) })) : [],
    maintainers: Array.isArray(meta.maintainers) ? meta.maintainers.filter(isRecord).map((m) => ({ name: text(m.name), email: text(m.email) })) : [],
    ownedApis: crd.map((c) => ({ name: text(c.name), version: text(c.version), kind: text(c.kind), displayName: text(c.displayName), description: text(c.description) })),
    packageDeprecation: depOf('olm.package'),
    channels: parts.channels
      .map((c) => ({
        name: c.name,
        head: headOf(c),
        deprecation: depOf('olm.channel', c.name),
        entries: c.entries.map((e) => {
          const b = parts.bundles.get(e.name);
          return { name: e.name, version: b === undefined ? '' : bundleVersion(b), replaces: e.replaces, skips: e.skips, skipRange: e.skipRange, deprecation: depOf('olm.bundle', e.name) };
        }),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    bundles: [...parts.bundles.values()].map((b) => ({ name: b.name, version: bundleVersion(b), image: b.image, provides: gvks(b, PROP_GVK), requires: gvks(b, PROP_GVK_REQUIRED), requiresPackages: requiredPackages(b) })),
  };
}
