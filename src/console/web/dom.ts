/** Building DOM nodes from data: text is always set as text, never parsed as HTML. */
export type Child = Node | string | number | undefined | null | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
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

/** A button whose click runs `fn` (listeners only: the CSP forbids inline handlers). */
export function button(label: string, fn: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', fn);
  return b;
}

export function field(label: string, input: HTMLElement): HTMLLabelElement {
  return h('label', { class: 'field' }, h('span', {}, label), input);
}

export function table(headers: string[], rows: Child[][], attrs: Record<string, string> = {}): HTMLTableElement {
  return h('table', attrs, h('thead', {}, h('tr', {}, ...headers.map((x) => h('th', {}, x)))), h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))));
}
