/**
 * How a BundleDeployment or a Helm operator's custom resource says what a resync found of drift
 * (see apply/drift-policy.ts): the `Drifted` condition (True only in Warn mode, where drift
 * stays; a repair says what it took back), and a Warning Event naming each object and field:
 * once per new finding in Warn mode, on every repair in Repair mode. Mode Off: no condition.
 * Pure: the reconciler writes what this answers.
 */
import { driftMode, type ApplyResult, type FieldDrift, type ObjectDrift } from '../apply/index.js';
import type { DriftSpec } from '../api/types.js';
import type { ReportEvent } from './lenient-report.js';

export const DRIFT_CONDITION = 'Drifted';

const MAX_OBJECTS = 10;
const MAX_FIELDS = 5;
const MAX_VALUE = 60;

export interface DriftOutcome {
  /** The condition to set, or undefined to remove it (mode Off). */
  condition: { status: boolean; reason: string; message: string } | undefined;
  events: ReportEvent[];
}

const shown = (v: unknown): string => {
  const text = JSON.stringify(v) ?? 'null';
  return text.length <= MAX_VALUE ? text : `${text.slice(0, MAX_VALUE)}…`;
};

function describeField(f: FieldDrift): string {
  if (f.hidden === true) return `${f.path} (values hidden)`;
  if (f.manifest === undefined) return `${f.path} (not in the manifest, live ${shown(f.live)})`;
  if (f.live === undefined) return `${f.path} (manifest ${shown(f.manifest)}, unset live)`;
  return `${f.path} (manifest ${shown(f.manifest)}, live ${shown(f.live)})`;
}

function describeDrift(o: ObjectDrift): string {
  const what = `${o.kind} ${o.namespace === undefined || o.namespace === '' ? '' : `${o.namespace}/`}${o.name}`;
  if (o.state !== 'changed') return `${what}: ${o.state}${o.message === undefined ? '' : ` (${o.message})`}`;
  const fields = o.fields.slice(0, MAX_FIELDS).map(describeField);
  const more = o.fields.length > MAX_FIELDS ? ` and ${o.fields.length - MAX_FIELDS} more fields` : '';
  return `${what}: ${fields.join(', ')}${more}`;
}

/** One line naming every drifted object and field (the first few of each). */
export function describeDrifted(drifted: readonly ObjectDrift[]): string {
  const lines = drifted.slice(0, MAX_OBJECTS).map(describeDrift);
  const more = drifted.length > MAX_OBJECTS ? `; and ${drifted.length - MAX_OBJECTS} more objects` : '';
  return `${lines.join('; ')}${more}`;
}

/** What to say of `result`'s drift under `spec`, given the condition's previous message. */
export function driftOutcome(result: Pick<ApplyResult, 'drift' | 'revision'>, spec: DriftSpec | undefined, previousMessage: string | undefined): DriftOutcome {
  const mode = driftMode(spec);
  if (mode === 'Off') return { condition: undefined, events: [] };
  const drift = result.drift;
  // A new revision was applied (an install, an upgrade): nothing was compared.
  if (drift === undefined) return { condition: { status: false, reason: 'Applied', message: `revision ${result.revision} applied` }, events: [] };
  if (drift.drifted.length === 0) return { condition: { status: false, reason: 'NoDrift', message: 'the live objects match the deployed revision (ignored fields aside)' }, events: [] };
  const what = describeDrifted(drift.drifted);
  if (drift.mode === 'Warn') {
    const message = `drift left in place (spec.drift.mode Warn): ${what}`;
    return { condition: { status: true, reason: 'DriftDetected', message }, events: message === previousMessage ? [] : [{ type: 'Warning', reason: 'DriftDetected', message }] };
  }
  const message = `drift repaired: ${what}`;
  return { condition: { status: false, reason: 'DriftRepaired', message }, events: [{ type: 'Warning', reason: 'DriftRepaired', message }] };
}
