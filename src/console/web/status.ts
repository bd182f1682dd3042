/** Messages in the page: errors (a 403 reads "forbidden: …") are shown, never swallowed. */
import type { Health } from '../contract/api-types.js';
import { alert, button, label, type LabelColor } from './dom.js';

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

/**
 * A primary button that sends `send()` once per click: disabled while it runs and after it
 * succeeds (`done` says what happened), enabled again with the error shown in `errors` when it
 * fails. It starts disabled: a plan is made first.
 */
export function sendButton<T>(label: string, attrs: Record<string, string>, send: () => Promise<T>, done: (result: T) => void, errors: HTMLElement): HTMLButtonElement {
  const b = button(
    label,
    () => {
      b.disabled = true;
      send().then(done, (err: unknown) => {
        b.disabled = false;
        showError(errors, errorText(err));
      });
    },
    attrs,
    'primary',
  );
  b.disabled = true;
  return b;
}
