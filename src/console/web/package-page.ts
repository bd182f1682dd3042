/** One package: description (Markdown, sanitised), channels, versions, deprecations, APIs and the upgrade graph. */
import { api, seg } from './api.js';
import { alert, append, clear, descriptionList, h, label, linkButton, table, title } from './dom.js';
import { drawGraph, upgradePathText } from './graph-svg.js';
import { drawMarkdown } from './markdown.js';
import type { Gvk, PackagePage } from '../contract/api-types.js';
import { routes } from '../contract/routes.js';

const gvk = (g: Gvk): string => `${g.group === '' ? 'core' : g.group}/${g.version} ${g.kind}`;

export async function packagePage(root: HTMLElement, catalog: string, name: string): Promise<void> {
  const p = await api<PackagePage>('GET', routes.packagePage(catalog, name));
  const description = h('div', { class: 'markdown', id: 'description' });
  drawMarkdown(description, p.description);
  const head = p.channels.find((c) => c.name === p.defaultChannel)?.head;
  const headBundle = p.bundles.find((b) => b.name === head) ?? p.bundles[0];
  clear(root);
  append(
    root,
    title('h1', {}, p.displayName, ' ', h('span', { class: 'muted' }, `${p.name} · catalog ${p.catalog}`)),
    p.packageDeprecation === undefined ? null : alert('warning', {}, `Deprecated: ${p.packageDeprecation}`),
    h(
      'p',
      { class: 'actions' },
      linkButton('Install…', `#/install/${seg(p.catalog, p.name)}`, { id: 'install-link' }),
      p.installedBundle === undefined ? null : label(`installed: ${p.installedBundle}`, 'success'),
    ),
    descriptionList(([
      ['Provider', p.provider],
      ['Categories', p.categories.join(', ')],
      ['Capability level', p.capability],
      ['Install modes', p.installModes.join(', ')],
      ['Default channel', p.defaultChannel],
      ['Latest version', p.headVersion],
    ] as const).map(([k, v]) => [k, v || '—']), { class: 'facts' }),
    title('h2', {}, 'Description'),
    description,
    title('h2', {}, 'Channels and upgrade graph'),
    h('p', { class: 'muted legend' }, 'Arrows point the way an upgrade goes: solid replaces, dashed skips, dotted skipRange. Bold: channel head; green: installed; orange, thick: the path the next upgrade takes (what the resolver chooses, step by step, under the channels, version range and upgrade policy of the extension); blue: otherwise reachable from the installed version.'),
    ...p.channels.map((c) => {
      const g = p.graphs[c.name];
      return h(
        'section',
        { class: 'channel', 'data-channel': c.name },
        title('h3', {}, `${c.name}${c.name === p.defaultChannel ? ' (default)' : ''}`, c.deprecation === undefined ? null : label(`deprecated: ${c.deprecation}`, 'warning')),
        g === undefined ? null : h('div', { class: 'graph-box' }, drawGraph(g, c.name)),
        g === undefined || upgradePathText(g) === undefined ? null : h('p', { class: 'upgrade-path', 'data-channel': c.name }, upgradePathText(g) ?? ''),
        table(
          ['Bundle', 'Version', 'Replaces', 'Skips', 'Skip range', 'Deprecation'],
          c.entries.map((e) => [e.name + (e.name === c.head ? ' (head)' : ''), e.version, e.replaces ?? '', (e.skips ?? []).join(', '), e.skipRange ?? '', e.deprecation ?? '']),
        ),
      );
    }),
    title('h2', {}, 'APIs'),
    headBundle === undefined
      ? h('p', {}, 'no bundle')
      : h(
          'div',
          {},
          title('h3', {}, `Provided by ${headBundle.name}`),
          h('ul', {}, ...headBundle.provides.map((g) => h('li', {}, gvk(g)))),
          title('h3', {}, 'Required (the resolver adds a bundle that provides each)'),
          headBundle.requires.length + headBundle.requiresPackages.length === 0
            ? h('p', { class: 'muted' }, 'none')
            : h('ul', { id: 'requires' }, ...headBundle.requires.map((g) => h('li', {}, gvk(g))), ...headBundle.requiresPackages.map((r) => h('li', {}, `package ${r.packageName} ${r.versionRange}`))),
        ),
    p.ownedApis.length === 0 ? null : table(['Kind', 'Version', 'Name', 'Description'], p.ownedApis.map((o) => [o.displayName || o.kind, o.version, o.name, o.description])),
    p.links.length === 0 ? null : title('h2', {}, 'Links'),
    p.links.length === 0 ? null : h('ul', {}, ...p.links.filter((l) => /^https?:\/\//.test(l.url)).map((l) => h('li', {}, h('a', { href: l.url, target: '_blank', rel: 'noopener noreferrer' }, l.name || l.url)))),
  );
}
