/**
 * Checked reading of untyped JSON/YAML: each accessor returns a typed value or a default, and
 * records a problem naming the file and field path when the value has the wrong type. Loading
 * goes on, so one pass reports every bad field at once.
 */
import type { Problem } from '../util/errors.js';
import { isRecord } from '../util/object.js';

export type JsonObject = Record<string, unknown>;

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `a ${typeof v}`;
}

export class Decoder {
  readonly problems: Problem[] = [];
  readonly file: string;

  constructor(file: string) {
    this.file = file;
  }

  bad(field: string, message: string, rule = 'field.type'): void {
    this.problems.push({ severity: 'error', rule, message, file: this.file, field });
  }

  /** A string field; numbers are accepted as Go's YAML would not, so they are an error too. */
  str(obj: JsonObject, key: string, path: string, required = false): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (required) this.bad(join(path, key), 'is required', 'field.required');
      return undefined;
    }
    if (typeof v !== 'string') {
      this.bad(join(path, key), `must be a string, got ${typeName(v)}`);
      return undefined;
    }
    return v;
  }

  bool(obj: JsonObject, key: string, path: string): boolean | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') {
      this.bad(join(path, key), `must be true or false, got ${typeName(v)}`);
      return undefined;
    }
    return v;
  }

  record(obj: JsonObject, key: string, path: string, required = false): JsonObject | undefined {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (required) this.bad(join(path, key), 'is required', 'field.required');
      return undefined;
    }
    if (!isRecord(v)) {
      this.bad(join(path, key), `must be a mapping, got ${typeName(v)}`);
      return undefined;
    }
    return v;
  }

  list(obj: JsonObject, key: string, path: string): unknown[] {
    const v = obj[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.bad(join(path, key), `must be a list, got ${typeName(v)}`);
      return [];
    }
    return v;
  }

  /** A list whose items must be mappings; bad items are reported and skipped. */
  records(obj: JsonObject, key: string, path: string): { value: JsonObject; path: string }[] {
    const out: { value: JsonObject; path: string }[] = [];
    this.list(obj, key, path).forEach((item, i) => {
      const p = `${join(path, key)}[${i}]`;
      if (isRecord(item)) out.push({ value: item, path: p });
      else this.bad(p, `must be a mapping, got ${typeName(item)}`);
    });
    return out;
  }

  strings(obj: JsonObject, key: string, path: string): string[] {
    const out: string[] = [];
    this.list(obj, key, path).forEach((item, i) => {
      if (typeof item === 'string') out.push(item);
      else this.bad(`${join(path, key)}[${i}]`, `must be a string, got ${typeName(item)}`);
    });
    return out;
  }

  /** A map of string to string (labels, annotations). */
  stringMap(obj: JsonObject, key: string, path: string): Record<string, string> {
    const m = this.record(obj, key, path);
    const out: [string, string][] = [];
    if (m === undefined) return {};
    for (const [k, v] of Object.entries(m)) {
      if (typeof v === 'string') out.push([k, v]);
      else if (typeof v === 'number' || typeof v === 'boolean') {
        this.bad(`${join(path, key)}.${k}`, `must be a string, got ${typeName(v)} (quote it)`);
      } else if (v !== null) this.bad(`${join(path, key)}.${k}`, `must be a string, got ${typeName(v)}`);
    }
    // Own properties, a key named `__proto__` too (assigned a string, it would be dropped).
    return Object.fromEntries(out);
  }
}

export function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
