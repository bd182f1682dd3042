/**
 * PlatformOperator reconciler: the packages a cluster must always have. Each becomes a
 * ClusterExtension owned by the PlatformOperator; `Available` is true only when every one of
 * them is installed, so the cluster's health reporting can read one condition.
 */
import type { KubeClient } from '../kube/client.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import { findCondition } from '../kube/types.js';
import { API_VERSION, LABEL_OWNER_KIND, LABEL_OWNER_NAME, type ClusterExtension, type PlatformOperator } from '../api/types.js';
import { applyStatus, Conditions } from './common.js';
import { boundedName } from '../api/names.js';

export function platformExtensionName(po: string, pkg: string): string {
  return boundedName(`${po}-${pkg}`);
}

export class PlatformOperatorReconciler implements Reconciler {
  constructor(private readonly client: KubeClient) {}

  async reconcile(req: ReconcileRequest, _ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let po: PlatformOperator;
    try {
      po = await this.client.get<PlatformOperator>({ apiVersion: API_VERSION, kind: 'PlatformOperator', name: req.name });
    } catch (err) {
      if (isNotFound(err)) return undefined; // owned ClusterExtensions go with it (ownerReferences)
      throw err;
    }
    const name = po.metadata.name ?? '';
    const conditions = new Conditions(po.status?.conditions, po.metadata.generation);
    const packages = Array.isArray(po.spec.packages) ? po.spec.packages : [];
    const sa = po.spec.serviceAccount ?? { name: 'binnacle-installer', namespace: 'binnacle-system' };
    const wanted = new Set<string>();
    const results: { name: string; installed: boolean; version?: string; message?: string }[] = [];
    for (const p of packages) {
      const ceName = platformExtensionName(name, p.name);
      wanted.add(ceName);
      const catalog: ClusterExtension['spec']['source']['catalog'] = { packageName: p.name };
      if (p.channel !== undefined) catalog.channels = [p.channel];
      if (p.version !== undefined) catalog.version = p.version;
      await this.client.apply(
        {
          apiVersion: API_VERSION,
          kind: 'ClusterExtension',
          metadata: {
            name: ceName,
            labels: { [LABEL_OWNER_KIND]: 'PlatformOperator', [LABEL_OWNER_NAME]: name },
            ownerReferences: [{ apiVersion: API_VERSION, kind: 'PlatformOperator', name, uid: po.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
          },
          spec: { namespace: p.namespace ?? sa.namespace, serviceAccount: { name: sa.name }, source: { sourceType: 'Catalog', catalog } },
        },
        { force: true },
      );
      const ce = await this.client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName });
      const installed = findCondition(ce?.status?.conditions, 'Installed');
      const entry: { name: string; installed: boolean; version?: string; message?: string } = { name: p.name, installed: installed?.status === 'True' };
      if (ce?.status?.install?.bundle.version !== undefined) entry.version = ce.status.install.bundle.version;
      const progressing = findCondition(ce?.status?.conditions, 'Progressing');
      if (!entry.installed) entry.message = progressing?.message ?? installed?.message ?? 'waiting for the ClusterExtension';
      results.push(entry);
    }
    const owned = await this.client.list<ClusterExtension>(API_VERSION, 'ClusterExtension', { labelSelector: `${LABEL_OWNER_KIND}=PlatformOperator,${LABEL_OWNER_NAME}=${name}` });
    for (const ce of owned.items) {
      if (!wanted.has(ce.metadata.name ?? '')) await this.client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce.metadata.name ?? '' });
    }
    const missing = results.filter((r) => !r.installed);
    conditions.set('Available', missing.length === 0, missing.length === 0 ? 'AllInstalled' : 'Installing', missing.length === 0 ? `${results.length} packages installed` : missing.map((m) => `${m.name}: ${m.message ?? ''}`).join('; '));
    await applyStatus(this.client, po, { conditions: conditions.toArray(), observedGeneration: po.metadata.generation, packages: results });
    return missing.length > 0 ? { requeueAfterMs: 10_000 } : undefined;
  }
}
