/**
 * A CR's spec is not the chart's full values: it is what the user overrides, and Helm merges
 * it over values.yaml (maps key by key; lists and scalars replace). The schema is adjusted for
 * that, along every path a merge reaches (from the root through maps, not into lists):
 *
 * - `required` keys that values.yaml already provides are not required in the CR, since Helm
 *   fills them in (values.schema.json validates the merged values, the CRD only the override);
 *   `minProperties` is dropped there for the same reason;
 * - every field is `nullable`: in Helm, `key: null` in user values deletes the chart's default
 *   for that key, and the API server would otherwise drop the null before Helm sees it.
 */
import { enumForNullable } from './nullable-enum.js';
import type { StructuralSchema } from './types.js';
import { isRecord } from '../../util/object.js';

/** Drops `required` and `minProperties` where values.yaml (`defaults`) provides the keys. */
export function relaxForOverrides(schema: StructuralSchema, defaults: unknown): void {
  if (!isRecord(defaults)) return;
  if (schema.required !== undefined) {
    const required = schema.required.filter((k) => !Object.hasOwn(defaults, k));
    if (required.length > 0) schema.required = required;
    else delete schema.required;
  }
  if (Object.keys(defaults).length > 0) delete schema.minProperties;
  for (const [key, value] of Object.entries(defaults)) {
    const child = schema.properties?.[key] ?? schema.additionalProperties;
    if (child !== undefined) relaxForOverrides(child, value);
  }
}

/** Marks every field a merge reaches `nullable`. */
export function allowNullOverrides(schema: StructuralSchema): void {
  const children = [...Object.values(schema.properties ?? {}), ...(schema.additionalProperties === undefined ? [] : [schema.additionalProperties])];
  for (const child of children) {
    makeNullable(child);
    allowNullOverrides(child);
  }
}

function makeNullable(node: StructuralSchema): void {
  node.nullable = true;
  enumForNullable(node);
}
