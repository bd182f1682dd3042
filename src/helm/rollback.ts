/**
 * `binnacle helm rollback RELEASE [REVISION]`, for a release a Helm operator's custom resource
 * holds (made by it, or adopted with `binnacle helm adopt`, Helm 3's and Helm 4's records alike).
 * The custom resource is the release's desired state: its spec is the values, and the manager
 * renders and applies whatever it says. A rollback that re-applied an old manifest behind it would
 * be put back on the next reconcile; so, as Helm's rollback deploys an earlier revision's values,
 * this one writes them into the resource's spec, as the person asking (their kubeconfig: whoever
 * may edit the resource and read the manager's history may roll it back, and nothing more), and the
 * manager makes the new revision through the HelmOperator's own checks.
 *
 * The revisions come from the history the engine trusts (release-records.ts: the manager's
 * namespace, keyed by the resource's UID), never from Helm's records in the release namespace,
 * which anyone who may write Secrets there can forge: a rollback run by someone with more rights
 * would write a forger's values. Helm's records only name the kind to look for. The values are the
 * resource's own at that revision (ReleaseRevision.ownerValues), not the layers its HelmOperator
 * adds (valuesFrom, overrideValues), which stay the operator's current ones; a revision recorded
 * without them (by Binnacle before it kept them) has only Helm's config, layers included (Secret
 * values from valuesFrom among them), and is refused unless the caller accepts that. The chart
 * stays the HelmOperator's: a revision made from another chart version gets its values, and the
 * caller is told.
 */
import type { Logger } from 'pino';
import { ReleaseRecords, ReleaseStore, type ReleaseRef, type ReleaseRevision } from '../apply/index.js';
import { isForbidden } from '../kube/errors.js';
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, InputError } from '../util/errors.js';

export interface HelmKind {
  group: string;
  version: string;
  kind: string;
}

export interface HelmRollbackOptions {
  release: ReleaseRef;
  /** The custom resource's kind, when the caller names it (the release's name is the resource's name, in its namespace). */
  kind?: HelmKind;
  /** Else: the kind from the kind's name the release's newest Helm record names as its owner. */
  kindOf: (recordedKind: string) => Promise<HelmKind>;
  /** The manager's namespace, where the history it trusts lives. */
  systemNamespace: string;
  /** The revision whose values to go back to; default the newest good one (deployed or superseded) before the current. */
  toRevision?: number;
  /** Accept Helm's config for a revision that did not record the resource's own values (it holds the HelmOperator's layers too). */
  acceptConfig?: boolean;
  /** Decide and answer what would be written, writing nothing (helm rollback --dry-run). */
  dryRun?: boolean;
  logger: Logger;
}

export interface HelmRollbackResult {
  kind: HelmKind;
  cr: KubeObject;
  from: ReleaseRevision;
  to: ReleaseRevision;
  /** The spec written (with dryRun, the one that would be; `cr` is then the resource as read). */
  spec: Record<string, unknown>;
  /** Where it came from: the revision's recorded own values, or (none recorded, accepted) Helm's config. */
  values: 'owner' | 'config';
}

/** Reads Secrets and the resource, and updates the resource (the stores' types name their writes too; none is made here). */
export type HelmRollbackClient = Pick<ObjectReader, 'list' | 'find'> & Pick<ObjectWriter, 'create' | 'update' | 'delete'>;

const GOOD = new Set(['deployed', 'superseded']);

/**
 * The kind Helm's records in the release namespace name as the owner: only which kind to look
 * for, and only a kind's name (a label anyone who may write Secrets there may set: never a group
 * and version to go elsewhere with).
 */
async function recordedKind(client: HelmRollbackClient, release: ReleaseRef, where: string): Promise<string> {
  const mirror = await new ReleaseStore(client).read(release);
  const named = [...mirror.revisions].reverse().find((r) => r.owner !== undefined)?.owner?.kind;
  if (named === undefined) throw new BinnacleError('input', 'HELM_ROLLBACK_NOT_OURS', `${where} is not held by a Helm operator's resource (its Helm records name no owner): adopt it first (binnacle helm adopt), or roll it back with helm`);
  if (!/^[A-Z][A-Za-z0-9]{0,62}$/.test(named)) throw new BinnacleError('input', 'HELM_ROLLBACK_NOT_OURS', `${where}: its Helm records name the owner kind ${JSON.stringify(named.slice(0, 80))}, not a kind's name: give --kind Kind.version.group`);
  return named;
}

export async function rollbackHelmRelease(client: HelmRollbackClient, o: HelmRollbackOptions): Promise<HelmRollbackResult> {
  const where = `release ${o.release.namespace}/${o.release.name}`;
  if (o.systemNamespace === o.release.namespace) {
    throw new InputError('HELM_ROLLBACK_HISTORY_UNTRUSTED', `${where}: the manager's history is read from ${o.systemNamespace}, the release's own namespace, where whoever may write Secrets could have written it: run it against a manager that keeps its history elsewhere`, { field: 'system-namespace' });
  }
  const kind = o.kind ?? (await o.kindOf(await recordedKind(client, o.release, where)));
  const apiVersion = kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
  const cr = await client.find({ apiVersion, kind: kind.kind, namespace: o.release.namespace, name: o.release.name });
  if (cr === undefined) throw new BinnacleError('input', 'HELM_ROLLBACK_NO_RESOURCE', `${where}: there is no ${kind.kind} ${o.release.namespace}/${o.release.name} (${apiVersion}) holding it`);
  const uid = cr.metadata.uid ?? '';
  const owner = { kind: kind.kind, name: o.release.name, namespace: o.release.namespace, uid, apiVersion };
  const history = new ReleaseRecords({ client, namespace: o.systemNamespace, logger: o.logger }).bind(owner, o.release, new ReleaseStore(client));
  const { revisions, refused } = await history.readRecorded().catch((err: unknown) => {
    if (!isForbidden(err)) throw err;
    throw new BinnacleError('input', 'HELM_ROLLBACK_HISTORY_FORBIDDEN', `${where}: its history is read from the manager's namespace ${o.systemNamespace}, where you may not list Secrets; Helm's records in ${o.release.namespace} are not used instead: anyone who may write Secrets there could have written them`, { cause: err });
  });
  if (refused.length > 0) throw new BinnacleError('terminal', 'RELEASE_RECORD_REFUSED', `${where}: ${refused.map((r) => r.reason).join('; ')}`);
  const from = revisions.at(-1);
  if (from === undefined) throw new BinnacleError('input', 'RELEASE_NOT_FOUND', `${where}: the manager keeps no history for ${kind.kind} ${o.release.namespace}/${o.release.name} (UID ${uid}) in ${o.systemNamespace} (is that the manager's namespace? --system-namespace)`);
  const to = o.toRevision === undefined ? [...revisions].reverse().find((r) => r.revision < from.revision && GOOD.has(r.status)) : revisions.find((r) => r.revision === o.toRevision);
  if (to === undefined) {
    const message = o.toRevision === undefined ? `${where} has no good revision (deployed or superseded) before revision ${from.revision} to roll back to` : `${where} has no revision ${o.toRevision} (it has ${revisions.map((r) => r.revision).join(', ')})`;
    throw new InputError('ROLLBACK_NO_REVISION', message, { field: 'revision' });
  }
  if (to.revision === from.revision) throw new InputError('ROLLBACK_NO_REVISION', `${where}: revision ${to.revision} is the current one`, { field: 'revision' });
  // A revision moved over from Helm's records (a release `helm` made, or one from before the trusted
  // history) holds whatever whoever could write Secrets in the release namespace wrote: never taken as the owner's own.
  const own = to.movedOver === true ? undefined : to.ownerValues;
  if (own === undefined && o.acceptConfig !== true) {
    const why = to.movedOver === true ? `was moved over from Helm's records in ${o.release.namespace}, which anyone who may write Secrets there could have written` : "did not record the resource's own values apart (Binnacle made it before it kept them)";
    throw new BinnacleError('input', 'HELM_ROLLBACK_NO_OWN_VALUES', `${where}: revision ${to.revision} ${why}: only Helm's config for it is there, which holds what the HelmOperator's valuesFrom and overrideValues added then (Secret values among them); to write that into the spec, run again with --accept-config`);
  }
  const spec = own ?? to.config;
  if (o.dryRun === true) return { kind, cr, from, to, spec, values: own === undefined ? 'config' : 'owner' };
  // On the resource as read (its resourceVersion): a change made meanwhile is a conflict, not overwritten.
  const written = await client.update({ ...cr, spec });
  return { kind, cr: written, from, to, spec, values: own === undefined ? 'config' : 'owner' };
}
