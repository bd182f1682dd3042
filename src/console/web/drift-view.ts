/**
 * Drift: a release's deployed manifest against the live objects, as the server compares them
 * (only the fields the manifest sets). Each drifted object is listed with the field paths that
 * differ and both values; a missing object, or one the person may not read, says so. Checked
 * on request, not polled: it reads every object of the release.
 */
import type { ExtensionDrift, FieldDriftView, ObjectDriftView, ReleaseDriftView } from '../contract/api-types.js';
import { api } from './api.js';
import { append, button, clear, h, td, th, title as heading, tr, type Child } from './dom.js';
import { errorText, showError } from './status.js';

const objectName = (o: ObjectDriftView): string => `${o.kind} ${o.namespace === undefined ? '' : `${o.namespace}/`}${o.name}`;
const objectKey = (o: ObjectDriftView): string => `${o.kind}/${o.namespace ?? ''}/${o.name}`;

/** A value as text: strings as they are, the rest as JSON; a side without the field says "(absent)". */
function value(f: FieldDriftView, side: 'manifest' | 'live'): Child {
  if (f.hidden === true) return h('span', { class: 'muted' }, '(Secret data: not shown)');
  if (!(side in f)) return h('span', { class: 'muted' }, '(absent)');
  const v = f[side];
  const text = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  return text.includes('\n') ? h('pre', { class: 'value' }, text) : h('code', {}, text);
}

const STATE: Record<ObjectDriftView['state'], string> = { missing: 'missing', changed: 'changed', unreadable: 'not readable' };

function driftRows(o: ObjectDriftView): HTMLTableRowElement[] {
  const attrs = { 'data-drift-object': objectKey(o), 'data-drift-state': o.state };
  if (o.fields.length === 0) return [tr(attrs, td({}, objectName(o)), td({}, STATE[o.state]), td({ colspan: '3' }, o.message ?? (o.state === 'missing' ? 'not on the cluster' : '')))];
  return o.fields.map((f, i) => tr({ ...attrs, 'data-drift-path': f.path }, td({}, i === 0 ? objectName(o) : ''), td({}, i === 0 ? STATE[o.state] : ''), td({}, h('code', {}, f.path)), td({}, value(f, 'manifest')), td({}, value(f, 'live'))));
}

/** One release's drift. */
export function drawReleaseDrift(into: HTMLElement, d: ReleaseDriftView, note?: string): void {
  const title = `Release ${d.namespace}/${d.release}${d.revision === undefined ? '' : ` — revision ${d.revision} (${d.chart ?? ''})`}`;
  append(into, heading('h3', {}, title, note === undefined ? undefined : h('span', { class: 'muted' }, ` ${note}`)));
  if (d.message !== undefined) append(into, h('p', { class: 'muted' }, d.message));
  if (d.revision !== undefined && d.drifted.length === 0) append(into, h('p', { class: 'in-sync', 'data-drift-in-sync': d.release }, `In sync: all ${d.checked} objects match what the deployed revision applied.`));
  if (d.drifted.length > 0) {
    append(
      into,
      h('p', { 'data-drift-summary': d.release }, `${d.drifted.length} of ${d.checked} objects differ from the deployed revision:`),
      h('table', { class: 'pf-v6-c-table pf-m-compact drift', 'data-drift-release': d.release }, h('thead', { class: 'pf-v6-c-table__thead pf-m-wrap' }, tr({}, ...['Object', 'State', 'Field', 'Manifest', 'Live'].map(th))), h('tbody', { class: 'pf-v6-c-table__tbody' }, ...d.drifted.flatMap(driftRows))),
    );
  }
  if (d.skipped.length > 0) append(into, h('p', { class: 'muted' }, `Not compared (the cluster does not serve their optional APIs): ${d.skipped.join(', ')}`));
}

/** A "Check drift" button and where its answer goes; `path` answers an ExtensionDrift or a ReleaseDriftView. */
export function driftSection(into: HTMLElement, path: string, ids: { button: string; out: string }): void {
  const out = h('div', { id: ids.out });
  const check = button(
    'Check drift',
    () => {
      check.disabled = true;
      clear(out);
      append(out, h('p', { class: 'muted' }, 'Comparing each object with the deployed manifest…'));
      api<ExtensionDrift | ReleaseDriftView>('GET', path).then(
        (d) => {
          clear(out);
          if ('releases' in d) {
            if (d.releases.length === 0) append(out, h('p', { class: 'muted' }, 'Nothing installed yet: no release to compare.'));
            for (const r of d.releases) drawReleaseDrift(out, r, `(package ${r.package}; ${r.neededBy})`);
          } else drawReleaseDrift(out, d);
          check.disabled = false;
        },
        (err: unknown) => {
          clear(out);
          showError(out, errorText(err));
          check.disabled = false;
        },
      );
    },
    { id: ids.button },
  );
  append(into, h('p', { class: 'muted' }, 'Compares the fields each object of the deployed manifest sets with the live object; what the server or other controllers add is not drift.'), check, out);
}
