/** Messages in the page: errors (a 403 reads "forbidden: …") are shown, never swallowed. */
import { h } from './dom.js';

export function showError(where: HTMLElement, message: string): HTMLElement {
  const el = h('div', { class: 'error', role: 'alert', 'data-error': '' }, message);
  where.prepend(el);
  return el;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
