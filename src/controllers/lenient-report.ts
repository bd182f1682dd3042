/**
 * How a BundleDeployment reports what the applier did differently from the bundle, as OLM
 * would: fields their schemas do not declare were dropped (`status.warnings`, and a Warning
 * Event for each new one), and objects of optional APIs the cluster does not serve were
 * skipped (the `OptionalObjectsSkipped` condition names them, with an Event when that set
 * changes). Pure: the reconciler writes what this answers.
 */
import type { ApplyResult } from '../apply/index.js';
import type { ApplyWarning } from '../api/types.js';
import type { EventType } from '../kube/events.js';
import { describeRef } from '../kube/types.js';

export const SKIPPED_CONDITION = 'OptionalObjectsSkipped';
/** How often a BundleDeployment with skipped objects looks again whether their APIs appeared. */
export const SKIPPED_RECHECK_MS = 30_000;

/** Warnings kept in status; the rest are counted in the last one. */
const MAX_WARNINGS = 100;
/** Events recorded in one reconcile; the rest are summed up in one more. */
const MAX_EVENTS = 20;

export interface ReportEvent {
  type: EventType;
  reason: string;
  message: string;
}

export interface LenientReport {
  warnings: ApplyWarning[];
  /** The condition to set, or undefined to remove it (nothing skipped). */
  skipped: { reason: string; message: string } | undefined;
  /** What is new since the previous status. */
  events: ReportEvent[];
}

export function lenientReport(result: Pick<ApplyResult, 'droppedFields' | 'skipped'>, previous: { warnings?: readonly ApplyWarning[] | undefined; skippedMessage?: string | undefined }): LenientReport {
  const entries = (result.droppedFields ?? []).map((d) => ({
    renamed: d.renamedTo !== undefined,
    warning: {
      object: describeRef(d.object),
      field: d.path,
      message:
        d.renamedTo === undefined
          ? `not declared by its schema (${d.schema}); dropped, as OLM does, and the rest applied`
          : `not declared by its schema (${d.schema}) but for case; applied as ${d.renamedTo}, as OLM's decoding matches field names`,
    },
  }));
  const all = entries.map((e) => e.warning);
  const warnings = all.length <= MAX_WARNINGS ? all : [...all.slice(0, MAX_WARNINGS - 1), { object: '…', field: '…', message: `${all.length - MAX_WARNINGS + 1} more fields dropped` }];
  const seen = new Set((previous.warnings ?? []).map((w) => `${w.object}\u0000${w.field}`));
  const fresh = entries.filter((e) => !seen.has(`${e.warning.object}\u0000${e.warning.field}`));
  const events: ReportEvent[] = fresh.slice(0, MAX_EVENTS).map((e) => ({
    type: 'Warning',
    reason: e.renamed ? 'FieldNameCaseCorrected' : 'UnknownFieldDropped',
    message: `${e.warning.object}: ${e.warning.field} is ${e.warning.message}`,
  }));
  if (fresh.length > MAX_EVENTS) events.push({ type: 'Warning', reason: 'UnknownFieldDropped', message: `${fresh.length - MAX_EVENTS} more undeclared fields; see status.warnings` });

  const skippedObjects = result.skipped ?? [];
  let skipped: LenientReport['skipped'];
  if (skippedObjects.length > 0) {
    const what = skippedObjects.map((s) => `${describeRef(s.object)} (${s.reason})`).join('; ');
    const n = skippedObjects.length;
    skipped = { reason: 'APINotServed', message: `skipped ${n} object${n === 1 ? '' : 's'} of optional APIs the cluster does not serve, applied once it does: ${what}` };
    if (skipped.message !== previous.skippedMessage) events.push({ type: 'Normal', reason: 'OptionalObjectsSkipped', message: skipped.message });
  }
  return { warnings, skipped, events };
}
