/** Installs (or updates) Binnacle's CRDs and waits until the API server serves them. */
import type { Discovery, ObjectReader, ObjectWriter } from '../kube/ports.js';
import { ALL_CRDS } from '../api/crds.js';
import { OPERATOR_CONDITION_API_VERSION, OPERATOR_CONDITION_CRD } from '../api/operator-condition.js';
import { API_VERSION } from '../api/types.js';
import { waitCrdsEstablished } from '../kube/crd-established.js';

export async function ensureCrds(client: Pick<ObjectReader, 'find'> & Pick<ObjectWriter, 'apply'> & Pick<Discovery, 'invalidateDiscovery'>, timeoutMs = 60_000): Promise<void> {
  for (const crd of ALL_CRDS) await client.apply(crd, { force: true });
  // issue 12 §4: OLM's OperatorCondition CRD, unless OLM (or anyone but Binnacle) already installed it.
  const existing = await client.find({ apiVersion: OPERATOR_CONDITION_CRD.apiVersion, kind: OPERATOR_CONDITION_CRD.kind, name: OPERATOR_CONDITION_CRD.metadata.name ?? '' });
  if (existing === undefined || existing.metadata.labels?.['app.kubernetes.io/part-of'] === 'binnacle') await client.apply(OPERATOR_CONDITION_CRD, { force: true });
  await waitCrdsEstablished(client, [...ALL_CRDS, OPERATOR_CONDITION_CRD].map((c) => c.metadata.name ?? ''), { timeoutMs });
  client.invalidateDiscovery(API_VERSION);
  client.invalidateDiscovery(OPERATOR_CONDITION_API_VERSION);
}
