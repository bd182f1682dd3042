/** The console's page: a header (navigation and the bearer token to act as) and hash routes. */
import { bearer, setBearer } from './api.js';
import { append, button, clear, control, h } from './dom.js';
import { catalogPage } from './catalog-page.js';
import { installPage } from './install-page.js';
import { installedDetail, installedList } from './installed-page.js';
import { inventoryPage } from './inventory-page.js';
import { packagePage } from './package-page.js';
import { extensionTimelinePage, resourceTimelinePage } from './release-timeline.js';
import { crdPage, resourceEditor } from './resources-page.js';
import { errorText, showError } from './status.js';

let stopPage: (() => void) | undefined;

/** Whether this console lends its identity to a browser without a token (on loopback, after the login URL). */
const lends = document.querySelector('meta[name="binnacle-lends-identity"]')?.getAttribute('content') !== 'no';
const withoutToken = lends ? 'as the console’s kubeconfig identity' : 'no identity: enter your token';

function header(top: HTMLElement): void {
  const token = h('input', { type: 'password', id: 'token', placeholder: lends ? 'Bearer token (empty: the console’s own identity)' : 'Your bearer token (required)', autocomplete: 'off', 'aria-label': 'Bearer token' });
  token.value = bearer();
  const who = h('span', { class: 'muted', id: 'identity' }, bearer() === '' ? withoutToken : 'as the token’s identity');
  clear(top);
  append(
    top,
    h('nav', { 'aria-label': 'Console' }, h('strong', { class: 'brand' }, 'Binnacle'), h('a', { href: '#/catalog' }, 'Catalog'), h('a', { href: '#/installed' }, 'Installed'), h('a', { href: '#/inventory' }, 'Inventory')),
    h(
      'div',
      { class: 'identity' },
      control(token),
      button(
        'Use token',
        () => {
          setBearer(token.value.trim());
          who.textContent = token.value.trim() === '' ? withoutToken : 'as the token’s identity';
          route();
        },
        { id: 'use-token' },
        'primary',
      ),
      who,
    ),
  );
}

/** A page kept current: it is stopped when another is shown. */
function livePage(stop: () => void): Promise<void> {
  stopPage = stop;
  return Promise.resolve();
}

/** A custom resource page: crd/CRD, crd/CRD/new, crd/CRD/edit/NS/NAME, crd/CRD/timeline/NS/NAME (live: sets stopPage). */
function crdRoute(app: HTMLElement, [crd, sub, c, d]: (string | undefined)[]): Promise<void> {
  if (crd === undefined) return livePage(catalogPage(app));
  if (sub === 'new') return resourceEditor(app, crd);
  if (sub === 'edit' && c !== undefined && d !== undefined) return resourceEditor(app, crd, { namespace: c, name: d });
  if (sub === 'timeline' && c !== undefined && d !== undefined) return livePage(resourceTimelinePage(app, crd, c, d));
  return crdPage(app, crd);
}

/** installed, installed/EXT, installed/EXT/timeline/BD (each live: they set stopPage). */
function installedRoute(app: HTMLElement, [name, sub, bd]: (string | undefined)[]): Promise<void> {
  if (name === undefined || name === '') return livePage(installedList(app));
  return livePage(sub === 'timeline' && bd !== undefined ? extensionTimelinePage(app, name, bd) : installedDetail(app, name));
}

function route(): void {
  const app = document.getElementById('app');
  if (app === null) return;
  stopPage?.();
  stopPage = undefined;
  const [page, ...rest] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const [a, b] = rest;
  clear(app);
  append(app, h('p', { class: 'muted' }, 'Loading…'));
  let work: Promise<void>;
  if (page === 'package' && a !== undefined && b !== undefined) work = packagePage(app, a, b);
  else if (page === 'install' && a !== undefined && b !== undefined) work = installPage(app, a, b);
  else if (page === 'crd') work = crdRoute(app, rest);
  else if (page === 'installed') work = installedRoute(app, rest);
  else if (page === 'inventory') work = livePage(inventoryPage(app));
  else work = livePage(catalogPage(app));
  work.catch((err: unknown) => {
    clear(app);
    showError(app, errorText(err));
  });
}

const top = document.getElementById('top');
if (top !== null) header(top);
window.addEventListener('hashchange', route);
route();
