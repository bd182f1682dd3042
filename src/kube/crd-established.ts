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
 * kube-apiserver queues a CRD for establishing only on an update event: one whose names were
 * accepted by a server that then died before establishing it comes back as an add event and
 * stays `Installing` until something changes it; and a status write of its establishing
 * controller that failed for another reason than a conflict (a timeout of a loaded etcd, of a
 * CRD of 400 KB) is retried with a backoff that doubles up to 1,000 s. Each NUDGE_AFTER_MS that
 * it stays so with its names accepted, the wait changes an annotation of its own on the CRD (its
 * own field manager: no drift of anyone's fields), which is such an update and queues it at once.
 */
const NUDGE_AFTER_MS = 10_000;
const NUDGE_ANNOTATION = 'binnacle.dev/establishing-nudged';

export interface EstablishClient {
  find(ref: ObjectRef): Promise<KubeObject | undefined>;
  /** Server-side apply; without it the wait cannot nudge a stuck CRD. */
  apply?(obj: KubeObject, opts?: { fieldManager?: string; force?: boolean }): Promise<KubeObject>;
}

function namesAccepted(crd: KubeObject): boolean {
  const raw = (crd.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(raw) && raw.some((c: Condition) => c.type === 'NamesAccepted' && c.status === 'True');
}

async function nudge(apply: NonNullable<EstablishClient['apply']>, name: string): Promise<void> {
  const obj: KubeObject = { apiVersion: CRD_API_VERSION, kind: 'CustomResourceDefinition', metadata: { name, annotations: { [NUDGE_ANNOTATION]: new Date().toISOString() } } };
  // A failed nudge changes nothing the wait relies on: it goes on waiting.
  await apply(obj, { fieldManager: 'binnacle-establish', force: true }).catch(() => undefined);
}

/**
 * Waits until every named CRD is Established, all within `timeoutMs`. Past it: names the server
 * refused are CRD_NAMES_NOT_ACCEPTED (terminal, a verdict); anything else CRD_NOT_ESTABLISHED,
 * transient (isTransient: retried with backoff, never a failed release).
 */
export async function waitCrdsEstablished(
  client: EstablishClient,
  names: readonly string[],
  o: { timeoutMs: number; intervalMs?: number; nudgeAfterMs?: number },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (const name of names) {
    let lastNudge = Date.now();
    const probe = async (): Promise<{ established: boolean; reason: string }> => {
      const live = await client.find({ apiVersion: CRD_API_VERSION, kind: 'CustomResourceDefinition', name });
      if (live === undefined) return { established: false, reason: 'not found' };
      const e = crdEstablishment(live);
      if (!e.established && client.apply !== undefined && namesAccepted(live) && Date.now() - lastNudge >= (o.nudgeAfterMs ?? NUDGE_AFTER_MS)) {
        lastNudge = Date.now();
        await nudge(client.apply.bind(client), name);
      }
      return e;
    };
    const r = await pollUntil(probe, (v) => v.established, { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: o.intervalMs ?? 200 });
    if (r.done) continue;
    const what = `CustomResourceDefinition ${name} is not Established after ${formatDuration(o.timeoutMs)}: ${r.value.reason}`;
    if (r.value.reason.startsWith(NAMES_NOT_ACCEPTED)) throw new BinnacleError('terminal', 'CRD_NAMES_NOT_ACCEPTED', what);
    throw new BinnacleError('transient', 'CRD_NOT_ESTABLISHED', what);
  }
}
