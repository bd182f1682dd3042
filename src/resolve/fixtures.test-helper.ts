/** Small builders for catalogs in tests, and the checks the resolver tests share (not part of the public API). */
import assert from 'node:assert/strict';
import type { Bundle, ChannelEntry, DeclarativeConfig, Property } from '../declcfg/index.js';
import type { CatalogInput } from './catalog-index.js';
import { ResolutionError } from './errors.js';
import { resolve, type Resolution, type ResolveInput } from './resolver.js';

export const pkgProp = (pkg: string, version: string): Property => ({ type: 'olm.package', value: { packageName: pkg, version } });
export const gvk = (group: string, version: string, kind: string): Property => ({ type: 'olm.gvk', value: { group, version, kind } });
export const requiresGvk = (group: string, version: string, kind: string): Property => ({ type: 'olm.gvk.required', value: { group, version, kind } });
export const requiresPackage = (packageName: string, versionRange: string): Property => ({
  type: 'olm.package.required',
  value: { packageName, versionRange },
});
export const constraint = (value: Record<string, unknown>): Property => ({ type: 'olm.constraint', value });

export interface BundleSpec {
  version: string;
  channels?: string[];
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  props?: Property[];
}

/** One package: bundles named `pkg.vX`, in channel `stable` unless told otherwise. */
export interface PackageSpec {
  name: string;
  defaultChannel?: string;
  bundles: BundleSpec[];
}

export function bundleName(pkg: string, version: string): string {
  return `${pkg}.v${version}`;
}

export function catalog(name: string, packages: PackageSpec[], priority = 0): CatalogInput & { config: DeclarativeConfig } {
  const config: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  for (const p of packages) {
    config.packages.push({ schema: 'olm.package', name: p.name, defaultChannel: p.defaultChannel ?? 'stable' });
    const channels = new Map<string, ChannelEntry[]>();
    for (const b of p.bundles) {
      const name = bundleName(p.name, b.version);
      const bundle: Bundle = {
        schema: 'olm.bundle',
        package: p.name,
        name,
        image: `quay.io/test/${p.name}-bundle:v${b.version}`,
        properties: [pkgProp(p.name, b.version), ...(b.props ?? [])],
      };
      config.bundles.push(bundle);
      for (const ch of b.channels ?? ['stable']) {
        const entry: ChannelEntry = { name };
        if (b.replaces !== undefined) entry.replaces = bundleName(p.name, b.replaces);
        if (b.skips !== undefined) entry.skips = b.skips.map((s) => bundleName(p.name, s));
        if (b.skipRange !== undefined) entry.skipRange = b.skipRange;
        const list = channels.get(ch) ?? [];
        list.push(entry);
        channels.set(ch, list);
      }
    }
    for (const [ch, entries] of channels) config.channels.push({ schema: 'olm.channel', package: p.name, name: ch, entries });
  }
  return { name, priority, config };
}

/** A linear channel: each version replaces the one before. */
export function chain(name: string, versions: string[], props: (v: string) => Property[] = () => []): PackageSpec {
  return {
    name,
    bundles: versions.map((version, i) => {
      const b: BundleSpec = { version, props: props(version) };
      const prev = versions[i - 1];
      if (prev !== undefined) b.replaces = prev;
      return b;
    }),
  };
}

/** The bundles a resolution picked, as `package@version`. */
export const picked = (r: Resolution): string[] => r.bundles.map((b) => `${b.package}@${b.version}`);

/** The ResolutionError that resolving input must throw; any other outcome fails the test. */
export function explain(input: ResolveInput): ResolutionError {
  try {
    resolve(input);
  } catch (e) {
    if (e instanceof ResolutionError) return e;
    throw e;
  }
  assert.fail('expected the resolution to fail');
}
