/** Small helpers for plain objects. */

/** The object without its undefined fields: optional fields given only when set, without `...(x === undefined ? {} : { k: x })` per field. */
export function definedFields<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}

/**
 * A deep copy of JSON-shaped data (plain objects, arrays, primitives) that shares its strings:
 * strings cannot be changed, so copying them (as structuredClone does) costs time and memory
 * for nothing. A render's answer is a few objects around manifests of megabytes: this copies
 * the objects only. Anything else (a Date, a Map) is kept by reference, as JSON would not hold it.
 */
export function copyJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => copyJson(v)) as T;
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = copyJson(v);
  return out as T;
}

/**
 * About how many characters `value` is as JSON, without writing it: its strings' and keys'
 * lengths, and a few characters for each number, literal and bracket. Within a few percent of
 * JSON.stringify's length for data of long strings (escapes aside), in time of its nodes only.
 */
export function jsonSize(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (Array.isArray(value)) return value.reduce((n: number, v: unknown) => n + jsonSize(v) + 1, 2);
  if (value !== null && typeof value === 'object') return Object.entries(value).reduce((n, [k, v]) => n + k.length + 4 + jsonSize(v), 2);
  return String(value).length;
}

/** A JSON object: not null, not an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
