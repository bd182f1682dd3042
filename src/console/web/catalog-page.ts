/** The catalog list: every package the served catalogs offer, searchable and filterable. */
import { api, seg } from './api.js';
import { append, clear, emptyState, field, h, label, title, toolbar } from './dom.js';
import { liveRefresh } from './live-refresh.js';
import { errorText, showError } from './status.js';
import type { PackageList, PackageSummary } from '../contract/api-types.js';
import { routes } from '../contract/routes.js';

export interface CatalogFilter {
  keyword: string;
  category: string;
  provider: string;
  capability: string;
  installMode: string;
  hasDependencies: boolean;
}

/** Whether a package passes the filter (keyword: name, display name, description, keywords, provider). */
export function matches(p: PackageSummary, f: CatalogFilter): boolean {
  const kw = f.keyword.trim().toLowerCase();
  if (kw !== '' && ![p.name, p.displayName, p.shortDescription, p.provider, ...p.keywords].some((s) => s.toLowerCase().includes(kw))) return false;
  if (f.category !== '' && !p.categories.includes(f.category)) return false;
  if (f.provider !== '' && p.provider !== f.provider) return false;
  if (f.capability !== '' && p.capability !== f.capability) return false;
  if (f.installMode !== '' && !p.installModes.includes(f.installMode)) return false;
  if (f.hasDependencies && !p.hasDependencies) return false;
  return true;
}

function select(name: string): HTMLSelectElement {
  return h('select', { name, 'data-filter': name }, h('option', { value: '' }, 'any'));
}

/** Offers `values` (and "any"), keeping the choice when it is still offered. */
function offer(sel: HTMLSelectElement, values: string[]): void {
  const offered = [...new Set(values)].filter((v) => v !== '').sort();
  const chosen = sel.value;
  clear(sel);
  append(sel, h('option', { value: '' }, 'any'), ...offered.map((v) => h('option', { value: v }, v)));
  sel.value = offered.includes(chosen) ? chosen : '';
}

function card(p: PackageSummary): HTMLElement {
  const href = `#/package/${seg(p.catalog, p.name)}`;
  const icon = p.hasIcon ? h('img', { src: `/api/${routes.packageIcon(p.catalog, p.name)}`, alt: '', class: 'icon', loading: 'lazy' }) : h('div', { class: 'icon placeholder' }, p.displayName.slice(0, 1).toUpperCase());
  return h(
    'a',
    { class: 'card pf-v6-c-card pf-m-compact', href, 'data-package': p.name },
    h('div', { class: 'pf-v6-c-card__header' }, icon, h('div', { class: 'pf-v6-c-card__title' }, h('h3', { class: 'pf-v6-c-card__title-text' }, p.displayName), p.deprecated ? label('deprecated', 'warning') : null, h('div', { class: 'muted' }, `${p.headVersion} · ${p.provider || 'unknown provider'}`))),
    h('div', { class: 'pf-v6-c-card__body' }, p.shortDescription),
  );
}

/** How often the list is read when no watch of ClusterCatalogs says a catalog changed. */
const POLL_MS = 30_000;

/**
 * The page, kept current (live-refresh.ts): read again when a ClusterCatalog changes (a catalog
 * added, removed or serving new content); the filters and what is typed stay. Answers a function
 * that stops the updates.
 */
export function catalogPage(root: HTMLElement): () => void {
  let data: PackageList = { packages: [], catalogs: [], warnings: [] };
  let shownData = '';
  const keyword = h('input', { type: 'search', name: 'keyword', placeholder: 'Search operators', 'data-filter': 'keyword' });
  const category = select('category');
  const provider = select('provider');
  const capability = select('capability');
  const installMode = select('installMode');
  const deps = h('input', { type: 'checkbox', name: 'hasDependencies', 'data-filter': 'hasDependencies' });
  const count = h('p', { class: 'muted', id: 'count' }, 'Loading…');
  const problems = h('div', {});
  const grid = h('div', { class: 'grid', id: 'packages' });
  const none = emptyState('No package matches the filters.', { id: 'packages-none', hidden: '' });
  const render = (): void => {
    const f: CatalogFilter = { keyword: keyword.value, category: category.value, provider: provider.value, capability: capability.value, installMode: installMode.value, hasDependencies: deps.checked };
    const all = data.packages;
    const shown = all.filter((p) => matches(p, f));
    clear(grid);
    append(grid, ...shown.map(card));
    none.hidden = shown.length > 0 || all.length === 0;
    count.textContent = `${shown.length} of ${all.length} packages from ${data.catalogs.length} catalog(s)`;
  };
  const read = async (): Promise<void> => {
    let next: PackageList;
    try {
      next = await api<PackageList>('GET', routes.packages());
    } catch (err) {
      clear(problems);
      showError(problems, errorText(err));
      return;
    }
    clear(problems);
    for (const w of next.warnings) showError(problems, w);
    // Redrawn only when the list changed: a catalog's status changes more often than its content.
    const text = JSON.stringify(next);
    if (text === shownData) return;
    shownData = text;
    data = next;
    offer(category, data.packages.flatMap((p) => p.categories));
    offer(provider, data.packages.map((p) => p.provider));
    offer(capability, data.packages.map((p) => p.capability));
    offer(installMode, data.packages.flatMap((p) => p.installModes));
    render();
  };
  for (const el of [keyword, category, provider, capability, installMode, deps]) el.addEventListener('input', render);
  const live = liveRefresh({ kinds: ['ClusterCatalog'], concerns: () => true, refresh: read, pollMs: POLL_MS });
  clear(root);
  append(
    root,
    title('h1', {}, 'Operator catalog'),
    live.status,
    problems,
    toolbar({ class: 'filters' }, field('Keyword', keyword), field('Category', category), field('Provider', provider), field('Capability level', capability), field('Install mode', installMode), field('Has dependencies', deps)),
    count,
    grid,
    none,
  );
  return live.stop;
}
