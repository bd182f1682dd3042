/**
 * `approve`: approving the plan a ClusterExtension or HelmOperator shows in
 * `status.pendingPlan` (issue 31 §1, `api/approval.ts`), by writing its digest into the
 * `binnacle.dev/approved-plan` annotation as the person asking (the CLI's kubeconfig, the
 * console's login): whoever may edit the object may approve. The controller, not this action,
 * decides: it applies a change only when the annotation names the digest of the plan it would
 * carry out now. Here a digest that is not the one shown is refused early, with the reason.
 */
import { ANNOTATION_APPROVED_PLAN, type PendingPlan } from '../api/approval.js';
import { olmv1TwinOf } from '../api/olmv1/twin.js';
import { API_VERSION, type ClusterExtension, type HelmOperator } from '../api/types.js';
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import { InputError } from '../util/errors.js';
import { extensionRefOf } from './extension-ref.js';

export type ApprovableKind = 'ClusterExtension' | 'HelmOperator';

export interface ApproveRequest {
  kind: ApprovableKind;
  name: string;
  /** The digest seen; without it, the digest the object shows now. */
  digest?: string;
}

export interface ApproveResult {
  kind: ApprovableKind;
  name: string;
  digest: string;
  plan: PendingPlan;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Writes the approval of the pending plan's digest; refuses when there is none or `digest` is not it. */
export async function approvePlan(client: Pick<ObjectReader, 'get'> & Pick<ObjectWriter, 'patch'>, req: ApproveRequest): Promise<ApproveResult> {
  if (req.digest !== undefined && !DIGEST.test(req.digest)) throw new InputError('APPROVAL_DIGEST', `${req.digest} is not a plan digest (sha256: and 64 hex digits)`, { field: 'digest' });
  const ref = { apiVersion: API_VERSION, kind: req.kind, name: req.name };
  const obj = await client.get<ClusterExtension | HelmOperator>(ref);
  const plan = obj.status?.pendingPlan;
  if (plan === undefined) throw new InputError('NO_PENDING_PLAN', `${req.kind} ${req.name} has no plan awaiting approval (status.pendingPlan is empty)`);
  const digest = req.digest ?? plan.digest;
  if (digest !== plan.digest) {
    const why = plan.supersedes === digest ? `it was superseded by plan ${plan.digest}` : `the plan awaiting approval is ${plan.digest}`;
    throw new InputError('PLAN_SUPERSEDED', `${req.kind} ${req.name}: plan ${digest} is not the one awaiting approval: ${why}; look at it and approve that digest`, { field: 'digest' });
  }
  const approval = { annotations: { [ANNOTATION_APPROVED_PLAN]: digest } };
  if (req.kind === 'ClusterExtension' && olmv1TwinOf(obj) !== undefined) {
    // An OLM v1 ClusterExtension's twin is the manager's: the approval goes on the OLM v1 object
    // (that very one: its UID), which hands it to the twin; the controller applies only the plan of that digest.
    await client.patch(extensionRefOf(obj), { metadata: { uid: olmv1TwinOf(obj), ...approval } });
  } else {
    // resourceVersion: the approval goes only onto the object as read, so the plan shown is the plan approved.
    await client.patch(ref, { metadata: { resourceVersion: obj.metadata.resourceVersion, ...approval } });
  }
  return { kind: req.kind, name: req.name, digest, plan };
}

/** "upgrade op.v1.0.0 → op.v2.0.0; 1 to create, 2 to change, …" */
export function planSummary(plan: PendingPlan): string {
  const changes = plan.changes.map((c) => `${c.package ?? c.name} ${c.from ?? '(new)'} → ${c.to}`).join(', ');
  const o = plan.objects;
  const objects = o === undefined ? '' : `; ${o.create} to create, ${o.update} to change, ${o.delete} to delete, ${o.unchanged} unchanged`;
  const unsafe = (plan.crdSafety ?? []).filter((c) => !c.safe).map((c) => c.crd);
  const crds = unsafe.length === 0 ? '' : `; unsafe CRD changes: ${unsafe.join(', ')}`;
  const rbac = (plan.missingPermissions ?? []).length === 0 ? '' : `; the ServiceAccount lacks ${(plan.missingPermissions ?? []).length} permission(s)`;
  return `${changes}${objects}${crds}${rbac}`;
}
