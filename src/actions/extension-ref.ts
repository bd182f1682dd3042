/**
 * The object a person changes to change an installed extension by name (`binnacle upgrade`,
 * `rollback`, `uninstall`, `approve`): its `binnacle.dev` ClusterExtension, or, when that is the
 * twin of an OLM v1 ClusterExtension (api/olmv1/twin.ts), the OLM v1 object it is made from.
 * The twin is the manager's: a change written to it is put back from the OLM v1 object, and a
 * twin deleted is made again. OLM v1's schema has the fields these commands write
 * (`spec.source.catalog.version`, `channels`, `upgradeConstraintPolicy`), and an approval on
 * the OLM v1 object reaches its twin (api/olmv1/convert.ts).
 */
import { olmv1TwinOf } from '../api/olmv1/twin.js';
import { OLMV1_API_VERSION } from '../api/olmv1/types.js';
import { API_VERSION } from '../api/types.js';
import type { ObjectReader } from '../kube/ports.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import { refuseIfPlatformOwnedObject } from './platform-protection.js';

/** Where a change to the extension `ce` (as read) is written. */
export function extensionRefOf(ce: KubeObject): ObjectRef {
  const name = ce.metadata.name ?? '';
  return olmv1TwinOf(ce) === undefined ? { apiVersion: API_VERSION, kind: 'ClusterExtension', name } : { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name };
}

/**
 * Where a change to the extension NAME is written, read once: refused (EXTENSION_PROTECTED) when
 * a PlatformOperator keeps it, since it is changed only through that (issue 12 §6); the
 * `binnacle.dev` name when nothing is there, for the caller to report.
 */
export async function extensionSpecRef(client: Pick<ObjectReader, 'find'>, name: string): Promise<ObjectRef> {
  const ce = await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  if (ce === undefined) return { apiVersion: API_VERSION, kind: 'ClusterExtension', name };
  refuseIfPlatformOwnedObject(ce);
  return extensionRefOf(ce);
}
