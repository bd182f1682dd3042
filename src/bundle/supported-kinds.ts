/**
 * Kinds a registry+v1 bundle may carry besides its CSV and CRDs, and whether each is
 * namespaced (operator-registry `pkg/lib/bundle/supported_resources.go`).
 */
const SUPPORTED: Record<string, boolean> = {
  ClusterServiceVersion: true,
  CustomResourceDefinition: false,
  ClusterRole: false,
  ClusterRoleBinding: false,
  Service: true,
  ServiceAccount: true,
  Role: true,
  RoleBinding: true,
  PrometheusRule: true,
  ServiceMonitor: true,
  Secret: true,
  ConfigMap: true,
  PodDisruptionBudget: true,
  PriorityClass: false,
  VerticalPodAutoscaler: false,
  ConsoleYAMLSample: false,
  ConsoleQuickStart: false,
  ConsoleCLIDownload: false,
  ConsoleLink: false,
  ConsolePlugin: false,
  NetworkPolicy: true,
  PodMonitor: true,
};

export interface KindSupport {
  supported: boolean;
  namespaced: boolean;
}

export function kindSupport(kind: string): KindSupport {
  // Own keys only: a manifest of kind `constructor` or `__proto__` is not a supported kind.
  const namespaced = Object.hasOwn(SUPPORTED, kind) ? SUPPORTED[kind] : undefined;
  return { supported: namespaced !== undefined, namespaced: namespaced ?? false };
}
