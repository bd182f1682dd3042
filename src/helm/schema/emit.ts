/**
 * Shape → structural schema, applying Kubernetes' rules in one place:
 *
 * - one type per node; `integer|string` becomes `x-kubernetes-int-or-string`, `integer|number`
 *   becomes `number`, any other mix (or no type at all) becomes an untyped node with
 *   `x-kubernetes-preserve-unknown-fields: true`, which keeps any value;
 * - an object open to unknown keys keeps its `properties` and gets
 *   `x-kubernetes-preserve-unknown-fields: true`, so the API server prunes nothing JSON Schema
 *   would accept; a map (`additionalProperties` without `properties`) stays a map; both
 *   together, which Kubernetes forbids, keep the `properties` and preserve the other keys
 *   unvalidated (lossless, with a warning);
 * - `enum` keeps only the values the node's type allows (a nullable node's enum is moved under
 *   `allOf` afterwards, see nullable-enum.ts).
 */
import { formatKnown } from './formats.js';
import { typeMatches } from './validate-value.js';
import { additionalPath, childPath, itemsPath } from './paths.js';
import { isAny, isNever, type Shape } from './shape.js';
import { INT_OR_STRING, PRESERVE_UNKNOWN, type SchemaType, type StructuralSchema } from './types.js';

export type Warn = (rule: string, message: string, path: string) => void;

type NodeKind = SchemaType | 'int-or-string' | 'untyped';

function kindOf(shape: Shape, path: string, warn: Warn): NodeKind {
  if (shape.types === undefined) return 'untyped';
  const types = new Set(shape.types);
  if (types.has('number')) types.delete('integer');
  const list = [...types].sort();
  const [only] = list;
  if (only === undefined) {
    if (!shape.nullable) warn('schema.no-valid-value', 'no value satisfies the schema here (contradicting allOf branches?); any value is kept instead', path);
    return 'untyped';
  }
  if (list.length === 1) return only;
  if (list.length === 2 && types.has('integer') && types.has('string')) return 'int-or-string';
  warn('schema.type-union', `the value may be ${list.join(' or ')}, which a structural schema cannot say; any value is kept (x-kubernetes-preserve-unknown-fields)`, path);
  return 'untyped';
}

function fitsKind(value: unknown, kind: NodeKind): boolean {
  if (kind === 'untyped') return true;
  if (kind === 'int-or-string') return typeof value === 'string' || Number.isInteger(value);
  return typeMatches(kind, value);
}

export function emit(shape: Shape, path: string, warn: Warn): StructuralSchema {
  const out: StructuralSchema = {};
  if (shape.title !== undefined) out.title = shape.title;
  if (shape.description !== undefined) out.description = shape.description;
  const kind = kindOf(shape, path, warn);
  if (kind === 'untyped') out[PRESERVE_UNKNOWN] = true;
  else if (kind === 'int-or-string') out[INT_OR_STRING] = true;
  else out.type = kind;
  if (shape.nullable) out.nullable = true;

  if (shape.format !== undefined) emitFormat(out, shape.format, kind, path, warn);
  if (kind === 'string' || kind === 'int-or-string') emitStringFacets(out, shape);
  if (kind === 'integer' || kind === 'number' || kind === 'int-or-string') emitNumberFacets(out, shape);
  if (kind === 'array') emitArray(out, shape, path, warn);
  if (kind === 'object') emitObject(out, shape, path, warn);

  if (shape.enum !== undefined) emitEnum(out, shape.enum, kind, path, warn);
  if (shape.default !== undefined) out.default = shape.default.value;
  return out;
}

/** A format Kubernetes validates for the type; any other is dropped, with a warning. */
function emitFormat(out: StructuralSchema, format: string, kind: NodeKind, path: string, warn: Warn): void {
  if (kind !== 'untyped' && formatKnown(format, kind)) out.format = format;
  else warn('schema.format', `format ${JSON.stringify(format)} is not one Kubernetes validates for this type; dropped`, path);
}

/** The enum values that fit the type (never null); with none left of some, the enum is dropped, with a warning. */
function emitEnum(out: StructuralSchema, values: readonly unknown[], kind: NodeKind, path: string, warn: Warn): void {
  const fitting = values.filter((v) => v !== null && fitsKind(v, kind));
  if (fitting.length > 0) {
    out.enum = fitting;
  } else if (values.length > 0 && !values.every((v) => v === null)) {
    warn('schema.enum', `no enum value fits the type here; the enum is dropped`, path);
  }
}

function emitStringFacets(out: StructuralSchema, shape: Shape): void {
  if (shape.minLength !== undefined) out.minLength = shape.minLength;
  if (shape.maxLength !== undefined) out.maxLength = shape.maxLength;
  if (shape.pattern !== undefined) out.pattern = shape.pattern;
}

function emitNumberFacets(out: StructuralSchema, shape: Shape): void {
  if (shape.minimum !== undefined) {
    out.minimum = shape.minimum.value;
    if (shape.minimum.exclusive) out.exclusiveMinimum = true;
  }
  if (shape.maximum !== undefined) {
    out.maximum = shape.maximum.value;
    if (shape.maximum.exclusive) out.exclusiveMaximum = true;
  }
  if (shape.multipleOf !== undefined) out.multipleOf = shape.multipleOf;
}

function emitArray(out: StructuralSchema, shape: Shape, path: string, warn: Warn): void {
  const items = shape.items;
  out.items = items === undefined || isAny(items) ? { ...(items?.description === undefined ? {} : { description: items.description }), [PRESERVE_UNKNOWN]: true, nullable: true } : emit(items, itemsPath(path), warn);
  if (shape.minItems !== undefined) out.minItems = shape.minItems;
  if (shape.maxItems !== undefined) out.maxItems = shape.maxItems;
}

function emitObject(out: StructuralSchema, shape: Shape, path: string, warn: Warn): void {
  const props: Record<string, StructuralSchema> = {};
  for (const [key, child] of shape.properties ?? []) {
    if (isNever(child)) continue; // a key that must not appear: left out, so it is pruned or kept unvalidated
    props[key] = emit(child, childPath(path, key), warn);
  }
  const hasProps = Object.keys(props).length > 0;
  if (hasProps) out.properties = props;
  const additional = shape.additional ?? 'open';
  if (additional === 'open' || (additional !== 'closed' && isAny(additional))) {
    out[PRESERVE_UNKNOWN] = true;
  } else if (additional !== 'closed' && !isNever(additional)) {
    if (hasProps) {
      warn(
        'schema.additional-properties',
        `Kubernetes forbids properties and additionalProperties together; the ${Object.keys(props).length} listed properties are kept and other keys are preserved without validation`,
        path,
      );
      out[PRESERVE_UNKNOWN] = true;
    } else {
      out.additionalProperties = emit(additional, additionalPath(path), warn);
    }
  }
  if (shape.required !== undefined && shape.required.length > 0) {
    const required = [...new Set(shape.required)];
    out.required = required;
  }
  if (shape.minProperties !== undefined) out.minProperties = shape.minProperties;
  if (shape.maxProperties !== undefined) out.maxProperties = shape.maxProperties;
}
