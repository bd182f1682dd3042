/**
 * The path the next upgrade of an installed package takes: the resolver's own choice, step by
 * step. The controller resolves a ClusterExtension with `preferUpgrade` (cluster-extension.ts),
 * so after each upgrade it resolves again from the new version until the choice is the version
 * already installed; this repeats that with the extension's channels, version range and upgrade
 * policy, against the catalogs its selector draws from, with what else is installed (another
 * operator's dependency on this package holds it back as it would the controller). One difference
 * from the controller's view is left: the cluster's facts (its version) are not enforced, so the
 * page calls it the path the resolver would choose now.
 */
import { CatalogIndex, resolve, ResolutionError, type CatalogInput, type InstalledBundle, type UpgradePolicy } from '../resolve/index.js';

export interface UpgradeRequest {
  package: string;
  /** The installed bundle's version. */
  version: string;
  channels?: readonly string[] | undefined;
  versionRange?: string | undefined;
  upgradePolicy?: UpgradePolicy | undefined;
  /** What else is installed (the controller's installed facts, this package left out). */
  others?: readonly InstalledBundle[] | undefined;
}

export interface UpgradePath {
  /** Bundle names from the installed one to where upgrades stop; just the installed one when none is due. */
  bundles: string[];
  /** Why resolution stopped short (the resolution error's first sentence), if it did. */
  problem?: string | undefined;
}

const MAX_STEPS = 64;

/** Each step is `resolve` from the previous step's version, preferring an upgrade. */
export function upgradePath(catalogs: readonly CatalogInput[] | CatalogIndex, req: UpgradeRequest): UpgradePath {
  const index = catalogs instanceof CatalogIndex ? catalogs : new CatalogIndex(catalogs);
  const start = index.byPackage.get(req.package)?.find((e) => e.version.version === req.version)?.name;
  const bundles: string[] = [start ?? `${req.package}@${req.version}`];
  const seen = new Set<string>([req.version]);
  let version = req.version;
  for (let step = 0; step < MAX_STEPS; step++) {
    let chosen: { name: string; version: string } | undefined;
    try {
      const r = resolve({
        catalogs: index,
        installed: [...(req.others ?? []).filter((b) => b.package !== req.package), { package: req.package, version }],
        requests: [
          {
            package: req.package,
            ...(req.channels === undefined || req.channels.length === 0 ? {} : { channels: [...req.channels] }),
            ...(req.versionRange === undefined || req.versionRange === '' ? {} : { versionRange: req.versionRange }),
            upgradePolicy: req.upgradePolicy ?? 'CatalogProvided',
            preferUpgrade: true,
          },
        ],
      });
      chosen = r.bundles.find((b) => b.package === req.package);
    } catch (err) {
      if (!(err instanceof ResolutionError)) throw err;
      return { bundles, problem: err.sentences[0] ?? err.message };
    }
    if (chosen === undefined || chosen.version === version || seen.has(chosen.version)) break;
    seen.add(chosen.version);
    bundles.push(chosen.name);
    version = chosen.version;
  }
  return { bundles };
}
