/**
 * `valuesSchema`: a chart's values → the structural schema of its CR's `spec`. From
 * values.schema.json when the chart has one, inferred from values.yaml otherwise; then adjusted
 * for overrides (overrides.ts) and widened until the chart's own defaults fit (chart-defaults.ts).
 */
import { InputError, type Problem } from '../../util/errors.js';
import { acceptChartDefaults, dropInvalidDefaults } from './chart-defaults.js';
import { annotateValues } from './comments.js';
import { emit } from './emit.js';
import { shapeFromJsonSchema } from './from-json-schema.js';
import { shapeFromValues } from './from-values.js';
import { enumsForNullables } from './nullable-enum.js';
import { allowNullOverrides, relaxForOverrides } from './overrides.js';
import { showPath } from './paths.js';
import { intersect, typedShape } from './shape.js';
import type { ValuesSchemaInput, ValuesSchemaResult } from './types.js';
import { parseValuesYaml } from './values-yaml.js';

function parseSchemaJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /position (\d+)/.exec(message);
    let field: string | undefined;
    if (at !== null) {
      const before = text.slice(0, Number(at[1]));
      const line = before.split('\n').length;
      field = `line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
    } else {
      const lc = /line (\d+) column (\d+)/.exec(message);
      if (lc !== null) field = `line ${lc[1] ?? ''}, column ${lc[2] ?? ''}`;
    }
    throw new InputError('VALUES_SCHEMA_JSON', `not valid JSON: ${message}`, { file, ...(field === undefined ? {} : { field }), cause: err });
  }
}

export function valuesSchema(input: ValuesSchemaInput): ValuesSchemaResult {
  const opts = input.options ?? {};
  const valuesFile = `${input.chartName}/values.yaml`;
  const parsed = parseValuesYaml(input.valuesYaml, valuesFile);
  const useSchema = input.schemaJson !== undefined && input.schemaJson.trim() !== '';
  const file = useSchema ? `${input.chartName}/values.schema.json` : valuesFile;
  const warnings: Problem[] = [];
  const warn = (rule: string, message: string, path: string): void => {
    warnings.push({ severity: 'warning', rule, message, file, field: showPath(path) });
  };

  let schema;
  if (useSchema) {
    const root = parseSchemaJson(input.schemaJson ?? '', file);
    if (typeof root !== 'object' || root === null || Array.isArray(root)) {
      throw new InputError('VALUES_SCHEMA_JSON', 'the schema must be a JSON object', { file });
    }
    const shape = shapeFromJsonSchema(root, { warn, keepDefaults: opts.defaults === 'keep' });
    // Helm's values are always a map, whatever the root of the schema says.
    schema = emit(intersect([shape, typedShape('object')]), '', warn);
    relaxForOverrides(schema, parsed.values);
  } else {
    const annotations = annotateValues(parsed.document, input.valuesYaml);
    const shape = shapeFromValues(parsed.values, '', { annotations, openObjects: opts.inferredObjects !== 'closed' });
    shape.nullable = false;
    schema = emit(shape, '', warn);
  }
  if (opts.allowNullOverrides !== false) allowNullOverrides(schema);
  enumsForNullables(schema);
  warnings.push(...acceptChartDefaults(schema, parsed.values, file));
  if (useSchema && opts.defaults === 'keep') warnings.push(...dropInvalidDefaults(schema, file));
  return { schema, source: useSchema ? 'values.schema.json' : 'values.yaml', warnings };
}
