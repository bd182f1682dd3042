/**
 * OLM v1's ClusterCatalog (`olm.operatorframework.io/v1`) served by Binnacle's ClusterCatalog
 * engine through a `binnacle.dev` twin (cluster-olmv1-twin.ts): the same source, poll interval,
 * priority and availability mode; the twin is pulled, stored and served by the catalog server
 * at `<server>/catalogs/<name>/api/v1/all` and `/api/v1/metas`, as catalogd serves them. The
 * status is written back in catalogd's words (Serving, Progressing, `resolvedSource`,
 * `urls.base`, `lastUnpacked`), and the object gets catalogd's
 * `olm.operatorframework.io/metadata.name` label, which the twin carries too so that
 * ClusterExtension selectors of either group find it.
 */
import { catalogStatusFromTwin, catalogTwinSpec } from '../api/olmv1/convert.js';
import { LABEL_METADATA_NAME, type Olmv1ClusterCatalog } from '../api/olmv1/types.js';
import type { ClusterCatalog } from '../api/types.js';
import { Olmv1TwinReconciler, type TwinClient, type TwinKind } from './cluster-olmv1-twin.js';

export function olmv1CatalogKind(): TwinKind<Olmv1ClusterCatalog, ClusterCatalog> {
  return {
    kind: 'ClusterCatalog',
    twinSpec: catalogTwinSpec,
    twinLabels: (v1) => ({ ...v1.metadata.labels, [LABEL_METADATA_NAME]: v1.metadata.name ?? '' }),
    refused: (reason, message) => [
      { type: 'Progressing', status: reason === 'Retrying', reason, message },
      { type: 'Serving', status: false, reason: 'Unavailable', message },
    ],
    status: (v1, twin) => {
      const out = catalogStatusFromTwin(v1, twin);
      return Promise.resolve({ conditions: out.conditions, fields: out.status });
    },
    // catalogd's mutating webhook sets it; Binnacle has no webhook, so the adapter does.
    defaults: (v1) => (v1.metadata.labels?.[LABEL_METADATA_NAME] === v1.metadata.name ? undefined : { labels: { [LABEL_METADATA_NAME]: v1.metadata.name ?? '' } }),
  };
}

/** The reconciler of `olm.operatorframework.io/v1` ClusterCatalogs. */
export function olmv1CatalogReconciler(client: TwinClient): Olmv1TwinReconciler<Olmv1ClusterCatalog, ClusterCatalog> {
  return new Olmv1TwinReconciler(client, olmv1CatalogKind());
}
