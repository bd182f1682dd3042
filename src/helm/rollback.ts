/**
 * `binnacle helm rollback RELEASE [REVISION]`, for a release a Helm operator's custom resource
 * holds (made by it, or adopted with `binnacle helm adopt`, Helm 3's and Helm 4's records alike).
 * The custom resource is the release's desired state: its spec is the values, and the manager
 * renders and applies whatever it says. A rollback that re-applied an old manifest behind it would
 * be put back on the next reconcile; so, as Helm's rollback deploys an earlier revision's values,
 * this one writes them into the resource's spec, as the person asking (their kubeconfig: whoever
 * may edit the resource may roll it back, and nothing more), and the manager makes the new
 * revision through the HelmOperator's own checks. The values are the resource's own at that
 * revision (ReleaseRevision.ownerValues), not the layers its HelmOperator adds (valuesFrom,
 * overrideValues), which stay the operator's current ones; a revision recorded without them (by
 * `helm`, or by Binnacle before it kept them) has only Helm's config, layers included, and the
 * caller is told. The chart stays the HelmOperator's: a revision made from another chart version
 * gets its values, and the caller is told.
 */
import { ReleaseStore, type ReleaseRef, type ReleaseRevision } from '../apply/index.js';
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, InputError } from '../util/errors.js';

export interface HelmRollbackOptions {
  release: ReleaseRef;
  /**
   * The custom resource's kind (the release's name is the resource's name, in its namespace),
   * from the kind name the release's newest record names as its owner.
   */
  kindOf: (recordedKind: string) => Promise<HelmKind>;
  /** The revision whose values to go back to; default the newest good one (deployed or superseded) before the current. */
  toRevision?: number;
}

export interface HelmKind {
  group: string;
  version: string;
  kind: string;
}

export interface HelmRollbackResult {
  kind: HelmKind;
  /** Where the spec written came from: the revision's recorded own values, or (none recorded) Helm's config, layers included. */
  values: 'owner' | 'config';
  cr: KubeObject;
  from: ReleaseRevision;
  to: ReleaseRevision;
}

/** Reads Secrets and the resource, and updates the resource (the store's type names its writes too; it makes none here). */
export type HelmRollbackClient = Pick<ObjectReader, 'list' | 'find'> & Pick<ObjectWriter, 'create' | 'update' | 'delete'>;

const GOOD = new Set(['deployed', 'superseded']);

export async function rollbackHelmRelease(client: HelmRollbackClient, o: HelmRollbackOptions): Promise<HelmRollbackResult> {
  const where = `release ${o.release.namespace}/${o.release.name}`;
  // Reading lists the release's Secrets (the person's read of them) and writes nothing.
  const { revisions, refused } = await new ReleaseStore(client).read(o.release);
  if (refused.length > 0) throw new BinnacleError('terminal', 'RELEASE_RECORD_REFUSED', `${where}: ${refused.map((r) => r.reason).join('; ')}`);
  const from = revisions.at(-1);
  if (from === undefined) throw new BinnacleError('input', 'RELEASE_NOT_FOUND', `${where} has no revisions`);
  const to = o.toRevision === undefined ? [...revisions].reverse().find((r) => r.revision < from.revision && GOOD.has(r.status)) : revisions.find((r) => r.revision === o.toRevision);
  if (to === undefined) {
    const message = o.toRevision === undefined ? `${where} has no good revision (deployed or superseded) before revision ${from.revision} to roll back to` : `${where} has no revision ${o.toRevision} (it has ${revisions.map((r) => r.revision).join(', ')})`;
    throw new InputError('ROLLBACK_NO_REVISION', message, { field: 'revision' });
  }
  if (to.revision === from.revision) throw new InputError('ROLLBACK_NO_REVISION', `${where}: revision ${to.revision} is the current one`, { field: 'revision' });

  const owner = from.owner;
  // Only a release its resource holds: one `helm` made and no resource adopted, or another owner's, is not the resource's to change.
  if (owner === undefined) throw new BinnacleError('input', 'HELM_ROLLBACK_NOT_OURS', `${where} is not held by a Helm operator's resource (its revision ${from.revision} names no owner): adopt it first (binnacle helm adopt), or roll it back with helm`);
  const kind = await o.kindOf(owner.kind);
  if (owner.kind !== kind.kind || owner.name !== o.release.name || (owner.namespace !== undefined && owner.namespace !== o.release.namespace)) {
    throw new BinnacleError('input', 'HELM_ROLLBACK_NOT_OURS', `${where} belongs to ${owner.kind} ${owner.namespace === undefined ? '' : `${owner.namespace}/`}${owner.name}, not to ${kind.kind} ${o.release.namespace}/${o.release.name}`);
  }
  const apiVersion = kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
  const cr = await client.find({ apiVersion, kind: kind.kind, namespace: o.release.namespace, name: o.release.name });
  if (cr === undefined) throw new BinnacleError('input', 'HELM_ROLLBACK_NO_RESOURCE', `${where}: there is no ${kind.kind} ${o.release.namespace}/${o.release.name} (${apiVersion}) holding it`);
  // The resource's own values at that revision: recorded apart from its operator's layers (valuesFrom,
  // overrideValues) since Binnacle records them; a revision without them (Helm's own, or Binnacle's
  // before) has only Helm's config, which holds the layers too.
  const spec = to.ownerValues ?? to.config;
  // On the resource as read (its resourceVersion): a change made meanwhile is a conflict, not overwritten.
  const written = await client.update({ ...cr, spec });
  return { kind, cr: written, from, to, values: to.ownerValues === undefined ? 'config' : 'owner' };
}
