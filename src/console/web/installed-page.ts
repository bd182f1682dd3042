/**
 * Installed operators: the list with health, and one extension's page — conditions (read
 * again on each watch event about it, live.ts; polled every 2 s only when the stream fails or
 * the person may not watch), the installed bundle, the BundleDeployments it needs, its Helm revisions
 * (each release links to its timeline of revisions with their hooks and jobs, release-timeline.ts)
 * and drift, its Events, and uninstall, which first shows what would be deleted; a plan awaiting
 * approval (issue 31 §1) with a button approving its digest.
 */
import { api, ApiError, seg } from './api.js';
import { alert, append, button, clear, descriptionList, emptyState, field, h, linkButton, table, title } from './dom.js';
import { driftSection } from './drift-view.js';
import { drawPlan } from './install-page.js';
import { liveRefresh, redrawWhenChanged } from './live-refresh.js';
import { errorText, healthLabel, sendButton, showError } from './status.js';
import type { PendingPlan } from '../../api/approval.js';
import type { ApiView, ConditionView, EventView, ExtensionDetail, ExtensionSummary, HelmOperatorApis, PlanView, UninstallPreview } from '../contract/api-types.js';
import { routes } from '../contract/routes.js';

const POLL_MS = 2000;

const conditionsTable = (cs: ConditionView[]): HTMLTableElement => table(['Type', 'Status', 'Reason', 'Message'], cs.map((c) => [c.type, c.status, c.reason, c.message]), { class: 'conditions' });

/** The HelmOperators and the kinds they serve (each links to its custom resources). */
async function helmOperators(into: HTMLElement): Promise<void> {
  try {
    const { helmOperators: list } = await api<{ helmOperators: HelmOperatorApis[] }>('GET', routes.helmOperators());
    if (list.length === 0) return append(into, h('p', { class: 'muted' }, 'No HelmOperator.'));
    append(into, table(['HelmOperator', 'Chart', 'Ready', 'Kinds'], list.map((o) => [o.name, o.chart, o.ready, h('span', {}, ...o.kinds.map((k) => h('a', { href: `#/crd/${seg(k.crd)}`, class: 'kind-link' }, k.kind)))]), { id: 'helm-operators' }));
  } catch (err) {
    showError(into, errorText(err));
  }
}

/** The list of installed operators, kept current on their watch events (live-refresh.ts); answers a function that stops that. */
export function installedList(root: HTMLElement): () => void {
  const out = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const read = redrawWhenChanged(out, async (into) => {
    const { extensions } = await api<{ extensions: ExtensionSummary[] }>('GET', routes.extensions());
    const helm = h('div', {});
    append(
      into,
      extensions.length === 0
        ? emptyState('Nothing is installed.', { id: 'none-installed' })
        : table(
            ['Name', 'Package', 'Version', 'Namespace', 'Health', 'Message'],
            extensions.map((e) => [h('a', { href: `#/installed/${seg(e.name)}` }, e.name), e.package, e.installed?.version ?? '—', e.namespace, healthLabel(e.health), e.message]),
            { id: 'installed' },
          ),
      title('h2', {}, 'Helm operators'),
      helm,
    );
    await helmOperators(helm);
  });
  const live = liveRefresh({ kinds: ['ClusterExtension', 'BundleDeployment', 'HelmOperator'], concerns: () => true, refresh: read, pollMs: POLL_MS });
  clear(root);
  append(root, title('h1', {}, 'Installed operators'), live.status, out);
  return live.stop;
}

/** The APIs the extension's bundles installed, each linking to its custom resources. */
async function apisOf(into: HTMLElement, name: string): Promise<void> {
  try {
    const { apis } = await api<{ apis: ApiView[] }>('GET', routes.extensionPart(name, 'apis'));
    clear(into);
    append(into, apis.length === 0 ? h('p', { class: 'muted' }, 'It installed no CustomResourceDefinitions.') : table(['Kind', 'API version', 'Scope', 'Package', ''], apis.map((a) => [h('a', { href: `#/crd/${seg(a.crd)}`, 'data-api': a.kind }, a.kind), `${a.group}/${a.version}`, a.namespaced ? 'Namespaced' : 'Cluster', a.package ?? '', h('a', { href: `#/crd/${seg(a.crd)}/new`, 'data-create': a.kind }, `Create ${a.kind}`)]), { id: 'apis' }));
  } catch (err) {
    clear(into);
    showError(into, errorText(err));
  }
}

/** Change the channel or version range: plan first (as this extension), then apply the change. */
function upgradeForm(into: HTMLElement, d: ExtensionDetail): void {
  const channel = h('input', { name: 'upgrade-channel', value: d.channels.join(','), placeholder: 'default channel' });
  const version = h('input', { name: 'upgrade-version', value: d.version, placeholder: 'any' });
  const out = h('div', { id: 'upgrade-plan' });
  const values = (): Record<string, string> => ({ name: d.name, package: d.package, namespace: d.namespace, serviceAccount: d.serviceAccount, channel: channel.value, version: version.value });
  const apply = sendButton(
    'Apply',
    { id: 'upgrade-apply' },
    () => api('PATCH', routes.extension(d.name), { channel: channel.value, version: version.value }),
    () => append(out, h('p', { id: 'upgrade-applied' }, 'Applied; the conditions above follow it.')),
    out,
  );
  const planIt = button(
    'Plan change',
    () => {
      out.textContent = 'Planning…';
      api<PlanView>('POST', routes.plan(), values()).then(
        (plan) => {
          drawPlan(out, plan);
          apply.disabled = false;
        },
        (err: unknown) => {
          clear(out);
          append(out, h('pre', { class: 'explanation', id: 'upgrade-plan-error' }, errorText(err)));
        },
      );
    },
    { id: 'upgrade-plan-button' },
  );
  for (const el of [channel, version]) el.addEventListener('input', () => (apply.disabled = true));
  append(into, title('h2', {}, 'Upgrade or change'), h('div', { class: 'filters' }, field('Channels', channel), field('Version range', version)), h('div', { class: 'actions' }, planIt, apply), out);
}

interface Revision {
  revision: number;
  status: string;
  lastDeployed: string;
  description: string;
  chart: { name: string; version: string };
}

interface RollbackPreview {
  from: string;
  to: string;
  revision: number;
  release: string;
  namespace: string;
  crdProblems: { crd: string; rule: string; message: string }[];
  dataAtRisk: boolean;
}

/**
 * Reads the Helm revisions of each release of the extension's set (from the revision records) and
 * answers what draws them, so that the page draws them with the health it read beside them.
 */
async function readRevisions(into: HTMLElement, name: string): Promise<() => void> {
  try {
    const { releases } = await api<{ releases: ReleaseRevisions[] }>('GET', routes.extensionPart(name, 'revisions'));
    return () => drawRevisions(into, name, releases);
  } catch (err) {
    return () => {
      clear(into);
      showError(into, errorText(err));
    };
  }
}

type ReleaseRevisions = { bundleDeployment: string; package: string; release: string; namespace: string; neededBy: string; revisions: Revision[] };

function drawRevisions(into: HTMLElement, name: string, releases: ReleaseRevisions[]): void {
  clear(into);
  for (const r of releases) {
    append(
      into,
      title('h3', {}, `Release ${r.namespace}/${r.release}`, h('span', { class: 'muted' }, ` (package ${r.package}; ${r.neededBy}) `), linkButton('Timeline (hooks and jobs)', `#/installed/${seg(name, 'timeline', r.bundleDeployment)}`, { 'data-timeline': r.bundleDeployment }, 'link', true)),
      r.revisions.length === 0 ? h('p', { class: 'muted' }, 'no revisions yet') : table(['Revision', 'Updated', 'Status', 'Chart', 'Description'], [...r.revisions].reverse().map((v) => [v.revision, v.lastDeployed, v.status, `${v.chart.name}-${v.chart.version}`, v.description]), { class: 'revisions', 'data-release': r.release }),
    );
  }
}

/** Roll back: first what it would do to the CRDs (with a data-safety warning), then the change. */
function rollbackBox(into: HTMLElement, name: string): void {
  const box = h('div', { id: 'rollback-preview' });
  append(
    into,
    button(
      'Roll back…',
      () => {
        clear(box);
        append(box, h('p', { class: 'muted' }, 'Checking the earlier revision…'));
        api<RollbackPreview>('GET', routes.extensionPart(name, 'rollback-preview')).then(
          (p) => {
            clear(box);
            append(box, h('p', { id: 'rollback-summary' }, `Roll back from ${p.from} to ${p.to} (revision ${p.revision} of release ${p.namespace}/${p.release}). The version is pinned; an upgrade lifts the pin.`));
            if (p.dataAtRisk) {
              append(box, alert('danger', { id: 'rollback-data-warning' }, `Data-safety warning: a CRD's status.storedVersions holds a version ${p.to}'s CRDs do not have. Objects stored at that version could no longer be read, and the manager will refuse this change until they are migrated.`));
            }
            for (const c of p.crdProblems) append(box, alert('warning', { 'data-crd-problem': c.rule }, `${c.crd}: ${c.message}`));
            if (p.crdProblems.length === 0) append(box, h('p', { id: 'rollback-crds-safe' }, 'CRD safety: the earlier CRDs accept everything stored today.'));
            const confirm = button(
              `Roll back to ${p.to}`,
              () => {
                confirm.disabled = true;
                api<{ from: string; to: string }>('POST', routes.extensionPart(name, 'rollback'), { version: p.to }).then(
                  (r) => append(box, h('p', { id: 'rolling-back' }, `Rolling back from ${r.from} to ${r.to}; the conditions above follow it.`)),
                  (err: unknown) => {
                    confirm.disabled = false;
                    showError(box, errorText(err));
                  },
                );
              },
              { id: 'confirm-rollback' },
              p.dataAtRisk ? 'danger' : 'primary',
            );
            append(box, confirm);
          },
          (err: unknown) => {
            clear(box);
            showError(box, errorText(err));
          },
        );
      },
      { id: 'rollback' },
    ),
    box,
  );
}

/**
 * The plan awaiting approval (issue 31 §1): what would change, the object diff, CRD safety and
 * missing RBAC, and a button approving exactly this digest (as the person signed in; a plan
 * superseded meanwhile is refused by the server, and by the manager).
 */
function pendingPlanBox(into: HTMLElement, name: string, plan: PendingPlan | undefined): void {
  clear(into);
  if (plan === undefined) return;
  const o = plan.objects;
  append(
    into,
    title('h2', {}, 'Plan awaiting approval'),
    alert('warning', { id: 'pending-plan-message' }, plan.message),
    descriptionList([
      ['Digest', h('code', { id: 'pending-plan-digest' }, plan.digest)],
      ['Changes', plan.changes.map((c) => `${c.package ?? c.name} ${c.from ?? '(new)'} → ${c.to}`).join(', ')],
      ['Objects', o === undefined ? '—' : `${o.create} to create, ${o.update} to change, ${o.delete} to delete, ${o.unchanged} unchanged`],
      ['Shown since', plan.since],
      ...(plan.supersedes === undefined ? [] : [['Supersedes', plan.supersedes] as [string, string]]),
    ], { class: 'facts' }),
  );
  if (o?.changed !== undefined) append(into, h('ul', { id: 'pending-plan-objects' }, ...o.changed.map((c) => h('li', {}, c))));
  for (const c of plan.crdSafety ?? []) append(into, c.safe ? h('p', {}, `CRD ${c.crd}: upgrade safe`) : alert('danger', { 'data-crd-unsafe': c.crd }, `CRD ${c.crd}: unsafe, the manager will refuse it: ${(c.problems ?? []).join('; ')}`));
  for (const m of plan.missingPermissions ?? []) append(into, alert('warning', { 'data-missing-permission': m }, `The ServiceAccount lacks: ${m}`));
  const out = h('div', {});
  const approve = button(
    'Approve this plan',
    () => {
      approve.disabled = true;
      api<{ digest: string }>('POST', routes.extensionPart(name, 'approve'), { digest: plan.digest }).then(
        (r) => append(out, h('p', { id: 'plan-approved' }, `Approved plan ${r.digest}; the conditions above follow it.`)),
        (err: unknown) => {
          approve.disabled = false;
          showError(out, errorText(err));
        },
      );
    },
    { id: 'approve-plan', 'data-digest': plan.digest },
    'primary',
  );
  append(into, approve, out);
}

/** The extension's page; answers a function that stops its live updates and polling. */
export function installedDetail(root: HTMLElement, name: string): () => void {
  const body = h('div', {});
  const events = h('div', {});
  const actions = h('div', { class: 'uninstall' });
  const upgrade = h('div', { class: 'upgrade' });
  const pending = h('div', { id: 'pending-plan' });
  let pendingDigest: string | undefined;
  const history = h('div', {});
  const apis = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const revisions = h('div', { id: 'revisions' }, h('p', { class: 'muted' }, 'Loading…'));
  const rollback = h('div', { class: 'rollback' });
  rollbackBox(rollback, name);
  const drift = h('div', { class: 'drift-box' });
  driftSection(drift, routes.extensionPart(name, 'drift'), { button: 'drift-check', out: 'drift' });
  clear(root);
  append(root, title('h1', {}, `Extension ${name}`), body, pending, title('h2', {}, 'Custom resources'), apis, upgrade, title('h2', {}, 'Helm revisions'), revisions, rollback, title('h2', {}, 'Drift'), drift, title('h2', {}, 'Resolution history'), history, actions, title('h2', {}, 'Recent events'), events);

  let apisKey: string | undefined;
  const refresh = async (): Promise<void> => {
    let d: ExtensionDetail;
    // Read beside the detail and drawn with it: a health that says Healthy never sits over
    // revisions read before the change that made it so.
    const revisionsRead = readRevisions(revisions, name);
    try {
      d = await api<ExtensionDetail>('GET', routes.extension(name));
    } catch (err) {
      clear(body);
      if (err instanceof ApiError && err.status === 404) append(body, h('p', { id: 'gone' }, `${name} is not installed (uninstalled).`));
      else showError(body, errorText(err));
      return;
    }
    clear(body);
    append(
      body,
      h('p', {}, 'Health: ', healthLabel(d.health, { id: 'health' }), ` — ${d.message}`),
      descriptionList([
        ['Package', d.package],
        ['Installed bundle', d.installed === undefined ? '—' : `${d.installed.name} (${d.installed.version}) from ${d.installed.catalog}`],
        ['Namespace', d.namespace],
        ['ServiceAccount', d.serviceAccount],
        ['Channels', d.channels.join(', ') || 'default'],
        ['Version range', d.version || 'any'],
      ], { class: 'facts' }),
      title('h2', {}, 'Conditions'),
      conditionsTable(d.conditions),
      title('h2', {}, 'Bundle deployments'),
      table(['BundleDeployment', 'Package', 'Version', 'Namespace', 'State', 'Role', 'Needed by', 'Revision'], d.units.map((u) => [u.bundleDeployment, u.package, u.version, u.namespace, u.state, u.role, u.neededBy.join(', '), u.revision ?? ''])),
    );
    // Redrawn only when the plan changes, so a refresh does not take away the answer to a click.
    if (d.pendingPlan?.digest !== pendingDigest) {
      pendingDigest = d.pendingPlan?.digest;
      pendingPlanBox(pending, name, d.pendingPlan);
    }
    clear(history);
    const records = d.history ?? [];
    append(history, records.length === 0 ? h('p', { class: 'muted' }, 'none yet') : table(['Time', 'Trigger', 'Generation', 'Outcome', 'Bundles', 'Message'], [...records].reverse().map((r) => [r.time, r.reason, r.generation, r.outcome, r.bundles.map((b) => `${b.package} ${b.version}`).join(', '), r.message ?? '']), { id: 'history' }));
    (await revisionsRead)();
    if (upgrade.firstChild === null) upgradeForm(upgrade, d);
    // The APIs come with what is installed: read again when that changes (an install or upgrade completing).
    const installedKey = `${d.installed?.name ?? ''}|${d.units.map((u) => `${u.bundleDeployment}@${u.version}:${u.state}`).join(',')}`;
    if (installedKey !== apisKey) {
      apisKey = installedKey;
      await apisOf(apis, name);
    }
    try {
      const { events: list } = await api<{ events: EventView[] }>('GET', routes.extensionPart(name, 'events'));
      clear(events);
      append(events, list.length === 0 ? h('p', { class: 'muted' }, 'none') : table(['Last seen', 'Type', 'Reason', 'Object', 'Message'], list.map((e) => [e.last, e.type, e.reason, e.object, e.message]), { id: 'events' }));
    } catch (err) {
      clear(events);
      showError(events, errorText(err));
    }
  };
  // Live: a watch event about this extension or a BundleDeployment reads the page again; polling
  // only while the stream is down or the person may not watch.
  const live = liveRefresh({ kinds: ['ClusterExtension', 'BundleDeployment'], concerns: (ev) => ev.kind === 'BundleDeployment' || ev.name === name, refresh, pollMs: POLL_MS });
  body.before(live.status);

  const confirmBox = h('div', { id: 'uninstall-preview' });
  append(
    actions,
    button(
      'Uninstall…',
      () => {
        clear(confirmBox);
        api<UninstallPreview>('GET', routes.extensionPart(name, 'uninstall-preview')).then(
          (p) => {
            append(confirmBox, title('h3', {}, 'Uninstalling deletes:'));
            for (const r of p.removed) append(confirmBox, title('h4', {}, `${r.package} (BundleDeployment ${r.bundleDeployment})`), h('ul', {}, ...r.objects.map((o) => h('li', {}, o))));
            for (const k of p.kept) append(confirmBox, h('p', {}, `Kept: ${k.package} (needed by ${k.neededBy.join(', ')})`));
            append(
              confirmBox,
              button(
                `Delete ${name}`,
                () => {
                  api('DELETE', routes.extension(name)).then(
                    () => append(confirmBox, h('p', { id: 'uninstalling' }, 'Uninstalling…')),
                    (err: unknown) => showError(confirmBox, errorText(err)),
                  );
                },
                { id: 'confirm-uninstall' },
                'danger',
              ),
            );
          },
          (err: unknown) => showError(confirmBox, errorText(err)),
        );
      },
      { id: 'uninstall' },
    ),
    confirmBox,
  );
  return live.stop;
}
