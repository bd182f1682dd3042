/** The catalog list: every package the served catalogs offer, searchable and filterable. */
import { api, seg } from './api.js';
import { append, clear, field, h } from './dom.js';
import { showError } from './status.js';
import type { PackageList, PackageSummary } from '../api-types.js';

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

function select(name: string, values: string[]): HTMLSelectElement {
  return h('select', { name, 'data-filter': name }, h('option', { value: '' }, 'any'), ...[...new Set(values)].filter((v) => v !== '').sort().map((v) => h('option', { value: v }, v)));
}

function card(p: PackageSummary): HTMLElement {
  const href = `#/package/${seg(p.catalog, p.name)}`;
  const icon = p.hasIcon ? h('img', { src: `/api/catalogs/${seg(p.catalog, p.name)}/icon`, alt: '', class: 'icon', loading: 'lazy' }) : h('div', { class: 'icon placeholder' }, p.displayName.slice(0, 1).toUpperCase());
  return h(
    'a',
    { class: 'card', href, 'data-package': p.name },
    icon,
    h('div', {}, h('strong', {}, p.displayName), p.deprecated ? h('span', { class: 'badge warn' }, 'deprecated') : null, h('div', { class: 'muted' }, `${p.headVersion} · ${p.provider || 'unknown provider'}`), h('p', {}, p.shortDescription)),
  );
}

export async function catalogPage(root: HTMLElement): Promise<void> {
  const data = await api<PackageList>('GET', 'packages');
  const all = data.packages;
  const keyword = h('input', { type: 'search', name: 'keyword', placeholder: 'Search operators', 'data-filter': 'keyword' });
  const category = select('category', all.flatMap((p) => p.categories));
  const provider = select('provider', all.map((p) => p.provider));
  const capability = select('capability', all.map((p) => p.capability));
  const installMode = select('installMode', all.flatMap((p) => p.installModes));
  const deps = h('input', { type: 'checkbox', name: 'hasDependencies', 'data-filter': 'hasDependencies' });
  const count = h('p', { class: 'muted', id: 'count' });
  const grid = h('div', { class: 'grid', id: 'packages' });
  const render = (): void => {
    const f: CatalogFilter = { keyword: keyword.value, category: category.value, provider: provider.value, capability: capability.value, installMode: installMode.value, hasDependencies: deps.checked };
    const shown = all.filter((p) => matches(p, f));
    clear(grid);
    append(grid, ...shown.map(card));
    count.textContent = `${shown.length} of ${all.length} packages from ${data.catalogs.length} catalog(s)`;
  };
  for (const el of [keyword, category, provider, capability, installMode, deps]) el.addEventListener('input', render);
  clear(root);
  append(
    root,
    h('h1', {}, 'Operator catalog'),
    h('div', { class: 'filters' }, field('Keyword', keyword), field('Category', category), field('Provider', provider), field('Capability level', capability), field('Install mode', installMode), field('Has dependencies', deps)),
    count,
    grid,
  );
  for (const w of data.warnings) showError(root, w);
  render();
}
