/**
 * Whether the API server serves a CustomResourceDefinition yet, and the one wait for it that
 * every installer shares (Binnacle's own CRDs, a release's, a HelmOperator's kind, OpenShift's
 * APIs on the local control plane). Established=True is the server's word that the kind is
 * served; NamesAccepted=False is its verdict that the names conflict; anything else is the
 * server not having got to it yet (its naming controller lags after a restart or under load).
 */
import { BinnacleError } from '../util/errors.js';
import { formatDuration } from '../util/duration.js';
import { pollUntil } from '../util/deadline.js';
import type { KubeObject, ObjectRef } from './types.js';

export const CRD_API_VERSION = 'apiextensions.k8s.io/v1';

/** How crdEstablishment's reason starts when the server refused the CRD's names. */
export const NAMES_NOT_ACCEPTED = 'names not accepted';

interface Condition {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
}

function conditionText(c: Condition): string {
  return [c.reason, c.message].filter((x): x is string => typeof x === 'string' && x !== '').join(': ');
}

/** Established or not, and why not, from a live CRD's conditions. */
export function crdEstablishment(crd: KubeObject): { established: boolean; reason: string } {
  const raw = (crd.status as { conditions?: unknown } | undefined)?.conditions;
  const conds = (Array.isArray(raw) ? raw : []).filter((c): c is Condition => typeof c === 'object' && c !== null);
  const names = conds.find((c) => c.type === 'NamesAccepted');
  if (names?.status === 'False') return { established: false, reason: `${NAMES_NOT_ACCEPTED}: ${conditionText(names)}` };
  const est = conds.find((c) => c.type === 'Established');
  if (est?.status === 'True') return { established: true, reason: 'Established' };
  return { established: false, reason: est === undefined ? 'not yet Established' : `not Established: ${conditionText(est)}` };
}

/**
 * Waits until every named CRD is Established, all within `timeoutMs`. Past it: names the server
 * refused are CRD_NAMES_NOT_ACCEPTED (terminal, a verdict); anything else CRD_NOT_ESTABLISHED,
 * transient (isTransient: retried with backoff, never a failed release).
 */
export async function waitCrdsEstablished(
  client: { find(ref: ObjectRef): Promise<KubeObject | undefined> },
  names: readonly string[],
  o: { timeoutMs: number; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (const name of names) {
    const probe = async (): Promise<{ established: boolean; reason: string }> => {
      const live = await client.find({ apiVersion: CRD_API_VERSION, kind: 'CustomResourceDefinition', name });
      return live === undefined ? { established: false, reason: 'not found' } : crdEstablishment(live);
    };
    const r = await pollUntil(probe, (v) => v.established, { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: o.intervalMs ?? 200 });
    if (r.done) continue;
    const what = `CustomResourceDefinition ${name} is not Established after ${formatDuration(o.timeoutMs)}: ${r.value.reason}`;
    if (r.value.reason.startsWith(NAMES_NOT_ACCEPTED)) throw new BinnacleError('terminal', 'CRD_NAMES_NOT_ACCEPTED', what);
    throw new BinnacleError('transient', 'CRD_NOT_ESTABLISHED', what);
  }
}
