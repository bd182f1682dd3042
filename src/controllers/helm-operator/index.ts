/**
 * The Helm operator runtime: custom resources of Helm-operator kinds reconciled as Helm releases
 * of their chart, with operator-sdk's Helm operator contract kept unchanged (watches.yaml,
 * `helm.sdk.operatorframework.io/*` annotations and finalizer, override values with `$VAR`
 * expansion, status and conditions).
 *
 * - `helm-release`: one custom resource → one release (values from its spec, install, upgrade,
 *   drift repair, uninstall on delete), as named steps with one status write; its uninstall
 *   waits in `helm-uninstall-wait`.
 * - `helm-kinds`: a running kind, an informer on its custom resources and a controller whose
 *   reconciler is the release reconciler, with dependent watches (../dependents.ts, shared with
 *   BundleDeployments).
 * - `helm-operator`: the HelmOperator API's reconciler (chart source → CRDs → running kinds),
 *   started by the manager (../manager.ts).
 * - `watches`: operator-sdk's watches.yaml, read unchanged.
 *
 * This module is the entry `binnacle helm-operator run` starts kinds through: the command needs
 * `runHelmKind`, the watches it reads and the collector of records whose custom resource is gone
 * (../records-gc.ts, the manager's too), and only the types of the rest, so it loads no more of
 * the controllers than one running kind needs.
 */
export { runHelmKind, type RunningKind, type RunningKindOptions } from './helm-kinds.js';
export type { HelmKind, ReleaseIdentity } from './helm-release.js';
export { loadWatches, DEFAULT_HELM_RECONCILES, type WatchEntry, type DryRunOption } from './watches.js';
export { ReleaseRecordsCollector, collectRecordsEvery } from '../records-gc.js';
