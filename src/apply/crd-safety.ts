/**
 * CRD upgrade safety: before an existing CRD is replaced, compare old and new and refuse
 * changes that would strand or invalidate objects already stored. Follows the checks of
 * operator-controller's crdupgradesafety preflight (itself kapp's): no scope change, no
 * stored version removed, no existing field removed, and per version and field no type
 * change, no enum value removed, no new required field, no tighter limits, no default change.
 * Pure: takes the two CRDs as unknown JSON and answers every problem it finds.
 */
import { ValidationResult } from '../util/errors.js';

type Json = Record<string, unknown>;

function asRecord(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function strings(v: unknown): string[] {
  return asArray(v).filter((x): x is string => typeof x === 'string');
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: Json | undefined;
}

function versionsOf(crd: Json): CrdVersion[] {
  const spec = asRecord(crd.spec) ?? {};
  const out: CrdVersion[] = [];
  for (const v of asArray(spec.versions)) {
    const r = asRecord(v);
    if (r === undefined || typeof r.name !== 'string') continue;
    out.push({
      name: r.name,
      served: r.served === true,
      storage: r.storage === true,
      schema: asRecord(asRecord(r.schema)?.openAPIV3Schema),
    });
  }
  return out;
}

function crdName(crd: Json): string {
  const name = asRecord(crd.metadata)?.name;
  return typeof name === 'string' ? name : '(unnamed)';
}

/**
 * Every reason the change from `current` to `next` is unsafe. `ok` is true when the upgrade
 * may proceed. `file` names where the new CRD came from, for messages.
 */
export function checkCrdUpgrade(current: unknown, next: unknown, file?: string): ValidationResult {
  const cur = asRecord(current) ?? {};
  const nxt = asRecord(next) ?? {};
  const result = new ValidationResult(`CustomResourceDefinition ${crdName(nxt)}`);
  const where: Where = (field) => (file === undefined ? { field } : { file, field });

  const curScope = asRecord(cur.spec)?.scope;
  const nxtScope = asRecord(nxt.spec)?.scope;
  if (typeof curScope === 'string' && typeof nxtScope === 'string' && curScope !== nxtScope) {
    result.error('crd.scope-changed', `scope changed from ${curScope} to ${nxtScope}: stored objects would become unreachable`, where('spec.scope'));
  }

  const curVersions = versionsOf(cur);
  const nxtByName = new Map(versionsOf(nxt).map((v) => [v.name, v]));
  checkVersionsKept(curVersions, nxtByName, strings(asRecord(cur.status)?.storedVersions), result, where);

  for (const v of curVersions) {
    const n = nxtByName.get(v.name);
    if (n === undefined || v.schema === undefined) continue;
    const child = result.child(`version ${v.name}`);
    compareSchema(v.schema, n.schema ?? {}, '', (rule, message, field) => {
      child.error(rule, `version ${v.name}: ${message}`, where(field === '' ? '.' : field));
    });
  }
  return result;
}

type Where = (field: string) => { file?: string; field: string };

/** Stored versions stay in the CRD, and served versions stay served. */
function checkVersionsKept(curVersions: readonly CrdVersion[], nxtByName: ReadonlyMap<string, CrdVersion>, stored: readonly string[], result: ValidationResult, where: Where): void {
  for (const name of stored) {
    if (!nxtByName.has(name)) {
      result.error('crd.stored-version-removed', `version ${name} is in status.storedVersions but the new CRD drops it: objects stored as ${name} could no longer be read`, where('spec.versions'));
    }
  }
  for (const v of curVersions) {
    const n = nxtByName.get(v.name);
    if (!v.served || (n !== undefined && n.served)) continue;
    // Stored-version removal is reported above; do not say it twice.
    if (n === undefined && stored.includes(v.name)) continue;
    result.error('crd.served-version-removed', `version ${v.name} is served today and the new CRD ${n === undefined ? 'removes it' : 'stops serving it'}: clients using ${v.name} would break`, where('spec.versions'));
  }
}

type Report = (rule: string, message: string, field: string) => void;

const LOWER_BOUNDS = ['minimum', 'minLength', 'minItems', 'minProperties'] as const;
const UPPER_BOUNDS = ['maximum', 'maxLength', 'maxItems', 'maxProperties'] as const;

/** Walks both schemas in step and reports what the new one no longer accepts. */
function compareSchema(old: Json, neu: Json, path: string, report: Report): void {
  const label = path === '' ? 'the root' : `field ${path}`;
  checkType(old, neu, path, label, report);
  checkEnum(old, neu, path, label, report);
  checkRequired(old, neu, path, label, report);
  checkLimits(old, neu, path, label, report);
  checkDefault(old, neu, path, label, report);
  compareChildren(old, neu, path, report);
}

function checkType(old: Json, neu: Json, path: string, label: string, report: Report): void {

  if (typeof old.type === 'string' && typeof neu.type === 'string' && old.type !== neu.type) {
    report('crd.type-changed', `${label}: type changed from ${old.type} to ${neu.type}`, path);
  } else if (old.type === undefined && typeof neu.type === 'string' && old['x-kubernetes-int-or-string'] !== true && old['x-kubernetes-preserve-unknown-fields'] !== true) {
    report('crd.type-changed', `${label}: type narrowed from any to ${neu.type}`, path);
  } else if (old['x-kubernetes-int-or-string'] === true && neu['x-kubernetes-int-or-string'] !== true && typeof neu.type === 'string') {
    report('crd.type-changed', `${label}: type narrowed from int-or-string to ${neu.type}`, path);
  }

}

function checkEnum(old: Json, neu: Json, path: string, label: string, report: Report): void {
  // Enums: removing a value, or adding an enum where there was none, rejects stored values.
  const oldEnum = Array.isArray(old.enum) ? old.enum.map((e) => JSON.stringify(e)) : undefined;
  const newEnum = Array.isArray(neu.enum) ? neu.enum.map((e) => JSON.stringify(e)) : undefined;
  if (newEnum !== undefined) {
    if (oldEnum === undefined) {
      report('crd.enum-added', `${label}: an enum constraint was added (${newEnum.join(', ')})`, path);
    } else {
      const removed = oldEnum.filter((e) => !newEnum.includes(e));
      if (removed.length > 0) report('crd.enum-removed', `${label}: enum values removed: ${removed.join(', ')}`, path);
    }
  }

}

function checkRequired(old: Json, neu: Json, path: string, label: string, report: Report): void {
  // New required fields: stored objects without them would fail validation on their next write.
  const oldRequired = new Set(strings(old.required));
  const added = strings(neu.required).filter((r) => !oldRequired.has(r));
  for (const r of added) {
    report('crd.required-added', `${label}: new required field ${JSON.stringify(r)}`, path === '' ? `.${r}` : `${path}.${r}`);
  }

}

function checkLimits(old: Json, neu: Json, path: string, label: string, report: Report): void {
  for (const key of UPPER_BOUNDS) {
    const o = num(old[key]);
    const n = num(neu[key]);
    if (n === undefined) continue;
    if (o === undefined) report(`crd.${key.toLowerCase()}-added`, `${label}: ${key} ${n} was added`, path);
    else if (n < o) report(`crd.${key.toLowerCase()}-decreased`, `${label}: ${key} decreased from ${o} to ${n}`, path);
  }
  for (const key of LOWER_BOUNDS) {
    const o = num(old[key]);
    const n = num(neu[key]);
    if (n === undefined) continue;
    if (o === undefined) report(`crd.${key.toLowerCase()}-added`, `${label}: ${key} ${n} was added`, path);
    else if (n > o) report(`crd.${key.toLowerCase()}-increased`, `${label}: ${key} increased from ${o} to ${n}`, path);
  }
  for (const key of ['exclusiveMaximum', 'exclusiveMinimum'] as const) {
    if (neu[key] === true && old[key] !== true) report(`crd.${key.toLowerCase()}-added`, `${label}: ${key} was added`, path);
  }
  if (typeof neu.pattern === 'string' && neu.pattern !== old.pattern) {
    report(old.pattern === undefined ? 'crd.pattern-added' : 'crd.pattern-changed', `${label}: pattern ${old.pattern === undefined ? 'added' : `changed from ${JSON.stringify(old.pattern)}`} to ${JSON.stringify(neu.pattern)}`, path);
  }
  if (old.nullable === true && neu.nullable !== true) {
    report('crd.nullable-removed', `${label}: no longer nullable`, path);
  }
}

function checkDefault(old: Json, neu: Json, path: string, label: string, report: Report): void {
  if ('default' in old || 'default' in neu) {
    const o = JSON.stringify(old.default);
    const n = JSON.stringify(neu.default);
    if (o !== n) {
      const what = !('default' in old) ? `a default ${n} was added` : !('default' in neu) ? `the default ${o} was removed` : `the default changed from ${o} to ${n}`;
      report('crd.default-changed', `${label}: ${what}`, path);
    }
  }

}

function compareChildren(old: Json, neu: Json, path: string, report: Report): void {
  const oldProps = asRecord(old.properties);
  const newProps = asRecord(neu.properties) ?? {};
  if (oldProps !== undefined) {
    for (const [name, sub] of Object.entries(oldProps)) {
      const childPath = `${path}.${name}`;
      const oldSub = asRecord(sub) ?? {};
      const newSub = asRecord(newProps[name]);
      if (newSub === undefined) {
        // A field is only really gone when the parent does not keep unknown fields either.
        if (neu['x-kubernetes-preserve-unknown-fields'] !== true) {
          report('crd.field-removed', `field ${childPath} was removed: stored values would be pruned`, childPath);
        }
        continue;
      }
      compareSchema(oldSub, newSub, childPath, report);
    }
  }
  const oldItems = asRecord(old.items);
  const newItems = asRecord(neu.items);
  if (oldItems !== undefined && newItems !== undefined) compareSchema(oldItems, newItems, `${path}[*]`, report);
  const oldAdditional = asRecord(old.additionalProperties);
  const newAdditional = asRecord(neu.additionalProperties);
  if (oldAdditional !== undefined && newAdditional !== undefined) compareSchema(oldAdditional, newAdditional, `${path}.*`, report);
}
