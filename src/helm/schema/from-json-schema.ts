/**
 * values.schema.json (JSON Schema draft 4, 6, 7, 2019-09 or 2020-12, as Helm charts write it)
 * → Shape. The guiding rule: the result must accept every value the chart's schema accepts,
 * so nothing a user may set is rejected or pruned; constraints that have no structural
 * equivalent are dropped with a warning rather than approximated more strictly.
 *
 * - `$ref` to the same document is inlined; a reference back into a `$ref` being expanded (a
 *   recursive type) is cut there and that node keeps any value; references to other files or
 *   URLs are refused with a warning, and that node keeps any value.
 * - `type` lists: `null` becomes `nullable`, the rest is decided in `emit`.
 * - `allOf` intersects, `anyOf` and `oneOf` unite (oneOf's "exactly one" is not enforced).
 * - `const` becomes a one-value `enum`; draft 6+ numeric `exclusiveMinimum/Maximum` become
 *   OpenAPI's `minimum` + boolean `exclusiveMinimum`.
 * - `patternProperties` opens the object; `if/then/else`, `not`, `dependencies`,
 *   `propertyNames`, `contains`, `uniqueItems` and the like are dropped with a warning;
 *   annotations Kubernetes has no field for (`$schema`, `$id`, `definitions`, `examples`,
 *   `$comment`, editor hints such as Bitnami's `form`) are dropped silently.
 */
import { patternProblem } from './formats.js';
import { additionalPath, childPath, itemsPath } from './paths.js';
import { resolveRef } from './refs.js';
import { anyShape, intersect, neverShape, union, type Bound, type Shape } from './shape.js';
import { SCHEMA_TYPES, type SchemaType } from './types.js';
import type { Warn } from './emit.js';
import { isRecord } from '../../util/object.js';

export interface ReadOptions {
  warn: Warn;
  /** Copy `default`s into the shape. */
  keepDefaults: boolean;
}

const DROPPED_WITH_WARNING = [
  'if', 'then', 'else', 'not', 'dependencies', 'dependentRequired', 'dependentSchemas', 'propertyNames',
  'contains', 'minContains', 'maxContains', 'unevaluatedProperties', 'unevaluatedItems',
] as const;

export function shapeFromJsonSchema(root: unknown, opts: ReadOptions): Shape {
  return new Reader(root, opts).read(root, '', []);
}

function valueType(v: unknown): SchemaType | 'null' | undefined {
  if (v === null) return 'null';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (Array.isArray(v)) return 'array';
  if (isRecord(v)) return 'object';
  return undefined;
}

function nonNegativeInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

class Reader {
  constructor(
    private readonly root: unknown,
    private readonly opts: ReadOptions,
  ) {}

  read(node: unknown, path: string, refs: readonly string[]): Shape {
    if (node === true) return anyShape();
    if (node === false) return neverShape();
    if (!isRecord(node)) {
      this.opts.warn('schema.invalid', `a schema must be an object or a boolean, found ${JSON.stringify(node)}; any value is kept`, path);
      return anyShape();
    }
    for (const kw of ['$dynamicRef', '$recursiveRef'] as const) {
      if (typeof node[kw] === 'string') {
        this.opts.warn('schema.ref', `${kw} is not supported; any value is kept here`, path);
        return anyShape(typeof node.description === 'string' ? node.description : undefined);
      }
    }
    if (typeof node.$ref === 'string') return this.readRef(node, node.$ref, path, refs);

    let shape = this.own(node, path, refs);
    if (Array.isArray(node.allOf)) shape = intersect([shape, ...node.allOf.map((b) => this.read(b, path, refs))]);
    for (const kw of ['anyOf', 'oneOf'] as const) {
      const branches = node[kw];
      if (Array.isArray(branches) && branches.length > 0) shape = intersect([shape, union(branches.map((b) => this.read(b, path, refs)))]);
    }
    return shape;
  }

  private readRef(node: Record<string, unknown>, ref: string, path: string, refs: readonly string[]): Shape {
    const description = typeof node.description === 'string' ? node.description : undefined;
    const target = resolveRef(this.root, ref);
    let shape: Shape;
    if (!target.ok) {
      const why = {
        remote: 'refers to another document; Binnacle does not fetch schemas',
        'not-found': 'points at nothing in this document',
        anchor: 'uses an anchor, which is not supported',
      }[target.reason];
      this.opts.warn(target.reason === 'remote' ? 'schema.remote-ref' : 'schema.unresolved-ref', `$ref ${JSON.stringify(ref)} ${why}; any value is kept here`, path);
      shape = anyShape(description);
    } else if (refs.includes(target.key)) {
      this.opts.warn('schema.ref-cycle', `$ref ${JSON.stringify(ref)} is recursive; the recursion is cut here and any value is kept (x-kubernetes-preserve-unknown-fields)`, path);
      shape = anyShape(description ?? (isRecord(target.node) && typeof target.node.description === 'string' ? target.node.description : undefined));
    } else {
      shape = this.read(target.node, path, [...refs, target.key]);
    }
    const siblings = Object.fromEntries(Object.entries(node).filter(([k]) => k !== '$ref'));
    if (Object.keys(siblings).length === 0) return shape;
    // Keywords beside $ref (which draft 2019+ applies, and earlier drafts ignore) narrow it;
    // the sibling's description wins over the referenced one.
    return intersect([this.read(siblings, path, refs), shape]);
  }

  /** The node's own keywords, without its combinators. */
  private own(node: Record<string, unknown>, path: string, refs: readonly string[]): Shape {
    const shape = this.types(node, path);
    if (node.nullable === true) shape.nullable = true; // OpenAPI-style schemas
    if (typeof node.title === 'string') shape.title = node.title;
    if (typeof node.description === 'string') shape.description = node.description;
    if (this.opts.keepDefaults && Object.hasOwn(node, 'default')) shape.default = { value: node.default };
    if (Object.hasOwn(node, 'const')) shape.enum = [node.const];
    else if (Array.isArray(node.enum)) shape.enum = [...(node.enum as unknown[])];
    if (typeof node.format === 'string') shape.format = node.format;

    this.numberFacets(node, shape);
    const minLength = nonNegativeInt(node.minLength);
    if (minLength !== undefined) shape.minLength = minLength;
    const maxLength = nonNegativeInt(node.maxLength);
    if (maxLength !== undefined) shape.maxLength = maxLength;
    if (typeof node.pattern === 'string') {
      const problem = patternProblem(node.pattern);
      if (problem === undefined) shape.pattern = node.pattern;
      else this.opts.warn('schema.pattern', `pattern ${JSON.stringify(node.pattern)} dropped: ${problem}`, path);
    }

    this.arrayFacets(node, shape, path, refs);
    this.objectFacets(node, shape, path, refs);

    for (const kw of DROPPED_WITH_WARNING) {
      if (Object.hasOwn(node, kw)) this.opts.warn('schema.dropped-keyword', `"${kw}" has no structural equivalent; it is not enforced`, path);
    }
    if (node.uniqueItems === true) this.opts.warn('schema.dropped-keyword', '"uniqueItems" is forbidden in CRDs; it is not enforced', path);
    return shape;
  }

  private types(node: Record<string, unknown>, path: string): Shape {
    const raw = node.type;
    const names = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : undefined;
    if (names === undefined) {
      // No type: the enum (or const), when there is one, says which types are possible.
      const values = Object.hasOwn(node, 'const') ? [node.const] : Array.isArray(node.enum) ? (node.enum as unknown[]) : undefined;
      if (values === undefined || values.length === 0) return anyShape();
      const kinds = values.map(valueType);
      if (kinds.includes(undefined)) return anyShape();
      const types = new Set(kinds.filter((k): k is SchemaType => k !== 'null' && k !== undefined));
      return { types, nullable: kinds.includes('null') };
    }
    const types = new Set<SchemaType>();
    let nullable = false;
    for (const name of names) {
      if (name === 'null') nullable = true;
      else if (typeof name === 'string' && (SCHEMA_TYPES as readonly string[]).includes(name)) types.add(name as SchemaType);
      else {
        if (name !== 'any') this.opts.warn('schema.type', `unknown type ${JSON.stringify(name)}; any value is kept`, path);
        return anyShape();
      }
    }
    return { types, nullable };
  }

  private numberFacets(node: Record<string, unknown>, shape: Shape): void {
    const bound = (plain: unknown, exclusive: unknown, stricter: (a: number, b: number) => boolean): Bound | undefined => {
      const p = typeof plain === 'number' ? plain : undefined;
      if (typeof exclusive === 'number') {
        // draft 6+: the exclusive bound is a number of its own
        if (p !== undefined && !stricter(exclusive, p) && exclusive !== p) return { value: p, exclusive: false };
        return { value: exclusive, exclusive: true };
      }
      return p === undefined ? undefined : { value: p, exclusive: exclusive === true };
    };
    const min = bound(node.minimum, node.exclusiveMinimum, (a, b) => a > b);
    if (min !== undefined) shape.minimum = min;
    const max = bound(node.maximum, node.exclusiveMaximum, (a, b) => a < b);
    if (max !== undefined) shape.maximum = max;
    if (typeof node.multipleOf === 'number' && node.multipleOf > 0) shape.multipleOf = node.multipleOf;
  }

  private arrayFacets(node: Record<string, unknown>, shape: Shape, path: string, refs: readonly string[]): void {
    const ipath = itemsPath(path);
    const tuple = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : undefined;
    if (tuple !== undefined) {
      // Tuples: every position's schema, and what may follow them, in one items schema.
      const rest = Array.isArray(node.prefixItems) ? node.items : node.additionalItems;
      const members = tuple.map((t) => this.read(t, ipath, refs));
      members.push(rest === undefined || rest === true ? anyShape() : this.read(rest, ipath, refs));
      this.opts.warn('schema.tuple', 'a tuple (items as a list) becomes one items schema accepting every position', path);
      shape.items = union(members);
    } else if (node.items !== undefined) {
      shape.items = this.read(node.items, ipath, refs);
    }
    const minItems = nonNegativeInt(node.minItems);
    if (minItems !== undefined) shape.minItems = minItems;
    const maxItems = nonNegativeInt(node.maxItems);
    if (maxItems !== undefined) shape.maxItems = maxItems;
  }

  private objectFacets(node: Record<string, unknown>, shape: Shape, path: string, refs: readonly string[]): void {
    if (isRecord(node.properties)) {
      const props = new Map<string, Shape>();
      for (const [key, child] of Object.entries(node.properties)) props.set(key, this.read(child, childPath(path, key), refs));
      shape.properties = props;
    }
    const ap = node.additionalProperties;
    if (ap === false) shape.additional = 'closed';
    else if (ap !== undefined && ap !== true) shape.additional = this.read(ap, additionalPath(path), refs);
    if (isRecord(node.patternProperties) && Object.keys(node.patternProperties).length > 0) {
      this.opts.warn('schema.pattern-properties', 'patternProperties cannot be expressed in a structural schema; keys outside properties are preserved without validation', path);
      shape.additional = 'open';
    }
    if (Array.isArray(node.required)) {
      const required = node.required.filter((r): r is string => typeof r === 'string');
      if (required.length > 0) shape.required = required;
    }
    const minProperties = nonNegativeInt(node.minProperties);
    if (minProperties !== undefined) shape.minProperties = minProperties;
    const maxProperties = nonNegativeInt(node.maxProperties);
    if (maxProperties !== undefined) shape.maxProperties = maxProperties;
  }
}
