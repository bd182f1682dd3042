/**
 * A release's timeline: each revision, newest first (`helm history`), and in each its hooks in
 * the order Helm runs them (`helm get hooks`) with their last run, and for a hook Job or Pod what
 * the cluster has of it now — a Job's counts, a Pod's phase and containers, conditions, the last
 * Warning Events of it and of a Job's Pods, or that it is gone
 * (deleted by its delete policy or by hand) so the recorded run is all there is. Kept current
 * while open (live-refresh.ts) and read on "Read again"; a release the person may not read shows
 * the API's "forbidden".
 */
import { liveKindOfCrd, type EventView, type ExtensionTimeline, type HookLiveView, type HookView, type ReleaseTimeline, type RevisionView } from '../contract/api-types.js';
import { api, seg } from './api.js';
import { append, button, clear, h, label, td, th, title as heading, tr, type Child } from './dom.js';
import { liveRefresh, redrawWhenChanged, type LiveRefreshOptions } from './live-refresh.js';
import { routes } from '../contract/routes.js';

function lastRun(hk: HookView): Child {
  const r = hk.lastRun;
  if (r === undefined) return h('span', { class: 'muted' }, 'did not run in this revision');
  const when = `started ${r.startedAt || '—'}${r.completedAt === '' ? '' : `, completed ${r.completedAt}`}`;
  return h(
    'span',
    {},
    h('strong', { class: `hook-phase ${r.phase.toLowerCase()}`, 'data-hook-phase': r.phase }, r.phase),
    ` ${when}`,
    r.ofThisRevision ? undefined : h('span', { class: 'muted' }, ' — a run of an earlier revision, copied with its hooks by the rollback'),
  );
}

/** Warning Events, newest first; one about another object than the hook (a Job's Pod) names it. */
function warningList(warnings: readonly EventView[], self: string): Child {
  if (warnings.length === 0) return undefined;
  return h('ul', { class: 'job-warnings' }, ...warnings.map((e) => h('li', { class: 'warn-box', 'data-job-warning': e.reason }, `${e.last} ${e.object === self ? '' : `${e.object}: `}${e.reason}: ${e.message}${e.count > 1 ? ` (×${e.count})` : ''}`)));
}

/** A hook Job's or Pod's state on the cluster now. The data-job-* attributes hold for both kinds. */
function live(j: HookLiveView | undefined, kind: string, name: string): Child {
  if (j === undefined) return h('span', { class: 'muted' }, kind === 'Job' || kind === 'Pod' ? 'no run of this revision' : '—');
  if (j.state === 'gone') return h('span', { 'data-job-state': 'gone' }, `The ${kind} is gone (deleted by its delete policy or by hand): the recorded run is what remains.`, j.message === undefined ? undefined : h('span', { class: 'muted' }, ` ${j.message}`));
  if (j.state === 'rerun') return h('span', { 'data-job-state': 'rerun', class: 'muted' }, `Run again by revision ${j.revision ?? '?'}: the ${kind} of this name is that run's.`);
  if (j.state === 'unreadable') return h('span', { 'data-job-state': 'unreadable', class: 'warn-box' }, j.message ?? 'not readable');
  return presentRun(j, kind, name);
}

/** The Job's counts or the Pod's phase and containers, its conditions, its Warning Events. */
function presentRun(j: HookLiveView, kind: string, name: string): Child {
  const containers = j.containers ?? [];
  const conditions = j.conditions ?? [];
  return h(
    'div',
    { 'data-job-state': 'present' },
    kind === 'Pod'
      ? h('div', { 'data-pod-phase': j.phase ?? '' }, `On the cluster: ${j.phase ?? 'unknown'}`)
      : h('div', {}, `On the cluster: ${j.active ?? 0} active, ${j.succeeded ?? 0} succeeded, ${j.failed ?? 0} failed`),
    containers.length === 0 ? undefined : h('ul', { class: 'pod-containers' }, ...containers.map((c) => h('li', { 'data-container': c.name }, `${c.name}: ${c.state}`))),
    conditions.length === 0 ? undefined : h('ul', { class: 'job-conditions' }, ...conditions.map((c) => h('li', {}, `${c.type}=${c.status}${c.reason === '' ? '' : ` ${c.reason}`}${c.message === '' ? '' : `: ${c.message}`}`))),
    warningList(j.warnings ?? [], `${kind} ${name}`),
    j.message === undefined ? undefined : h('span', { class: 'muted' }, j.message),
  );
}

function hooksTable(rev: RevisionView): HTMLElement {
  if (rev.hooks.length === 0) return h('p', { class: 'muted', 'data-no-hooks': String(rev.revision) }, 'No hooks in this revision.');
  const rows = rev.hooks.map((hk, i) =>
    tr(
      { 'data-hook': hk.name, 'data-hook-kind': hk.kind },
      ...[
        String(i + 1),
        h('span', {}, `${hk.kind} ${hk.name}`, h('div', { class: 'muted' }, hk.path)),
        hk.events.join(', '),
        String(hk.weight),
        hk.deletePolicies.length === 0 ? h('span', { class: 'muted' }, 'none (Helm: before-hook-creation)') : hk.deletePolicies.join(', '),
        lastRun(hk),
        live(hk.live, hk.kind, hk.name),
      ].map((c) => td({}, c)),
    ),
  );
  const head = ['#', 'Hook', 'Events', 'Weight', 'Delete policies', 'Last run', 'On the cluster'];
  return h('table', { class: 'pf-v6-c-table pf-m-compact hooks' }, h('thead', { class: 'pf-v6-c-table__thead pf-m-wrap' }, tr({}, ...head.map(th))), h('tbody', { class: 'pf-v6-c-table__tbody' }, ...rows));
}

function revisionSection(rev: RevisionView): HTMLElement {
  const chart = `${rev.chart.name}-${rev.chart.version}${rev.chart.appVersion === undefined ? '' : ` (app ${rev.chart.appVersion})`}`;
  return h(
    'section',
    { class: 'revision', 'data-revision': String(rev.revision), 'data-status': rev.status },
    heading('h3', {}, `Revision ${rev.revision} `, label(rev.status, rev.status === 'deployed' ? 'success' : rev.status === 'failed' ? 'danger' : rev.status.startsWith('pending') ? 'info' : 'grey', { class: `status-${rev.status}` }), h('span', { class: 'muted' }, ` ${chart}, deployed ${rev.deployed || '—'}`)),
    rev.description === '' ? undefined : h('p', { class: 'description' }, rev.description),
    hooksTable(rev),
  );
}

/** One release's revisions, into `into`. */
export function drawTimeline(into: HTMLElement, t: ReleaseTimeline, note?: string): void {
  append(into, heading('h2', { 'data-timeline-release': `${t.namespace}/${t.release}` }, `Release ${t.namespace}/${t.release}`, note === undefined ? undefined : h('span', { class: 'muted' }, ` ${note}`)));
  if (t.revisions.length === 0) append(into, h('p', { class: 'muted' }, 'No revisions: nothing of it is installed.'));
  for (const rev of t.revisions) append(into, revisionSection(rev));
}

/** How often a timeline is read when no watch says it changed. */
const POLL_MS = 5000;

/**
 * The page: a title, "Read again", and what `load` draws, kept current (live-refresh.ts): a
 * release changes as its owner installs, upgrades or rolls back, and its hook Jobs as they run.
 * What is drawn is replaced only when it changed. A failure (a 403 too) is shown. Answers a
 * function that stops the updates.
 */
function timelinePage(root: HTMLElement, title: string, back: HTMLElement, load: (into: HTMLElement) => Promise<void>, follow: Pick<LiveRefreshOptions, 'kinds' | 'crds' | 'concerns'>): () => void {
  const out = h('div', { id: 'timeline' }, h('p', { class: 'muted' }, 'Loading…'));
  const live = liveRefresh({ ...follow, refresh: redrawWhenChanged(out, load), pollMs: POLL_MS });
  const again = button('Read again', () => {
    again.disabled = true;
    void live.refreshSoon().finally(() => (again.disabled = false));
  }, { id: 'timeline-reload' });
  clear(root);
  append(root, heading('h1', {}, title), h('p', {}, back, ' ', again), live.status, h('p', { class: 'muted' }, 'Hooks are listed in the order Helm runs them (by lifecycle event, then weight, then name). Values are not shown.'), out);
  return live.stop;
}

/** `#/installed/EXT/timeline/BD`: the release of one BundleDeployment of the extension's set, read again on watch events about either. */
export function extensionTimelinePage(root: HTMLElement, name: string, bundleDeployment: string): () => void {
  return timelinePage(
    root,
    `Timeline of ${bundleDeployment}`,
    h('a', { href: `#/installed/${seg(name)}` }, `← Extension ${name}`),
    async (into) => {
      const t = await api<ExtensionTimeline>('GET', routes.extensionPart(name, 'timeline', { bundleDeployment }));
      for (const r of t.releases) drawTimeline(into, r, `(package ${r.package}; ${r.neededBy})`);
    },
    { kinds: ['ClusterExtension', 'BundleDeployment'], concerns: (ev) => ev.name === (ev.kind === 'BundleDeployment' ? bundleDeployment : name) },
  );
}

/**
 * `#/crd/CRD/timeline/NS/NAME`: the release of a Helm operator's custom resource, read again on
 * watch events about the resource (its operator writes its status as it installs, upgrades, or
 * fails).
 */
export function resourceTimelinePage(root: HTMLElement, crd: string, namespace: string, name: string): () => void {
  return timelinePage(
    root,
    `Timeline of ${namespace}/${name}`,
    h('a', { href: `#/crd/${seg(crd)}` }, `← ${crd}`),
    async (into) => {
      drawTimeline(into, await api<ReleaseTimeline>('GET', routes.resourcePart(crd, name, 'timeline', namespace)));
    },
    { kinds: [], crds: [crd], concerns: (ev) => ev.kind === liveKindOfCrd(crd) && ev.name === name && ev.namespace === namespace },
  );
}
