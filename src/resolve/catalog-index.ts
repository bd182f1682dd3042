/**
 * The resolver's view of the catalogs: every usable bundle as an entity with its version,
 * channel memberships (with the upgrade edges of each entry), provided APIs and deprecation,
 * indexed by package, bundle name and GVK. Bundles that cannot take part (no or bad
 * `olm.package` version, in no channel) are left out with a warning naming them.
 */
import type semver from 'semver';
import {
  PROP_GVK,
  PROP_PACKAGE,
  decodeGVKProperty,
  decodePackageProperty,
  propertiesOfType,
  type Bundle,
  type ChannelEntry,
  type DeclarativeConfig,
  type GVKProperty,
  type Property,
} from '../declcfg/index.js';
import { parseVersion } from './version-range.js';

export interface CatalogInput {
  name: string;
  /** Higher wins when the same choice is offered by several catalogs. Default 0. */
  priority?: number;
  config: DeclarativeConfig;
}

export interface ChannelMembership {
  channel: string;
  entry: ChannelEntry;
  /** The entry nothing else in the channel replaces or skips (the newest when there are several). */
  head: boolean;
  deprecated: string | undefined;
}

export interface BundleEntity {
  /** `bundle/<catalog>/<bundle-name>`: unique across catalogs (and never a rule variable's id). */
  id: string;
  catalog: string;
  priority: number;
  package: string;
  name: string;
  version: semver.SemVer;
  image: string;
  properties: readonly Property[];
  channels: ChannelMembership[];
  provides: string[];
  /** Deprecation message of the bundle itself or of its whole package, if any. */
  deprecated: string | undefined;
  /** The package's default channel in this entity's catalog. */
  defaultChannel: string | undefined;
}

export function gvkKey(g: GVKProperty): string {
  return `${g.group === '' ? 'core' : g.group}/${g.version}/${g.kind}`;
}

export function bundleLabel(e: { package: string; version: semver.SemVer | string }): string {
  return `${e.package} ${typeof e.version === 'string' ? e.version : e.version.version}`;
}

/** Deprecation messages of one catalog, keyed `pkg`, `pkg/channel` and `pkg/bundle`. */
function deprecationsOf(config: DeclarativeConfig): {
  pkgDeprecated: Map<string, string>;
  chanDeprecated: Map<string, string>;
  bundleDeprecated: Map<string, string>;
} {
  const pkgDeprecated = new Map<string, string>();
  const chanDeprecated = new Map<string, string>();
  const bundleDeprecated = new Map<string, string>();
  for (const d of config.deprecations) {
    for (const e of d.entries) {
      const ref = e.reference;
      if (ref.schema === 'olm.package') pkgDeprecated.set(d.package, e.message);
      else if (ref.schema === 'olm.channel' && ref.name !== undefined) chanDeprecated.set(`${d.package}/${ref.name}`, e.message);
      else if (ref.name !== undefined) bundleDeprecated.set(`${d.package}/${ref.name}`, e.message);
    }
  }
  return { pkgDeprecated, chanDeprecated, bundleDeprecated };
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list === undefined) m.set(k, [v]);
  else list.push(v);
}

/**
 * A channel's head: of the entries nothing replaces or skips, the one of the highest version
 * (the first of them while none has a version).
 */
function channelHead(ch: DeclarativeConfig['channels'][number], versionOf: (entry: string) => semver.SemVer | undefined): string | undefined {
  const replaced = new Set<string>();
  for (const e of ch.entries) {
    if (e.replaces !== undefined) replaced.add(e.replaces);
    for (const s of e.skips ?? []) replaced.add(s);
  }
  let head: string | undefined;
  let headVersion: semver.SemVer | undefined;
  for (const t of ch.entries.filter((e) => !replaced.has(e.name))) {
    const v = versionOf(t.name);
    if (head === undefined || (v !== undefined && (headVersion === undefined || v.compare(headVersion) > 0))) {
      head = t.name;
      headVersion = v;
    }
  }
  return head;
}

export class CatalogIndex {
  readonly bundles: BundleEntity[] = [];
  readonly byPackage = new Map<string, BundleEntity[]>();
  readonly byName = new Map<string, BundleEntity[]>();
  readonly byGvk = new Map<string, BundleEntity[]>();
  /** Channel names per package across catalogs, sorted. */
  readonly channelsOf = new Map<string, string[]>();
  readonly warnings: string[] = [];

  constructor(catalogs: readonly CatalogInput[]) {
    const seen = new Set<string>();
    for (const cat of catalogs) {
      if (seen.has(cat.name)) this.warnings.push(`catalog "${cat.name}" is given twice; the second copy is ignored`);
      else this.addCatalog(cat);
      seen.add(cat.name);
    }
    for (const [pkg, chans] of this.channelsOf) this.channelsOf.set(pkg, [...new Set(chans)].sort());
  }

  private addCatalog(cat: CatalogInput): void {
    const { config } = cat;
    const priority = cat.priority ?? 0;
    const { pkgDeprecated, chanDeprecated, bundleDeprecated } = deprecationsOf(config);
    const defaults = new Map(config.packages.map((p) => [p.name, p.defaultChannel]));
    const bundles = new Map<string, Bundle>();
    for (const b of config.bundles) bundles.set(`${b.package}/${b.name}`, b);
    const versions = new Map<string, semver.SemVer | undefined>();
    const versionOf = (b: Bundle): semver.SemVer | undefined => {
      const key = `${b.package}/${b.name}`;
      if (versions.has(key)) return versions.get(key);
      const props = propertiesOfType(b.properties, PROP_PACKAGE).map(decodePackageProperty);
      const p = props[0];
      const v = p === undefined ? undefined : parseVersion(p.version);
      if (v === undefined) {
        this.warnings.push(
          `catalog ${cat.name}: bundle ${b.name} of package ${b.package} has ${p === undefined ? 'no olm.package property' : `an invalid version "${p.version}"`}; it is left out`,
        );
      }
      versions.set(key, v);
      return v;
    };
    const memberships = new Map<string, ChannelMembership[]>();
    for (const ch of config.channels) {
      const head = channelHead(ch, (name) => {
        const b = bundles.get(`${ch.package}/${name}`);
        return b === undefined ? undefined : versionOf(b);
      });
      push(this.channelsOf, ch.package, ch.name);
      for (const e of ch.entries) {
        push(memberships, `${ch.package}/${e.name}`, {
          channel: ch.name,
          entry: e,
          head: e.name === head,
          deprecated: chanDeprecated.get(`${ch.package}/${ch.name}`),
        });
      }
    }
    const added = new Set<string>();
    for (const b of config.bundles) {
      if (added.has(`${b.package}/${b.name}`)) {
        this.warnings.push(`catalog ${cat.name}: bundle ${b.name} of package ${b.package} is defined twice; the second copy is ignored`);
        continue;
      }
      added.add(`${b.package}/${b.name}`);
      const version = versionOf(b);
      if (version === undefined) continue;
      const channels = memberships.get(`${b.package}/${b.name}`) ?? [];
      if (channels.length === 0) continue; // not in any channel: OLM never installs it
      const provides = [
        ...new Set(
          propertiesOfType(b.properties, PROP_GVK)
            .map(decodeGVKProperty)
            .flatMap((g) => (g === undefined ? [] : [gvkKey(g)])),
        ),
      ];
      const entity: BundleEntity = {
        id: `bundle/${cat.name}/${b.name}`,
        catalog: cat.name,
        priority,
        package: b.package,
        name: b.name,
        version,
        image: b.image,
        properties: b.properties,
        channels,
        provides,
        deprecated: bundleDeprecated.get(`${b.package}/${b.name}`) ?? pkgDeprecated.get(b.package),
        defaultChannel: defaults.get(b.package),
      };
      this.bundles.push(entity);
      push(this.byPackage, b.package, entity);
      push(this.byName, b.name, entity);
      for (const g of provides) push(this.byGvk, g, entity);
    }
  }

  packages(): string[] {
    return [...this.byPackage.keys()].sort();
  }

  /** The default channel of a package, from the highest-priority catalog that names one. */
  defaultChannel(pkg: string): string | undefined {
    const list = [...(this.byPackage.get(pkg) ?? [])].sort((a, b) => b.priority - a.priority || a.catalog.localeCompare(b.catalog));
    return list.find((e) => e.defaultChannel !== undefined)?.defaultChannel;
  }
}
