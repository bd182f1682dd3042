/**
 * The built-in local control plane (`binnacle cluster …`): real etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler built from the Go module proxy, kwok as a fake
 * kubelet with one fake Node, and Debian's docker-registry for images. Tests and the demo
 * run against it; `kubectl` and `helm` use its admin kubeconfig.
 */
export { clusterUp, clusterDown, clusterStatus, clusterKubeconfigPath, COMPONENTS, FAKE_NODE_NAME } from './cluster.js';
export type { UpResult, ClusterStatus, ComponentStatus, Component } from './cluster.js';
export { clusterLayout, cacheDir, binDir, projectRoot } from './layout.js';
export { findTool, ensureTools, ensureRegistryBinary } from './tools.js';
export { installOpenShiftApis, openShiftCrds, ensureOpenShiftApi, DEFAULT_OPENSHIFT_VERSION } from './openshift.js';
export { countAuditRequests, countAuditRequestsInFile } from './audit.js';
