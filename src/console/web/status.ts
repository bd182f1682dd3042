/** Messages in the page: errors (a 403 reads "forbidden: …") are shown, never swallowed. */
import type { Health } from '../contract/api-types.js';
import { alert, label, type LabelColor } from './dom.js';

const HEALTH_COLOR: Record<Health, LabelColor> = { Healthy: 'success', Progressing: 'info', Failing: 'danger', Deleting: 'warning', Unknown: 'grey' };

/** A health as a PatternFly label in its status color (classes `health <health>` kept). */
export function healthLabel(health: Health, attrs: Record<string, string> = {}): HTMLSpanElement {
  return label(health, HEALTH_COLOR[health], { ...attrs, class: `health ${health.toLowerCase()}` });
}

export function showError(where: HTMLElement, message: string): HTMLElement {
  const el = alert('danger', { role: 'alert', 'data-error': '' }, message);
  where.prepend(el);
  return el;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
