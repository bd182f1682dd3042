/**
 * Helm hooks (helm.sh/helm/v3/pkg/action/hooks.go, as documented in Helm's "Chart Hooks"):
 * at a lifecycle event the release's hooks for that event run one by one in weight order
 * (then by name). Each hook object is deleted first when its policies say
 * `before-hook-creation` (Helm's default when a hook names no policy), created, and waited
 * for when it is a Job (until Complete or Failed) or a Pod (until Succeeded or Failed); then
 * deleted on `hook-succeeded` or `hook-failed`. The first failing hook stops the event and
 * fails the operation. Hooks are not part of the release's objects: never pruned, and left in
 * place on uninstall unless a policy removes them, as in Helm.
 */
import type { Logger } from 'pino';
import { isNotFound } from '../kube/errors.js';
import { sleepWithoutWorker } from '../kube/reconcile-context.js';
import type { ClusterClient } from '../kube/ports.js';
import { describeRef, isKubeObject, refOf, type KubeObject, type ObjectRef } from '../kube/types.js';
import { BinnacleError, errorMessage, InputError } from '../util/errors.js';
import { readYaml } from '../util/yaml.js';
import { describeOwner, isOwnedBy, ownerName, stampOwnership } from './ownership.js';
import type { ConfineCheck, Owner, ReleaseHook, ReleaseRef } from './types.js';

export type HookClient = Pick<ClusterClient, 'apply' | 'find' | 'delete' | 'resourceFor'>;

export type HookEvent = 'pre-install' | 'post-install' | 'pre-upgrade' | 'post-upgrade' | 'pre-rollback' | 'post-rollback' | 'pre-delete' | 'post-delete';

export interface HookRunOptions {
  client: HookClient;
  owner: Owner;
  release: ReleaseRef;
  logger: Logger;
  /** How long one hook may take; Helm's default --timeout is 5 minutes. */
  timeoutMs: number;
  /** The longest wait between two looks at a running hook (1 s); the first looks come sooner. */
  pollIntervalMs?: number;
  now?: () => Date;
  /** What the release may hold (its kind's scope): a hook outside it does not run, and fails its event. */
  confine?: ConfineCheck | undefined;
}

export interface HookRunResult {
  ok: boolean;
  /** Why the event failed, in Helm's words ("pre-install hook … failed: …"). */
  message: string;
  /** Every hook of the release, with last_run set for those that ran. */
  hooks: ReleaseHook[];
}

/** A hook's weight: Helm's JSON leaves out a weight of 0 (`weight,omitempty`), so a record may have none. */
export function hookWeight(h: Pick<ReleaseHook, 'weight'>): number {
  const w: unknown = h.weight;
  return typeof w === 'number' ? w : 0;
}

/** Helm's order: weight ascending, then name. */
export function hooksFor(hooks: readonly ReleaseHook[], event: HookEvent): ReleaseHook[] {
  return hooks.filter((h) => h.events.includes(event)).sort((a, b) => hookWeight(a) - hookWeight(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function policiesOf(h: ReleaseHook): string[] {
  const p = h.delete_policies ?? [];
  // Helm 3: a hook without a delete policy is deleted before it is created again.
  return p.length === 0 ? ['before-hook-creation'] : p;
}

/** The hook's object; a syntax error, an alias bomb or a value that is no object is HOOK_INVALID naming the hook. */
export function hookObject(h: ReleaseHook): KubeObject {
  const where = `hook ${h.path} (${h.kind} ${h.name})`;
  let value: unknown;
  try {
    value = readYaml(h.manifest, where);
  } catch (err) {
    if (err instanceof InputError) throw new BinnacleError('input', 'HOOK_INVALID', err.message, { cause: err });
    throw err;
  }
  if (!isKubeObject(value)) throw new BinnacleError('input', 'HOOK_INVALID', `${where} is not a Kubernetes object: needs apiVersion, kind and metadata`);
  return value;
}

/**
 * The objects the hooks of `events` would create, in their namespaces, for preflight to check
 * before anything changes. A hook that does not parse or names a kind the cluster does not
 * serve is left out: running it fails its event with the reason, as before.
 */
export async function hookObjectsOf(client: HookClient, all: readonly ReleaseHook[], events: readonly HookEvent[], namespace: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const hook of events.flatMap((e) => hooksFor(all, e))) {
    try {
      out.push(await namespaced(client, hookObject(hook), namespace));
    } catch (err) {
      if (!(err instanceof BinnacleError) || !err.code.startsWith('HOOK_')) throw err;
    }
  }
  return out;
}

/** Runs the hooks of `event`; answers the hooks with their last runs recorded. */
export async function runHooks(all: readonly ReleaseHook[], event: HookEvent, o: HookRunOptions): Promise<HookRunResult> {
  const now = o.now ?? (() => new Date());
  const hooks = all.map((h) => ({ ...h }));
  for (const hook of hooksFor(hooks, event)) {
    const started = now().toISOString();
    hook.last_run = { started_at: started, completed_at: '', phase: 'Running' };
    let failure: string | undefined;
    // Only the object this run applied is ever deleted by a delete policy, and only while it is
    // that object (its uid): a hook refused for another's object must not delete it on failure.
    let applied: KubeObject | undefined;
    try {
      const obj = await namespaced(o.client, hookObject(hook), o.release.namespace);
      // A hook is an object of the release like any other: inside its scope, and never another's
      // object deleted or taken over (Helm's before-hook-creation deletes whatever has the name).
      await mayRun(obj, o);
      const policies = policiesOf(hook);
      if (policies.includes('before-hook-creation')) await deleteAndWait(o.client, refOf(obj), o);
      applied = await o.client.apply(stampOwnership(obj, o.owner, o.release), { force: true });
      o.logger.info({ hook: hook.path, event, kind: hook.kind, name: hook.name }, 'running hook');
      failure = await waitForHook(o.client, refOf(obj), o);
    } catch (err) {
      failure = errorMessage(err);
    }
    hook.last_run = { started_at: started, completed_at: now().toISOString(), phase: failure === undefined ? 'Succeeded' : 'Failed' };
    const policy = failure === undefined ? 'hook-succeeded' : 'hook-failed';
    const uid = applied?.metadata.uid;
    if (applied !== undefined && policiesOf(hook).includes(policy)) {
      await o.client.delete(refOf(applied), { propagationPolicy: 'Background', ...(uid === undefined ? {} : { preconditions: { uid } }) }).catch((err: unknown) => {
        o.logger.warn({ hook: hook.path, err: errorMessage(err) }, 'could not delete hook');
      });
    }
    if (failure !== undefined) {
      return { ok: false, message: `${event} hook ${hook.path} (${hook.kind} ${hook.name}) failed: ${failure}`, hooks };
    }
  }
  return { ok: true, message: '', hooks };
}

/**
 * The one rule for a hook's object that exists (preflight.ts checks it before a rollout, mayRun
 * when the hook runs): another owner's object is never taken over, whatever adopt says. Answers
 * why not, or undefined when the hook may have it.
 */
export function hookTakeover(live: KubeObject | undefined, owner: Owner, release: ReleaseRef): string | undefined {
  if (live === undefined || isOwnedBy(live, owner, release)) return undefined;
  return `already exists and belongs to ${describeOwner(live)}, not ${ownerName(owner)} (release ${release.namespace}/${release.name}); a hook never takes it over (rename the hook, or remove that object)`;
}

/** Throws HOOK_REFUSED when the hook's object is outside the release's scope or belongs to another owner. */
async function mayRun(obj: KubeObject, o: HookRunOptions): Promise<void> {
  const problems = o.confine === undefined ? [] : await o.confine([obj]);
  if (problems.length > 0) throw new BinnacleError('terminal', 'HOOK_REFUSED', `outside the release's scope: ${problems.join('; ')}`);
  const refused = hookTakeover(await o.client.find(refOf(obj)), o.owner, o.release);
  if (refused !== undefined) throw new BinnacleError('terminal', 'HOOK_REFUSED', `${describeRef(refOf(obj))} ${refused}`);
}

async function namespaced(client: HookClient, obj: KubeObject, ns: string): Promise<KubeObject> {
  if (obj.metadata.namespace !== undefined && obj.metadata.namespace !== '') return obj;
  try {
    if (!(await client.resourceFor(obj.apiVersion, obj.kind)).namespaced) return obj;
  } catch (err) {
    if (!isNotFound(err)) throw err;
    throw new BinnacleError('input', 'HOOK_UNKNOWN_KIND', `the cluster serves no ${obj.kind} in ${obj.apiVersion}`);
  }
  return { ...obj, metadata: { ...obj.metadata, namespace: ns } };
}

/**
 * before-hook-creation as Helm does it (action.deleteHookByPolicy): delete with Background
 * propagation, the hook's dependents (a Job's Pods) left to the garbage collector, and wait
 * only for the object itself to go. Foreground held the hook until its Pods were gone.
 * Looked at again soon, then less often: a Background delete is usually done at once.
 */
async function deleteAndWait(client: HookClient, ref: ObjectRef, o: HookRunOptions): Promise<void> {
  if (!(await client.delete(ref, { propagationPolicy: 'Background' }))) return;
  const deadline = Date.now() + o.timeoutMs;
  const most = o.pollIntervalMs ?? HOOK_POLL_MS;
  let interval = Math.min(FIRST_DELETE_POLL_MS, most);
  while ((await client.find(ref)) !== undefined) {
    if (Date.now() > deadline) throw new BinnacleError('transient', 'HOOK_TIMEOUT', `${describeRef(ref)} from an earlier run was not deleted within ${o.timeoutMs} ms`);
    await sleepWithoutWorker(interval, deadline - Date.now());
    interval = Math.min(interval * 2, most);
  }
}

/** The first look after deleting a hook of an earlier run. */
const FIRST_DELETE_POLL_MS = 25;
/** The first look at a hook Job or Pod after creating it: none finishes sooner. */
const FIRST_HOOK_POLL_MS = 250;
/** The longest wait between two looks at a hook (Helm's legacy wait polls every 2 s). */
const HOOK_POLL_MS = 1000;

interface JobLike {
  status?: { conditions?: { type?: string; status?: string; reason?: string; message?: string }[]; phase?: string; succeeded?: number };
}

/**
 * Answers undefined when the hook succeeded, or why it failed. Between looks the reconcile
 * gives its worker back (sleepWithoutWorker): a tenant's Job that never finishes holds only
 * its own release until the timeout, not the kind's workers.
 */
async function waitForHook(client: HookClient, ref: ObjectRef, o: HookRunOptions): Promise<string | undefined> {
  if (ref.kind !== 'Job' && ref.kind !== 'Pod') return undefined;
  const deadline = Date.now() + o.timeoutMs;
  const most = o.pollIntervalMs ?? HOOK_POLL_MS;
  let interval = Math.min(FIRST_HOOK_POLL_MS, most);
  for (;;) {
    const live = await client.find<KubeObject & JobLike>(ref);
    if (live === undefined) return `${describeRef(ref)} disappeared before it finished`;
    if (ref.kind === 'Job') {
      const conds = live.status?.conditions ?? [];
      const done = conds.find((c) => (c.type === 'Complete' || c.type === 'SuccessCriteriaMet') && c.status === 'True');
      if (done !== undefined) return undefined;
      const failed = conds.find((c) => c.type === 'Failed' && c.status === 'True');
      if (failed !== undefined) return `job failed: ${failed.reason ?? ''}${failed.message === undefined ? '' : ` ${failed.message}`}`.trim();
    } else {
      if (live.status?.phase === 'Succeeded') return undefined;
      if (live.status?.phase === 'Failed') return `pod ${ref.name} failed`;
    }
    if (Date.now() > deadline) return `timed out after ${o.timeoutMs} ms waiting for ${describeRef(ref)}`;
    await sleepWithoutWorker(interval, deadline - Date.now());
    interval = Math.min(interval * 2, most);
  }
}
