/**
 * helm-operator's `uninstall-wait`: a deleted CR keeps its finalizer until every object of its
 * release is really gone, whichever call deleted it. An object held by a finalizer outlives the
 * uninstall that deleted it, and the release's records go with that uninstall, so the objects
 * to wait for are remembered in the CR's status.deployedRelease manifest (as operator-sdk
 * does; a manifest too large for status is not: deployed-release.ts), plus whatever this pass's
 * uninstall deleted. Objects Helm keeps
 * (`helm.sh/resource-policy: keep`) are not waited for.
 *
 * Trust: whoever may write the CR's status may write that manifest, so it is only looked at,
 * never acted on: an object holds the CR only while it exists and carries this release's
 * ownership marks, it is looked up as the release's identity, and nothing is deleted here.
 */
import type { Logger } from 'pino';
import { isOwnedBy, keptByResourcePolicy, parseManifest, type ObjectRef, type Owner, type ReleaseRef } from '../../apply/index.js';
import type { ClusterReader } from '../../kube/ports.js';
import { isNotFound } from '../../kube/errors.js';
import { describeRef } from '../../kube/types.js';
import { errorMessage } from '../../util/errors.js';

export interface LingeringQuery {
  /** The release's identity. */
  client: Pick<ClusterReader, 'find' | 'resourceFor'>;
  /** The release manifest remembered in status; a bad one is logged and only `deleted` is looked at. */
  manifest: string | undefined;
  /** What this pass's uninstall deleted. */
  deleted: readonly ObjectRef[];
  owner: Owner;
  release: ReleaseRef;
  logger: Logger;
}

/** The release's objects that still exist, in the order first named. */
export async function lingeringObjects(q: LingeringQuery): Promise<ObjectRef[]> {
  const refs = new Map<string, ObjectRef>();
  for (const ref of [...(await manifestRefs(q)), ...q.deleted]) refs.set(`${ref.apiVersion} ${describeRef(ref)}`, ref);
  const left: ObjectRef[] = [];
  for (const ref of refs.values()) {
    const live = await q.client.find(ref).catch((err: unknown) => {
      // A kind the cluster no longer serves has nothing left to find.
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (live !== undefined && isOwnedBy(live, q.owner, q.release)) left.push(ref);
  }
  return left;
}

/** The manifest's objects Helm would delete, with the release's namespace where Helm leaves it out. */
async function manifestRefs(q: LingeringQuery): Promise<ObjectRef[]> {
  if (q.manifest === undefined || q.manifest === '') return [];
  let objects;
  try {
    objects = parseManifest(q.manifest, `status.deployedRelease of ${q.release.namespace}/${q.release.name}`);
  } catch (err) {
    q.logger.warn({ err: errorMessage(err) }, 'status.deployedRelease.manifest cannot be read; waiting only for what the uninstall deleted');
    return [];
  }
  const out: ObjectRef[] = [];
  for (const o of objects) {
    if (keptByResourcePolicy(o) || o.metadata.name === undefined) continue;
    const ref: ObjectRef = { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name };
    if (o.metadata.namespace !== undefined && o.metadata.namespace !== '') ref.namespace = o.metadata.namespace;
    else if (await namespaced(q.client, o.apiVersion, o.kind)) ref.namespace = q.release.namespace;
    out.push(ref);
  }
  return out;
}

async function namespaced(client: LingeringQuery['client'], apiVersion: string, kind: string): Promise<boolean> {
  try {
    return (await client.resourceFor(apiVersion, kind)).namespaced;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
