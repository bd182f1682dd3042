/**
 * Custom resources of one API (a CRD an extension's bundle or a HelmOperator installed): the
 * list, and create or edit through the form generated from the CRD's schema (labels and order
 * from the CSV's spec descriptors, prefilled from its `alm-examples`) or as YAML. The server
 * checks the object and the API server judges it; its field errors land on the fields. Delete
 * first shows what goes (for a Helm operator's resource, its release and the release's objects)
 * and asks to confirm; a Helm operator's resource also shows its release's drift and links to
 * its release's timeline (revisions with their hooks and jobs, release-timeline.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- the package is passed to readOne (util/yaml-values.ts, the rule util/yaml.ts reads by), as util/yaml.ts cannot be built for the page
import * as YAML from 'yaml';
import { readOne } from '../../util/yaml-values.js';
import { formFor, initialState, valueOf, type FieldState } from '../contract/schema-form.js';
import type { CrdView, ResourceDeletePreview, ResourceSummary } from '../contract/api-types.js';
import { api, ApiError, seg } from './api.js';
import { alert, append, button, clear, control, emptyState, h, linkButton, table, tabs, title } from './dom.js';
import { driftSection } from './drift-view.js';
import { drawForm, showFieldErrors } from './form-view.js';
import { errorText, showError } from './status.js';
import { routes } from '../contract/routes.js';

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `_` stands for "no namespace" in the page's routes (never a namespace's name). */
const NO_NS = '_';

function origin(v: CrdView): string {
  if (v.package !== undefined) return `installed by package ${v.package}`;
  if (v.helmOperator !== undefined) return `served by HelmOperator ${v.helmOperator} (schema from the chart's values)`;
  return '';
}

const displayName = (kind: string, i: { name: string; namespace?: string | undefined }): string => `${kind} ${i.namespace === undefined ? '' : `${i.namespace}/`}${i.name}`;

/** What deleting `i` deletes, then a confirm button; the DELETE runs as the person and a refusal is shown. */
function deleteConfirm(panel: HTMLElement, crd: string, i: ResourceSummary, reload: () => void): void {
  clear(panel);
  append(panel, h('p', { class: 'muted' }, 'Reading what it would delete…'));
  api<ResourceDeletePreview>('GET', routes.resourcePart(crd, i.name, 'delete-preview', i.namespace)).then(
    (p) => {
      clear(panel);
      const box = h('div', { id: 'cr-delete', class: 'confirm-box' });
      append(box, title('h3', {}, `Delete ${displayName(p.kind, p)}?`), h('p', {}, `Deletes the ${p.kind} ${p.name}.`));
      if (p.finalizers.length > 0) append(box, h('p', { 'data-finalizers': '' }, `Finalizers: ${p.finalizers.join(', ')} — their controllers finish before it is gone.`));
      const r = p.release;
      if (r !== undefined) {
        append(box, h('p', { id: 'cr-delete-release' }, `It is a Helm release: release ${r.namespace}/${r.name}${r.revision === undefined ? '' : ` (revision ${r.revision}, ${r.chart ?? ''})`} is uninstalled with it, and ${r.objects.length === 0 ? 'no objects are recorded for it.' : r.objects.length === 1 ? 'this object of its manifest is deleted:' : `these ${r.objects.length} objects of its manifest are deleted:`}`));
        if (r.objects.length > 0) append(box, h('ul', { id: 'cr-delete-objects' }, ...r.objects.map((o) => h('li', {}, o))));
        if (r.warning !== undefined) append(box, alert('warning', {}, r.warning));
      }
      if (p.mayDelete === false) append(box, alert('warning', { id: 'cr-delete-denied' }, 'Your identity may not delete it (RBAC): the request will be refused.'));
      const confirm = button(
        `Delete ${p.kind} ${p.name}`,
        () => {
          confirm.disabled = true;
          api('DELETE', routes.resource(crd, i.name, i.namespace)).then(
            () => {
              append(box, h('p', { id: 'cr-deleted' }, `Deleted ${displayName(p.kind, p)}${p.finalizers.length > 0 ? ' (it goes once its finalizers are done)' : ''}.`));
              setTimeout(reload, 1500);
            },
            (err: unknown) => {
              confirm.disabled = false;
              showError(box, errorText(err)).setAttribute('id', 'cr-delete-error');
            },
          );
        },
        { id: 'confirm-cr-delete' },
        'danger',
      );
      append(box, h('div', { class: 'actions' }, confirm, button('Cancel', () => clear(panel), { id: 'cancel-cr-delete' })));
      append(panel, box);
    },
    (err: unknown) => {
      clear(panel);
      showError(panel, errorText(err));
    },
  );
}

/** A Helm operator's resource is a release: its drift, checked on request. */
function releaseDrift(panel: HTMLElement, crd: string, i: ResourceSummary): void {
  clear(panel);
  append(panel, title('h3', {}, `Drift of the release of ${i.namespace ?? ''}/${i.name}`));
  driftSection(panel, routes.resourcePart(crd, i.name, 'drift', i.namespace), { button: 'cr-drift-check', out: 'cr-drift' });
}

export async function crdPage(root: HTMLElement, crd: string): Promise<void> {
  const v = await api<CrdView>('GET', routes.crd(crd));
  const panel = h('div', { id: 'cr-panel' });
  const reload = (): void => {
    crdPage(root, crd).catch((err: unknown) => showError(root, errorText(err)));
  };
  const actions = (i: ResourceSummary): HTMLElement =>
    h(
      'span',
      { class: 'row-actions' },
      linkButton('Edit', `#/crd/${seg(crd)}/edit/${seg(i.namespace ?? NO_NS, i.name)}`, { 'data-edit': i.name }, 'link', true),
      button('Delete…', () => deleteConfirm(panel, crd, i, reload), { 'data-delete': i.name }, 'secondary', true),
      v.helmOperator === undefined ? undefined : button('Drift…', () => releaseDrift(panel, crd, i), { 'data-drift': i.name }, 'secondary', true),
      v.helmOperator === undefined ? undefined : linkButton('Timeline', `#/crd/${seg(crd)}/timeline/${seg(i.namespace ?? NO_NS, i.name)}`, { 'data-timeline': i.name }, 'link', true),
    );
  clear(root);
  append(
    root,
    title('h1', {}, v.displayName ?? v.kind, h('span', { class: 'muted' }, ` ${v.kind}.${v.group}/${v.version}`)),
    h('p', { class: 'muted' }, `${v.namespaced ? 'Namespaced' : 'Cluster-scoped'}; ${origin(v)}`),
    v.description === undefined ? undefined : h('p', {}, v.description),
    ...v.warnings.map((w) => alert('warning', {}, w)),
    h('div', { class: 'actions' }, linkButton(`Create ${v.kind}`, `#/crd/${seg(crd)}/new`, { id: 'cr-new' })),
    title('h2', {}, 'Custom resources'),
    v.items.length === 0
      ? emptyState(`No ${v.kind} yet.`, { id: 'cr-none' })
      : table(
          ['Name', 'Namespace', 'Created', 'Conditions', ''],
          v.items.map((i) => [i.name, i.namespace ?? '—', i.created, i.conditions.map((c) => `${c.type}=${c.status}`).join(', '), actions(i)]),
          { id: 'cr-list' },
        ),
    panel,
  );
}

function withoutServerFields(o: Rec): Rec {
  const meta = isRecord(o.metadata) ? o.metadata : {};
  const { managedFields: _m, ...rest } = meta;
  return { ...o, metadata: rest };
}

/** Create (`edit` undefined) or edit one custom resource. */
export async function resourceEditor(root: HTMLElement, crd: string, edit?: { namespace: string; name: string }): Promise<void> {
  const v = await api<CrdView>('GET', routes.crd(crd));
  const editNamespace = edit === undefined || edit.namespace === NO_NS ? undefined : edit.namespace;
  const original = edit === undefined ? undefined : withoutServerFields(await api<Rec>('GET', routes.resource(crd, edit.name, editNamespace)));
  const start: Rec = original ?? v.example ?? {};
  const startMeta = isRecord(start.metadata) ? start.metadata : {};
  const form = formFor(v.schema, v.descriptors);
  let state: FieldState = initialState(form, start);
  let mode: 'form' | 'yaml' = 'form';

  const name = h('input', { name: 'metadata.name', value: typeof startMeta.name === 'string' ? startMeta.name : '', placeholder: 'required' });
  const namespace = h('input', { name: 'metadata.namespace', value: typeof startMeta.namespace === 'string' ? startMeta.namespace : 'default' });
  if (edit !== undefined) {
    name.disabled = true;
    namespace.disabled = true;
  }
  const formBox = h('div', { id: 'cr-form' });
  const yaml = h('textarea', { id: 'yaml-editor', rows: '24', spellcheck: 'false', class: 'yaml' });
  const yamlBox = h('div', { id: 'cr-yaml', hidden: '' }, control(yaml));
  const messages = h('div', { id: 'cr-messages' });
  const editorBox = h('div', {}, h('div', { class: 'form-field', 'data-path': 'metadata.name' }, h('label', {}, h('span', { class: 'pf-v6-c-form__label-text' }, 'Name *'), control(name))), v.namespaced ? h('div', { class: 'form-field', 'data-path': 'metadata.namespace' }, h('label', {}, h('span', { class: 'pf-v6-c-form__label-text' }, 'Namespace *'), control(namespace))) : undefined, formBox, yamlBox);

  const redrawForm = (): void => {
    clear(formBox);
    append(formBox, drawForm(form, state));
  };
  /** The object the form describes; undefined (with the problems shown) when some field cannot be read. */
  const fromForm = (): Rec | undefined => {
    const { value, problems } = valueOf(form, state);
    if (problems.length > 0) {
      clear(messages);
      showError(messages, `Fix ${problems.length === 1 ? 'this field' : 'these fields'} first:\n${problems.map((p) => `${p.path}: ${p.message}`).join('\n')}`);
      showFieldErrors(editorBox, problems.map((p) => ({ field: p.path, message: p.message })));
      return undefined;
    }
    const meta: Rec = { ...(isRecord(start.metadata) ? start.metadata : {}), name: name.value.trim() };
    if (v.namespaced) meta.namespace = namespace.value.trim();
    else delete meta.namespace;
    return { apiVersion: `${v.group}/${v.version}`, kind: v.kind, metadata: meta, ...value, ...(original?.status === undefined ? {} : { status: original.status }) };
  };

  const formTab = button('Form', () => {
    if (mode === 'form') return;
    let parsed: unknown;
    try {
      parsed = readOne(yaml.value, 'the YAML', YAML);
    } catch (err) {
      clear(messages);
      showError(messages, `The YAML cannot be read, so the form cannot show it: ${errorText(err)}`);
      return;
    }
    const obj = isRecord(parsed) ? parsed : {};
    const meta = isRecord(obj.metadata) ? obj.metadata : {};
    if (edit === undefined && typeof meta.name === 'string') name.value = meta.name;
    if (edit === undefined && typeof meta.namespace === 'string') namespace.value = meta.namespace;
    state = initialState(form, obj);
    mode = 'form';
    redrawForm();
    formBox.hidden = false;
    yamlBox.hidden = true;
    modeTabs.select(formTab);
  }, { id: 'mode-form' });
  const yamlTab = button('YAML', () => {
    if (mode === 'yaml') return;
    const obj = fromForm();
    if (obj === undefined) return;
    yaml.value = YAML.stringify(obj);
    mode = 'yaml';
    formBox.hidden = true;
    yamlBox.hidden = false;
    modeTabs.select(yamlTab);
  }, { id: 'mode-yaml' });
  const modeTabs = tabs([formTab, yamlTab]);

  const submit = button(edit === undefined ? 'Create' : 'Save', () => {
    clear(messages);
    showFieldErrors(editorBox, []);
    let body: Rec;
    if (mode === 'yaml') body = { yaml: yaml.value };
    else {
      const obj = fromForm();
      if (obj === undefined) return;
      body = { object: obj };
    }
    submit.disabled = true;
    const call = edit === undefined ? api('POST', routes.resources(crd), body) : api('PATCH', routes.resource(crd, edit.name, editNamespace), body);
    call.then(
      () => (location.hash = `#/crd/${seg(crd)}`),
      (err: unknown) => {
        submit.disabled = false;
        const fields = err instanceof ApiError ? err.fields : [];
        // Errors that name a field the form shows go on that field; all are listed on top.
        if (mode === 'form') showFieldErrors(editorBox, fields);
        showError(messages, errorText(err)).setAttribute('id', 'cr-error');
      },
    );
  }, { id: 'cr-submit' }, 'primary');

  redrawForm();
  clear(root);
  append(
    root,
    title('h1', {}, edit === undefined ? `Create ${v.displayName ?? v.kind}` : `Edit ${v.kind} ${edit.name}`),
    h('p', { class: 'muted' }, `${v.kind}.${v.group}/${v.version} — ${origin(v)}. ${edit === undefined && v.example !== undefined ? 'Prefilled from the operator’s example. ' : ''}Fields marked * are required.`, ' ', h('a', { href: `#/crd/${seg(crd)}` }, 'Back to the list')),
    modeTabs.el,
    messages,
    h('form', { class: 'form cr-editor', id: 'cr-editor' }, editorBox, h('div', { class: 'actions' }, submit)),
  );
}
