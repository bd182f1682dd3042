/** Small helpers for plain objects. */

/** The object without its undefined fields: optional fields given only when set, without `...(x === undefined ? {} : { k: x })` per field. */
export function definedFields<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}
