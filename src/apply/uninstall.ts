/**
 * Uninstall, as Helm's `action.Uninstall`: every object the release's records name that still
 * carries this owner's marks is deleted, CRDs last (and with them their custom resources, as
 * OLM v1 does on ClusterExtension deletion), between the pre- and post-delete hooks, and then
 * the records. Every uninstall is confined as a render is: hooks outside the release's scope
 * do not run, and nothing outside the scope is deleted, whatever a record says.
 */
import { describeRef, refOf, type KubeObject } from '../kube/types.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { findQuiet, type ActionConfig } from './action-config.js';
import { runHooks } from './hooks.js';
import { isOwnedBy, keptByResourcePolicy } from './ownership.js';
import { deleteOrder } from './phases.js';
import { dedupe, withNamespaces } from './prepare.js';
import { parseManifest } from './release.js';
import { previousObjects } from './rollout.js';
import type { ConfineCheck, ObjectRef, Owner, ReleaseHook, ReleaseRef, ReleaseRevision } from './types.js';

export interface UninstallOptions {
  owner: Owner;
  release: ReleaseRef;
  disableHooks?: boolean;
  hookTimeoutMs?: number;
  /** What the release may hold: recorded hooks or objects outside it are not run or deleted. */
  confine?: ConfineCheck;
}

export async function uninstall(cfg: ActionConfig, opts: UninstallOptions): Promise<{ deleted: ObjectRef[] }> {
  const { revisions: history } = await cfg.history.read();
  if (history.length === 0) return { deleted: [] };
  const where = `release ${opts.release.namespace}/${opts.release.name}`;
  checkOwner(history, opts.owner, where);
  let objects = dedupe(await withNamespaces(cfg.client, await previousObjects(history), opts.release.namespace));
  const newest = history.at(-1);
  let hooks = opts.disableHooks === true ? [] : (newest?.content?.hooks ?? []);
  if (hooks.length > 0 && newest?.movedOver === true) {
    // Its hooks are what a record Binnacle did not write says (decide.ts: nothing is applied from it).
    cfg.logger.warn({ release: where, revision: newest.revision }, "revision moved over from Helm's records, whose fields Binnacle did not write: uninstalling without its delete hooks");
    hooks = [];
  }
  if (opts.confine !== undefined) ({ objects, hooks } = await confineRecorded(cfg, objects, hooks, opts.confine, where));
  if (hooks.length > 0 && (await namespaceGoing(cfg, opts.release.namespace))) {
    // Nothing can be created in a namespace being deleted (this uninstall's own, deleted before a
    // crash, or the admin's): its hooks would fail every retry, and the owner's finalizer would
    // hold the namespace Terminating for good (found by the model test). Helm fails here.
    cfg.logger.warn({ release: where }, `namespace ${opts.release.namespace} is being deleted: the release's delete hooks cannot be created there; uninstalling without them`);
    hooks = [];
  }
  const hookOpts = { client: cfg.client, owner: opts.owner, release: opts.release, logger: cfg.logger, timeoutMs: opts.hookTimeoutMs ?? 5 * 60_000, pollIntervalMs: Math.min(cfg.pollIntervalMs, 500), confine: opts.confine };
  const pre = await runHooks(hooks, 'pre-delete', hookOpts);
  if (!pre.ok) throw new BinnacleError('terminal', 'HOOK_FAILED', `uninstall of ${where}: ${pre.message}`);
  const deleted = await deleteOwned(cfg, objects, opts);
  const post = await runHooks(hooks, 'post-delete', hookOpts);
  if (!post.ok) cfg.logger.warn({ release: where, reason: post.message }, 'post-delete hook failed');
  await cfg.history.remove(history, true);
  cfg.logger.info({ release: where, deleted: deleted.length }, 'uninstalled release');
  return { deleted };
}

/**
 * Whether the namespace is known to be gone or being deleted. An identity that may not read
 * Namespaces (most tenants' ServiceAccounts) learns nothing here: its hooks run as before.
 */
async function namespaceGoing(cfg: ActionConfig, name: string): Promise<boolean> {
  try {
    const ns = await findQuiet(cfg.client, { apiVersion: 'v1', kind: 'Namespace', name });
    return ns === undefined || ns.metadata.deletionTimestamp !== undefined;
  } catch (err) {
    cfg.logger.debug({ namespace: name, err: errorMessage(err) }, 'cannot read the release namespace: running its delete hooks');
    return false;
  }
}

/** The release is uninstalled only by the owner its records name (the latest that names one). */
function checkOwner(history: readonly ReleaseRevision[], owner: Owner, where: string): void {
  const recorded = [...history].reverse().find((r) => r.owner !== undefined)?.owner;
  if (recorded === undefined) return;
  if (recorded.kind !== owner.kind || recorded.name !== owner.name || (recorded.namespace !== undefined && recorded.namespace !== owner.namespace)) {
    throw new BinnacleError('terminal', 'RELEASE_NOT_OWNED', `${where} belongs to ${recorded.kind} ${recorded.name}, not ${owner.kind} ${owner.name}`);
  }
}

/** Recorded objects and hooks are as trusted as the record: what is out of scope is left alone. */
async function confineRecorded(cfg: ActionConfig, objects: KubeObject[], hooks: ReleaseHook[], confine: ConfineCheck, where: string): Promise<{ objects: KubeObject[]; hooks: ReleaseHook[] }> {
  const outside = await outOfScope(objects, confine);
  if (outside.size > 0) {
    cfg.logger.warn({ release: where, outside: [...outside] }, 'the records name objects outside the release\'s scope; not deleting them');
    objects = objects.filter((o) => !outside.has(describeRef(refOf(o))));
  }
  const problems = await confine(hooks.flatMap((h) => parseManifest(h.manifest, `${where} hook ${h.name}`)));
  if (problems.length > 0) {
    cfg.logger.warn({ release: where, problems }, 'the recorded delete hooks hold what the release may not; running none');
    hooks = [];
  }
  return { objects, hooks };
}

/** Deletes, in delete order, each object the release still owns, except what helm.sh/resource-policy keeps. */
async function deleteOwned(cfg: ActionConfig, objects: readonly KubeObject[], opts: UninstallOptions): Promise<ObjectRef[]> {
  const deleted: ObjectRef[] = [];
  for (const o of deleteOrder(objects)) {
    const ref = refOf(o);
    const live = await findQuiet(cfg.client, ref);
    if (live === undefined || !isOwnedBy(live, opts.owner, opts.release)) continue;
    if (keptByResourcePolicy(o, live)) {
      cfg.logger.info({ object: describeRef(ref) }, 'kept by helm.sh/resource-policy');
      continue;
    }
    if (await cfg.client.delete(ref, { propagationPolicy: 'Background' })) deleted.push(ref);
  }
  return deleted;
}

/** The objects (by description) the scope does not allow, each checked alone so the others still go. */
async function outOfScope(objects: readonly KubeObject[], confine: ConfineCheck): Promise<Set<string>> {
  const out = new Set<string>();
  for (const o of objects) if ((await confine([o])).length > 0) out.add(describeRef(refOf(o)));
  return out;
}
