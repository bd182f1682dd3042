/**
 * The chart defaults a release changes. A chart operator's CRD carries no defaults (the chart's
 * values.yaml supplies them at render time), so CRD upgrade safety cannot see a changed
 * default; yet every custom resource that leaves the value unset changes with it on upgrade.
 * `helm bundle` writes each kind's example with the chart's defaults as its spec
 * (`alm-examples`), so the previous bundle's examples and the new one's tell what changed.
 */
import { isRecord } from '../../util/object.js';

export interface ChangedDefault {
  kind: string;
  /** `spec.replicaCount`, `spec.service.type`. */
  path: string;
  from: unknown;
  /** Undefined when the new chart has no default there any more. */
  to?: unknown;
}

/** The examples of an `alm-examples` annotation, by kind; none when it is absent or not JSON. */
function specsByKind(almExamples: string | undefined): Map<string, unknown> {
  const out = new Map<string, unknown>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(almExamples ?? '[]');
  } catch {
    return out;
  }
  for (const e of Array.isArray(parsed) ? parsed : []) if (isRecord(e) && typeof e.kind === 'string') out.set(e.kind, e.spec);
  return out;
}

function diff(kind: string, before: unknown, after: unknown, path: string, out: ChangedDefault[]): void {
  if (isRecord(before) && isRecord(after)) {
    for (const [k, v] of Object.entries(before)) diff(kind, v, after[k], `${path}.${k}`, out);
    return;
  }
  if (after === undefined) {
    out.push({ kind, path, from: before });
    return;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) out.push({ kind, path, from: before, to: after });
}

/** Defaults changed or removed from one bundle's examples to the next's; defaults added are left out (they change nothing set before). */
export function changedDefaults(before: string | undefined, after: string | undefined): ChangedDefault[] {
  const next = specsByKind(after);
  const out: ChangedDefault[] = [];
  for (const [kind, spec] of specsByKind(before)) if (next.has(kind)) diff(kind, spec, next.get(kind), 'spec', out);
  return out;
}

/** One changed default in a sentence. */
export function describeChangedDefault(d: ChangedDefault, since: string): string {
  const what = d.to === undefined ? `${JSON.stringify(d.from)} is no longer a default` : `default ${JSON.stringify(d.from)} → ${JSON.stringify(d.to)}`;
  return `${d.kind} ${d.path}: ${what} since ${since}: custom resources that leave it unset change with the upgrade`;
}
