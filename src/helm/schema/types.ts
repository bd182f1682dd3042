/**
 * The structural OpenAPI v3 schema this folder produces: the subset of `JSONSchemaProps`
 * (apiextensions.k8s.io/v1) a CRD's `spec` may carry. Only fields Binnacle emits are typed;
 * `checkStructural` reads any schema as `unknown`.
 */
import type { Problem } from '../../util/errors.js';

export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

export const SCHEMA_TYPES: readonly SchemaType[] = ['object', 'array', 'string', 'integer', 'number', 'boolean'];

export const PRESERVE_UNKNOWN = 'x-kubernetes-preserve-unknown-fields';
export const INT_OR_STRING = 'x-kubernetes-int-or-string';

export interface StructuralSchema {
  type?: SchemaType;
  title?: string;
  description?: string;
  format?: string;
  default?: unknown;
  nullable?: boolean;
  enum?: unknown[];
  minimum?: number;
  exclusiveMinimum?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: string[];
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema;
  items?: StructuralSchema;
  /** Only to hold the enum of a nullable node (see nullable-enum.ts). */
  allOf?: { enum: unknown[] }[];
  [PRESERVE_UNKNOWN]?: true;
  [INT_OR_STRING]?: true;
}

/** What a chart offers to describe its values. */
export interface ValuesSchemaInput {
  /** The chart's `values.yaml` text (may be empty). */
  valuesYaml: string;
  /** The chart's `values.schema.json` text, when it has one. */
  schemaJson?: string;
  /** Names the chart in messages and file names, e.g. `pelorus/charts/exporters`. */
  chartName: string;
  options?: ValuesSchemaOptions;
}

export interface ValuesSchemaOptions {
  /**
   * `default`s of values.schema.json: `drop` (the default) leaves them out, because Helm never
   * applies them while the API server would write them into every CR; `keep` copies those that
   * validate against their own node.
   */
  defaults?: 'drop' | 'keep';
  /**
   * Objects inferred from values.yaml: `open` (the default) keeps keys values.yaml does not
   * list (charts document optional keys in comments), `closed` lets the API server prune them.
   */
  inferredObjects?: 'open' | 'closed';
  /**
   * In Helm a `null` in user values deletes the chart's default. When true (the default) every
   * field an override can reach is `nullable`, so the API server keeps such nulls.
   */
  allowNullOverrides?: boolean;
}

export interface ValuesSchemaResult {
  /** The structural schema for the CR's `spec`. */
  schema: StructuralSchema;
  source: 'values.schema.json' | 'values.yaml';
  /** What could not be carried over exactly, each naming the file and the values path. */
  warnings: Problem[];
}
