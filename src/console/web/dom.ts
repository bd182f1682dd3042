/**
 * Building DOM nodes from data: text is always set as text, never parsed as HTML. The helpers
 * below draw PatternFly components (its core CSS, bundled into app.css: `styles.css`) — the
 * markup of each is PatternFly's, with the page's own ids and `data-*` attributes on it.
 */
export type Child = Node | string | number | undefined | null | false;
type Attrs = Record<string, string | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, v);
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function clear(el: Element): void {
  while (el.firstChild !== null) el.removeChild(el.firstChild);
}

/** `attrs` with `cls` put before its own class (the page's classes stay: tests and code use them). */
function withClass(cls: string, attrs: Attrs): Attrs {
  return { ...attrs, class: attrs.class === undefined || attrs.class === '' ? cls : `${cls} ${attrs.class}` };
}

/** An SVG icon (a 512×512 path, as PatternFly's icons), drawn as DOM (no inline markup). */
function icon(d: string): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  for (const [k, v] of Object.entries({ viewBox: '0 0 512 512', width: '1em', height: '1em', fill: 'currentColor', 'aria-hidden': 'true', class: 'pf-v6-svg' })) svg.setAttribute(k, v);
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  svg.appendChild(path);
  return svg;
}
const EXCLAMATION_CIRCLE = 'M504 256c0 137-111 248-248 248S8 393 8 256 119 8 256 8s248 111 248 248zm-248 50a46 46 0 1 0 0 92 46 46 0 0 0 0-92zm-44-165 7 136a12 12 0 0 0 12 11h50a12 12 0 0 0 12-11l7-136a12 12 0 0 0-12-13h-64a12 12 0 0 0-12 13z';
const CARET_DOWN = 'M96 192h320c17 0 26 21 14 33L270 385c-8 8-20 8-28 0L82 225c-12-12-3-33 14-33z';

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'link';

/** PatternFly's button classes (also for a link drawn as a button). */
export function buttonClass(variant: ButtonVariant = 'secondary', small = false): string {
  return `pf-v6-c-button pf-m-${variant}${small ? ' pf-m-small' : ''}`;
}

/**
 * A PatternFly button whose click runs `fn` (listeners only: the CSP forbids inline handlers).
 * `attrs.class` is kept after PatternFly's classes (`primary`, `danger` stay readable).
 */
export function button(label: string, fn: () => void, attrs: Record<string, string> = {}, variant: ButtonVariant = 'secondary', small = false): HTMLButtonElement {
  const b = h('button', withClass(buttonClass(variant, small), { type: 'button', ...attrs }), h('span', { class: 'pf-v6-c-button__text' }, label));
  b.addEventListener('click', fn);
  return b;
}

/** A link drawn as a PatternFly button. */
export function linkButton(label: string, href: string, attrs: Record<string, string> = {}, variant: ButtonVariant = 'primary', small = false): HTMLAnchorElement {
  return h('a', withClass(buttonClass(variant, small), { href, ...attrs }), h('span', { class: 'pf-v6-c-button__text' }, label));
}

/** A PatternFly heading (Title). */
export function title(tag: 'h1' | 'h2' | 'h3' | 'h4', attrs: Attrs = {}, ...children: Child[]): HTMLHeadingElement {
  const size = { h1: '2xl', h2: 'xl', h3: 'lg', h4: 'md' }[tag];
  return h(tag, withClass(`pf-v6-c-title pf-m-${size}`, attrs), ...children);
}

let fieldIds = 0;

/** An input, select or textarea in PatternFly's form-control box (a select with its caret). */
export function control(input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): HTMLSpanElement {
  if (input instanceof HTMLTextAreaElement) return h('span', { class: 'pf-v6-c-form-control pf-m-textarea pf-m-resize-vertical' }, input);
  if (input instanceof HTMLSelectElement) return h('span', { class: 'pf-v6-c-form-control' }, input, h('span', { class: 'pf-v6-c-form-control__utilities' }, h('span', { class: 'pf-v6-c-form-control__toggle-icon' }, icon(CARET_DOWN))));
  return h('span', { class: 'pf-v6-c-form-control' }, input);
}

/** A labelled field: PatternFly's form group (a checkbox as PatternFly's check). */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): HTMLDivElement {
  if (input.id === '') input.id = `field-${++fieldIds}`;
  if (input instanceof HTMLInputElement && input.type === 'checkbox') {
    input.classList.add('pf-v6-c-check__input');
    return h('div', { class: 'pf-v6-c-form__group field' }, h('div', { class: 'pf-v6-c-form__group-control' }, h('div', { class: 'pf-v6-c-check' }, input, h('label', { class: 'pf-v6-c-check__label', for: input.id }, label))));
  }
  return h(
    'div',
    { class: 'pf-v6-c-form__group field' },
    h('div', { class: 'pf-v6-c-form__group-label' }, h('label', { class: 'pf-v6-c-form__label', for: input.id }, h('span', { class: 'pf-v6-c-form__label-text' }, label))),
    h('div', { class: 'pf-v6-c-form__group-control' }, control(input)),
  );
}

/** A PatternFly table (compact); `attrs.class` is kept. */
export function table(headers: string[], rows: Child[][], attrs: Record<string, string> = {}): HTMLTableElement {
  return h(
    'table',
    withClass('pf-v6-c-table pf-m-compact', attrs),
    h('thead', { class: 'pf-v6-c-table__thead pf-m-wrap' }, h('tr', { class: 'pf-v6-c-table__tr' }, ...headers.map((x) => h('th', { class: 'pf-v6-c-table__th', scope: 'col' }, x)))),
    h('tbody', { class: 'pf-v6-c-table__tbody' }, ...rows.map((r) => tr({}, ...r.map((c) => td({}, c))))),
  );
}

/** A row and a cell of a PatternFly table (for tables drawn by hand). */
export const tr = (attrs: Attrs, ...cells: HTMLTableCellElement[]): HTMLTableRowElement => h('tr', withClass('pf-v6-c-table__tr', attrs), ...cells);
export const td = (attrs: Attrs, ...children: Child[]): HTMLTableCellElement => h('td', withClass('pf-v6-c-table__td', attrs), ...children);
export const th = (text: string): HTMLTableCellElement => h('th', { class: 'pf-v6-c-table__th', scope: 'col' }, text);

export type LabelColor = 'success' | 'warning' | 'danger' | 'info' | 'grey';

/** A PatternFly label (a badge); its text is `text` only. */
export function label(text: string, color: LabelColor = 'grey', attrs: Attrs = {}): HTMLSpanElement {
  return h('span', withClass(`pf-v6-c-label pf-m-compact${color === 'grey' ? '' : ` pf-m-${color}`}`, attrs), h('span', { class: 'pf-v6-c-label__content' }, h('span', { class: 'pf-v6-c-label__text' }, text)));
}

/**
 * A PatternFly inline alert: `head` is its title, `body` its description. Its text is theirs
 * only (the icon is an SVG without text), so what a test or a person reads starts with `head`.
 */
export function alert(variant: 'danger' | 'warning' | 'info' | 'success', attrs: Attrs, head: Child, ...body: Child[]): HTMLDivElement {
  const rest = body.filter((c) => c !== undefined && c !== null && c !== false);
  return h(
    'div',
    withClass(`pf-v6-c-alert pf-m-inline pf-m-${variant}`, attrs),
    h('div', { class: 'pf-v6-c-alert__icon' }, icon(EXCLAMATION_CIRCLE)),
    h('p', { class: 'pf-v6-c-alert__title' }, head),
    rest.length === 0 ? undefined : h('div', { class: 'pf-v6-c-alert__description' }, ...rest),
  );
}

/** A PatternFly empty state (a short one: a list with nothing in it). */
export function emptyState(text: string, attrs: Attrs = {}): HTMLDivElement {
  return h('div', withClass('pf-v6-c-empty-state pf-m-xs', attrs), h('div', { class: 'pf-v6-c-empty-state__content' }, h('div', { class: 'pf-v6-c-empty-state__header' }, h('div', { class: 'pf-v6-c-empty-state__title' }, h('h3', { class: 'pf-v6-c-empty-state__title-text' }, text)))));
}

/** A PatternFly description list (term: description), horizontal and compact. */
export function descriptionList(pairs: [string, Child][], attrs: Attrs = {}): HTMLDListElement {
  return h(
    'dl',
    withClass('pf-v6-c-description-list pf-m-horizontal pf-m-compact', attrs),
    ...pairs.map(([k, v]) => h('div', { class: 'pf-v6-c-description-list__group' }, h('dt', { class: 'pf-v6-c-description-list__term' }, h('span', { class: 'pf-v6-c-description-list__text' }, k)), h('dd', { class: 'pf-v6-c-description-list__description' }, h('div', { class: 'pf-v6-c-description-list__text' }, v)))),
  );
}

/** A PatternFly toolbar: one item per element. */
export function toolbar(attrs: Attrs, ...items: HTMLElement[]): HTMLDivElement {
  return h('div', withClass('pf-v6-c-toolbar', attrs), h('div', { class: 'pf-v6-c-toolbar__content' }, h('div', { class: 'pf-v6-c-toolbar__content-section' }, ...items.map((i) => h('div', { class: 'pf-v6-c-toolbar__item' }, i)))));
}

/** PatternFly tabs over buttons (each keeps its own id and click listener); `select` marks the current one. */
export function tabs(buttons: HTMLButtonElement[]): { el: HTMLElement; select: (b: HTMLButtonElement) => void } {
  const items = buttons.map((b) => {
    b.className = 'pf-v6-c-tabs__link';
    b.setAttribute('role', 'tab');
    const text = b.textContent ?? '';
    clear(b);
    append(b, h('span', { class: 'pf-v6-c-tabs__item-text' }, text));
    return h('li', { class: 'pf-v6-c-tabs__item', role: 'presentation' }, b);
  });
  const select = (chosen: HTMLButtonElement): void => {
    buttons.forEach((b, i) => {
      items[i]?.classList.toggle('pf-m-current', b === chosen);
      b.setAttribute('aria-selected', String(b === chosen));
    });
  };
  if (buttons[0] !== undefined) select(buttons[0]);
  return { el: h('div', { class: 'pf-v6-c-tabs' }, h('ul', { class: 'pf-v6-c-tabs__list', role: 'tablist' }, ...items)), select };
}
