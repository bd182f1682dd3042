/**
 * The intermediate form both readers (values.schema.json, values.yaml) produce and `emit`
 * turns into a structural schema: which JSON types a value may have, with the facets that
 * apply to each. Unlike a structural schema it can say "string or object", so `anyOf`,
 * `oneOf`, `allOf` and arrays of differing examples combine here first (`union`,
 * `intersect`), and Kubernetes' rules are applied once, at the end.
 *
 * `union` must accept every value either side accepts (lossless widening); `intersect` may
 * keep fewer constraints than both sides together, never more.
 */
import { isDeepStrictEqual } from 'node:util';
import type { SchemaType } from './types.js';

export interface Bound {
  value: number;
  exclusive: boolean;
}

export interface Shape {
  /** Allowed types; undefined allows every type; an empty set allows nothing. */
  types?: Set<SchemaType>;
  /** Whether `null` is allowed. */
  nullable: boolean;
  title?: string;
  description?: string;
  /** A default to copy into the schema (only when the caller keeps defaults). */
  default?: { value: unknown };
  enum?: unknown[];
  format?: string;
  minimum?: Bound;
  maximum?: Bound;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: Shape;
  minItems?: number;
  maxItems?: number;
  properties?: Map<string, Shape>;
  /** Keys not in `properties`: any value (`open`, the default), none (`closed`), or a schema. */
  additional?: 'open' | 'closed' | Shape;
  required?: string[];
  minProperties?: number;
  maxProperties?: number;
}

/** Any value at all, null included. */
export function anyShape(description?: string): Shape {
  return description === undefined ? { nullable: true } : { nullable: true, description };
}

/** No value at all (a `false` schema, or contradicting `allOf` branches). */
export function neverShape(): Shape {
  return { types: new Set(), nullable: false };
}

export function typedShape(...types: SchemaType[]): Shape {
  return { types: new Set(types), nullable: false };
}

export function isNever(s: Shape): boolean {
  return s.types !== undefined && s.types.size === 0 && !s.nullable;
}

/** True when the shape constrains nothing (annotations aside). */
export function isAny(s: Shape): boolean {
  return (
    s.types === undefined &&
    s.nullable &&
    s.enum === undefined &&
    s.properties === undefined &&
    s.items === undefined &&
    (s.additional === undefined || s.additional === 'open')
  );
}

type Family = 'object' | 'array' | 'string' | 'number';

function allows(s: Shape, family: Family): boolean {
  if (s.types === undefined) return true;
  if (family === 'number') return s.types.has('integer') || s.types.has('number');
  return s.types.has(family);
}

/** The schema that applies to `key` of an object of this shape. */
export function propertyOf(s: Shape, key: string): Shape {
  const p = s.properties?.get(key);
  if (p !== undefined) return p;
  const a = s.additional;
  if (a === undefined || a === 'open') return anyShape();
  if (a === 'closed') return neverShape();
  return a;
}

function same<T>(a: T | undefined, b: T | undefined): T | undefined {
  return a !== undefined && b !== undefined && isDeepStrictEqual(a, b) ? a : undefined;
}

function uniqueValues(values: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const v of values) if (!out.some((o) => isDeepStrictEqual(o, v))) out.push(v);
  return out;
}

/**
 * How keys present on only one side of a union are treated: `exact` (JSON Schema `anyOf`)
 * lets the other side's openness decide; `examples` (array elements of values.yaml) takes the
 * side that has the key, since the examples describe one list.
 */
export type UnionMode = 'exact' | 'examples';

/** A shape accepting every value any of `shapes` accepts. */
export function union(shapes: readonly Shape[], mode: UnionMode = 'exact'): Shape {
  const live = shapes.filter((s) => !isNever(s));
  const [first, ...rest] = live;
  if (first === undefined) return neverShape();
  return rest.reduce((acc, s) => union2(acc, s, mode), first);
}

function union2(a: Shape, b: Shape, mode: UnionMode): Shape {
  const out: Shape = { nullable: a.nullable || b.nullable };
  if (a.types !== undefined && b.types !== undefined) out.types = new Set([...a.types, ...b.types]);
  assignDefined(out, 'title', a.title ?? b.title);
  assignDefined(out, 'description', a.description ?? b.description);
  assignDefined(out, 'default', same(a.default, b.default));
  if (a.enum !== undefined && b.enum !== undefined) out.enum = uniqueValues([...a.enum, ...b.enum]);

  unionFacets(out, a, b, 'string', ['format', 'minLength', 'maxLength', 'pattern']);
  unionFacets(out, a, b, 'number', ['minimum', 'maximum', 'multipleOf']);
  unionFacets(out, a, b, 'array', ['minItems', 'maxItems']);
  unionFacets(out, a, b, 'object', ['minProperties', 'maxProperties']);

  unionItems(out, a, b, mode);
  const objA = allows(a, 'object');
  const objB = allows(b, 'object');
  if (objA && objB) unionObjects(out, a, b, mode);
  else if (objA) copyObjectFacet(out, a);
  else if (objB) copyObjectFacet(out, b);
  return out;
}

/** Items of both sides when both accept arrays, else the items of the side that does. */
function unionItems(out: Shape, a: Shape, b: Shape, mode: UnionMode): void {
  const arrA = allows(a, 'array');
  const arrB = allows(b, 'array');
  if (arrA && arrB) {
    if (a.items !== undefined || b.items !== undefined) out.items = union([a.items ?? anyShape(), b.items ?? anyShape()], mode);
  } else if (arrA && a.items !== undefined) out.items = a.items;
  else if (arrB && b.items !== undefined) out.items = b.items;
}

type FacetKey = 'format' | 'minLength' | 'maxLength' | 'pattern' | 'minimum' | 'maximum' | 'multipleOf' | 'minItems' | 'maxItems' | 'minProperties' | 'maxProperties';

function unionFacets(out: Shape, a: Shape, b: Shape, family: Family, keys: readonly FacetKey[]): void {
  const inA = allows(a, family);
  const inB = allows(b, family);
  for (const k of keys) {
    const v = inA && inB ? same(a[k], b[k]) : inA ? a[k] : inB ? b[k] : undefined;
    if (v !== undefined) (out as Record<FacetKey, unknown>)[k] = v;
  }
}

function copyObjectFacet(out: Shape, s: Shape): void {
  if (s.properties !== undefined) out.properties = new Map(s.properties);
  if (s.additional !== undefined) out.additional = s.additional;
  if (s.required !== undefined) out.required = [...s.required];
}

function unionObjects(out: Shape, a: Shape, b: Shape, mode: UnionMode): void {
  if (a.properties !== undefined || b.properties !== undefined) out.properties = unionProperties(a, b, mode);
  out.additional = unionAdditional(a.additional ?? 'open', b.additional ?? 'open', mode);
  if (a.required !== undefined && b.required !== undefined) {
    const req = a.required.filter((r) => b.required?.includes(r));
    if (req.length > 0) out.required = req;
  }
}

/** Each property either side names; a key on one side only is that side's in `examples` mode. */
function unionProperties(a: Shape, b: Shape, mode: UnionMode): Map<string, Shape> {
  const keys = new Set([...(a.properties?.keys() ?? []), ...(b.properties?.keys() ?? [])]);
  const props = new Map<string, Shape>();
  for (const k of keys) {
    const pa = a.properties?.get(k);
    const pb = b.properties?.get(k);
    if (mode === 'examples' && (pa === undefined || pb === undefined)) props.set(k, pa ?? pb ?? anyShape());
    else props.set(k, union([pa ?? propertyOf(a, k), pb ?? propertyOf(b, k)], mode));
  }
  return props;
}

function unionAdditional(a: 'open' | 'closed' | Shape, b: 'open' | 'closed' | Shape, mode: UnionMode): 'open' | 'closed' | Shape {
  if (a === 'open' || b === 'open') return 'open';
  if (a === 'closed') return b;
  if (b === 'closed') return a;
  return union([a, b], mode);
}

/** A shape accepting what all of `shapes` accept, or more (never less). */
export function intersect(shapes: readonly Shape[]): Shape {
  const [first, ...rest] = shapes;
  if (first === undefined) return anyShape();
  return rest.reduce(intersect2, first);
}

function intersectTypes(a: Set<SchemaType> | undefined, b: Set<SchemaType> | undefined): Set<SchemaType> | undefined {
  if (a === undefined) return b === undefined ? undefined : new Set(b);
  if (b === undefined) return new Set(a);
  const out = new Set<SchemaType>();
  for (const t of a) {
    if (b.has(t)) out.add(t);
    else if (t === 'integer' && b.has('number')) out.add('integer');
    else if (t === 'number' && b.has('integer')) out.add('integer');
  }
  return out;
}

function stricterMin(a: Bound | undefined, b: Bound | undefined): Bound | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  if (a.value !== b.value) return a.value > b.value ? a : b;
  return { value: a.value, exclusive: a.exclusive || b.exclusive };
}

function stricterMax(a: Bound | undefined, b: Bound | undefined): Bound | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  if (a.value !== b.value) return a.value < b.value ? a : b;
  return { value: a.value, exclusive: a.exclusive || b.exclusive };
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? (a ?? b) : Math.max(a, b);
}

function minOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? (a ?? b) : Math.min(a, b);
}

function assignDefined<K extends keyof Shape>(out: Shape, key: K, value: Shape[K] | undefined): void {
  if (value !== undefined) out[key] = value;
}

function intersect2(a: Shape, b: Shape): Shape {
  const out: Shape = { nullable: a.nullable && b.nullable };
  assignDefined(out, 'types', intersectTypes(a.types, b.types));
  intersectScalars(out, a, b);
  intersectCollections(out, a, b);
  return out;
}

function intersectScalars(out: Shape, a: Shape, b: Shape): void {
  assignDefined(out, 'title', a.title ?? b.title);
  assignDefined(out, 'description', a.description ?? b.description);
  assignDefined(out, 'default', a.default ?? b.default);
  if (a.enum !== undefined && b.enum !== undefined) out.enum = a.enum.filter((v) => b.enum?.some((w) => isDeepStrictEqual(v, w)));
  else assignDefined(out, 'enum', a.enum ?? b.enum);
  // Where both sides set a pattern, format or multipleOf, one is kept: fewer constraints, never more.
  assignDefined(out, 'format', a.format ?? b.format);
  assignDefined(out, 'pattern', a.pattern ?? b.pattern);
  assignDefined(out, 'multipleOf', a.multipleOf ?? b.multipleOf);
  assignDefined(out, 'minimum', stricterMin(a.minimum, b.minimum));
  assignDefined(out, 'maximum', stricterMax(a.maximum, b.maximum));
  assignDefined(out, 'minLength', maxOf(a.minLength, b.minLength));
  assignDefined(out, 'maxLength', minOf(a.maxLength, b.maxLength));
  assignDefined(out, 'minItems', maxOf(a.minItems, b.minItems));
  assignDefined(out, 'maxItems', minOf(a.maxItems, b.maxItems));
  assignDefined(out, 'minProperties', maxOf(a.minProperties, b.minProperties));
  assignDefined(out, 'maxProperties', minOf(a.maxProperties, b.maxProperties));
}

function intersectCollections(out: Shape, a: Shape, b: Shape): void {
  if (a.items !== undefined && b.items !== undefined) out.items = intersect([a.items, b.items]);
  else assignDefined(out, 'items', a.items ?? b.items);

  if (a.properties !== undefined || b.properties !== undefined) {
    const keys = new Set([...(a.properties?.keys() ?? []), ...(b.properties?.keys() ?? [])]);
    const props = new Map<string, Shape>();
    for (const k of keys) props.set(k, intersect([propertyOf(a, k), propertyOf(b, k)]));
    out.properties = props;
  }
  const additional = intersectAdditional(a.additional ?? 'open', b.additional ?? 'open');
  if (additional !== 'open') out.additional = additional;
  if (a.required !== undefined || b.required !== undefined) out.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])];
}

function intersectAdditional(a: 'open' | 'closed' | Shape, b: 'open' | 'closed' | Shape): 'open' | 'closed' | Shape {
  if (a === 'open') return b;
  if (b === 'open') return a;
  if (a === 'closed' || b === 'closed') return 'closed';
  return intersect([a, b]);
}
