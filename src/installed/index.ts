/**
 * Installed state: what is installed in the cluster, and who needs it. Rebuilt from the
 * BundleDeployments and ClusterExtensions each time (`view.ts`); who needs a BundleDeployment is
 * recorded on it (`needs.ts`). The ClusterExtension controller reads it before resolving, passes
 * it to `src/resolve` as facts, and changes it only while holding the installed-state lock (a
 * Lease), so two extensions never install one package twice.
 */
export { describeNeeds, extensionsNamedOn, needLabels, neededByLabel, recordedNeeds, sortNeeds, type Need, type NeedRole } from './needs.js';
export {
  buildInstalledState,
  installedFacts,
  requesterOf,
  unitOf,
  unitsNeededBy,
  type ExtensionRef,
  type InstalledState,
  type InstalledUnit,
  type UnitState,
} from './view.js';
