/**
 * Installs (or updates) Binnacle's CRDs and waits until the API server serves them; beside them,
 * OLM v1's (`olm.operatorframework.io/v1` ClusterExtension and ClusterCatalog, operator-controller
 * v1.11.0's experimental variant, vendored unchanged: src/api/olmv1/crds/README.md says why
 * experimental — a superset of standard, so every standard object stays valid, and it keeps
 * `spec.config.inline` and `spec.progressDeadlineMinutes`, which Binnacle honours, from being
 * pruned). OLM v1's CRDs are left alone when someone else installed them (operator-controller's
 * chart, OpenShift's cluster-olm-operator): the manager then does not serve the OLM v1 kinds.
 */
import type { Logger } from 'pino';
import type { Discovery, ObjectReader, ObjectWriter } from '../kube/ports.js';
import { ALL_CRDS } from '../api/crds.js';
import { loadOlmv1Crd, loadOlmv1Crds } from '../api/olmv1/crds.js';
import { OLMV1_API_VERSION, OLMV1_GROUP } from '../api/olmv1/types.js';
import { OPERATOR_CONDITION_API_VERSION, OPERATOR_CONDITION_CRD } from '../api/operator-condition.js';
import { API_VERSION } from '../api/types.js';
import { waitCrdsEstablished } from '../kube/crd-established.js';
import { managedFieldsOf, type KubeObject } from '../kube/types.js';

type CrdClient = Pick<ObjectReader, 'find'> & Pick<ObjectWriter, 'apply'> & Pick<Discovery, 'invalidateDiscovery'>;

export async function ensureCrds(client: CrdClient, timeoutMs = 60_000): Promise<void> {
  for (const crd of ALL_CRDS) await client.apply(crd, { force: true });
  // issue 12 §4: OLM's OperatorCondition CRD, unless OLM (or anyone but Binnacle) already installed it.
  const existing = await client.find({ apiVersion: OPERATOR_CONDITION_CRD.apiVersion, kind: OPERATOR_CONDITION_CRD.kind, name: OPERATOR_CONDITION_CRD.metadata.name ?? '' });
  if (existing === undefined || existing.metadata.labels?.['app.kubernetes.io/part-of'] === 'binnacle') await client.apply(OPERATOR_CONDITION_CRD, { force: true });
  await waitCrdsEstablished(client, [...ALL_CRDS, OPERATOR_CONDITION_CRD].map((c) => c.metadata.name ?? ''), { timeoutMs });
  client.invalidateDiscovery(API_VERSION);
  client.invalidateDiscovery(OPERATOR_CONDITION_API_VERSION);
}

/**
 * The mark of an OLM v1 CRD the manager installed. Not install-self's labels: install-self never
 * lists, prunes or deletes these (`uninstall-self` deleting them would delete every OLM v1
 * ClusterExtension and ClusterCatalog in the cluster).
 */
export const OLMV1_CRD_LABELS = { 'app.kubernetes.io/part-of': 'binnacle', 'app.kubernetes.io/managed-by': 'binnacle-manager' } as const;

/** Whether the manager installed this live OLM v1 CRD (and so may update it). */
export function isOurOlmv1Crd(live: KubeObject): boolean {
  return live.metadata.labels?.['app.kubernetes.io/managed-by'] === OLMV1_CRD_LABELS['app.kubernetes.io/managed-by'];
}

/** Who installed an OLM v1 CRD that is not Binnacle's, in words, from its labels, annotations and field managers. */
export function olmv1CrdOwner(live: KubeObject): string {
  const labels = live.metadata.labels ?? {};
  const annotations = live.metadata.annotations ?? {};
  const managers = [...new Set(managedFieldsOf(live).map((f) => f.manager).filter((m): m is string => typeof m === 'string'))];
  const openshift = Object.keys(annotations).some((k) => k.startsWith('include.release.openshift.io/') || k === 'capability.openshift.io/name') || managers.includes('cluster-olm-operator');
  const who = openshift ? "OpenShift's cluster-olm-operator" : labels['app.kubernetes.io/part-of'] === 'olm' || annotations['olm.operatorframework.io/generator'] !== undefined ? 'operator-controller (OLM v1)' : 'another installer';
  const facts: string[] = [];
  const release = annotations['meta.helm.sh/release-name'];
  if (release !== undefined) facts.push(`Helm release ${annotations['meta.helm.sh/release-namespace'] ?? ''}/${release}`);
  if (annotations['olm.operatorframework.io/generator'] !== undefined) facts.push(`generator ${annotations['olm.operatorframework.io/generator']}`);
  if (managers.length > 0) facts.push(`field managers ${managers.join(', ')}`);
  return facts.length === 0 ? who : `${who} (${facts.join('; ')})`;
}

/** What ensureOlmv1Crds found: served by Binnacle, or owned by someone else (each CRD named with its owner). */
export type Olmv1CrdsVerdict = { serve: true } | { serve: false; foreign: { crd: KubeObject; owner: string }[] };

/**
 * OLM v1's CRDs, installed or updated unless someone else owns either; then neither is touched
 * and the OLM v1 kinds are not served (two controllers would fight over every object).
 */
export async function ensureOlmv1Crds(client: CrdClient, logger: Logger, o: { objectSets?: boolean; timeoutMs?: number } = {}): Promise<Olmv1CrdsVerdict> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const crds = [...loadOlmv1Crds(), ...(o.objectSets === true ? [loadOlmv1Crd('ClusterObjectSet')] : [])];
  const foreign: { crd: KubeObject; owner: string }[] = [];
  for (const crd of crds) {
    const live = await client.find({ apiVersion: crd.apiVersion, kind: crd.kind, name: crd.metadata.name ?? '' });
    if (live !== undefined && !isOurOlmv1Crd(live)) foreign.push({ crd: live, owner: olmv1CrdOwner(live) });
  }
  if (foreign.length > 0) {
    for (const f of foreign) logger.warn({ crd: f.crd.metadata.name, owner: f.owner }, `${f.crd.metadata.name ?? ''} is installed by ${f.owner}: Binnacle leaves it as it is and does not serve ${OLMV1_GROUP}/v1`);
    return { serve: false, foreign };
  }
  for (const crd of crds) await client.apply({ ...crd, metadata: { ...crd.metadata, labels: { ...crd.metadata.labels, ...OLMV1_CRD_LABELS } } }, { force: true });
  await waitCrdsEstablished(client, crds.map((c) => c.metadata.name ?? ''), { timeoutMs });
  client.invalidateDiscovery(OLMV1_API_VERSION);
  return { serve: true };
}
