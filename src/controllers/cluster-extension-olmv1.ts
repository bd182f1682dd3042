/**
 * OLM v1's ClusterExtension (`olm.operatorframework.io/v1`) served by Binnacle's ClusterExtension
 * engine through a `binnacle.dev` twin (cluster-olmv1-twin.ts): the spec converted field by field
 * (src/api/olmv1/convert.ts), the status written back as OLM v1's (Installed, Progressing with
 * api/v1's reasons, the four deprecation conditions, `install.bundle`, `activeRevisions`).
 *
 * Identity: the ServiceAccount the object names, else the default installer the admin gave the
 * manager (`--olmv1-installer`), else no install and a condition that says how to set one.
 */
import { extensionStatusFromTwin, extensionTwinSpec, type ConditionSpec, type InstallerIdentity } from '../api/olmv1/convert.js';
import type { Olmv1ClusterExtension } from '../api/olmv1/types.js';
import type { ServiceAccountMode } from '../api/olmv1/serviceaccount-policy.js';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../api/types.js';
import { Olmv1TwinReconciler, type TwinClient, type TwinKind } from './cluster-olmv1-twin.js';

export interface Olmv1ClusterExtensionOptions {
  client: TwinClient;
  /** The default installer identity (`binnacle manager --olmv1-installer=<namespace>/<name>`); none: objects must name theirs. */
  installer?: InstallerIdentity | undefined;
  /** Whether an object's deprecated spec.serviceAccount is used (default) or ignored as OLM v1 does (`--olmv1-service-account`). */
  serviceAccount?: ServiceAccountMode | undefined;
  clock?: () => Date;
}

export function olmv1ExtensionKind(o: Olmv1ClusterExtensionOptions): TwinKind<Olmv1ClusterExtension, ClusterExtension> {
  const clock = o.clock ?? (() => new Date());
  return {
    kind: 'ClusterExtension',
    twinSpec: (v1) => extensionTwinSpec(v1, o.installer, o.serviceAccount),
    twinLabels: (v1) => ({ ...v1.metadata.labels }),
    refused: (reason, message): ConditionSpec[] => [
      { type: 'Progressing', status: reason === 'Retrying', reason, message },
      { type: 'Installed', status: false, reason: 'Failed', message },
    ],
    status: async (v1, twin) => {
      const bdName = twin.status?.install?.bundleDeployment;
      const bd = bdName === undefined || bdName === '' ? undefined : await o.client.find<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: bdName });
      const out = extensionStatusFromTwin({ twin, progressDeadlineMinutes: v1.spec.progressDeadlineMinutes, now: clock(), revision: bd?.status?.revision });
      return {
        conditions: out.conditions,
        fields: { ...(out.install === undefined ? {} : { install: out.install }), ...(out.activeRevisions === undefined ? {} : { activeRevisions: out.activeRevisions }) },
        requeueAfterMs: out.requeueAfterMs,
      };
    },
  };
}

/** The reconciler of `olm.operatorframework.io/v1` ClusterExtensions. */
export function olmv1ExtensionReconciler(o: Olmv1ClusterExtensionOptions): Olmv1TwinReconciler<Olmv1ClusterExtension, ClusterExtension> {
  return new Olmv1TwinReconciler(o.client, olmv1ExtensionKind(o));
}
