/**
 * File-based catalogs for the catalog benches, from the operatorhub-2021 corpus: the packages that
 * validate (opm stops at the first error, so both sides read the same valid catalog), and copies of
 * them under new names until a catalog reaches OperatorHub's size. A copy keeps every record as the
 * corpus has it (CSVs, CRDs, icons, related images); only the names that tie records together move:
 * package names (and `olm.package` / `olm.package.required` properties), bundle names, and the
 * channel entries' `name`, `replaces` and `skips`, so each copy's upgrade graph is the original's.
 */
import type { DeclarativeConfig, Property } from '../../src/catalog/index.js';
import { validateConfig } from '../../src/catalog/index.js';

/**
 * The packages that validate: a package with an error of its own, and the records that name a
 * package the catalog lacks (a package.yaml's packageName other than its bundles' package), left out.
 */
export function validPackages(config: DeclarativeConfig): { valid: DeclarativeConfig; dropped: string[] } {
  const { result } = validateConfig(config);
  const bad = new Set(result.children.filter((c) => c.errors().length > 0).map((c) => /^package "(.*)"$/.exec(c.subject)?.[1] ?? ''));
  const known = new Set(config.packages.map((p) => p.name));
  for (const r of [...config.channels, ...config.bundles]) if (!known.has(r.package)) bad.add(r.package);
  const keep = (p: string): boolean => !bad.has(p);
  const valid: DeclarativeConfig = {
    packages: config.packages.filter((p) => keep(p.name)),
    channels: config.channels.filter((c) => keep(c.package)),
    bundles: config.bundles.filter((b) => keep(b.package)),
    deprecations: config.deprecations.filter((d) => keep(d.package)),
    others: config.others.filter((o) => keep(o.package ?? '')),
  };
  return { valid, dropped: [...bad].sort() };
}

/** One copy of `dc` with every package and bundle name given `suffix` (see the module comment). */
export function renamedCopy(dc: DeclarativeConfig, suffix: string): DeclarativeConfig {
  const pkgs = new Set(dc.packages.map((p) => p.name));
  const pkg = (n: string): string => (pkgs.has(n) ? `${n}${suffix}` : n);
  const bundle = (n: string): string => `${n}${suffix}`;
  const property = (p: Property): Property => {
    const v = p.value as Record<string, unknown> | null;
    if ((p.type === 'olm.package' || p.type === 'olm.package.required') && v !== null && typeof v === 'object' && typeof v.packageName === 'string') {
      return { ...p, value: { ...v, packageName: pkg(v.packageName) } };
    }
    return p;
  };
  return {
    packages: dc.packages.map((p) => ({ ...p, name: pkg(p.name) })),
    channels: dc.channels.map((c) => ({
      ...c,
      package: pkg(c.package),
      entries: c.entries.map((e) => ({
        ...e,
        name: bundle(e.name),
        ...(e.replaces === undefined ? {} : { replaces: bundle(e.replaces) }),
        ...(e.skips === undefined ? {} : { skips: e.skips.map(bundle) }),
      })),
    })),
    bundles: dc.bundles.map((b) => ({ ...b, package: pkg(b.package), name: bundle(b.name), properties: b.properties.map(property) })),
    deprecations: dc.deprecations.map((d) => ({
      ...d,
      package: pkg(d.package),
      entries: d.entries.map((e) => (e.reference.schema === 'olm.bundle' && e.reference.name !== undefined ? { ...e, reference: { ...e.reference, name: bundle(e.reference.name) } } : e)),
    })),
    others: dc.others.map((o) => (o.package === undefined ? o : { ...o, package: pkg(o.package), blob: { ...o.blob, package: pkg(o.package) } })),
  };
}

/** Copies of `dc` (suffixes `-<tag><k>`) joined until the catalog holds at least `bundles` bundles. */
export function scaledCatalog(dc: DeclarativeConfig, bundles: number, tag: string): DeclarativeConfig {
  const copies = Math.max(1, Math.ceil(bundles / Math.max(1, dc.bundles.length)));
  const out: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  for (let k = 0; k < copies; k++) {
    const c = renamedCopy(dc, `-${tag}${k}`);
    out.packages.push(...c.packages);
    out.channels.push(...c.channels);
    out.bundles.push(...c.bundles);
    out.deprecations.push(...c.deprecations);
    out.others.push(...c.others);
  }
  return out;
}
