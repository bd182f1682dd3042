/**
 * APIs that belong to a platform, not to an operator: no catalog bundle provides them, so a
 * chart that creates their objects gets no `olm.gvk.required` dependency for them (one could
 * never be satisfied, and the whole install would be refused). The one list of them, each
 * with the reason.
 *
 * Whether the cluster serves them is a separate question, answered at apply time: some of
 * these kinds are optional (apply/optional-kinds.ts) and skipped where the API is missing.
 */
export interface PlatformApis {
  /** API groups served by the platform itself. */
  groups: readonly string[];
  /** Why no operator bundle provides them. */
  reason: string;
}

export const PLATFORM_APIS: readonly PlatformApis[] = [
  {
    groups: [
      'apps.openshift.io',
      'authorization.openshift.io',
      'build.openshift.io',
      'config.openshift.io',
      'console.openshift.io',
      'image.openshift.io',
      'network.openshift.io',
      'oauth.openshift.io',
      'operator.openshift.io',
      'project.openshift.io',
      'quota.openshift.io',
      'route.openshift.io',
      'security.openshift.io',
      'template.openshift.io',
      'user.openshift.io',
    ],
    reason: "part of OpenShift itself (its API server, router, image registry and console), which no catalog bundle installs; OLM's own catalogs never list them as provided",
  },
];

/** The entry that makes `group` a platform API, if any. */
export function platformApi(group: string): PlatformApis | undefined {
  return PLATFORM_APIS.find((p) => p.groups.includes(group));
}
