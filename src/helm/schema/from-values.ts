/**
 * A schema inferred from values.yaml when the chart has no values.schema.json, as Carvel's
 * `kctrl package release` does: each default's type becomes the key's type (`1` integer,
 * `1.0` number), a list's items come from all its elements (differing types keep any value),
 * an empty list's items and an empty map `{}` keep any value, and a `null` default is
 * `nullable` and keeps any value, since the chart expects it to be given later.
 *
 * Defaults are deliberately not copied into the schema as `default:`. The chart's own
 * values.yaml already applies them when Helm renders; a CRD default would instead be written
 * into every CR by the API server, freezing today's default into objects that outlive the
 * next chart upgrade.
 */
import { childPath, itemsPath } from './paths.js';
import { anyShape, typedShape, union, type Shape } from './shape.js';
import type { ValuesAnnotations } from './comments.js';
import { isRecord } from '../../util/object.js';

export interface InferOptions {
  annotations: ValuesAnnotations;
  /** Whether inferred (non-empty) objects keep keys values.yaml does not list. */
  openObjects: boolean;
}

export function shapeFromValues(value: unknown, path: string, opts: InferOptions): Shape {
  const shape = infer(value, path, opts);
  const description = opts.annotations.descriptions.get(path);
  if (description !== undefined) shape.description = description;
  return shape;
}

function infer(value: unknown, path: string, opts: InferOptions): Shape {
  if (value === null || value === undefined) return anyShape();
  if (typeof value === 'string') return typedShape('string');
  if (typeof value === 'boolean') return typedShape('boolean');
  if (typeof value === 'number') return typedShape(Number.isInteger(value) && !opts.annotations.floats.has(path) ? 'integer' : 'number');
  if (Array.isArray(value)) {
    const shape = typedShape('array');
    const ipath = itemsPath(path);
    shape.items = value.length === 0 ? anyShape() : union(value.map((v) => shapeFromValues(v, ipath, opts)), 'examples');
    const itemDescription = opts.annotations.descriptions.get(ipath);
    if (itemDescription !== undefined && shape.items.description === undefined) shape.items.description = itemDescription;
    return shape;
  }
  if (isRecord(value)) {
    const shape = typedShape('object');
    const keys = Object.keys(value);
    if (keys.length === 0) return shape; // `{}`: a free-form map
    shape.properties = new Map(keys.map((k) => [k, shapeFromValues(value[k], childPath(path, k), opts)]));
    if (!opts.openObjects) shape.additional = 'closed';
    return shape;
  }
  return anyShape();
}
