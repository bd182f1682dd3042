/**
 * The object a person changes to change an installed extension by name (`binnacle upgrade`,
 * `rollback`, `uninstall`): its `binnacle.dev` ClusterExtension, or, when that is the twin of an
 * OLM v1 ClusterExtension (controllers/cluster-olmv1-twin.ts), the OLM v1 object it is made from.
 * The twin is the manager's: a change written to it is put back from the OLM v1 object, and a
 * twin deleted is made again. OLM v1's schema has the fields these commands write
 * (`spec.source.catalog.version`, `channels`, `upgradeConstraintPolicy`).
 */
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION } from '../api/olmv1/types.js';
import { API_VERSION } from '../api/types.js';
import type { ObjectReader } from '../kube/ports.js';
import type { ObjectRef } from '../kube/types.js';

export async function extensionSpecRef(client: Pick<ObjectReader, 'find'>, name: string): Promise<ObjectRef> {
  const ref: ObjectRef = { apiVersion: API_VERSION, kind: 'ClusterExtension', name };
  const ce = await client.find(ref);
  if (ce?.metadata.ownerReferences?.some((o) => o.apiVersion === OLMV1_API_VERSION && o.kind === 'ClusterExtension' && o.controller === true && o.uid === ce.metadata.labels?.[LABEL_OLMV1_TWIN_OF]) === true) {
    return { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name };
  }
  return ref;
}
