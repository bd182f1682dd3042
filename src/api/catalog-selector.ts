/**
 * Which ClusterCatalogs a ClusterExtension draws from: its `spec.source.catalog.selector`, as
 * operator-controller reads it (the catalog's own name answers to the
 * `olm.operatorframework.io/metadata.name` label even when it is not set).
 */

/** Whether a ClusterCatalog (its name and labels) is one an extension's catalog selector draws from. */
export function matchesSelector(c: { name: string; labels: Record<string, string> }, selector: { matchLabels?: Record<string, string> } | undefined): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => c.labels[k] === v || (k === 'olm.operatorframework.io/metadata.name' && c.name === v));
}
