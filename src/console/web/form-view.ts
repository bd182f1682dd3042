/**
 * Renders a generated form (`../contract/schema-form.ts`) into the page and keeps its state: each input
 * writes its text into the `FieldState` it was drawn from, arrays add and remove items in
 * place. Every field's box carries `data-path` (the path the API server names), so a field
 * error lands on the field: `showFieldErrors` finds the box of the path, or of its nearest
 * parent the form draws.
 */
import type { FieldState, FormField } from '../contract/schema-form.js';
import { initialState } from '../contract/schema-form.js';
import { append, button, clear, control, h } from './dom.js';

function describe(f: FormField): HTMLElement | undefined {
  return f.description === undefined ? undefined : h('small', { class: 'muted field-help' }, f.description);
}

function labelText(f: FormField): string {
  return `${f.label}${f.required ? ' *' : ''}`;
}

function scalarInput(f: FormField, state: { text: string }): HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement {
  const kind = f.kind;
  let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  if (kind === 'enum' || kind === 'boolean') {
    const options = kind === 'boolean' ? ['true', 'false'] : (f.options ?? []).map((o) => (typeof o === 'string' ? o : JSON.stringify(o)));
    input = h('select', {}, h('option', { value: '' }, '—'), ...options.map((o) => h('option', { value: o }, o)));
    input.value = state.text;
  } else if (kind === 'yaml') {
    input = h('textarea', { rows: String(Math.min(12, Math.max(3, state.text.split('\n').length + 1))), spellcheck: 'false', class: 'yaml' });
    input.value = state.text;
  } else {
    const hint = kind === 'int-or-string' ? 'integer or string' : kind === 'integer' || kind === 'number' ? kind : undefined;
    input = h('input', { type: 'text', ...(hint === undefined ? {} : { placeholder: hint }), ...(f.pattern === undefined ? {} : { title: `pattern ${f.pattern}` }) });
    input.value = state.text;
  }
  input.setAttribute('name', f.path);
  input.addEventListener('input', () => (state.text = input.value));
  input.addEventListener('change', () => (state.text = input.value));
  return input;
}

function fieldBox(f: FormField, path: string, state: FieldState): HTMLElement {
  if (f.kind === 'object' && 'fields' in state) {
    return h('fieldset', { class: 'form-object', 'data-path': path }, h('legend', {}, labelText(f)), describe(f), ...objectFields(f, path, state));
  }
  if (f.kind === 'array' && 'items' in state) return arrayBox(f, path, state);
  if ('text' in state) {
    return h('div', { class: `form-field kind-${f.kind}`, 'data-path': path }, h('label', {}, h('span', { class: 'pf-v6-c-form__label-text' }, labelText(f)), control(scalarInput(f, state))), describe(f), f.kind === 'yaml' ? h('small', { class: 'muted' }, 'YAML') : undefined);
  }
  return h('div', { 'data-path': path }, `${f.label}: cannot be drawn`);
}

function objectFields(f: FormField, path: string, state: { fields: Record<string, FieldState> }): HTMLElement[] {
  return (f.fields ?? []).map((child) => {
    let s = state.fields[child.key];
    if (s === undefined) state.fields[child.key] = s = initialState(child, undefined);
    return fieldBox(child, path === '' ? child.key : `${path}.${child.key}`, s);
  });
}

function arrayBox(f: FormField, path: string, state: { items: FieldState[] }): HTMLElement {
  const box = h('fieldset', { class: 'form-array', 'data-path': path });
  const item = f.item;
  const draw = (): void => {
    clear(box);
    append(box, h('legend', {}, labelText(f)), describe(f));
    if (item === undefined) return;
    state.items.forEach((s, i) => {
      const row = h('div', { class: 'form-item' }, fieldBox({ ...item, label: `${f.label} ${i + 1}` }, `${path}[${i}]`, s));
      append(
        row,
        button('Remove', () => {
          state.items.splice(i, 1);
          draw();
        }, { 'data-remove': `${path}[${i}]` }, 'secondary', true),
      );
      append(box, row);
    });
    append(
      box,
      button(`Add ${f.label.toLowerCase()}`, () => {
        state.items.push(initialState(item, undefined));
        draw();
      }, { 'data-add': path }, 'link', true),
    );
  };
  draw();
  return box;
}

/** The form's fields (the root object's) for `state`. */
export function drawForm(form: FormField, state: FieldState): HTMLElement {
  const root = h('div', { class: 'generated-form', 'data-path': '' });
  if ('fields' in state) append(root, ...objectFields(form, '', state));
  return root;
}

/** Puts each error on the box of its field (or the nearest parent drawn); answers those that found none. */
export function showFieldErrors(root: HTMLElement, errors: { field: string; message: string }[]): { field: string; message: string }[] {
  for (const old of root.querySelectorAll('[data-field-error]')) old.remove();
  const unplaced: { field: string; message: string }[] = [];
  for (const e of errors) {
    let path = e.field;
    let box: Element | null = null;
    while (box === null) {
      box = root.querySelector(`[data-path="${CSS.escape(path)}"]`);
      if (box !== null || path === '') break;
      const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
      path = cut <= 0 ? '' : path.slice(0, cut);
    }
    if (box === null || path === '') {
      unplaced.push(e);
      continue;
    }
    const msg = h('div', { class: 'field-error', 'data-field-error': e.field }, `${e.field}: ${e.message}`);
    if (box.tagName === 'FIELDSET') box.querySelector('legend')?.after(msg);
    else box.append(msg);
  }
  return unplaced;
}
