/**
 * A release's timeline as the console shows it: each revision, newest first, as `helm history`
 * lists it, and inside each its hooks as `helm get hooks` records them — in the order Helm runs
 * them (hooks.ts's `hooksFor`), each with its recorded last run — and, for a hook Job or Pod,
 * what the cluster has of it now: a Job's counts and conditions, a Pod's phase and containers,
 * and the last Warning Events of it and (a Job's) of its Pods. The revisions come from the release records through `ReleaseStore`
 * (which joins a large release's parts), read as the person: without list on Secrets the answer
 * is their 403. A Job, Pod or Events they may not read is said on that hook. Values and hook
 * manifests are not sent.
 */
import { hookObject, hooksFor, hookWeight, type HookEvent } from '../apply/hooks.js';
import { HELM_RELEASE_NAME_ANNOTATION, HELM_RELEASE_NAMESPACE_ANNOTATION, describeOwner } from '../apply/ownership.js';
import { ReleaseStore, type StoreClient } from '../apply/release-store.js';
import type { ReleaseHook, ReleaseRef, ReleaseRevision } from '../apply/types.js';
import { describeNeeds } from '../installed/index.js';
import type { ConsoleClient } from './client.js';
import { isForbidden } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import type { EventView, ExtensionTimeline, HookLiveView, HookRunView, HookView, ReleaseTimeline, RevisionView } from './contract/api-types.js';
import { forbiddenSummary, InputError } from './errors.js';
import { eventView, extensionReleases, type KubeEvent } from './installed.js';
import { conditionsOf, releaseOfResource } from './resources.js';

export type TimelineClient = Pick<ConsoleClient, 'list' | 'find'>;

/** Helm's lifecycle events, in the order a release meets them. */
const LIFECYCLE: readonly HookEvent[] = ['pre-install', 'post-install', 'pre-upgrade', 'post-upgrade', 'pre-rollback', 'post-rollback', 'pre-delete', 'post-delete'];
/** How many Warning Events of a hook (and its Pods) are shown. */
const MAX_WARNINGS = 5;
/** A Job's Pods whose Events are read: its newest, enough for a backoff limit's retries. */
const MAX_JOB_PODS = 6;
/** The hook kinds the cluster's state is shown for: they run something. */
const LIVE_KINDS: Readonly<Record<string, string>> = { Job: 'batch/v1', Pod: 'v1' };

/**
 * The hooks in the order Helm runs them: listed at the first lifecycle event they run at, in
 * `hooksFor`'s order there; hooks of no lifecycle event (`test`) last, as recorded.
 */
export function executionOrder(hooks: readonly ReleaseHook[]): ReleaseHook[] {
  const seen = new Set<ReleaseHook>();
  for (const event of LIFECYCLE) for (const h of hooksFor(hooks, event)) seen.add(h);
  return [...seen, ...hooks.filter((h) => !seen.has(h))];
}

/** A recorded time, or '' for none (Go's zero time is how Helm records "not yet"). */
function timeOf(v: unknown): string {
  return typeof v === 'string' && v !== '' && !v.startsWith('0001-01-01') ? v : '';
}

/**
 * The hook's recorded run; undefined when it has none (Helm's zero-valued last_run). A rollback
 * copies the hooks of the revision it goes back to, last runs included (as Helm does): such a
 * run started before this revision was recorded, and is not this revision's.
 */
function lastRunOf(h: ReleaseHook, rev: ReleaseRevision): HookRunView | undefined {
  const r = h.last_run as Partial<ReleaseHook['last_run']> | undefined;
  if (typeof r?.phase !== 'string' || r.phase === '') return undefined;
  const startedAt = timeOf(r.started_at);
  const started = Date.parse(startedAt);
  const recorded = Date.parse(rev.lastDeployed);
  const ofThisRevision = Number.isNaN(started) || Number.isNaN(recorded) || started >= recorded;
  return { startedAt, completedAt: timeOf(r.completed_at), phase: r.phase, ofThisRevision };
}

interface HookRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
}

/** Where a hook Job or Pod lives: its manifest's namespace, else the release's. */
function hookRef(h: ReleaseHook, release: ReleaseRef): HookRef {
  let namespace = release.namespace;
  try {
    namespace = hookObject(h).metadata.namespace ?? release.namespace;
  } catch {
    // A manifest that does not parse never made a Job elsewhere: the release namespace it is.
  }
  return { apiVersion: LIVE_KINDS[h.kind] ?? 'v1', kind: h.kind, name: h.name, namespace };
}

const refKey = (ref: HookRef): string => `${ref.kind} ${ref.namespace}/${ref.name}`;
const refText = (ref: HookRef): string => `${ref.kind} ${ref.namespace}/${ref.name}`;

interface ContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; running?: { startedAt?: string }; terminated?: { reason?: string; exitCode?: number; message?: string } };
}

interface HookObject extends KubeObject {
  status?: { active?: number; succeeded?: number; failed?: number; phase?: string; initContainerStatuses?: ContainerStatus[]; containerStatuses?: ContainerStatus[] };
}

/** A container's state in kubectl's words: `Running`, `Waiting: ImagePullBackOff (msg)`, `Terminated: Error, exit code 1`. */
export function containerState(c: ContainerStatus): string {
  const st = c.state ?? {};
  const restarts = (c.restartCount ?? 0) > 0 ? `, ${c.restartCount} restarts` : '';
  if (st.waiting !== undefined) return `Waiting: ${st.waiting.reason ?? 'unknown'}${st.waiting.message === undefined ? '' : ` (${st.waiting.message})`}${restarts}`;
  if (st.terminated !== undefined) return `Terminated: ${st.terminated.reason ?? 'unknown'}, exit code ${st.terminated.exitCode ?? '?'}${st.terminated.message === undefined ? '' : ` (${st.terminated.message})`}${restarts}`;
  if (st.running !== undefined) return `Running${restarts}`;
  return 'unknown';
}

/** The last Warning Events about `kind` `name` (of `uid` where the Event says), newest first. */
async function warningsOf(client: TimelineClient, namespace: string, kind: string, name: string, uid: string | undefined): Promise<EventView[]> {
  const events = await client.list<KubeEvent>('v1', 'Event', { namespace, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
  return events.items
    .filter((e) => e.type === 'Warning' && e.involvedObject?.kind === kind && e.involvedObject.name === name && (uid === undefined || e.involvedObject.uid === undefined || e.involvedObject.uid === uid))
    .map(eventView);
}

/** A Job's Pods (its newest few), by the controller's label and owner reference. */
async function podsOf(client: TimelineClient, job: HookObject, namespace: string): Promise<HookObject[]> {
  const name = job.metadata.name ?? '';
  const pods = await client.list<HookObject>('v1', 'Pod', { namespace, labelSelector: `job-name=${name}` });
  const uid = job.metadata.uid;
  return pods.items
    .filter((p) => uid === undefined || (p.metadata.ownerReferences ?? []).some((o) => o.uid === uid))
    .sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))
    .slice(0, MAX_JOB_PODS);
}

/** The Warning Events of a hook's object and of a Job's Pods; what the person may not read, said. */
async function hookWarnings(client: TimelineClient, ref: HookRef, obj: HookObject): Promise<{ warnings: EventView[]; unread: string[] }> {
  const unread: string[] = [];
  const warnings: EventView[] = [];
  try {
    warnings.push(...(await warningsOf(client, ref.namespace, ref.kind, ref.name, obj.metadata.uid)));
  } catch (err) {
    if (!isForbidden(err)) throw err;
    unread.push(`its Events: ${forbiddenSummary(errorMessage(err))}`);
  }
  if (ref.kind === 'Job' && unread.length === 0) {
    try {
      for (const pod of await podsOf(client, obj, ref.namespace)) warnings.push(...(await warningsOf(client, ref.namespace, 'Pod', pod.metadata.name ?? '', pod.metadata.uid)));
    } catch (err) {
      if (!isForbidden(err)) throw err;
      unread.push(`its Pods: ${forbiddenSummary(errorMessage(err))}`);
    }
  }
  return { warnings, unread };
}

/**
 * The hook's Job or Pod as the cluster has it now: a Job's counts and conditions, a Pod's phase,
 * conditions and containers; the last Warning Events of it and of a Job's Pods (a Pod that cannot
 * pull its image or be scheduled says so there, not on the Job).
 */
async function liveHook(client: TimelineClient, ref: HookRef, release: ReleaseRef): Promise<HookLiveView> {
  let obj: HookObject | undefined;
  try {
    obj = await client.find<HookObject>(ref);
  } catch (err) {
    if (!isForbidden(err)) throw err;
    return { state: 'unreadable', message: `${refText(ref)}: ${forbiddenSummary(errorMessage(err))}` };
  }
  if (obj === undefined) return { state: 'gone' };
  // Binnacle stamps its hooks with the release; the helm CLI leaves hooks unmarked.
  const notes = obj.metadata.annotations ?? {};
  const marked = notes[HELM_RELEASE_NAME_ANNOTATION];
  if (marked !== undefined && (marked !== release.name || notes[HELM_RELEASE_NAMESPACE_ANNOTATION] !== release.namespace)) {
    return { state: 'gone', message: `the ${ref.kind} ${ref.namespace}/${ref.name} on the cluster is not this release's (${describeOwner(obj)})` };
  }
  const s = obj.status ?? {};
  const conditions = conditionsOf(obj).map(({ type, status, reason, message }) => ({ type, status, reason, message }));
  const view: HookLiveView =
    ref.kind === 'Pod'
      ? { state: 'present', phase: s.phase ?? 'Pending', conditions, containers: [...(s.initContainerStatuses ?? []), ...(s.containerStatuses ?? [])].map((c) => ({ name: c.name, state: containerState(c) })) }
      : { state: 'present', active: s.active ?? 0, succeeded: s.succeeded ?? 0, failed: s.failed ?? 0, conditions };
  const { warnings, unread } = await hookWarnings(client, ref, obj);
  if (unread.length === 0 || warnings.length > 0) view.warnings = warnings.sort((x, y) => y.last.localeCompare(x.last)).slice(0, MAX_WARNINGS);
  if (unread.length > 0) view.message = unread.join('; ');
  return view;
}

/** One revision's hooks; `newest` names, per Job, the revision whose run made the Job of that name. */
function hookViews(rev: ReleaseRevision, release: ReleaseRef, newest: ReadonlyMap<string, number>, live: ReadonlyMap<string, HookLiveView>): HookView[] {
  return executionOrder(rev.content?.hooks ?? []).map((h) => {
    const run = lastRunOf(h, rev);
    const view: HookView = { name: h.name, kind: h.kind, path: h.path, events: [...h.events], weight: hookWeight(h), deletePolicies: [...(h.delete_policies ?? [])], ...(run === undefined ? {} : { lastRun: run }) };
    if (LIVE_KINDS[h.kind] !== undefined && run?.ofThisRevision === true) {
      const key = refKey(hookRef(h, release));
      const by = newest.get(key);
      view.live = by === rev.revision ? live.get(key) : { state: 'rerun', revision: by };
    }
    return view;
  });
}

/** The release's revisions, newest first, with their hooks. */
export async function releaseTimeline(client: TimelineClient, release: ReleaseRef): Promise<ReleaseTimeline> {
  // Reading the history only lists Secrets.
  const lister: Pick<ConsoleClient, 'list'> = client;
  const { revisions: history, refused } = await new ReleaseStore(lister as StoreClient).read(release);
  // A record that cannot be read is named, not left out: a timeline without it would say that revision never was.
  if (refused.length > 0) throw new BinnacleError('terminal', 'RELEASE_RECORD_REFUSED', refused.map((r) => r.reason).join('; '));
  // Each hook Job's or Pod's newest run (by revision: a later revision's runs come later); only that run's object can be on the cluster.
  const newest = new Map<string, number>();
  const refs = new Map<string, HookRef>();
  for (const rev of history) {
    for (const h of rev.content?.hooks ?? []) {
      if (LIVE_KINDS[h.kind] === undefined || lastRunOf(h, rev)?.ofThisRevision !== true) continue;
      const ref = hookRef(h, release);
      newest.set(refKey(ref), rev.revision);
      refs.set(refKey(ref), ref);
    }
  }
  const live = new Map<string, HookLiveView>();
  for (const [key, ref] of refs) live.set(key, await liveHook(client, ref, release));
  const revisions: RevisionView[] = [...history].reverse().map((rev) => ({
    revision: rev.revision,
    status: rev.status,
    deployed: rev.lastDeployed,
    chart: { name: rev.chart.name, version: rev.chart.version, ...(rev.chart.appVersion === undefined ? {} : { appVersion: rev.chart.appVersion }) },
    description: rev.description,
    hooks: hookViews(rev, release, newest, live),
  }));
  return { release: release.name, namespace: release.namespace, revisions };
}

/** The timeline of each release of the extension's set, or of the one of `bundleDeployment`. */
export async function extensionTimeline(client: ConsoleClient, name: string, bundleDeployment?: string): Promise<ExtensionTimeline> {
  const all = await extensionReleases(client, name);
  const chosen = bundleDeployment === undefined ? all : all.filter((r) => r.unit.bundleDeployment === bundleDeployment);
  if (chosen.length === 0 && bundleDeployment !== undefined) throw new InputError('bundleDeployment', `${bundleDeployment} is not a BundleDeployment of ${name}'s set (${all.map((r) => r.unit.bundleDeployment).join(', ') || 'none'})`);
  const releases: ExtensionTimeline['releases'] = [];
  for (const { unit, release } of chosen) releases.push({ bundleDeployment: unit.bundleDeployment, package: unit.package, neededBy: describeNeeds(unit.needs), ...(await releaseTimeline(client, release)) });
  return { name, releases };
}

/** The timeline of a Helm operator's custom resource's release. */
export async function resourceTimeline(client: ConsoleClient, crdName: string, name: string, namespace: string | undefined): Promise<ReleaseTimeline> {
  return releaseTimeline(client, await releaseOfResource(client, crdName, name, namespace));
}
