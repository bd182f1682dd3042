/** The API's shapes, as the page reads them (the server's types in src/console are the source). */
export interface PackageSummary {
  catalog: string;
  name: string;
  displayName: string;
  shortDescription: string;
  hasIcon: boolean;
  provider: string;
  categories: string[];
  capability: string;
  installModes: string[];
  keywords: string[];
  hasDependencies: boolean;
  defaultChannel: string;
  headVersion: string;
  deprecated: boolean;
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: { id: string; version: string; x: number; y: number; width: number; height: number; head: boolean; installed: boolean; reachable: boolean; deprecated: boolean }[];
  edges: { from: string; to: string; kind: 'replaces' | 'skips' | 'skipRange'; points: { x: number; y: number }[] }[];
}

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

export interface PackageDetail extends PackageSummary {
  description: string;
  links: { name: string; url: string }[];
  maintainers: { name: string; email: string }[];
  ownedApis: { name: string; version: string; kind: string; displayName: string; description: string }[];
  packageDeprecation?: string;
  channels: { name: string; head?: string; deprecation?: string; entries: { name: string; version: string; replaces?: string; skips?: string[]; skipRange?: string; deprecation?: string }[] }[];
  bundles: { name: string; version: string; image: string; provides: Gvk[]; requires: Gvk[]; requiresPackages: { packageName: string; versionRange: string }[] }[];
  installedBundle?: string;
  graphs: Record<string, GraphLayout>;
}

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

export interface ExtensionSummary {
  name: string;
  package: string;
  namespace: string;
  serviceAccount: string;
  channels: string[];
  version: string;
  installed?: { name: string; version: string; package: string; catalog: string };
  health: string;
  message: string;
  conditions: Condition[];
}

export interface ExtensionDetail extends ExtensionSummary {
  history?: { time: string; reason: string; generation: number; outcome: string; bundles: { package: string; version: string; name: string }[]; message?: string }[];
  units: { bundleDeployment: string; package: string; version: string; namespace: string; state: string; role: string; neededBy: string[]; revision?: number; conditions: Condition[] }[];
}

export interface Plan {
  bundles: {
    bundle: { name: string; package: string; version: string; catalog: string };
    bundleDeployment: string;
    from?: string;
    objects: { action: string; kind: string; name: string; namespace?: string; changes?: string[] }[];
    crdSafety: { crd: string; safe: boolean; problems: { rule: string; message: string }[] }[];
    missingPermissions?: string[];
  }[];
  warnings: string[];
}
