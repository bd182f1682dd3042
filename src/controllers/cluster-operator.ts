/**
 * OpenShift's view of a PlatformOperator: on clusters that serve `config.openshift.io/v1`, a
 * `ClusterOperator` whose status — Available/Progressing/Degraded/Upgradeable conditions,
 * relatedObjects (for `oc adm inspect` and must-gather) and versions — is what `oc get
 * clusteroperators` and the cluster-version operator read. It is owned by its PlatformOperator
 * and goes with it.
 */
import { BINNACLE_VERSION } from '../api/version.js';
import type { Discovery, ObjectWriter, StatusWriter } from '../kube/ports.js';
import { isNotFound } from '../kube/errors.js';
import type { Condition, KubeObject } from '../kube/types.js';
import { API_VERSION, GROUP, type PlatformOperator, type PlatformPackageStatus } from '../api/types.js';
import { boundedName } from '../api/names.js';
import { STATUS_MANAGER } from './common.js';

export const CLUSTER_OPERATOR_API_VERSION = 'config.openshift.io/v1';

export function clusterOperatorName(platformOperator: string): string {
  return boundedName(`binnacle-${platformOperator}`);
}

export interface ClusterOperatorStatus {
  conditions: { type: string; status: string; lastTransitionTime: string; reason: string; message: string }[];
  relatedObjects: { group: string; resource: string; name: string; namespace?: string }[];
  versions: { name: string; version: string }[];
}

/** The ClusterOperator status for a PlatformOperator with these conditions and packages (pure). */
export function clusterOperatorStatus(po: PlatformOperator, conditions: readonly Condition[], packages: readonly PlatformPackageStatus[], namespaces: readonly string[]): ClusterOperatorStatus {
  const types = ['Available', 'Progressing', 'Degraded', 'Upgradeable'];
  const name = po.metadata.name ?? '';
  return {
    conditions: conditions
      .filter((c) => types.includes(c.type))
      .map((c) => ({ type: c.type, status: c.status, lastTransitionTime: c.lastTransitionTime, reason: c.reason, message: c.message })),
    relatedObjects: [
      { group: GROUP, resource: 'platformoperators', name },
      ...packages.filter((p) => p.extension !== undefined && p.reason !== 'Removed').map((p) => ({ group: GROUP, resource: 'clusterextensions', name: p.extension ?? '' })),
      ...[...new Set(namespaces)].sort().map((ns) => ({ group: '', resource: 'namespaces', name: ns })),
    ],
    versions: [
      { name: 'operator', version: BINNACLE_VERSION },
      ...packages.filter((p) => p.version !== undefined && p.reason !== 'Removed').map((p) => ({ name: p.name, version: p.version ?? '' })),
    ],
  };
}

/**
 * Writes the ClusterOperator (object, then status through its subresource). Answers false,
 * writing nothing, when the cluster does not serve ClusterOperators.
 */
export async function writeClusterOperator(client: Pick<Discovery, 'resourceFor'> & Pick<ObjectWriter, 'apply'> & Pick<StatusWriter, 'applyStatus'>, po: PlatformOperator, status: ClusterOperatorStatus): Promise<boolean> {
  try {
    await client.resourceFor(CLUSTER_OPERATOR_API_VERSION, 'ClusterOperator');
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  const name = clusterOperatorName(po.metadata.name ?? '');
  const obj: KubeObject = {
    apiVersion: CLUSTER_OPERATOR_API_VERSION,
    kind: 'ClusterOperator',
    metadata: {
      name,
      labels: { 'app.kubernetes.io/part-of': 'binnacle' },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'PlatformOperator', name: po.metadata.name ?? '', uid: po.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: {},
  };
  await client.apply(obj, { force: true });
  await client.applyStatus({ apiVersion: CLUSTER_OPERATOR_API_VERSION, kind: 'ClusterOperator', metadata: { name }, status: { ...status } }, { fieldManager: STATUS_MANAGER, force: true });
  return true;
}
