/**
 * Resolution: which bundles to install. Takes catalogs (file-based catalog configs from
 * `src/catalog`, each with a name and priority), what is installed, and requests (package,
 * channels, version range, upgrade policy); applies OLM's rules — upgrade edges, package and
 * API dependencies, `olm.constraint` (with a CEL subset), one bundle per package, deprecation
 * and catalog priority — through the SAT core in `sat/`, and returns the chosen bundles in
 * install order or a `ResolutionError` that explains, in sentences, which facts clash. Facts
 * about the cluster (its Kubernetes and OpenShift versions) rule out bundles that cannot run
 * there. A controller passes every bundle installed in the cluster, each with who needs it, so
 * dependencies are shared and an API keeps one owner.
 * Controllers and the CLI call `resolve`, which does no I/O; `catalog-source.ts` (imported
 * directly, not from here) loads catalogs from disk or a catalog server for the CLI.
 */
export {
  resolve,
  extensionRequest,
  resolutionProblem,
  neededBundles,
  parseInstalled,
  type ChosenBundle,
  type InstalledBundle,
  type Resolution,
  type ResolveInput,
  type ResolveRequest,
  type UpgradePolicy,
} from './resolver.js';
export { CatalogIndex, type BundleEntity, type CatalogInput } from './catalog-index.js';
export { ResolutionError } from './errors.js';
export { explainFacts, factSentence, type EmptyReason, type Fact } from './facts.js';
export { parseRange, toNpmRange, type ParsedRange } from './version-range.js';
export { compileCel, CelError, type CompiledRule } from './cel.js';
export { checkCluster, clusterVersion, PROP_MIN_KUBE_VERSION, type ClusterCheck, type ClusterFacts } from './cluster-constraints.js';
export { SatBudgetError, SatInputError, solve as solveSat, type SolveOptions, type Variable as SatVariable } from './sat/index.js';
