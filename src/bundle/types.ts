/**
 * The loaded `registry+v1` bundle: the typed view of its ClusterServiceVersion, every manifest
 * object with the file it came from, and the bundle metadata (annotations, dependencies,
 * properties).
 */
import type { Problem } from '../util/errors.js';
import type { JsonObject } from './decode.js';

export const MEDIATYPE_REGISTRY_V1 = 'registry+v1';

export const ANNOTATION_PACKAGE = 'operators.operatorframework.io.bundle.package.v1';
export const ANNOTATION_CHANNELS = 'operators.operatorframework.io.bundle.channels.v1';
export const ANNOTATION_DEFAULT_CHANNEL = 'operators.operatorframework.io.bundle.channel.default.v1';
export const ANNOTATION_MEDIATYPE = 'operators.operatorframework.io.bundle.mediatype.v1';
export const ANNOTATION_MANIFESTS = 'operators.operatorframework.io.bundle.manifests.v1';
export const ANNOTATION_METADATA = 'operators.operatorframework.io.bundle.metadata.v1';

/**
 * A registry+v1 bundle's metadata/annotations.yaml, as operator-sdk writes it: its media type and
 * folders, `extra` annotations kept, then package, channels and (when among them) the default channel.
 */
export function registryV1Annotations(o: { packageName: string; channels: readonly string[]; defaultChannel?: string | undefined; extra?: Record<string, string> | undefined }): Record<string, string> {
  const def = o.defaultChannel;
  return {
    [ANNOTATION_MEDIATYPE]: MEDIATYPE_REGISTRY_V1,
    [ANNOTATION_MANIFESTS]: 'manifests/',
    [ANNOTATION_METADATA]: 'metadata/',
    ...o.extra,
    [ANNOTATION_PACKAGE]: o.packageName,
    [ANNOTATION_CHANNELS]: o.channels.join(','),
    ...(def !== undefined && def !== '' && o.channels.includes(def) ? { [ANNOTATION_DEFAULT_CHANNEL]: def } : {}),
  };
}

/** A package manifest: `package.yaml` or `<name>.package.yaml`, as opm finds them. */
export const PACKAGE_FILE = /(^|\.)package\.ya?ml$/i;

/** What a package-manifest version directory knows of its package, from the package file. */
export interface PackageContext {
  /** The package file it was read from. */
  file: string;
  /** Channels whose `currentCSV` reaches the bundle along `replaces`/`skips`; empty when none does. */
  channels: string[];
  /** The package's default channel (the only channel when the file names none). */
  defaultChannel: string | undefined;
}

/** One object from a manifest file, with where it came from. */
export interface ManifestObject {
  /** Path relative to the bundle root, e.g. `manifests/foo.crd.yaml`. */
  file: string;
  /** Document index inside the file. */
  index: number;
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  object: JsonObject;
}

export interface CrdDescription {
  name: string;
  version: string;
  kind: string;
  displayName?: string;
  description?: string;
  /** Field path in the CSV, for messages. */
  field: string;
}

export interface ApiServiceDescription {
  name: string;
  group: string;
  version: string;
  kind: string;
  deploymentName?: string;
  containerPort?: number;
  field: string;
}

export interface InstallMode {
  type: string;
  supported: boolean;
}

export interface StrategyDeployment {
  name: string;
  /** The Deployment spec, checked to be shaped like one (selector, template, containers). */
  spec: JsonObject;
  label: Record<string, string>;
  field: string;
}

export interface StrategyPermission {
  serviceAccountName: string;
  rules: JsonObject[];
  field: string;
}

export interface WebhookDescription {
  generateName: string;
  type: string;
  deploymentName: string;
  containerPort: number;
  targetPort?: number | string;
  webhookPath?: string;
  conversionCRDs: string[];
  /** The rest (rules, failurePolicy, sideEffects, …) as written. */
  raw: JsonObject;
  field: string;
}

export interface ClusterServiceVersion {
  name: string;
  namespace?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** `spec.version`; empty when absent (validation reports it). */
  version: string;
  replaces?: string;
  skips: string[];
  /** From the `olm.skipRange` annotation. */
  skipRange?: string;
  minKubeVersion?: string;
  displayName?: string;
  installModes: InstallMode[];
  ownedCRDs: CrdDescription[];
  requiredCRDs: CrdDescription[];
  ownedAPIServices: ApiServiceDescription[];
  requiredAPIServices: ApiServiceDescription[];
  strategy: string;
  deployments: StrategyDeployment[];
  permissions: StrategyPermission[];
  clusterPermissions: StrategyPermission[];
  webhooks: WebhookDescription[];
  relatedImages: { name: string; image: string }[];
  /** The whole object as parsed. */
  raw: JsonObject;
  file: string;
}

export interface BundleProperty {
  type: string;
  value: unknown;
}

export interface BundleAnnotations {
  packageName?: string;
  channels: string[];
  defaultChannel?: string;
  mediatype?: string;
  /** Every annotation as written (they become image labels). */
  all: Record<string, string>;
}

export interface RegistryV1Bundle {
  /** Directory it was loaded from. */
  dir: string;
  layout: 'bundle' | 'package-manifest';
  /** The CSV's `metadata.name`. */
  name: string;
  /** Package name from annotations.yaml or from the caller (package-manifest layout). */
  packageName: string;
  /** Package-manifest layout: channels and default channel from the package file one level up. */
  packageManifest?: PackageContext;
  csv: ClusterServiceVersion;
  /** CustomResourceDefinitions (v1 and v1beta1) in the bundle. */
  crds: ManifestObject[];
  /** Every object except the CSV and CRDs. */
  others: ManifestObject[];
  /** Every object, CSV included, in file order. */
  objects: ManifestObject[];
  annotations?: BundleAnnotations;
  /** `metadata/dependencies.yaml` entries as written. */
  dependencies: BundleProperty[];
  /** `metadata/properties.yaml` entries as written. */
  properties: BundleProperty[];
  /** Files that were read but held nothing usable (for validation to mention). */
  ignoredFiles: string[];
  /** Problems found while loading that do not stop use of the bundle (warnings). */
  loadWarnings: Problem[];
}
