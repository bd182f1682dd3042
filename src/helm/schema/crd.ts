/**
 * `crdForChart`: the `apiextensions.k8s.io/v1` CustomResourceDefinition for one kind a Helm
 * chart serves. `spec` is the chart's values schema; `status` is whatever the Helm-operator
 * reconciler writes (conditions, `deployedRelease`), kept whole; the status subresource is on,
 * so spec and status are written separately, and `kubectl get` shows the release, whether it is
 * deployed, and the age. Names follow Kubernetes' conventions: `plural` and `singular` are
 * lower case (the plural guessed from the kind in simple English when not given), the CRD is
 * named `<plural>.<group>`. The whole schema is checked with `checkStructural` first; a schema
 * the API server would refuse is an error here, not at apply time.
 */
import type { KubeObject } from '../../kube/types.js';
import { InputError, ValidationError, ValidationResult } from '../../util/errors.js';
import { checkStructural } from './structural.js';
import { PRESERVE_UNKNOWN, type StructuralSchema } from './types.js';

export interface CrdForChartOptions {
  group: string;
  version: string;
  kind: string;
  plural?: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope: 'Namespaced' | 'Cluster';
  /** The schema of `spec` (from `valuesSchema`). */
  spec: StructuralSchema;
  /** Description of the kind, shown by `kubectl explain`. */
  description?: string;
}

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `kube-prometheus-stack` → `KubePrometheusStack`; a leading digit gets a `Chart` prefix. */
export function kindForChart(chartName: string): string {
  const base = chartName.split('/').pop() ?? chartName;
  const kind = base
    .split(/[^A-Za-z0-9]+/)
    .filter((p) => p !== '')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
  if (kind === '') throw new InputError('CRD_NAMES', `cannot make a kind from chart name ${JSON.stringify(chartName)}`);
  return /^[0-9]/.test(kind) ? `Chart${kind}` : kind;
}

/** A lower-case English plural of a kind: `Redis` → `redises`, `Policy` → `policies`. */
export function pluralForKind(kind: string): string {
  const k = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(k)) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

function checkNames(opts: CrdForChartOptions, plural: string, singular: string, shortNames: string[]): void {
  const bad = (field: string, message: string): InputError => new InputError('CRD_NAMES', message, { field });
  if (!DNS_SUBDOMAIN.test(opts.group) || !opts.group.includes('.') || opts.group.length > 253) throw bad('group', `group ${JSON.stringify(opts.group)} must be a DNS subdomain with at least one dot`);
  if (!DNS_LABEL.test(opts.version)) throw bad('version', `version ${JSON.stringify(opts.version)} must be a DNS label such as v1alpha1`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(opts.kind)) throw bad('kind', `kind ${JSON.stringify(opts.kind)} must be UpperCamelCase letters and digits`);
  for (const [field, name] of [['plural', plural], ['singular', singular], ...shortNames.map((s, i) => [`shortNames[${i}]`, s])] as [string, string][]) {
    if (!DNS_LABEL.test(name) || name.length > 63) throw bad(field, `${field} ${JSON.stringify(name)} must be a lower-case DNS label`);
  }
  if (`${plural}.${opts.group}`.length > 253) throw bad('plural', `CRD name ${plural}.${opts.group} is longer than 253 characters`);
}

export function crdForChart(opts: CrdForChartOptions): KubeObject {
  const plural = (opts.plural ?? pluralForKind(opts.kind)).toLowerCase();
  const singular = (opts.singular ?? opts.kind).toLowerCase();
  const shortNames = (opts.shortNames ?? []).map((s) => s.toLowerCase());
  checkNames(opts, plural, singular, shortNames);

  const openAPIV3Schema = {
    type: 'object',
    ...(opts.description === undefined ? {} : { description: opts.description }),
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
      metadata: { type: 'object' },
      spec: { ...opts.spec, type: 'object' },
      status: {
        type: 'object',
        description: 'Observed state of the Helm release: conditions and the deployed release.',
        [PRESERVE_UNKNOWN]: true,
      },
    },
  };
  const problems = checkStructural(openAPIV3Schema, { path: 'spec.versions[0].schema.openAPIV3Schema' });
  if (problems.length > 0) {
    const result = new ValidationResult(`CRD ${plural}.${opts.group}`);
    for (const p of problems) result.add(p);
    throw new ValidationError(result);
  }

  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${opts.group}` },
    spec: {
      group: opts.group,
      names: {
        kind: opts.kind,
        listKind: `${opts.kind}List`,
        plural,
        singular,
        ...(shortNames.length > 0 ? { shortNames } : {}),
        ...(opts.categories !== undefined && opts.categories.length > 0 ? { categories: opts.categories } : {}),
      },
      scope: opts.scope,
      versions: [
        {
          name: opts.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema },
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Release', type: 'string', jsonPath: '.status.deployedRelease.name', description: 'Name of the deployed Helm release' },
            { name: 'Deployed', type: 'string', jsonPath: '.status.conditions[?(@.type=="Deployed")].status', description: 'Whether the release is deployed' },
            { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Deployed")].reason', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}
