/**
 * The chart's own values.yaml must be a valid CR spec: a CRD that rejected or pruned the
 * chart's defaults would break the most basic CR. Where values.schema.json and values.yaml
 * disagree (Helm validates the merged values, so a chart can ship such a pair), the schema is
 * widened just enough, node by node, and each widening is reported:
 *
 * - a `null` default makes the node `nullable`; a default of another type widens `integer` to
 *   `number`, `integer`/`string` to int-or-string, anything else to an untyped node that
 *   keeps any value;
 * - a default outside `enum` joins the enum; a default breaking a bound, `pattern` or
 *   `format` removes that keyword; a key values.yaml has but the schema would prune
 *   preserves unknown fields on its object; a missing `required` key leaves `required`.
 *
 * `dropInvalidDefaults` removes copied `default`s that the API server would refuse (a default
 * must validate against its own node and survive pruning).
 */
import type { Problem } from '../../util/errors.js';
import { additionalPath, childPath, itemsPath, showPath } from './paths.js';
import { enumForNullable } from './nullable-enum.js';
import { INT_OR_STRING, PRESERVE_UNKNOWN, type StructuralSchema } from './types.js';
import { valueViolations, type Violation } from './validate-value.js';

const MAX_ROUNDS = 10_000;

function show(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 50 ? `${s.slice(0, 47)}...` : s;
}

function valueType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const TYPED_KEYWORDS = [
  'type', 'format', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern',
  'minItems', 'maxItems', 'items', 'properties', 'additionalProperties', 'required', 'minProperties', 'maxProperties', 'default', INT_OR_STRING,
] as const;

/** Turns a node into one that keeps any value (description, title and nullable stay). */
function makeUntyped(node: Record<string, unknown>): void {
  for (const k of TYPED_KEYWORDS) Reflect.deleteProperty(node, k);
  node[PRESERVE_UNKNOWN] = true;
}

/** Widens `node` so it accepts the value in `v`; answers what was done. */
function widen(v: Violation): string {
  const node = v.node;
  switch (v.rule) {
    case 'null':
      node.nullable = true;
      enumForNullable(node);
      return 'made it nullable';
    case 'type': {
      const t = valueType(v.value);
      if (node.type === 'integer' && t === 'number') {
        node.type = 'number';
        return 'widened integer to number';
      }
      if ((node.type === 'integer' && t === 'string') || (node.type === 'string' && t === 'integer')) {
        delete node.type;
        delete node.format;
        node[INT_OR_STRING] = true;
        if (Array.isArray(node.enum)) node.enum.push(v.value);
        return 'made it int-or-string';
      }
      makeUntyped(node);
      return 'made it keep any value';
    }
    case 'enum':
      if (v.value === null) {
        enumForNullable(node);
        return 'moved the enum under allOf, where it does not apply to null';
      }
      if (Array.isArray(node.enum)) node.enum.push(v.value);
      return 'added the default to the enum';
    case 'pruned':
      node[PRESERVE_UNKNOWN] = true;
      return 'made the object preserve unknown fields';
    case 'required':
      if (Array.isArray(node.required)) {
        node.required = node.required.filter((r) => r !== v.key);
        if ((node.required as unknown[]).length === 0) delete node.required;
      }
      return `no longer requires ${JSON.stringify(v.key)}`;
    case 'minimum':
      delete node.minimum;
      delete node.exclusiveMinimum;
      return 'dropped minimum';
    case 'maximum':
      delete node.maximum;
      delete node.exclusiveMaximum;
      return 'dropped maximum';
    default:
      Reflect.deleteProperty(node, v.rule);
      return `dropped ${v.rule}`;
  }
}

/** Widens `schema` until `defaults` validate; answers one warning per widening. */
export function acceptChartDefaults(schema: StructuralSchema, defaults: unknown, file: string): Problem[] {
  const warnings: Problem[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const [first] = valueViolations(schema, defaults);
    if (first === undefined) return warnings;
    const what = widen(first);
    warnings.push({
      severity: 'warning',
      rule: 'schema.default-conflict',
      message: `the chart's default ${show(first.value)} breaks its own schema (${first.message}); ${what}`,
      file,
      field: showPath(first.path),
    });
  }
  warnings.push({ severity: 'warning', rule: 'schema.default-conflict', message: 'gave up widening the schema for the chart defaults', file });
  return warnings;
}

/** Removes `default`s the API server would refuse; answers a warning for each. */
export function dropInvalidDefaults(schema: StructuralSchema, file: string, path = ''): Problem[] {
  const warnings: Problem[] = [];
  const visit = (node: StructuralSchema, p: string): void => {
    if (Object.hasOwn(node, 'default')) {
      const bad = valueViolations(node, node.default);
      if (bad.length > 0) {
        warnings.push({
          severity: 'warning',
          rule: 'schema.default-dropped',
          message: `default ${show(node.default)} dropped: ${bad.map((b) => b.message).join('; ')}`,
          file,
          field: showPath(p),
        });
        delete node.default;
      }
    }
    for (const [k, child] of Object.entries(node.properties ?? {})) visit(child, childPath(p, k));
    if (node.additionalProperties !== undefined) visit(node.additionalProperties, additionalPath(p));
    if (node.items !== undefined) visit(node.items, itemsPath(p));
  };
  visit(schema, path);
  return warnings;
}
