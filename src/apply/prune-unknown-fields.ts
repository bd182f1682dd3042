/**
 * Drops the fields of an object that its kind's OpenAPI schema does not declare, as OLM's
 * create/update does (the API server drops them there with a warning), where server-side apply
 * would refuse the whole object. A pure function: object + schema → pruned copy + the paths of
 * what was dropped.
 *
 * It follows the schema the way the API server's structural pruning does: `$ref` and `allOf`
 * are followed and merged; `x-kubernetes-preserve-unknown-fields`, `additionalProperties`
 * (a schema or `true`) and schemas that leave an object open (no properties at all, e.g.
 * RawExtension, FieldsV1, a CRD's `type: object`) keep what they hold; int-or-string and
 * scalar values are leaves; embedded resources keep `apiVersion` and `kind` and prune their
 * `metadata` as ObjectMeta. Values of the wrong type are left for the server to reject.
 *
 * A `null` in a field whose schema is not `nullable` is left out, silently, as the API server
 * itself leaves it out when it creates or updates the object (Helm's and OLM's way to apply);
 * server-side apply would refuse it in a custom resource (`must be of type string: "null"`),
 * and for built-in kinds null and absent mean the same.
 *
 * A key that matches a declared field but for its case (`apigroups` for `apiGroups`) is renamed
 * rather than dropped, when the object does not have that field already: OLM decodes what a CSV
 * embeds (permissions, deployments) with Go's JSON decoder, which matches names that way.
 */
import type { KindSchema, JsonSchema } from '../kube/openapi.js';
import type { KubeObject } from '../kube/types.js';
import { isRecord } from '../util/object.js';

export interface PruneOptions {
  /**
   * ObjectMeta's schema: used for `metadata` of the root and of embedded resources when the
   * kind's schema leaves it open (a CRD's schema declares `metadata: {type: object}`).
   */
  objectMeta?: KindSchema | undefined;
}

export interface PruneResult {
  object: KubeObject;
  /** Paths of the dropped fields as the API server writes them, e.g. `spec.template.spec.containers[name="manager"].env[name="A"].resources`. */
  dropped: string[];
  /** Keys renamed to the declared field they match but for case: `rules[0].apigroups` → `apiGroups`. */
  renamed: { path: string; to: string }[];
}

/** One schema node with `$ref`s followed and `allOf` members merged. */
interface Flat {
  properties: Map<string, Ref>;
  /** A schema for every other key, `true` to keep any, `false` to allow none, undefined when unsaid. */
  additional: Ref | boolean | undefined;
  items: Ref | undefined;
  preserve: boolean;
  embedded: boolean;
  intOrString: boolean;
  nullable: boolean;
  listMapKeys: string[];
}

/** A schema node with the resolver of the document it came from. */
interface Ref {
  node: unknown;
  resolve: (ref: string) => JsonSchema | undefined;
}

/** Deeper than any real schema nests `$ref`/`allOf` chains: guards against cyclic references. */
const MAX_REF_DEPTH = 32;

export function pruneUnknownFields(obj: KubeObject, schema: KindSchema, opts: PruneOptions = {}): PruneResult {
  const walker = new Walker(opts.objectMeta);
  const pruned = walker.prune(obj, { node: schema.root, resolve: schema.resolve }, '', true);
  return { object: pruned as KubeObject, dropped: walker.dropped, renamed: walker.renamed };
}

class Walker {
  readonly dropped: string[] = [];
  readonly renamed: { path: string; to: string }[] = [];

  constructor(private readonly objectMeta: KindSchema | undefined) {}

  prune(value: unknown, ref: Ref, path: string, resourceRoot: boolean): unknown {
    const flat = flatten(ref);
    if (flat === undefined || flat.intOrString) return value;
    if (Array.isArray(value)) return this.pruneItems(value, flat, path);
    if (!isRecord(value)) return value;
    const structured = flat.properties.size > 0 || flat.additional !== undefined || flat.embedded;
    if (!structured) return value;
    return this.pruneFields(value, flat, path, resourceRoot || flat.embedded);
  }

  private pruneItems(value: unknown[], flat: Flat, path: string): unknown[] {
    const items = flat.items;
    if (items === undefined) return value;
    return value.map((v, i) => this.prune(v, items, `${path}[${itemKey(v, i, flat.listMapKeys)}]`, false));
  }

  /** An object's fields as the schema declares them; a resource's metadata, apiVersion and kind are its own. */
  private pruneFields(value: Record<string, unknown>, flat: Flat, path: string, resource: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const at = join(path, key);
      const declared = flat.properties.get(key);
      if (nullLeftOut(v, declared, flat)) continue;
      if (resource && key === 'metadata') out[key] = this.metadata(v, declared, at);
      else if (declared !== undefined) out[key] = this.prune(v, declared, at, false);
      else if (resource && (key === 'apiVersion' || key === 'kind')) out[key] = v;
      else if (typeof flat.additional === 'object') out[key] = this.prune(v, flat.additional, at, false);
      else if (flat.additional === true || flat.preserve) out[key] = v;
      else this.undeclared(out, key, v, flat, value, path);
    }
    return out;
  }

  /** A field the schema does not declare: dropped, unless it names a declared field but for case (then moved to it). */
  private undeclared(out: Record<string, unknown>, key: string, v: unknown, flat: Flat, value: Record<string, unknown>, path: string): void {
    const at = join(path, key);
    const to = caseMatch(key, flat, value);
    if (to === undefined || out[to] !== undefined) return void this.dropped.push(at);
    const target = flat.properties.get(to);
    if (target !== undefined) out[to] = this.prune(v, target, join(path, to), false);
    this.renamed.push({ path: at, to });
  }

  /** A resource's metadata: its declared schema when that says something, else ObjectMeta's. */
  private metadata(value: unknown, declared: Ref | undefined, path: string): unknown {
    const flat = declared === undefined ? undefined : flatten(declared);
    if (declared !== undefined && flat !== undefined && flat.properties.size > 0) return this.prune(value, declared, path, false);
    if (this.objectMeta === undefined) return value;
    return this.prune(value, { node: this.objectMeta.root, resolve: this.objectMeta.resolve }, path, false);
  }
}

function flatten(ref: Ref): Flat | undefined {
  const flat: Flat = { properties: new Map(), additional: undefined, items: undefined, preserve: false, embedded: false, intOrString: false, nullable: false, listMapKeys: [] };
  let known = false;
  const visit = (node: unknown, resolve: Ref['resolve'], depth: number): void => {
    if (!isRecord(node) || depth > MAX_REF_DEPTH) return;
    known = true;
    if (typeof node.$ref === 'string') visit(resolve(node.$ref), resolve, depth + 1);
    if (Array.isArray(node.allOf)) for (const member of node.allOf) visit(member, resolve, depth + 1);
    addNode(flat, node, resolve);
  };
  visit(ref.node, ref.resolve, 0);
  return known ? flat : undefined;
}

/** One schema node's own structure and flags, after what its `$ref` and `allOf` gave (those come first). */
function addNode(flat: Flat, node: Record<string, unknown>, resolve: Ref['resolve']): void {
  if (isRecord(node.properties)) {
    for (const [k, v] of Object.entries(node.properties)) if (!flat.properties.has(k)) flat.properties.set(k, { node: v, resolve });
  }
  const ap = node.additionalProperties;
  if (isRecord(ap)) flat.additional = { node: ap, resolve };
  else if (typeof ap === 'boolean' && flat.additional === undefined) flat.additional = ap;
  if (node.items !== undefined && flat.items === undefined) flat.items = { node: node.items, resolve };
  if (node['x-kubernetes-preserve-unknown-fields'] === true) flat.preserve = true;
  if (node['x-kubernetes-embedded-resource'] === true) flat.embedded = true;
  if (node['x-kubernetes-int-or-string'] === true || node.format === 'int-or-string') flat.intOrString = true;
  if (node.nullable === true) flat.nullable = true;
  const keys = node['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys) && flat.listMapKeys.length === 0) flat.listMapKeys = keys.filter((k): k is string => typeof k === 'string');
}

/** A null the API server leaves out: its field (declared, or under an additionalProperties schema) is not `nullable`. */
function nullLeftOut(value: unknown, declared: Ref | undefined, parent: Flat): boolean {
  if (value !== null) return false;
  const ref = declared ?? (typeof parent.additional === 'object' ? parent.additional : undefined);
  const flat = ref === undefined ? undefined : flatten(ref);
  return flat !== undefined && !flat.nullable;
}

/** The declared field `key` names but for case, when `value` does not have that field itself. */
function caseMatch(key: string, flat: Flat, value: Record<string, unknown>): string | undefined {
  const lower = key.toLowerCase();
  for (const name of flat.properties.keys()) if (name.toLowerCase() === lower && name !== key && value[name] === undefined) return name;
  return undefined;
}

/** `name="manager"` for map-like lists whose keys the item has (as the API server writes it), else the index. */
function itemKey(item: unknown, index: number, keys: readonly string[]): string {
  if (keys.length === 0 || !isRecord(item)) return String(index);
  const parts: string[] = [];
  for (const k of keys) {
    const v = item[k];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') parts.push(`${k}=${JSON.stringify(v)}`);
    else if (v !== undefined) return String(index);
  }
  return parts.length === 0 ? String(index) : parts.join(',');
}

function join(path: string, key: string): string {
  if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

