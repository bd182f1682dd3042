/**
 * A validator for the structural subset, answering one question: would the API server keep
 * this value exactly as given? It reports what the API server would reject (types, enum,
 * required, bounds, pattern, common formats) and what it would silently drop: fields an
 * object's schema does not declare (pruning) and nulls in fields that are not `nullable`.
 * Value validations under `allOf`/`anyOf`/`oneOf`/`not` are honoured too.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Problem } from '../../util/errors.js';
import { formatAccepts } from './formats.js';
import { childPath, indexPath, showPath } from './paths.js';
import { INT_OR_STRING, PRESERVE_UNKNOWN } from './types.js';
import { isRecord } from '../../util/object.js';

export type ViolationRule =
  | 'type' | 'null' | 'enum' | 'required' | 'pruned' | 'pattern' | 'format'
  | 'minimum' | 'maximum' | 'multipleOf' | 'minLength' | 'maxLength' | 'minItems' | 'maxItems'
  | 'minProperties' | 'maxProperties' | 'anyOf' | 'oneOf' | 'not';

export interface Violation {
  rule: ViolationRule;
  /** Values path of the offending value (for `pruned` and `required`, of the object). */
  path: string;
  message: string;
  /** The schema node the rule belongs to. */
  node: Record<string, unknown>;
  value: unknown;
  /** The key concerned, for `pruned` and `required`. */
  key?: string;
}

type Position = 'root' | 'field' | 'item';

function show(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Whether `value` is of the JSON Schema `type` (an unknown type matches anything). */
export function typeMatches(type: unknown, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    default:
      return true;
  }
}

/** Everything the API server would reject or drop in `value` under `schema`. */
export function valueViolations(schema: unknown, value: unknown, path = ''): Violation[] {
  const out: Violation[] = [];
  check(schema, value, path, 'root', out);
  return out;
}

/** The same, as Problems (`value.<rule>`), for reports and tests. */
export function validateValue(schema: unknown, value: unknown, where: { file?: string; path?: string } = {}): Problem[] {
  return valueViolations(schema, value, where.path ?? '').map((v) => ({
    severity: 'error',
    rule: `value.${v.rule}`,
    message: v.message,
    field: showPath(v.path),
    ...(where.file === undefined ? {} : { file: where.file }),
  }));
}

/** `nested`: inside allOf/anyOf/oneOf/not, where nothing is pruned and there are no types. */
function check(node: unknown, value: unknown, path: string, pos: Position, out: Violation[], nested = false): void {
  if (!isRecord(node)) return;
  const add = (rule: ViolationRule, message: string, key?: string): void => {
    out.push({ rule, path, message, node, value, ...(key === undefined ? {} : { key }) });
  };
  if (value === null) {
    // As the API server does: a null is checked for type and enum only, never against
    // allOf/anyOf/oneOf/not, and a non-nullable null in an object field is dropped.
    if (!nested && node.nullable !== true) {
      if (pos === 'field') return add('null', 'null in a field that is not nullable: the API server drops it');
      if (node.type !== undefined) return add('type', 'null is not allowed here (not nullable)');
    }
    return checkEnum(node, value, add);
  }
  if (node[INT_OR_STRING] === true) {
    if (!(typeof value === 'string' || Number.isInteger(value))) return add('type', `${show(value)} is neither an integer nor a string`);
  } else if (!typeMatches(node.type, value)) {
    return add('type', `${show(value)} is not of type ${String(node.type)}`);
  }
  checkEnum(node, value, add);
  if (typeof value === 'string') checkString(node, value, add);
  if (typeof value === 'number') checkNumber(node, value, add);
  if (Array.isArray(value)) checkArray(node, value, path, add, out, nested);
  if (isRecord(value)) checkObject(node, value, path, add, out, nested);
  checkJunctors(node, value, path, pos, add);
}

function checkArray(node: Record<string, unknown>, value: readonly unknown[], path: string, add: (rule: ViolationRule, message: string) => void, out: Violation[], nested: boolean): void {
  if (typeof node.minItems === 'number' && value.length < node.minItems) add('minItems', `has ${value.length} items, fewer than ${node.minItems}`);
  if (typeof node.maxItems === 'number' && value.length > node.maxItems) add('maxItems', `has ${value.length} items, more than ${node.maxItems}`);
  if (node.items !== undefined) value.forEach((v, i) => check(node.items, v, indexPath(path, i), 'item', out, nested));
}

/** A null never matches an enum in Kubernetes (null entries are skipped). */
function checkEnum(node: Record<string, unknown>, value: unknown, add: (rule: ViolationRule, message: string) => void): void {
  if (!Array.isArray(node.enum) || node.enum.length === 0) return;
  if (value === null) return add('enum', `null never matches an enum (${show(node.enum)})`);
  if (!node.enum.some((e) => e !== null && isDeepStrictEqual(e, value))) add('enum', `${show(value)} is not one of ${show(node.enum)}`);
}

function checkString(node: Record<string, unknown>, value: string, add: (rule: ViolationRule, message: string) => void): void {
  let length = 0;
  for (const _ of value) length++; // code points, as Go counts runes
  if (typeof node.minLength === 'number' && length < node.minLength) add('minLength', `${show(value)} is shorter than ${node.minLength}`);
  if (typeof node.maxLength === 'number' && length > node.maxLength) add('maxLength', `${show(value)} is longer than ${node.maxLength}`);
  if (typeof node.pattern === 'string') {
    let re: RegExp | undefined;
    try {
      re = new RegExp(node.pattern);
    } catch {
      re = undefined;
    }
    if (re !== undefined && !re.test(value)) add('pattern', `${show(value)} does not match ${node.pattern}`);
  }
  if (typeof node.format === 'string' && !formatAccepts(node.format, value)) add('format', `${show(value)} is not a valid ${node.format}`);
}

function checkNumber(node: Record<string, unknown>, value: number, add: (rule: ViolationRule, message: string) => void): void {
  if (typeof node.minimum === 'number') {
    const bad = node.exclusiveMinimum === true ? value <= node.minimum : value < node.minimum;
    if (bad) add('minimum', `${value} is below the minimum ${node.minimum}`);
  }
  if (typeof node.maximum === 'number') {
    const bad = node.exclusiveMaximum === true ? value >= node.maximum : value > node.maximum;
    if (bad) add('maximum', `${value} is above the maximum ${node.maximum}`);
  }
  if (typeof node.multipleOf === 'number' && node.multipleOf > 0) {
    const q = value / node.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) add('multipleOf', `${value} is not a multiple of ${node.multipleOf}`);
  }
}

function checkObject(
  node: Record<string, unknown>,
  value: Record<string, unknown>,
  path: string,
  add: (rule: ViolationRule, message: string, key?: string) => void,
  out: Violation[],
  nested: boolean,
): void {
  const props = isRecord(node.properties) ? node.properties : undefined;
  const ap = node.additionalProperties;
  const preserve = node[PRESERVE_UNKNOWN] === true;
  if (Array.isArray(node.required)) {
    for (const r of node.required) if (typeof r === 'string' && !Object.hasOwn(value, r)) add('required', `required key ${JSON.stringify(r)} is missing`, r);
  }
  const count = Object.keys(value).length;
  if (typeof node.minProperties === 'number' && count < node.minProperties) add('minProperties', `has ${count} keys, fewer than ${node.minProperties}`);
  if (typeof node.maxProperties === 'number' && count > node.maxProperties) add('maxProperties', `has ${count} keys, more than ${node.maxProperties}`);
  for (const [k, v] of Object.entries(value)) {
    const p = childPath(path, k);
    if (props !== undefined && Object.hasOwn(props, k)) check(props[k], v, p, 'field', out, nested);
    else if (isRecord(ap)) check(ap, v, p, 'field', out, nested);
    else if (!nested && !preserve && ap !== true) add('pruned', `key ${JSON.stringify(k)} is not declared and would be pruned`, k);
  }
}

function checkJunctors(node: Record<string, unknown>, value: unknown, path: string, pos: Position, add: (rule: ViolationRule, message: string) => void): void {
  const passes = (branch: unknown): boolean => {
    const inner: Violation[] = [];
    check(branch, value, path, pos, inner, true);
    return inner.length === 0;
  };
  if (Array.isArray(node.allOf)) {
    for (const b of node.allOf) {
      const inner: Violation[] = [];
      check(b, value, path, pos, inner, true);
      for (const v of inner) add(v.rule, `allOf: ${v.message}`);
    }
  }
  if (Array.isArray(node.anyOf) && node.anyOf.length > 0 && !node.anyOf.some(passes)) add('anyOf', `${show(value)} matches none of anyOf`);
  if (Array.isArray(node.oneOf) && node.oneOf.length > 0 && node.oneOf.filter(passes).length !== 1) add('oneOf', `${show(value)} does not match exactly one of oneOf`);
  if (node.not !== undefined && passes(node.not)) add('not', `${show(value)} matches "not"`);
}
