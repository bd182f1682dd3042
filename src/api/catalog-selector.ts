/**
 * Which ClusterCatalogs a ClusterExtension draws from: its `spec.source.catalog.selector`, a
 * Kubernetes label selector (metav1.LabelSelector: matchLabels and matchExpressions, ANDed), as
 * operator-controller reads it; the catalog's own name answers to the
 * `olm.operatorframework.io/metadata.name` label even when it is not set (catalogd sets it).
 */

const NAME_LABEL = 'olm.operatorframework.io/metadata.name';

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values?: string[];
}

export interface CatalogSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** One requirement, as apimachinery's labels.Requirement.Matches reads it. */
function meets(labels: Record<string, string>, r: LabelSelectorRequirement): boolean {
  const has = Object.hasOwn(labels, r.key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(labels[r.key] ?? '');
    case 'NotIn':
      return !has || !values.includes(labels[r.key] ?? '');
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      // Refused at admission (the CRD's enum); an operator nobody knows selects nothing.
      return false;
  }
}

/** Whether labels meet a label selector (metav1.LabelSelector; none, or an empty one, selects everything). */
export function matchesLabelSelector(labels: Record<string, string>, selector: CatalogSelector | undefined): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v) && (selector?.matchExpressions ?? []).every((r) => meets(labels, r));
}

/**
 * Whether a ClusterCatalog (its name and labels) is one an extension's catalog selector draws from.
 * The name label is the catalog's name whatever its labels say (catalogd's webhook forces it): a
 * catalog labelled with another's name does not answer to it.
 */
export function matchesSelector(c: { name: string; labels: Record<string, string> }, selector: CatalogSelector | undefined): boolean {
  return matchesLabelSelector({ ...c.labels, [NAME_LABEL]: c.name }, selector);
}
