/**
 * Values schema → CRD schema: the `spec` of a Helm-operator custom resource is the chart's
 * values, and its CRD gets a real structural `openAPIV3Schema` for it (operator-sdk leaves
 * `spec` schemaless). `valuesSchema` reads the chart's values.schema.json (JSON Schema, any
 * draft Helm charts use) or, without one, infers the schema from values.yaml and its helm-docs
 * comments; either way the result accepts every value Helm would, prunes nothing the chart's
 * own defaults contain, and lists as warnings whatever it could not carry over exactly.
 * `checkStructural` applies the API server's structural-schema rules; `crdForChart` wraps a
 * schema in an `apiextensions.k8s.io/v1` CRD with the Helm-operator status. Pure functions:
 * nothing here talks to a cluster; the Helm-operator manager (`src/helm`) and the CLI call it.
 */
export { valuesSchema } from './values-schema.js';
export { checkStructural, type CheckStructuralOptions } from './structural.js';
export { crdForChart, kindForChart, pluralForKind, type CrdForChartOptions } from './crd.js';
export { validateValue, valueViolations, type Violation, type ViolationRule } from './validate-value.js';
export { parseValuesYaml, type ParsedValues } from './values-yaml.js';
export {
  INT_OR_STRING,
  PRESERVE_UNKNOWN,
  type SchemaType,
  type StructuralSchema,
  type ValuesSchemaInput,
  type ValuesSchemaOptions,
  type ValuesSchemaResult,
} from './types.js';
