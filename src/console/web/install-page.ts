/**
 * Install: the ClusterExtension's fields, then "Plan" (the bundles the resolver chooses and
 * the object diff, or why it cannot resolve), then "Install", which creates the extension and
 * goes to its page to follow its conditions.
 */
import { api, seg } from './api.js';
import { alert, append, button, clear, field, h, table, title } from './dom.js';
import { errorText, sendButton } from './status.js';
import type { PackagePage, PlanView } from '../contract/api-types.js';
import { routes } from '../contract/routes.js';

const MARK: Record<string, string> = { create: '+', update: '~', unchanged: '=', delete: '-' };

export function drawPlan(into: HTMLElement, plan: PlanView): void {
  clear(into);
  append(into, title('h2', {}, 'Plan'));
  for (const w of plan.warnings) append(into, alert('warning', {}, w));
  for (const b of plan.bundles) {
    const change = b.from === undefined ? 'install' : b.from === b.bundle.version ? 'keep' : `upgrade from ${b.from}`;
    append(
      into,
      title('h3', { 'data-plan-bundle': b.bundle.package }, `${b.bundle.name} (${b.bundle.package} ${b.bundle.version}, catalog ${b.bundle.catalog}): ${change}`),
      table(['', 'Kind', 'Name', 'Changes'], b.objects.map((o) => [MARK[o.action] ?? o.action, o.kind, `${o.namespace === undefined ? '' : `${o.namespace}/`}${o.name}`, (o.changes ?? []).join(', ')]), { class: 'plan-objects' }),
    );
    // The CRD upgrade-safety verdict for each CRD the cluster has already.
    for (const c of b.crdSafety) {
      append(
        into,
        c.safe
          ? h('p', { 'data-crd-verdict': 'safe', 'data-crd': c.crd }, `CRD upgrade safety of ${c.crd}: safe (every stored object stays readable and valid).`)
          : alert('danger', { 'data-crd-verdict': 'unsafe', 'data-crd': c.crd }, `CRD upgrade safety of ${c.crd}: the manager will refuse this change:`, h('ul', {}, ...c.problems.map((p) => h('li', {}, `${p.message} (${p.rule})`)))),
      );
    }
    // What the ServiceAccount lacks, as the manager's permission preflight will find it.
    if (b.missingPermissions !== undefined) {
      append(
        into,
        b.missingPermissions.length === 0
          ? h('p', { 'data-rbac': 'ok' }, 'RBAC: the ServiceAccount holds every permission this bundle needs.')
          : alert('warning', { 'data-rbac': 'missing' }, `RBAC the ServiceAccount lacks (${b.missingPermissions.length}); the manager waits until it is granted:`, h('ul', {}, ...b.missingPermissions.slice(0, 50).map((m) => h('li', {}, m))), b.missingPermissions.length > 50 ? h('p', {}, `and ${b.missingPermissions.length - 50} more`) : undefined),
      );
    }
  }
  const all = plan.bundles.flatMap((b) => b.objects);
  const n = (a: string): number => all.filter((o) => o.action === a).length;
  append(into, h('p', { id: 'plan-summary' }, `${n('create')} to create, ${n('update')} to change, ${n('delete')} to delete, ${n('unchanged')} unchanged`));
}

export async function installPage(root: HTMLElement, catalog: string, pkg: string): Promise<void> {
  const p = await api<PackagePage>('GET', routes.packagePage(catalog, pkg));
  const name = h('input', { name: 'name', value: pkg });
  const namespace = h('input', { name: 'namespace', value: pkg });
  const serviceAccount = h('input', { name: 'serviceAccount', placeholder: 'ServiceAccount in the namespace (required)' });
  const channel = h('select', { name: 'channel' }, h('option', { value: '' }, `default (${p.defaultChannel})`), ...p.channels.map((c) => h('option', { value: c.name }, c.name)));
  const version = h('input', { name: 'version', placeholder: 'any, or a range such as >=1.0.0 <2.0.0' });
  const planBox = h('div', { id: 'plan' });
  const messages = h('div', {});
  const values = (): Record<string, string> => ({ package: pkg, catalog, name: name.value, namespace: namespace.value, serviceAccount: serviceAccount.value, channel: channel.value, version: version.value });
  const install = sendButton('Install', { id: 'install' }, () => api<{ created: string }>('POST', routes.extensions(), values()), (r) => (location.hash = `#/installed/${seg(r.created)}`), messages);
  const planButton = button(
    'Plan',
    () => {
      clear(messages);
      planBox.textContent = 'Planning… (resolving and rendering the bundles)';
      planButton.disabled = true;
      api<PlanView>('POST', routes.plan(), values()).then(
        (plan) => {
          drawPlan(planBox, plan);
          install.disabled = false;
          planButton.disabled = false;
        },
        (err: unknown) => {
          clear(planBox);
          append(planBox, title('h2', {}, 'Plan'), h('pre', { class: 'explanation', id: 'plan-error' }, errorText(err)));
          // The person has seen why; installing anyway is theirs to decide (the API server still checks their rights).
          install.disabled = false;
          planButton.disabled = false;
        },
      );
    },
    { id: 'plan-button' },
  );
  // Changing a field after planning asks for a new plan.
  for (const el of [name, namespace, serviceAccount, channel, version]) el.addEventListener('input', () => (install.disabled = true));
  clear(root);
  append(
    root,
    title('h1', {}, `Install ${p.displayName}`),
    h('p', { class: 'muted' }, `Package ${pkg} from catalog ${catalog}. The ServiceAccount must exist and hold the permissions the bundle's objects need.`),
    h('form', { class: 'form pf-v6-c-form', id: 'install-form' }, field('Extension name', name), field('Install namespace', namespace), field('ServiceAccount', serviceAccount), field('Channel', channel), field('Version range', version), h('div', { class: 'pf-v6-c-form__group pf-m-action' }, h('div', { class: 'pf-v6-c-form__actions' }, planButton, install))),
    messages,
    planBox,
  );
}
