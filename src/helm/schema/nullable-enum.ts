/**
 * `nullable` and `enum` do not mix in Kubernetes: the API server checks `enum` even for a
 * null and never lets null match (kube-openapi skips null enum entries), so a nullable,
 * enumerated field refuses `null`. Value validations (`allOf`, …) are not evaluated for a null,
 * so the enum of a nullable node moves into `allOf: [{enum: [...]}]`: a null passes and every
 * other value must still be one of the list.
 */
import type { StructuralSchema } from './types.js';

/** Moves `node.enum` under `allOf` when the node is nullable. */
export function enumForNullable(node: StructuralSchema): void {
  if (node.nullable !== true || node.enum === undefined) return;
  const values = node.enum.filter((v) => v !== null);
  delete node.enum;
  if (values.length > 0) node.allOf = [...(node.allOf ?? []), { enum: values }];
}

/** Applies `enumForNullable` to every node of `schema`. */
export function enumsForNullables(schema: StructuralSchema): void {
  enumForNullable(schema);
  for (const child of Object.values(schema.properties ?? {})) enumsForNullables(child);
  if (schema.additionalProperties !== undefined) enumsForNullables(schema.additionalProperties);
  if (schema.items !== undefined) enumsForNullables(schema.items);
}
