/**
 * `checkStructural`: the rules the API server applies to a CRD's `openAPIV3Schema` (or to a
 * schema placed under one of its fields), gathered in one pass, each as a Problem with a
 * stable rule name and the path Kubernetes would print (`properties[spec].items.type`).
 *
 * From apiextensions-apiserver (`pkg/apis/apiextensions/validation`, `pkg/apiserver/schema`):
 * - every node has a `type` (one of array, boolean, integer, number, object, string), except
 *   under `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields: true`; the
 *   root is an object; an array has `items`, and `items` is one schema, not a list;
 * - `properties` and `additionalProperties` (other than `true`) exclude each other;
 *   `additionalProperties` is not allowed at the root;
 * - `$ref`, `id`, `definitions`, `dependencies`, `patternProperties`, `additionalItems`,
 *   `uniqueItems: true`, `type: null` and `x-kubernetes-preserve-unknown-fields: false` are
 *   refused; unknown keywords are reported too (the API server would drop them);
 * - value validations (`allOf`, `anyOf`, `oneOf`, `not`, at any depth) set no `type`,
 *   `description`, `title`, `default`, `nullable`, `additionalProperties`, `externalDocs` or
 *   `x-kubernetes-*` extension and do not mention `metadata`, except the two int-or-string
 *   patterns; every field or item they mention is also in the structural part;
 * - `x-kubernetes-int-or-string` excludes preserve-unknown-fields and embedded-resource;
 *   `x-kubernetes-embedded-resource` needs `type: object` and properties or preserve-unknown;
 * - at the root (or an embedded resource) `metadata` may only restrict `name` and
 *   `generateName`, and `kind`/`apiVersion` are strings;
 * - `pattern` compiles as RE2; `default`s and `enum` values validate against their node, and a
 *   default survives pruning; no default inside root `metadata`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Problem } from '../../util/errors.js';
import { patternProblem } from './formats.js';
import { INT_OR_STRING, PRESERVE_UNKNOWN, SCHEMA_TYPES } from './types.js';
import { valueViolations } from './validate-value.js';
import { isRecord } from '../../util/object.js';

export interface CheckStructuralOptions {
  /** Prefix of every reported field, e.g. `spec.versions[0].schema.openAPIV3Schema`. */
  path?: string;
  /** Check as a CRD's root schema (the default) or as the schema of a field inside one. */
  root?: boolean;
}

type Level = 'root' | 'item' | 'field';

const KNOWN_KEYS = new Set([
  'id', '$schema', '$ref', 'description', 'type', 'format', 'title', 'default', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'enum', 'maxProperties', 'minProperties', 'required',
  'items', 'allOf', 'oneOf', 'anyOf', 'not', 'properties', 'additionalProperties', 'patternProperties', 'dependencies', 'additionalItems',
  'definitions', 'externalDocs', 'example', 'nullable', PRESERVE_UNKNOWN, 'x-kubernetes-embedded-resource', INT_OR_STRING,
  'x-kubernetes-list-map-keys', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-validations',
]);

const FORBIDDEN: Record<string, string> = {
  id: 'id is not supported',
  $ref: '$ref is not supported',
  definitions: 'definitions is not supported',
  dependencies: 'dependencies is not supported',
  patternProperties: 'patternProperties is not supported',
  additionalItems: 'additionalItems is not supported',
};

/** Forbidden inside value validations (allOf/anyOf/oneOf/not). */
const NOT_IN_VALUE_VALIDATION = [
  'type', 'additionalProperties', 'default', 'title', 'description', 'nullable', 'externalDocs', PRESERVE_UNKNOWN, 'x-kubernetes-embedded-resource',
  INT_OR_STRING, 'x-kubernetes-list-map-keys', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-validations',
] as const;

const isBoolean = { ok: (v: unknown): boolean => typeof v === 'boolean', message: 'must be a boolean' };
const isNumber = { ok: (v: unknown): boolean => typeof v === 'number', message: 'must be a number' };
const isCount = { ok: (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0, message: 'must be a non-negative integer' };
const isString = { ok: (v: unknown): boolean => typeof v === 'string', message: 'must be a string' };

/** The JSON type each keyword's value must have. */
const KEYWORD_TYPES: Record<string, { ok: (v: unknown) => boolean; message: string } | undefined> = {
  nullable: isBoolean,
  exclusiveMinimum: isBoolean,
  exclusiveMaximum: isBoolean,
  uniqueItems: isBoolean,
  [INT_OR_STRING]: isBoolean,
  'x-kubernetes-embedded-resource': isBoolean,
  minimum: isNumber,
  maximum: isNumber,
  multipleOf: isNumber,
  minLength: isCount,
  maxLength: isCount,
  minItems: isCount,
  maxItems: isCount,
  minProperties: isCount,
  maxProperties: isCount,
  description: isString,
  title: isString,
  format: isString,
  pattern: isString,
  required: { ok: (v) => Array.isArray(v) && v.every((r) => typeof r === 'string'), message: 'must be a list of strings' },
  enum: { ok: Array.isArray, message: 'must be a list' },
  properties: { ok: isRecord, message: 'must be a map of schemas' },
  additionalProperties: { ok: (v) => typeof v === 'boolean' || isRecord(v), message: 'must be a boolean or a schema' },
};

const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];

function key(path: string, child: string): string {
  return path === '' ? child : `${path}.${child}`;
}

function prop(path: string, name: string): string {
  return key(path, `properties[${name}]`);
}

class Checker {
  readonly problems: Problem[] = [];

  error(rule: string, field: string, message: string): void {
    this.problems.push({ severity: 'error', rule, message, field });
  }

  /** CRD API validation plus the structural invariants of the structural part. */
  node(s: unknown, level: Level, path: string, inMetadata: boolean): void {
    if (!isRecord(s)) {
      this.error('structural.not-a-schema', path, 'must be a schema object');
      return;
    }
    this.keywords(s, path);
    this.values(s, path, inMetadata);
    this.invariants(s, level, path);

    const checkMeta = level === 'root' || s['x-kubernetes-embedded-resource'] === true;
    const props = isRecord(s.properties) ? s.properties : {};
    if (checkMeta) {
      for (const k of ['kind', 'apiVersion']) {
        const p = props[k];
        if (isRecord(p) && p.type !== 'string') this.error('structural.metadata', key(prop(path, k), 'type'), 'must be string');
      }
      if (props.metadata !== undefined) this.metadata(props.metadata, level, prop(path, 'metadata'));
    }

    for (const [k, child] of Object.entries(props)) this.node(child, 'field', prop(path, k), inMetadata || (checkMeta && k === 'metadata'));
    if (isRecord(s.additionalProperties)) this.node(s.additionalProperties, 'field', key(path, 'additionalProperties'), inMetadata);
    if (Array.isArray(s.items)) this.error('structural.items-list', key(path, 'items'), 'items must be a schema object and not an array');
    else if (s.items !== undefined) this.node(s.items, 'item', key(path, 'items'), inMetadata);

    this.valueValidation(s, path);
    this.completeness(s, s, path, path);
  }

  /** The structural invariants of one node (validateStructuralInvariants). */
  invariants(s: Record<string, unknown>, level: Level, path: string): void {
    const preserve = s[PRESERVE_UNKNOWN] === true;
    const intOrString = s[INT_OR_STRING] === true;
    const embedded = s['x-kubernetes-embedded-resource'] === true;
    const type = typeof s.type === 'string' ? s.type : undefined;

    if (type === 'array' && s.items === undefined) this.error('structural.items-required', key(path, 'items'), 'must be specified');
    if (s.additionalProperties !== undefined) this.additionalProperties(s, level, path);
    if (embedded && type !== 'object') this.error('structural.embedded-resource', key(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true');
    else if (type === undefined && !intOrString && !preserve) {
      const what = { root: 'at the root', item: 'for specified array items', field: 'for specified object fields' }[level];
      this.error('structural.type-required', key(path, 'type'), `must not be empty ${what}`);
    }
    if (level === 'root' && type !== undefined && type !== 'object') this.error('structural.root-type', key(path, 'type'), 'must be object at the root');
    if (intOrString) this.intOrString(path, preserve, embedded);
    if (embedded) this.embeddedResource(s, path);
  }

  /** additionalProperties: not at the root, and not next to properties (unless true). */
  additionalProperties(s: Record<string, unknown>, level: Level, path: string): void {
    if (level === 'root') this.error('structural.additional-properties-root', key(path, 'additionalProperties'), 'must not be used at the root');
    if (isRecord(s.properties) && Object.keys(s.properties).length > 0 && s.additionalProperties !== true) {
      this.error('structural.properties-and-additional-properties', key(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive');
    }
  }

  /** An int-or-string node neither keeps unknown fields nor embeds a resource. */
  intOrString(path: string, preserve: boolean, embedded: boolean): void {
    if (preserve) this.error('structural.int-or-string', key(path, PRESERVE_UNKNOWN), 'must be false if x-kubernetes-int-or-string is true');
    if (embedded) this.error('structural.int-or-string', key(path, 'x-kubernetes-embedded-resource'), 'must be false if x-kubernetes-int-or-string is true');
  }

  embeddedResource(s: Record<string, unknown>, path: string): void {
    if (s.additionalProperties !== undefined) this.error('structural.embedded-resource', key(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set');
    if (s[PRESERVE_UNKNOWN] !== true && !(isRecord(s.properties) && Object.keys(s.properties).length > 0)) {
      this.error('structural.embedded-resource', key(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields');
    }
  }

  /** Keywords the CRD API refuses, and the types of keyword values. */
  keywords(s: Record<string, unknown>, path: string): void {
    for (const [k, v] of Object.entries(s)) {
      if (!KNOWN_KEYS.has(k)) {
        this.error('structural.unknown-keyword', key(path, k), `${JSON.stringify(k)} is not a field of a Kubernetes schema`);
        continue;
      }
      const forbidden = FORBIDDEN[k];
      if (forbidden !== undefined) this.error('structural.forbidden', key(path, k), forbidden);
      if (k === 'uniqueItems' && v === true) this.error('structural.unique-items', key(path, k), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic');
    }
    if (s.type !== undefined) {
      if (s.type === 'null') this.error('structural.type', key(path, 'type'), 'type cannot be set to null, use nullable as an alternative');
      else if (typeof s.type !== 'string' || !(SCHEMA_TYPES as readonly string[]).includes(s.type)) {
        this.error('structural.type', key(path, 'type'), `must be one of ${SCHEMA_TYPES.join(', ')}, found ${JSON.stringify(s.type)}`);
      }
    }
    if (s[PRESERVE_UNKNOWN] !== undefined && s[PRESERVE_UNKNOWN] !== true) this.error('structural.preserve-unknown-fields', key(path, PRESERVE_UNKNOWN), 'must be true or undefined');
    this.keywordTypes(s, path);
  }

  keywordTypes(s: Record<string, unknown>, path: string): void {
    for (const [k, v] of Object.entries(s)) {
      const rule = KEYWORD_TYPES[k];
      if (rule !== undefined && !rule.ok(v)) this.error('structural.keyword-type', key(path, k), rule.message);
    }
    if (typeof s.pattern === 'string') {
      const problem = patternProblem(s.pattern);
      if (problem !== undefined) this.error('structural.pattern', key(path, 'pattern'), `must be a valid regular expression: ${problem}`);
    }
  }

  /** `default` and `enum` values must validate against their own node. */
  values(s: Record<string, unknown>, path: string, inMetadata: boolean): void {
    if (Object.hasOwn(s, 'default')) {
      if (inMetadata) this.error('structural.default', key(path, 'default'), 'must not be set in top-level metadata');
      else {
        for (const v of valueViolations(s, s.default)) this.error('structural.default', key(path, 'default'), v.path === '' ? v.message : `${v.path}: ${v.message}`);
      }
    }
    if (Array.isArray(s.enum)) {
      s.enum.forEach((e, i) => {
        if (e === null) return; // the API server does not check null entries (nor ever matches them)
        const probe = { ...s };
        delete probe.default;
        for (const v of valueViolations(probe, e)) this.error('structural.enum', `${key(path, 'enum')}[${i}]`, v.message);
      });
    }
  }

  metadata(m: unknown, level: Level, path: string): void {
    if (!isRecord(m)) return;
    if (m.type !== 'object') this.error('structural.metadata', key(path, 'type'), 'must be object');
    if (level !== 'root') return;
    const rest: Record<string, unknown> = { ...m };
    delete rest.type;
    delete rest.default; // reported by values()
    if (isRecord(rest.properties)) {
      const names = Object.keys(rest.properties);
      if (names.every((n) => n === 'name' || n === 'generateName')) delete rest.properties;
    }
    if (Object.keys(rest).length > 0) {
      this.error('structural.metadata', path, 'must not specify anything other than name and generateName, but metadata is implicitly specified');
    }
  }

  /** allOf/anyOf/oneOf/not of a structural node. */
  valueValidation(s: Record<string, unknown>, path: string): void {
    const skipAnyOf = Array.isArray(s.anyOf) && isDeepStrictEqual(s.anyOf, INT_OR_STRING_ANY_OF);
    const first = Array.isArray(s.allOf) ? (s.allOf[0] as unknown) : undefined;
    const skipFirstAllOfAnyOf = isRecord(first) && Array.isArray(first.anyOf) && isDeepStrictEqual(first.anyOf, INT_OR_STRING_ANY_OF);
    this.junctors(s, path, skipAnyOf, skipFirstAllOfAnyOf);
  }

  junctors(v: Record<string, unknown>, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean): void {
    for (const j of ['allOf', 'anyOf', 'oneOf'] as const) {
      const branches = v[j];
      if (branches === undefined) continue;
      if (!Array.isArray(branches)) {
        this.error('structural.keyword-type', key(path, j), 'must be a list of schemas');
        continue;
      }
      if (j === 'anyOf' && skipAnyOf) continue;
      branches.forEach((b, i) => this.nested(b, `${key(path, j)}[${i}]`, j === 'allOf' && i === 0 && skipFirstAllOfAnyOf));
    }
    if (v.not !== undefined) this.nested(v.not, key(path, 'not'), false);
  }

  nested(v: unknown, path: string, skipAnyOf: boolean): void {
    if (!isRecord(v)) {
      this.error('structural.not-a-schema', path, 'must be a schema object');
      return;
    }
    this.keywords(v, path);
    for (const k of NOT_IN_VALUE_VALIDATION) {
      if (v[k] !== undefined) this.error('structural.value-validation', key(path, k), 'must be empty to be structural (not allowed in allOf, anyOf, oneOf or not)');
    }
    const props = isRecord(v.properties) ? v.properties : {};
    if (props.metadata !== undefined) this.error('structural.value-validation', prop(path, 'metadata'), 'must not be specified in a nested context');
    for (const [k, child] of Object.entries(props)) this.nested(child, prop(path, k), false);
    if (v.items !== undefined && !Array.isArray(v.items)) this.nested(v.items, key(path, 'items'), false);
    this.junctors(v, path, skipAnyOf, false);
  }

  /** Every field or item a value validation mentions exists in the structural part. */
  completeness(v: Record<string, unknown>, s: Record<string, unknown> | undefined, sPath: string, vPath: string): void {
    for (const j of ['allOf', 'anyOf', 'oneOf'] as const) {
      const branches = v[j];
      if (Array.isArray(branches)) branches.forEach((b, i) => this.nestedComplete(b, s, sPath, `${key(vPath, j)}[${i}]`));
    }
    if (v.not !== undefined) this.nestedComplete(v.not, s, sPath, key(vPath, 'not'));
  }

  nestedComplete(v: unknown, s: Record<string, unknown> | undefined, sPath: string, vPath: string): void {
    if (!isRecord(v)) return;
    if (s === undefined) {
      this.error('structural.incomplete', sPath, `must be specified because it is defined in ${vPath}`);
      return;
    }
    this.completeness(v, s, sPath, vPath);
    if (isRecord(v.items)) this.nestedComplete(v.items, isRecord(s.items) ? s.items : undefined, key(sPath, 'items'), key(vPath, 'items'));
    const sProps = isRecord(s.properties) ? s.properties : {};
    for (const [k, child] of Object.entries(isRecord(v.properties) ? v.properties : {})) {
      const sChild = sProps[k];
      this.nestedComplete(child, isRecord(sChild) ? sChild : undefined, prop(sPath, k), prop(vPath, k));
    }
  }
}

/** Every structural-schema problem in `schema`, as errors (empty when the API server would accept it). */
export function checkStructural(schema: unknown, opts: CheckStructuralOptions = {}): Problem[] {
  const c = new Checker();
  c.node(schema, opts.root === false ? 'field' : 'root', opts.path ?? '', false);
  return c.problems;
}
