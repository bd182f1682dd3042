/** Installs (or updates) Binnacle's CRDs and waits until the API server serves them. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '../kube/client.js';
import { ALL_CRDS } from '../api/crds.js';
import { OPERATOR_CONDITION_API_VERSION, OPERATOR_CONDITION_CRD } from '../api/operator-condition.js';
import { API_VERSION } from '../api/types.js';
import { BinnacleError } from '../util/errors.js';

export async function ensureCrds(client: KubeClient, timeoutMs = 60_000): Promise<void> {
  for (const crd of ALL_CRDS) await client.apply(crd, { force: true });
  // issue 12 §4: OLM's OperatorCondition CRD, unless OLM (or anyone but Binnacle) already installed it.
  const existing = await client.find({ apiVersion: OPERATOR_CONDITION_CRD.apiVersion, kind: OPERATOR_CONDITION_CRD.kind, name: OPERATOR_CONDITION_CRD.metadata.name ?? '' });
  if (existing === undefined || existing.metadata.labels?.['app.kubernetes.io/part-of'] === 'binnacle') await client.apply(OPERATOR_CONDITION_CRD, { force: true });
  const deadline = Date.now() + timeoutMs;
  for (const crd of [...ALL_CRDS, OPERATOR_CONDITION_CRD]) {
    for (;;) {
      const live = await client.get({ apiVersion: crd.apiVersion, kind: crd.kind, name: crd.metadata.name ?? '' });
      const conds = (live.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conds.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new BinnacleError('transient', 'CRD_NOT_ESTABLISHED', `CRD ${crd.metadata.name ?? ''} was not Established within ${timeoutMs / 1000}s`);
      await sleep(200);
    }
  }
  client.invalidateDiscovery(API_VERSION);
  client.invalidateDiscovery(OPERATOR_CONDITION_API_VERSION);
}
