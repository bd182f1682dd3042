/**
 * Structural schemas for CRDs whose schema is not structural. apiextensions.k8s.io/v1 refuses
 * such a CRD; many v1beta1 CRDs in old bundles have one. Each rewrite here keeps the set of
 * values the schema accepts and what the server stores:
 *
 * - a node without a type gets the type its keywords imply (`properties` → object, `items` →
 *   array, an enum of strings → string); with none, it accepts any value, as it did
 *   (`x-kubernetes-preserve-unknown-fields: true`);
 * - an `anyOf`/`oneOf` of integer and string becomes `x-kubernetes-int-or-string`, each
 *   branch's own checks (minimum, pattern, …) moving to the node, where they apply to their
 *   type only;
 * - types, descriptions and properties inside `allOf`/`anyOf`/`oneOf` move out to the node,
 *   leaving only the checks inside (when every branch agrees on the type);
 * - an array without `items` gets items of any value; `null` as a schema is an empty schema, as
 *   the API server decodes it; `id` (a name, not a check) is dropped, as is `additionalItems`
 *   next to a single `items` schema (where it has no effect); `uniqueItems` on scalar items
 *   becomes `x-kubernetes-list-type: set`;
 * - the root's `metadata` keeps only constraints on name and generateName, dropping what only
 *   restates ObjectMeta (types, descriptions);
 * - a v1beta1 CRD that kept unknown fields (`preserveUnknownFields`, its default) keeps them at
 *   every level: `x-kubernetes-preserve-unknown-fields: true` on each object without
 *   `additionalProperties`, so nothing an operator writes is pruned that was kept before.
 *
 * What cannot be rewritten without loss (a tuple of items, `patternProperties`,
 * `dependencies`, `$ref`, branches of different types, …) is reported with its field path and
 * the reason; nothing is guessed.
 */
import { BinnacleError } from '../util/errors.js';
import type { JsonObject } from './decode.js';
import { isRecord } from '../util/object.js';

export interface StructuralProblem {
  /** Field path of the offending schema node, e.g. `spec.versions[0].schema.openAPIV3Schema.properties.spec.patternProperties`. */
  field: string;
  reason: string;
}

export interface StructuralResult {
  schema: JsonObject;
  problems: StructuralProblem[];
}

export interface StructuralOptions {
  /** Field path of the schema itself, prefixed to every problem. */
  path: string;
  /** The CRD kept unknown fields (v1beta1 `preserveUnknownFields`, true by default): keep them everywhere. */
  preserveUnknownFields: boolean;
}

type Level = 'root' | 'field' | 'item';
type Junctor = 'allOf' | 'anyOf' | 'oneOf';

const JUNCTORS: readonly Junctor[] = ['allOf', 'anyOf', 'oneOf'];
const TYPES = new Set(['array', 'boolean', 'integer', 'number', 'object', 'string']);
/** Checks that apply to numbers only, and to strings only: they can sit on an int-or-string node. */
const NUMBER_CHECKS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
const STRING_CHECKS = ['pattern', 'minLength', 'maxLength'];
/** Keys that only document a node. */
const DOC_KEYS = new Set(['description', 'title', 'example', 'externalDocs']);
/** Checks on values, as opposed to structure and documentation. */
const VALUE_CHECKS = new Set([
  ...NUMBER_CHECKS,
  ...STRING_CHECKS,
  'enum',
  'format',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'uniqueItems',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'x-kubernetes-validations',
]);
const UNSUPPORTED: Readonly<Record<string, string>> = {
  $ref: 'references are not supported by the API server and are not inlined',
  definitions: 'definitions are not supported by the API server',
  patternProperties: 'checks on keys matching a pattern have no structural form',
  dependencies: 'checks between properties (dependencies) have no structural form',
};

export function toStructural(schema: JsonObject, opts: StructuralOptions): StructuralResult {
  const c = new Converter(opts.preserveUnknownFields);
  const out = c.node(schema, opts.path, 'root');
  return { schema: out, problems: c.problems };
}

class Converter {
  readonly problems: StructuralProblem[] = [];

  constructor(private readonly preserve: boolean) {}

  private problem(field: string, reason: string): void {
    this.problems.push({ field, reason });
  }

  /** `meta`: the metadata of an embedded resource, an object the server prunes as ObjectMeta. */
  node(input: unknown, path: string, level: Level, meta = false): JsonObject {
    // Go decodes `null` into an empty schema: any value.
    if (input === null) input = {};
    if (!isRecord(input)) {
      this.problem(path, `is ${Array.isArray(input) ? 'a list' : `a ${typeof input}`}, not a schema`);
      return {};
    }
    const n: JsonObject = { ...input };
    this.unsupported(n, path);
    const intOrString = this.intOrString(n, path);
    this.junctors(n, path, intOrString);
    if (n.not !== undefined) n.not = this.negation(n.not, n, `${path}.not`);
    if (n.items === null) n.items = {};
    const resource = n['x-kubernetes-embedded-resource'] === true;
    settleType(n, resource || meta, intOrString === true);
    this.children(n, path, level === 'root' ? 'root' : resource ? 'resource' : 'plain');
    this.finish(n, path, level, meta);
    return n;
  }

  /** Each junctor's branches give their structure to the node; an int-or-string's own junctor is left as it is. */
  private junctors(n: JsonObject, path: string, intOrString: boolean | Junctor): void {
    for (const j of JUNCTORS) {
      if (!Array.isArray(n[j]) || (intOrString === true && j === 'anyOf') || intOrString === j) continue;
      n[j] = (n[j] as unknown[]).map((b, i) => this.branch(b, n, `${path}.${j}[${i}]`, j));
    }
  }

  /** Converts properties, additionalProperties and items; a resource's metadata, apiVersion and kind are special. */
  private children(n: JsonObject, path: string, holder: 'root' | 'resource' | 'plain'): void {
    if (isRecord(n.properties)) {
      const props: JsonObject = {};
      for (const [k, v] of Object.entries(n.properties)) {
        const at = `${path}.properties.${k}`;
        if (k === 'metadata' && holder === 'root') props[k] = this.metadata(v, at);
        else if (k === 'metadata' && holder === 'resource') props[k] = this.node(v, at, 'field', true);
        else if ((k === 'apiVersion' || k === 'kind') && holder !== 'plain' && isRecord(v) && v.type === undefined) props[k] = { ...v, type: 'string' };
        else props[k] = this.node(v, at, 'field');
      }
      n.properties = props;
    }
    const ap = n.additionalProperties;
    if (ap !== undefined && ap !== null && !isRecord(ap) && typeof ap !== 'boolean') this.problem(`${path}.additionalProperties`, 'must be a schema or a boolean');
    if (isRecord(ap) || ap === null) n.additionalProperties = this.node(ap, `${path}.additionalProperties`, 'field');
    if (isRecord(n.items)) n.items = this.node(n.items, `${path}.items`, 'item');
  }

  /** The node-level rules that need converted children, and unknown fields kept at every level. */
  private finish(n: JsonObject, path: string, level: Level, meta: boolean): void {
    this.uniqueItems(n, path);
    if (isRecord(n.properties) && Object.keys(n.properties).length > 0 && n.additionalProperties !== undefined && n.additionalProperties !== true) {
      this.problem(`${path}.additionalProperties`, 'properties together with additionalProperties (other than true) have no structural form');
    }
    if (level === 'root' && n.additionalProperties !== undefined) this.problem(`${path}.additionalProperties`, 'is not allowed at the root of a structural schema');
    if (this.preserve && !meta && n.type === 'object' && n.additionalProperties === undefined && n['x-kubernetes-preserve-unknown-fields'] === undefined) {
      n['x-kubernetes-preserve-unknown-fields'] = true;
    }
  }

  private unsupported(n: JsonObject, path: string): void {
    delete n.id;
    if (n.additionalItems !== undefined && !Array.isArray(n.items)) delete n.additionalItems;
    for (const [k, reason] of Object.entries(UNSUPPORTED)) if (n[k] !== undefined) this.problem(`${path}.${k}`, reason);
    if (n.additionalItems !== undefined) this.problem(`${path}.additionalItems`, 'checks on items beyond a tuple have no structural form');
    if (Array.isArray(n.items)) this.problem(`${path}.items`, 'a tuple (a list of item schemas) has no structural form');
    if (n.type === 'null') this.problem(`${path}.type`, 'type null has no structural form (nullable is the structural way)');
    if (n.type !== undefined && n.type !== 'null' && (typeof n.type !== 'string' || !TYPES.has(n.type))) {
      this.problem(`${path}.type`, `${JSON.stringify(n.type)} is not a type (array, boolean, integer, number, object or string)`);
    }
  }

  /** uniqueItems on scalar items is a set; on anything else it is refused by the API server. */
  private uniqueItems(n: JsonObject, path: string): void {
    if (n.uniqueItems !== true) {
      if (n.uniqueItems === false) delete n.uniqueItems;
      return;
    }
    const item = isRecord(n.items) ? n.items.type : undefined;
    if (typeof item === 'string' && ['string', 'integer', 'number', 'boolean'].includes(item) && (n['x-kubernetes-list-type'] === undefined || n['x-kubernetes-list-type'] === 'set')) {
      delete n.uniqueItems;
      n['x-kubernetes-list-type'] = 'set';
      return;
    }
    this.problem(`${path}.uniqueItems`, 'unique items that are not scalars have no structural form');
  }

  /**
   * `anyOf`/`oneOf` of exactly an integer and a string branch: int-or-string, with each
   * branch's checks moved to the node (they apply to their own type only). Answers whether the
   * node is int-or-string, or the junctor that looked like one but could not be (already reported).
   */
  private intOrString(n: JsonObject, path: string): boolean | 'anyOf' | 'oneOf' {
    if (n['x-kubernetes-int-or-string'] === true) {
      const a = n.anyOf;
      if (Array.isArray(a) && a.length === 2 && a.every(isRecord) && a[0]?.type === 'string' && a[1]?.type === 'integer' && a.every((b) => Object.keys(b).length === 1)) n.anyOf = canonicalIntOrString();
      return true;
    }
    if (n.type !== undefined) return false;
    for (const j of ['anyOf', 'oneOf'] as const) {
      const pair = intAndStringBranches(n, j);
      if (pair !== undefined) return this.toIntOrString(n, path, j, pair);
    }
    return false;
  }

  /** Moves the int and string branches' checks to the node, or reports the junctor when a check would apply to both types. */
  private toIntOrString(n: JsonObject, path: string, j: 'anyOf' | 'oneOf', { int, str }: { int: JsonObject; str: JsonObject }): true | 'anyOf' | 'oneOf' {
    const moved: JsonObject = {};
    if (!moveChecks(n, moved, int, NUMBER_CHECKS, ['int32', 'int64']) || !moveChecks(n, moved, str, STRING_CHECKS, [])) {
      this.problem(`${path}.${j}`, 'an integer-or-string whose branches carry checks that would apply to both types has no structural form');
      return j;
    }
    if (j === 'oneOf') delete n.oneOf;
    Object.assign(n, moved);
    n.anyOf = canonicalIntOrString();
    n['x-kubernetes-int-or-string'] = true;
    return true;
  }

  /** One branch of a junctor: its structure moves to `outer`, its checks stay. */
  private branch(b: unknown, outer: JsonObject, path: string, j: Junctor): JsonObject {
    if (b === null) return {};
    if (!isRecord(b)) {
      this.problem(path, 'is not a schema');
      return {};
    }
    const copy = { ...b };
    this.unsupported(copy, path);
    const { skeleton, checks } = this.split(copy, path);
    this.merge(outer, skeleton, path, j === 'allOf');
    return checks;
  }

  /** `not`: its checks stay; structure inside `not` would be negated and cannot move out. */
  private negation(b: unknown, outer: JsonObject, path: string): JsonObject {
    if (!isRecord(b)) {
      this.problem(path, 'is not a schema');
      return {};
    }
    const { skeleton, checks } = this.split(b, path);
    if (skeleton.type !== undefined) this.problem(`${path}.type`, 'a negated type has no structural form');
    for (const k of Object.keys(isRecord(skeleton.properties) ? skeleton.properties : {})) {
      if (!isRecord(outer.properties) || outer.properties[k] === undefined) this.problem(`${path}.properties.${k}`, 'is checked inside not but not declared on the node');
    }
    return checks;
  }

  /** Structure (type, properties, items, extensions) and checks of a junctor branch, recursively. */
  private split(b: JsonObject, path: string, nested = false): { skeleton: JsonObject; checks: JsonObject } {
    const skeleton: JsonObject = {};
    const checks: JsonObject = {};
    for (const [k, v] of Object.entries(b)) {
      // A branch's own documentation has no place on the node; its fields' documentation moves with them.
      if (DOC_KEYS.has(k)) {
        if (nested) skeleton[k] = v;
        continue;
      }
      if (k === 'properties' && isRecord(v)) {
        const s = this.splitProperties(v, path);
        skeleton.properties = s.skeleton;
        checks.properties = s.checks;
      } else if (k === 'items' && isRecord(v)) {
        const s = this.split(v, `${path}.items`, true);
        skeleton.items = s.skeleton;
        checks.items = s.checks;
      } else if (JUNCTORS.includes(k as Junctor) && Array.isArray(v)) {
        // Nested junctors: their structure moves out through this branch too.
        checks[k] = v.map((x, i) => this.branch(x, skeleton, `${path}.${k}[${i}]`, k as Junctor));
      } else if (k === 'additionalProperties') {
        this.splitMapValues(v, path, skeleton);
      } else if (k === 'default' || k === 'nullable') {
        this.problem(`${path}.${k}`, `${k} inside allOf/anyOf/oneOf has no structural form`);
      } else if (k === 'type' || k.startsWith('x-kubernetes-')) {
        skeleton[k] = v;
      } else {
        checks[k] = v;
      }
    }
    return { skeleton, checks };
  }

  /** Each property of a branch split into its structure and its checks. */
  private splitProperties(props: JsonObject, path: string): { skeleton: JsonObject; checks: JsonObject } {
    const skeleton: JsonObject = {};
    const checks: JsonObject = {};
    for (const [name, sub] of Object.entries(props)) {
      const s = this.split(isRecord(sub) ? sub : {}, `${path}.properties.${name}`, true);
      skeleton[name] = s.skeleton;
      // Kept even when empty: a structural schema's junctors often name properties that way.
      checks[name] = s.checks;
    }
    return { skeleton, checks };
  }

  /** A branch's additionalProperties: its structure moves out; checks on the map values cannot. */
  private splitMapValues(v: unknown, path: string, skeleton: JsonObject): void {
    if (isRecord(v)) {
      const s = this.split(v, `${path}.additionalProperties`, true);
      skeleton.additionalProperties = s.skeleton;
      if (Object.keys(s.checks).length > 0) this.problem(`${path}.additionalProperties`, 'checks on map values inside allOf/anyOf/oneOf have no structural form');
    } else if (typeof v === 'boolean') {
      skeleton.additionalProperties = v;
    } else {
      this.problem(`${path}.additionalProperties`, 'additionalProperties inside allOf/anyOf/oneOf has no structural form');
    }
  }

  /**
   * Adds a branch's structure to the node. Under allOf every branch holds, so a type may be set;
   * under anyOf/oneOf the branches must already agree with the node (or the node be untyped
   * and every branch say the same), else the union has no single structural type.
   */
  private merge(outer: JsonObject, skeleton: JsonObject, path: string, all: boolean): void {
    for (const [k, v] of Object.entries(skeleton)) {
      if (k === 'properties' && isRecord(v)) {
        this.mergeProperties(outer, v, path);
      } else if ((k === 'items' || k === 'additionalProperties') && isRecord(v)) {
        this.mergeSubschema(outer, k, v, path);
      } else if (k === 'type') {
        this.mergeType(outer, v, path, all);
      } else if (outer[k] === undefined) {
        outer[k] = v;
      } else if (!DOC_KEYS.has(k) && JSON.stringify(outer[k]) !== JSON.stringify(v)) {
        this.problem(`${path}.${k}`, `differs from the node's ${k}; a structural schema has one`);
      }
    }
  }

  private mergeProperties(outer: JsonObject, props: JsonObject, path: string): void {
    const into = isRecord(outer.properties) ? outer.properties : (outer.properties = {});
    for (const [name, sub] of Object.entries(props)) {
      if (!isRecord(sub)) continue;
      const existing = into[name];
      if (existing === undefined || existing === null) into[name] = sub;
      else if (isRecord(existing)) this.merge(existing, sub, `${path}.properties.${name}`, true);
    }
  }

  /** items or additionalProperties: one schema, merged under allOf rules (every branch's holds). */
  private mergeSubschema(outer: JsonObject, k: 'items' | 'additionalProperties', v: JsonObject, path: string): void {
    const existing = outer[k];
    if (existing === undefined || existing === null) outer[k] = v;
    else if (isRecord(existing)) this.merge(existing, v, `${path}.${k}`, true);
    else this.problem(`${path}.${k}`, `differs from the node's ${k}; a structural schema has one`);
  }

  private mergeType(outer: JsonObject, type: unknown, path: string, all: boolean): void {
    if (outer.type === undefined && (all || this.sameTypeInEveryBranch(outer, type))) outer.type = type;
    else if (outer.type !== type) this.problem(`${path}.type`, `a branch of type ${String(type)} under a node ${outer.type === undefined ? 'whose branches differ in type' : `of type ${JSON.stringify(outer.type)}`} has no structural form`);
  }

  /** Every anyOf/oneOf branch of `outer` says `type` (checked on the branches as written). */
  private sameTypeInEveryBranch(outer: JsonObject, type: unknown): boolean {
    return (['anyOf', 'oneOf'] as const).every((j) => !Array.isArray(outer[j]) || (outer[j] as unknown[]).every((b) => isRecord(b) && b.type === type));
  }

  /** The root's metadata: name and generateName constraints only. */
  private metadata(v: unknown, path: string): JsonObject {
    if (!isRecord(v)) return { type: 'object' };
    const props = isRecord(v.properties) ? v.properties : {};
    const kept: JsonObject = {};
    for (const [k, sub] of Object.entries(props)) {
      if (k === 'name' || k === 'generateName') kept[k] = isRecord(sub) ? { ...this.node(sub, `${path}.properties.${k}`, 'field'), type: 'string' } : { type: 'string' };
      else if (hasChecks(sub)) this.problem(`${path}.properties.${k}`, 'constraints on metadata other than name and generateName are not allowed, and dropping them would lose a check');
    }
    for (const k of Object.keys(v)) {
      if (VALUE_CHECKS.has(k)) this.problem(`${path}.${k}`, 'constraints on metadata other than name and generateName are not allowed, and dropping them would lose a check');
    }
    return Object.keys(kept).length > 0 ? { type: 'object', properties: kept } : { type: 'object' };
  }
}

/** A node's type when it has none: an object by its role (embedded resource, its metadata), else inferred; an array accepts any items unless it says. */
function settleType(n: JsonObject, objectByRole: boolean, intOrString: boolean): void {
  if (n.type === undefined && objectByRole) n.type = 'object';
  if (n.type === undefined && !intOrString) inferType(n);
  if (n.type === 'array' && n.items === undefined) n.items = { 'x-kubernetes-preserve-unknown-fields': true };
}

function canonicalIntOrString(): JsonObject[] {
  return [{ type: 'integer' }, { type: 'string' }];
}

/** A junctor of exactly two schemas, one of type integer and one of type string (oneOf only when there is no anyOf). */
function intAndStringBranches(n: JsonObject, j: 'anyOf' | 'oneOf'): { int: JsonObject; str: JsonObject } | undefined {
  const branches = n[j];
  if (!Array.isArray(branches) || branches.length !== 2 || !branches.every(isRecord)) return undefined;
  const int = branches.find((b) => b.type === 'integer');
  const str = branches.find((b) => b.type === 'string');
  if (int === undefined || str === undefined) return undefined;
  if (j === 'oneOf' && n.anyOf !== undefined) return undefined;
  return { int, str };
}

/**
 * Collects a branch's checks into `moved`: only the checks of its own type (or a format that
 * says no more than the type), and none the node or the other branch already has.
 */
function moveChecks(n: JsonObject, moved: JsonObject, b: JsonObject, checks: readonly string[], droppableFormats: readonly string[]): boolean {
  return Object.entries(b).every(([k, v]) => {
    if (k === 'type' || DOC_KEYS.has(k)) return true;
    if (k === 'format' && typeof v === 'string' && droppableFormats.includes(v)) return true;
    if (!checks.includes(k) || n[k] !== undefined || moved[k] !== undefined) return false;
    moved[k] = v;
    return true;
  });
}

/** Infers a missing type from the keywords; with none, the node accepts any value. */
function inferType(n: JsonObject): void {
  if (n.properties !== undefined || n.additionalProperties !== undefined || n.required !== undefined || n.minProperties !== undefined || n.maxProperties !== undefined) n.type = 'object';
  else if (n.items !== undefined || n.minItems !== undefined || n.maxItems !== undefined) n.type = 'array';
  else if (Array.isArray(n.enum) && n.enum.length > 0 && n.enum.every((e) => typeof e === 'string')) n.type = 'string';
  else if (Array.isArray(n.enum) && n.enum.length > 0 && n.enum.every((e) => typeof e === 'boolean')) n.type = 'boolean';
  else if (Array.isArray(n.enum) && n.enum.length > 0 && n.enum.every((e) => Number.isInteger(e))) n.type = 'integer';
  else if (n['x-kubernetes-preserve-unknown-fields'] !== true) n['x-kubernetes-preserve-unknown-fields'] = true;
}

/**
 * Whether a schema below metadata checks anything ObjectMeta does not: the server validates
 * ObjectMeta itself, so its types, formats (timestamps, int64) and required keys (of owner
 * references) only restate it.
 */
function hasChecks(v: unknown): boolean {
  if (!isRecord(v)) return false;
  for (const [k, sub] of Object.entries(v)) {
    if (VALUE_CHECKS.has(k) && k !== 'format' && k !== 'required') return true;
    if (k === 'properties' && isRecord(sub) && Object.values(sub).some(hasChecks)) return true;
    if ((k === 'items' || k === 'additionalProperties') && hasChecks(sub)) return true;
  }
  return false;
}

/** A CRD whose schema is not structural and cannot be made so without loss. */
export class CrdSchemaError extends BinnacleError {
  readonly crd: string;
  readonly problems: readonly StructuralProblem[];
  constructor(crd: string, problems: readonly StructuralProblem[]) {
    super(
      'input',
      'CRD_NOT_STRUCTURAL',
      `CustomResourceDefinition ${crd}: its schema is not structural, as apiextensions.k8s.io/v1 requires, and cannot be made so without loss:\n${problems.map((p) => `  ${p.field}: ${p.reason}`).join('\n')}`,
    );
    this.crd = crd;
    this.problems = problems;
  }
}
