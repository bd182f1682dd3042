/**
 * What a rollback does to custom resources written against the newer version: the fields the
 * live CRD declares and the older one does not, and which resources set them. Such a value is
 * either kept (the older schema keeps unknown fields where it sits: it stays in storage, and
 * the older operator does not act on it) or pruned (the API server drops it; CRD upgrade
 * safety refuses the rollback for that, crd.field-removed). `rollbackPreview` gathers these for
 * `binnacle rollback` and the console; `describeRollback` says it in sentences.
 */
import type { ObjectReader } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';

type Json = Record<string, unknown>;

const asRecord = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);

export interface FieldLeftBehind {
  /** As CRD upgrade safety names fields: `.spec.greeting`, `.spec.items[*].name`. */
  path: string;
  /** kept: stays in storage, not acted on by the older version; pruned: dropped by the API server. */
  fate: 'kept' | 'pruned';
}

export interface CustomResourcesImpact {
  crd: string;
  kind: string;
  fields: FieldLeftBehind[];
  /** The resources that set any of `fields`, with the fields each sets. */
  resources: { namespace?: string; name: string; fields: string[] }[];
}

function schemasOf(crd: unknown): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const v of (asRecord(crd)?.spec as { versions?: unknown[] } | undefined)?.versions ?? []) {
    const r = asRecord(v);
    const schema = asRecord(asRecord(r?.schema)?.openAPIV3Schema);
    if (typeof r?.name === 'string' && schema !== undefined) out.set(r.name, schema);
  }
  return out;
}

function walk(live: Json, older: Json, path: string, out: Map<string, FieldLeftBehind>): void {
  const olderProps = asRecord(older.properties) ?? {};
  for (const [name, sub] of Object.entries(asRecord(live.properties) ?? {})) {
    const childPath = `${path}.${name}`;
    const olderSub = asRecord(olderProps[name]);
    if (olderSub === undefined) {
      if (!out.has(childPath)) out.set(childPath, { path: childPath, fate: older['x-kubernetes-preserve-unknown-fields'] === true ? 'kept' : 'pruned' });
      continue;
    }
    walk(asRecord(sub) ?? {}, olderSub, childPath, out);
  }
  const liveItems = asRecord(live.items);
  const olderItems = asRecord(older.items);
  if (liveItems !== undefined && olderItems !== undefined) walk(liveItems, olderItems, `${path}[*]`, out);
}

/** The fields the live CRD declares and the older one does not (in the versions both have). */
export function fieldsLeftBehind(live: unknown, older: unknown): FieldLeftBehind[] {
  const olderSchemas = schemasOf(older);
  const out = new Map<string, FieldLeftBehind>();
  for (const [version, schema] of schemasOf(live)) {
    const o = olderSchemas.get(version);
    if (o !== undefined) walk(schema, o, '', out);
  }
  return [...out.values()];
}

/** The values at `path` (`.a.b`, `.a[*].b`) in `obj`. */
function valuesAt(obj: unknown, path: string): unknown[] {
  let current: unknown[] = [obj];
  for (const token of path.match(/\.[^.[]+|\[\*\]/g) ?? []) {
    current = token === '[*]' ? current.flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : [])) : current.map((v) => asRecord(v)?.[token.slice(1)]);
  }
  return current.filter((v) => v !== undefined && v !== null);
}

/** The fields of `fields` that `obj` sets. */
export function fieldsSet(obj: unknown, fields: readonly FieldLeftBehind[]): string[] {
  return fields.filter((f) => valuesAt(obj, f.path).length > 0).map((f) => f.path);
}

/** The impact on the custom resources of one CRD, read from the cluster; undefined when no field is left behind. */
export async function customResourcesImpact(client: Pick<ObjectReader, 'list'>, live: KubeObject, older: KubeObject): Promise<CustomResourcesImpact | undefined> {
  const fields = fieldsLeftBehind(live, older);
  if (fields.length === 0) return undefined;
  const spec = asRecord(live.spec) ?? {};
  const named = asRecord(spec.names)?.kind;
  const kind = typeof named === 'string' ? named : '';
  const version = (spec.versions as { name?: string; storage?: boolean }[] | undefined)?.find((v) => v.storage === true)?.name;
  const resources: CustomResourcesImpact['resources'] = [];
  if (typeof spec.group === 'string' && version !== undefined && kind !== '') {
    for (const cr of (await client.list(`${spec.group}/${version}`, kind)).items) {
      const set = fieldsSet(cr, fields);
      if (set.length > 0) resources.push({ ...(cr.metadata.namespace === undefined ? {} : { namespace: cr.metadata.namespace }), name: cr.metadata.name ?? '', fields: set });
    }
  }
  return { crd: live.metadata.name ?? '', kind, fields, resources };
}

const strip = (path: string): string => path.replace(/^\./, '');

/** In sentences: what going from `from` to `to` does to the custom resources. */
export function describeRollback(from: string, to: string, impacts: readonly CustomResourcesImpact[]): string[] {
  const lines: string[] = [];
  for (const i of impacts) {
    const kept = i.fields.filter((f) => f.fate === 'kept').map((f) => strip(f.path));
    const pruned = i.fields.filter((f) => f.fate === 'pruned').map((f) => strip(f.path));
    const who = i.resources.map((r) => `${r.namespace === undefined ? '' : `${r.namespace}/`}${r.name} (${r.fields.map(strip).join(', ')})`);
    lines.push(`${i.kind} (${i.crd}): ${to} does not declare ${i.fields.map((f) => strip(f.path)).join(', ')}, which ${from} added; ${i.resources.length === 0 ? 'no custom resource sets them' : `${i.resources.length} custom resources written against ${from} set them: ${who.join(', ')}`}`);
    if (kept.length > 0) lines.push(`  ${kept.join(', ')}: kept in storage (${to}'s schema keeps unknown fields there), but ${to} does not act on them: these resources are reconciled by ${to} as if unset, and ${from} uses them again after an upgrade`);
    if (pruned.length > 0) lines.push(`  ${pruned.join(', ')}: ${to}'s schema would prune them (the values would be lost), so CRD upgrade safety refuses this rollback (crd.field-removed)`);
  }
  return lines;
}
