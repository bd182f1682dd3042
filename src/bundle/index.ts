/**
 * Operator bundles: loading `registry+v1` bundles (bundle layout or a package-manifest version
 * directory) and plain bundles; turning them into file-based-catalog `olm.bundle` records for
 * the catalog; validating them (operator-framework/api's checks and optional suites);
 * converting them into plain Kubernetes objects for the applier, as OLM installs them; and
 * authoring and building new ones. Talks to `catalog` (FBC types), `oci` (pulling and building
 * bundle images) and `util` (errors, PKI for webhook certificates).
 */
export { loadBundleDir, BundleLoadError, type LoadOptions } from './load.js';
export { loadPlainBundleDir, type PlainBundle } from './plain.js';
export { resolveBundleSource, type BundleSource, type Puller } from './source.js';
export { toFbcBundle, channelEntryOf, providedApis, CSV_PROPERTIES_ANNOTATION, type FbcOptions } from './fbc.js';
export { convertRegistryV1, ownNamespaceRoles, type ConvertOptions, type PlainObjects } from './convert.js';
export { applyOverrides, decodeOverrides, type DeploymentOverrides } from './overrides.js';
export { createSelfSignedCertProvider, staticCertProvider, type CertProvider, type ServingCert } from './certs.js';
export { checkBundleConfig, olmv1ConfigMessage, watchNamespaceRule, OLMV1_CONFIG_PREFIX, type BundleConfigCheck, type WatchNamespaceRule } from './bundle-config.js';
export { checkInstallMode, defaultWatchNamespaces, supportedInstallModes, type InstallModeType } from './install-modes.js';
export { crdToV1, API_APPROVED_ANNOTATION } from './crd-v1.js';
export { toStructural, CrdSchemaError, type StructuralProblem, type StructuralResult } from './crd-structural.js';
export {
  validateLoadedBundle,
  validateBundleDir,
  validatePath,
  validateLonePath,
  validatePackageManifest,
  parseSelectOptional,
  parseOptionalValues,
  bundleSize,
  type ValidateOptions,
  type DirValidation,
} from './validate.js';
export { OPTIONAL_VALIDATORS, type OptionalValidator } from './validate-optional.js';
export { renderChecks } from './render-checks.js';
export { generateBundle, type GenerateOptions, type GenerateResult } from './generate.js';
export { buildBundleImage, bundleAnnotations, stageBundleLayout, type BuildBundleOptions, type BuiltBundleImage } from './build.js';
export { findPackageManifestFile, readPackageManifest, type PackageManifest } from './package-manifest.js';
export * from './types.js';
