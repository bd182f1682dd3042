/**
 * The inventory: every operator (OLM's ClusterExtensions, HelmOperators) and the custom
 * resources of its APIs — for a Helm operator each is one release — with a health for each and
 * the roll-up, in all and per operator. What the person may not list is said, not hidden.
 */
import type { Health, HealthCounts, Inventory, InventoryOperator } from '../contract/api-types.js';
import { api, seg } from './api.js';
import { alert, append, clear, emptyState, h, label, table, title } from './dom.js';
import { liveRefresh, redrawWhenChanged } from './live-refresh.js';
import { healthLabel } from './status.js';
import { routes } from '../contract/routes.js';

const ORDER: Health[] = ['Healthy', 'Progressing', 'Failing', 'Deleting', 'Unknown'];

/** "3 Healthy · 1 Progressing · 0 Failing" (Deleting and Unknown only when there are some). */
function rollUp(counts: HealthCounts, attrs: Record<string, string> = {}): HTMLElement {
  const shown = ORDER.filter((k) => counts[k] > 0 || k === 'Healthy' || k === 'Progressing' || k === 'Failing');
  const parts = shown.map((k) => label(`${counts[k]} ${k}`, counts[k] === 0 ? 'grey' : k === 'Healthy' ? 'success' : k === 'Failing' ? 'danger' : k === 'Unknown' ? 'grey' : k === 'Progressing' ? 'info' : 'warning', { class: `health ${k.toLowerCase()}`, [`data-count-${k.toLowerCase()}`]: String(counts[k]) }));
  return h('span', { class: 'rollup', ...attrs }, ...parts);
}

const healthBadge = (health: Health): HTMLElement => healthLabel(health);

function operatorSection(o: InventoryOperator): HTMLElement {
  const link = o.type === 'ClusterExtension' ? h('a', { href: `#/installed/${seg(o.name)}` }, o.name) : o.name;
  const what = o.type === 'ClusterExtension' ? `package ${o.source}${o.version === '' ? '' : ` ${o.version}`}` : `chart ${o.source}${o.version === '' ? '' : ` ${o.version}`}; each ${o.resources[0]?.kind ?? 'resource'} is one Helm release`;
  return h(
    'section',
    { class: 'inventory-operator', 'data-inventory-operator': o.name, 'data-health': o.health },
    title('h2', {}, `${o.type === 'ClusterExtension' ? 'OLM operator' : 'Helm operator'} `, link, ' ', healthBadge(o.health)),
    h('p', { class: 'muted' }, `${o.type} — ${what}. ${o.message}`),
    h('p', {}, rollUp(o.counts)),
    o.resources.length === 0
      ? emptyState('No custom resources.')
      : table(
          ['Kind', 'Name', 'Namespace', 'Health', 'Message'],
          o.resources.map((r) => [h('a', { href: `#/crd/${seg(r.crd)}`, 'data-inventory-resource': `${r.kind}/${r.namespace ?? ''}/${r.name}`, 'data-health': r.health }, r.kind), r.name, r.namespace ?? '—', healthBadge(r.health), r.message]),
          { class: 'inventory-resources' },
        ),
  );
}

/**
 * The page, kept current (live-refresh.ts): read again on watch events of the operators' kinds
 * and of the custom resources of their CRDs (the health of each comes from its status), which
 * after each read are the CRDs it follows. Polled while live only if there are more CRDs than one
 * stream follows. Redrawn only when what it shows changed. Answers a function that stops the
 * updates.
 */
export function inventoryPage(root: HTMLElement): () => void {
  const out = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  let crds: string[] = [];
  const read = redrawWhenChanged(out, async (into) => {
    const inv = await api<Inventory>('GET', routes.inventory());
    crds = inv.operators.flatMap((o) => o.crds);
    append(
      into,
      h('p', {}, 'In all: ', rollUp(inv.counts, { id: 'rollup' })),
      ...inv.warnings.map((w) => alert('warning', { 'data-inventory-warning': '' }, `Not counted — ${w}`)),
      inv.operators.length === 0 ? emptyState('No operator is installed.', { id: 'inventory-none' }) : undefined,
      ...inv.operators.map(operatorSection),
    );
  });
  const live = liveRefresh({
    kinds: ['ClusterExtension', 'BundleDeployment', 'HelmOperator'],
    concerns: () => true,
    refresh: async () => {
      await read();
      // An operator installed or removed brings or takes CRDs: follow what it now shows.
      live.followCrds(crds);
    },
    pollMs: 5000,
    pollUnfollowedMs: 10_000,
  });
  clear(root);
  append(root, title('h1', {}, 'Inventory'), live.status, out);
  return live.stop;
}
