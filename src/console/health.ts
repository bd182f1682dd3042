/**
 * One-word health, as the console shows it, and how it rolls up: a ClusterExtension's from its
 * Installed and Progressing conditions, a HelmOperator's from Ready, and a custom resource's
 * (a Helm operator's CR is one release) from the conditions operators conventionally set —
 * Deployed and ReleaseFailed for a Helm release, Ready, Available, Degraded and the like for
 * others. A resource that sets no condition is Unknown, never guessed Healthy.
 */
import type { ClusterExtension, HelmOperator } from '../api/types.js';
import { findCondition } from '../kube/types.js';
import type { ConditionView, Health, HealthCounts } from './contract/api-types.js';

export type HealthVerdict = { health: Health; message: string };

/** Healthy when installed at its generation and settled; Failing when it says so. */
export function healthOf(ce: ClusterExtension): HealthVerdict {
  if (ce.metadata.deletionTimestamp !== undefined) return { health: 'Deleting', message: 'uninstalling' };
  const installed = findCondition(ce.status?.conditions, 'Installed');
  const progressing = findCondition(ce.status?.conditions, 'Progressing');
  const current = ce.status?.observedGeneration === ce.metadata.generation;
  if (current && installed?.status === 'True' && progressing?.status === 'False') return { health: 'Healthy', message: installed.message };
  const failure = failureOf(installed, progressing);
  if (failure !== undefined) return { health: 'Failing', message: failure };
  return { health: 'Progressing', message: progressing?.message ?? installed?.message ?? 'waiting for the manager' };
}

/** What says the extension is failing: a retry whose message says so, or an install that stopped short. */
function failureOf(installed: ConditionLike | undefined, progressing: ConditionLike | undefined): string | undefined {
  if (progressing?.status === 'True' && FAILURE_TEXT.test(progressing.message)) return progressing.message;
  if (installed?.status === 'False' && progressing?.status === 'False') return installed.message;
  return undefined;
}

type ConditionLike = { status: string; message: string };

/** Serving its chart's kinds (Ready) or not, and why. */
export function helmOperatorHealth(hop: HelmOperator): HealthVerdict {
  if (hop.metadata.deletionTimestamp !== undefined) return { health: 'Deleting', message: 'being deleted' };
  const ready = findCondition(hop.status?.conditions, 'Ready');
  if (ready === undefined || hop.status?.observedGeneration !== hop.metadata.generation) return { health: 'Progressing', message: ready?.message ?? 'waiting for the manager' };
  if (ready.status === 'True') return { health: 'Healthy', message: ready.message };
  return { health: 'Failing', message: `${ready.reason}: ${ready.message}` };
}

const FAILURE_TEXT = /fail|refus|error|cannot|invalid/i;
/** Conditions that, when True, say the resource is failing. */
const FAILING_TYPES = ['ReleaseFailed', 'Irreconcilable', 'Degraded', 'Failed', 'Failure', 'Error', 'ReconcileError', 'ReconcileFailed'];
/** Reasons of a failing-type condition that are a wait, not a failure (the Helm operator's chart not fetched yet). */
const WAITING_REASONS = new Set(['ErrorGettingChart']);
/** Conditions that say the resource works, in the order they are trusted. */
const WORKING_TYPES = ['Ready', 'Available', 'Deployed', 'Succeeded', 'Healthy', 'Reconciled', 'ReconcileSuccess'];

export interface ConditionedObject {
  metadata: { generation?: number | undefined; deletionTimestamp?: string | undefined };
  conditions: readonly (ConditionView & { observedGeneration?: number | undefined })[];
}

/** A custom resource's health from its conditions (a Helm operator's CR: its release's). */
export function resourceHealth(o: ConditionedObject): HealthVerdict {
  if (o.metadata.deletionTimestamp !== undefined) return { health: 'Deleting', message: 'being deleted' };
  const cs = o.conditions;
  if (cs.length === 0) return { health: 'Unknown', message: 'it reports no conditions' };
  const said = (c: ConditionView): string => `${c.type}: ${c.message === '' ? c.reason : c.message}`;
  for (const type of FAILING_TYPES) {
    const c = cs.find((x) => x.type === type && x.status === 'True');
    if (c === undefined) continue;
    return { health: WAITING_REASONS.has(c.reason) ? 'Progressing' : 'Failing', message: said(c) };
  }
  const paused = cs.find((x) => x.type === 'Paused' && x.status === 'True');
  if (paused !== undefined) return { health: 'Progressing', message: said(paused) };
  const gen = o.metadata.generation;
  const stale = gen === undefined ? undefined : cs.find((x) => x.observedGeneration !== undefined && x.observedGeneration < gen);
  if (stale !== undefined) return { health: 'Progressing', message: `generation ${gen ?? ''} not yet observed (${stale.type} is of generation ${stale.observedGeneration ?? ''})` };
  for (const type of WORKING_TYPES) {
    const c = cs.find((x) => x.type === type);
    if (c === undefined || c.status === 'Unknown') continue;
    if (c.status === 'True') return { health: 'Healthy', message: `${c.type}${c.reason === '' ? '' : ` (${c.reason})`}` };
    return { health: FAILURE_TEXT.test(`${c.reason} ${c.message}`) ? 'Failing' : 'Progressing', message: said(c) };
  }
  const progressing = cs.find((x) => x.type === 'Progressing' && x.status === 'True');
  if (progressing !== undefined) return { health: 'Progressing', message: said(progressing) };
  return { health: 'Unknown', message: `no condition says: ${cs.map((c) => `${c.type}=${c.status}`).join(', ')}` };
}

export function emptyCounts(): HealthCounts {
  return { Healthy: 0, Progressing: 0, Failing: 0, Deleting: 0, Unknown: 0 };
}

/** How many of each health. */
export function countHealth(list: Iterable<{ health: Health }>, into: HealthCounts = emptyCounts()): HealthCounts {
  for (const x of list) into[x.health] += 1;
  return into;
}
