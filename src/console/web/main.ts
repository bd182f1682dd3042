/** The console's page: a header (navigation and the bearer token to act as) and hash routes. */
import { bearer, setBearer } from './api.js';
import { append, button, clear, h } from './dom.js';
import { catalogPage } from './catalog-page.js';
import { installPage } from './install-page.js';
import { installedDetail, installedList } from './installed-page.js';
import { inventoryPage } from './inventory-page.js';
import { packagePage } from './package-page.js';
import { crdPage, resourceEditor } from './resources-page.js';
import { errorText, showError } from './status.js';

let stopPage: (() => void) | undefined;

function header(top: HTMLElement): void {
  const token = h('input', { type: 'password', id: 'token', placeholder: 'Bearer token (empty: the console’s own identity)', autocomplete: 'off' });
  token.value = bearer();
  const who = h('span', { class: 'muted', id: 'identity' }, bearer() === '' ? 'as the console’s kubeconfig identity' : 'as the token’s identity');
  clear(top);
  append(
    top,
    h('nav', {}, h('strong', {}, 'Binnacle'), h('a', { href: '#/catalog' }, 'Catalog'), h('a', { href: '#/installed' }, 'Installed'), h('a', { href: '#/inventory' }, 'Inventory')),
    h(
      'div',
      { class: 'identity' },
      token,
      button(
        'Use token',
        () => {
          setBearer(token.value.trim());
          who.textContent = token.value.trim() === '' ? 'as the console’s kubeconfig identity' : 'as the token’s identity';
          route();
        },
        { id: 'use-token' },
      ),
      who,
    ),
  );
}

function route(): void {
  const app = document.getElementById('app');
  if (app === null) return;
  stopPage?.();
  stopPage = undefined;
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const [page, a, b, c, d] = parts;
  clear(app);
  append(app, h('p', { class: 'muted' }, 'Loading…'));
  let work: Promise<void>;
  if (page === 'package' && a !== undefined && b !== undefined) work = packagePage(app, a, b);
  else if (page === 'install' && a !== undefined && b !== undefined) work = installPage(app, a, b);
  else if (page === 'crd' && a !== undefined && b === 'new') work = resourceEditor(app, a);
  else if (page === 'crd' && a !== undefined && b === 'edit' && c !== undefined && d !== undefined) work = resourceEditor(app, a, { namespace: c, name: d });
  else if (page === 'crd' && a !== undefined) work = crdPage(app, a);
  else if (page === 'installed' && a !== undefined && a !== '') {
    stopPage = installedDetail(app, a);
    work = Promise.resolve();
  } else if (page === 'installed') work = installedList(app);
  else if (page === 'inventory') work = inventoryPage(app);
  else work = catalogPage(app);
  work.catch((err: unknown) => {
    clear(app);
    showError(app, errorText(err));
  });
}

const top = document.getElementById('top');
if (top !== null) header(top);
window.addEventListener('hashchange', route);
route();
