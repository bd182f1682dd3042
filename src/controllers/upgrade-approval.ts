/**
 * Approving an upgrade from its plan (issue 31 §1; the API is `src/api/approval.ts`). The
 * ClusterExtension and HelmOperator reconcilers ask `decideApproval` whether the change they
 * are about to make may go ahead: only when its plan's digest is the one approved. Otherwise
 * the plan is shown in status (a newer plan superseding an older one says so) and nothing
 * changes. The digest covers what the change would do — the chosen bundles' or chart's
 * digests, the rendered manifests, the CRD-safety verdicts — never the live cluster's drift,
 * so a poll that finds nothing new keeps the same digest and an approval stays valid.
 */
import type { Logger } from 'pino';
import { sha256Digest } from '../oci/digest.js';
import { formatReference, parseReference, withDigest } from '../oci/reference.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { KubeClient } from '../kube/client.js';
import type { Plan, PlanRequest } from '../actions/plan.js';
import type { Renderer } from '../render/index.js';
import type { ChosenBundle } from '../resolve/index.js';
import { unitOf, type InstalledState } from '../installed/index.js';
import { ANNOTATION_APPROVED_PLAN, type PendingPlan } from '../api/approval.js';
import type { ClusterExtension, HelmOperator } from '../api/types.js';

/** A plan as computed, before it is compared with what was shown and approved. */
export type PlannedChange = Pick<PendingPlan, 'digest' | 'changes' | 'objects' | 'crdSafety' | 'missingPermissions'>;

export interface ApprovalDecision {
  approved: boolean;
  /** The plan to show in status while it is not approved. */
  pending?: PendingPlan;
  message: string;
}

/** How many created, changed or deleted objects the pending plan names (the counts cover all). */
const MAX_LISTED_OBJECTS = 20;

export function planDigest(content: unknown): string {
  return sha256Digest(canonicalJson(content));
}

/** The digest approved on `obj` (its `binnacle.dev/approved-plan` annotation), if any. */
export function approvedDigest(obj: ClusterExtension | HelmOperator): string | undefined {
  const v = obj.metadata.annotations?.[ANNOTATION_APPROVED_PLAN]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/**
 * Goes ahead only when `approved` names `planned`'s digest. Otherwise the pending plan keeps
 * the time it was first shown while its digest stays the same; a different digest supersedes
 * the plan shown before, and an approval of that older plan is refused with the reason.
 */
export function decideApproval(input: { planned: PlannedChange; approved: string | undefined; previous: PendingPlan | undefined; now: Date; what: string; approveCommand: string }): ApprovalDecision {
  const { planned, approved, previous } = input;
  if (approved === planned.digest) return { approved: true, message: `plan ${planned.digest} approved` };
  const same = previous?.digest === planned.digest;
  const supersedes = same ? previous.supersedes : previous?.digest;
  const parts = [`${input.what} awaits approval of plan ${planned.digest} (${input.approveCommand} --digest ${planned.digest})`];
  if (supersedes !== undefined) parts.push(`it supersedes plan ${supersedes}, which was not approved`);
  if (approved !== undefined) {
    parts.push(approved === supersedes ? `the approval of ${approved} is not applied: that plan was superseded before it was applied` : `the approval of ${approved} is not applied: it names no plan awaiting approval`);
  }
  const message = parts.join('; ');
  const pending: PendingPlan = { ...planned, ...(supersedes === undefined ? {} : { supersedes }), since: same ? previous.since : input.now.toISOString(), message };
  return { approved: false, pending, message };
}

/**
 * Whether a ClusterExtension's resolution needs an approval first: `install` for a first
 * install with `spec.install.approval: Manual`; `upgrade` when, with `spec.upgradeApproval:
 * Manual`, any bundle of the set would move to another version (up or down) or be added.
 */
export function approvalNeeded(ce: ClusterExtension, installed: InstalledState, chosen: readonly ChosenBundle[]): 'install' | 'upgrade' | undefined {
  if (chosen.length === 0) return undefined;
  if (unitOf(installed, ce.spec.source.catalog.packageName) === undefined) return ce.spec.install?.approval === 'Manual' ? 'install' : undefined;
  if (ce.spec.upgradeApproval !== 'Manual') return undefined;
  return chosen.some((b) => unitOf(installed, b.package)?.version !== b.version) ? 'upgrade' : undefined;
}

/** "~ Deployment ns/name", as `binnacle plan` marks objects. */
function objectLine(o: Plan['bundles'][number]['objects'][number]): string {
  const mark = { create: '+', update: '~', delete: '-', unchanged: '=' }[o.action];
  return `${mark} ${o.kind} ${o.namespace === undefined ? '' : `${o.namespace}/`}${o.name}`;
}

/**
 * The pending plan of `binnacle plan`'s plan. The digest is over the chosen bundles (with the
 * digests their images were pulled by and the versions they replace), their rendered
 * manifests and the CRD-safety verdicts; the object diff and missing RBAC are shown, not
 * digested: they follow the live cluster.
 */
export function plannedFromPlan(plan: Plan): PlannedChange {
  const crdSafety = plan.bundles.flatMap((b) => b.crdSafety.map((c) => ({ crd: c.crd, safe: c.safe, ...(c.problems.length === 0 ? {} : { problems: c.problems.map((p) => `${p.message} (${p.rule})`) }) })));
  const digest = planDigest({
    bundles: plan.bundles.map((b) => ({ name: b.bundle.name, package: b.bundle.package, version: b.bundle.version, image: b.bundle.image, imageDigest: b.imageDigest, manifestDigest: b.manifestDigest, from: b.from })),
    crdSafety,
  });
  const all = plan.bundles.flatMap((b) => b.objects);
  const count = (a: string): number => all.filter((o) => o.action === a).length;
  const changed = all.filter((o) => o.action !== 'unchanged').map(objectLine);
  const missing = plan.bundles.flatMap((b) => b.missingPermissions ?? []);
  return {
    digest,
    changes: plan.bundles.map((b) => ({ name: b.bundle.name, package: b.bundle.package, ...(b.from === undefined ? {} : { from: b.from }), to: b.bundle.version, ref: b.bundle.image, digest: b.imageDigest })),
    objects: { create: count('create'), update: count('update'), delete: count('delete'), unchanged: count('unchanged'), ...(changed.length === 0 ? {} : { changed: changed.slice(0, MAX_LISTED_OBJECTS) }) },
    crdSafety,
    missingPermissions: missing,
  };
}

/** What `binnacle plan` would be asked for this extension. */
export function planRequestOf(ce: ClusterExtension): PlanRequest {
  const cat = ce.spec.source.catalog;
  const install = ce.spec.install;
  // Several watched namespaces (MultiNamespace) are not something `plan` renders yet: the first stands for them.
  const watch = install?.watchNamespaces?.[0] ?? install?.watchNamespace;
  return {
    name: ce.metadata.name ?? '',
    packageName: cat.packageName,
    namespace: ce.spec.namespace,
    ...(watch === undefined ? {} : { watchNamespace: watch }),
    ...(install?.config === undefined ? {} : { config: install.config }),
    serviceAccount: ce.spec.serviceAccount.name,
    ...(ce.spec.serviceAccount.namespace === undefined ? {} : { serviceAccountNamespace: ce.spec.serviceAccount.namespace }),
  };
}

export interface ExtensionPlanInput {
  extension: ClusterExtension;
  chosen: readonly ChosenBundle[];
  installed: InstalledState;
}

/**
 * The ClusterExtension reconciler's planner, as the manager gives it: `binnacle plan`'s own planning
 * over the manager's client (it changes nothing: reads, server-side dry runs and access reviews;
 * its render writes nothing), with a renderer of its own. The last plan of each extension is kept while its inputs stay the same, so a
 * re-poll neither pulls nor renders again.
 */
export function extensionPlanner(client: KubeClient, opts: { cacheDir: string; logger?: Logger; resolveDigest?: (image: string) => Promise<string> }): (input: ExtensionPlanInput) => Promise<PlannedChange> {
  const last = new Map<string, { key: string; planned: PlannedChange }>();
  let renderer: Renderer | undefined;
  const resolveDigest = opts.resolveDigest ?? (async (image: string) => (await new (await import('../oci/index.js')).RegistryClient({ registries: 'system' }).resolveImage(image)).digest);
  return async ({ extension, chosen: asked, installed }) => {
    const name = extension.metadata.name ?? '';
    // Planned and kept by the digests the images point to now: a tag that moved is a new plan.
    const chosen = await pinToDigests(asked, resolveDigest);
    const key = canonicalJson({ uid: extension.metadata.uid, generation: extension.metadata.generation, chosen: chosen.map((b) => [b.name, b.image]), from: chosen.map((b) => unitOf(installed, b.package)?.version ?? '') });
    const hit = last.get(name);
    if (hit?.key === key) return hit.planned;
    const [{ planChosen }, { createRenderer }] = await Promise.all([import('../actions/plan.js'), import('../render/index.js')]);
    renderer ??= createRenderer();
    const plan = await planChosen(client, planRequestOf(extension), chosen, installed, { cacheDir: opts.cacheDir, renderer });
    for (const w of plan.warnings) opts.logger?.info({ extension: name, warning: w }, 'plan awaiting approval');
    const planned = plannedFromPlan(plan);
    last.set(name, { key, planned });
    return planned;
  };
}

/** The chosen bundles with their OCI images named by the digest they point to now (ConfigMaps and pinned ones as they are). */
async function pinToDigests(chosen: readonly ChosenBundle[], resolveDigest: (image: string) => Promise<string>): Promise<ChosenBundle[]> {
  const out: ChosenBundle[] = [];
  for (const b of chosen) {
    if (b.image === '' || b.image.includes('@') || b.image.startsWith('configmaps://')) out.push(b);
    else out.push({ ...b, image: formatReference(withDigest(parseReference(b.image), await resolveDigest(b.image))) });
  }
  return out;
}
