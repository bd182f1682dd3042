/**
 * A release's timeline as the console shows it: each revision, newest first, as `helm history`
 * lists it, and inside each its hooks as `helm get hooks` records them — in the order Helm runs
 * them (hooks.ts's `hooksFor`), each with its recorded last run — and, for a hook Job, what the
 * cluster has of it now. The revisions come from the release records through `ReleaseStore`
 * (which joins a large release's parts), read as the person: without list on Secrets the answer
 * is their 403. A Job or its Events they may not read is said on that hook. Values and hook
 * manifests are not sent.
 */
import { hookObject, hooksFor, hookWeight, type HookEvent } from '../apply/hooks.js';
import { HELM_RELEASE_NAME_ANNOTATION, HELM_RELEASE_NAMESPACE_ANNOTATION, describeOwner } from '../apply/ownership.js';
import { ReleaseStore, type StoreClient } from '../apply/release-store.js';
import type { ReleaseHook, ReleaseRef, ReleaseRevision } from '../apply/types.js';
import { describeNeeds } from '../installed/index.js';
import type { KubeClient } from '../kube/client.js';
import { isForbidden } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { errorMessage } from '../util/errors.js';
import type { ExtensionTimeline, HookJobView, HookRunView, HookView, ReleaseTimeline, RevisionView } from './api-types.js';
import { forbiddenSummary, InputError } from './errors.js';
import { eventView, extensionReleases, type KubeEvent } from './installed.js';
import { conditionsOf, releaseOfResource } from './resources.js';

export type TimelineClient = Pick<KubeClient, 'list' | 'find'>;

/** Helm's lifecycle events, in the order a release meets them. */
const LIFECYCLE: readonly HookEvent[] = ['pre-install', 'post-install', 'pre-upgrade', 'post-upgrade', 'pre-rollback', 'post-rollback', 'pre-delete', 'post-delete'];
/** How many of a Job's Warning Events are shown. */
const MAX_WARNINGS = 5;

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

/** Where a hook Job lives: its manifest's namespace, else the release's. */
function jobRef(h: ReleaseHook, release: ReleaseRef): { apiVersion: string; kind: string; name: string; namespace: string } {
  let namespace = release.namespace;
  try {
    namespace = hookObject(h).metadata.namespace ?? release.namespace;
  } catch {
    // A manifest that does not parse never made a Job elsewhere: the release namespace it is.
  }
  return { apiVersion: 'batch/v1', kind: 'Job', name: h.name, namespace };
}

const jobKey = (ref: { namespace: string; name: string }): string => `${ref.namespace}/${ref.name}`;

interface JobObject extends KubeObject {
  status?: { active?: number; succeeded?: number; failed?: number };
}

/** The Job as the cluster has it now, with its last Warning Events. */
async function liveJob(client: TimelineClient, ref: ReturnType<typeof jobRef>, release: ReleaseRef): Promise<HookJobView> {
  let job: JobObject | undefined;
  try {
    job = await client.find<JobObject>(ref);
  } catch (err) {
    if (!isForbidden(err)) throw err;
    return { state: 'unreadable', message: `Job ${jobKey(ref)}: ${forbiddenSummary(errorMessage(err))}` };
  }
  if (job === undefined) return { state: 'gone' };
  // Binnacle stamps its hooks with the release; the helm CLI leaves hooks unmarked.
  const notes = job.metadata.annotations ?? {};
  const marked = notes[HELM_RELEASE_NAME_ANNOTATION];
  if (marked !== undefined && (marked !== release.name || notes[HELM_RELEASE_NAMESPACE_ANNOTATION] !== release.namespace)) {
    return { state: 'gone', message: `the Job ${jobKey(ref)} on the cluster is not this release's (${describeOwner(job)})` };
  }
  const s = job.status ?? {};
  const view: HookJobView = { state: 'present', active: s.active ?? 0, succeeded: s.succeeded ?? 0, failed: s.failed ?? 0, conditions: conditionsOf(job).map(({ type, status, reason, message }) => ({ type, status, reason, message })) };
  try {
    const events = await client.list<KubeEvent>('v1', 'Event', { namespace: ref.namespace, fieldSelector: `involvedObject.kind=Job,involvedObject.name=${ref.name}` });
    const uid = job.metadata.uid;
    view.warnings = events.items
      .filter((e) => e.type === 'Warning' && e.involvedObject?.kind === 'Job' && e.involvedObject.name === ref.name && (uid === undefined || e.involvedObject.uid === undefined || e.involvedObject.uid === uid))
      .map(eventView)
      .sort((a, b) => b.last.localeCompare(a.last))
      .slice(0, MAX_WARNINGS);
  } catch (err) {
    if (!isForbidden(err)) throw err;
    view.message = `its Events: ${forbiddenSummary(errorMessage(err))}`;
  }
  return view;
}

/** One revision's hooks; `newest` names, per Job, the revision whose run made the Job of that name. */
function hookViews(rev: ReleaseRevision, release: ReleaseRef, newest: ReadonlyMap<string, number>, live: ReadonlyMap<string, HookJobView>): HookView[] {
  return executionOrder(rev.content?.hooks ?? []).map((h) => {
    const run = lastRunOf(h, rev);
    const view: HookView = { name: h.name, kind: h.kind, path: h.path, events: [...h.events], weight: hookWeight(h), deletePolicies: [...(h.delete_policies ?? [])], ...(run === undefined ? {} : { lastRun: run }) };
    if (h.kind === 'Job' && run?.ofThisRevision === true) {
      const key = jobKey(jobRef(h, release));
      const by = newest.get(key);
      view.job = by === rev.revision ? live.get(key) : { state: 'rerun', revision: by };
    }
    return view;
  });
}

/** The release's revisions, newest first, with their hooks. */
export async function releaseTimeline(client: TimelineClient, release: ReleaseRef): Promise<ReleaseTimeline> {
  // Reading the history only lists Secrets.
  const lister: Pick<KubeClient, 'list'> = client;
  const history = await new ReleaseStore(lister as StoreClient).history(release);
  // Each hook Job's newest run (by revision: a later revision's runs come later); only that run's Job can be on the cluster.
  const newest = new Map<string, number>();
  const refs = new Map<string, ReturnType<typeof jobRef>>();
  for (const rev of history) {
    for (const h of rev.content?.hooks ?? []) {
      if (h.kind !== 'Job' || lastRunOf(h, rev)?.ofThisRevision !== true) continue;
      const ref = jobRef(h, release);
      newest.set(jobKey(ref), rev.revision);
      refs.set(jobKey(ref), ref);
    }
  }
  const live = new Map<string, HookJobView>();
  for (const [key, ref] of refs) live.set(key, await liveJob(client, ref, release));
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
export async function extensionTimeline(client: KubeClient, name: string, bundleDeployment?: string): Promise<ExtensionTimeline> {
  const all = await extensionReleases(client, name);
  const chosen = bundleDeployment === undefined ? all : all.filter((r) => r.unit.bundleDeployment === bundleDeployment);
  if (chosen.length === 0 && bundleDeployment !== undefined) throw new InputError('bundleDeployment', `${bundleDeployment} is not a BundleDeployment of ${name}'s set (${all.map((r) => r.unit.bundleDeployment).join(', ') || 'none'})`);
  const releases: ExtensionTimeline['releases'] = [];
  for (const { unit, release } of chosen) releases.push({ bundleDeployment: unit.bundleDeployment, package: unit.package, neededBy: describeNeeds(unit.needs), ...(await releaseTimeline(client, release)) });
  return { name, releases };
}

/** The timeline of a Helm operator's custom resource's release. */
export async function resourceTimeline(client: KubeClient, crdName: string, name: string, namespace: string | undefined): Promise<ReleaseTimeline> {
  return releaseTimeline(client, await releaseOfResource(client, crdName, name, namespace));
}
