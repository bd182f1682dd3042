/**
 * The inventory: every operator on the cluster and what it runs, each with its health, and the
 * roll-up. OLM operators are ClusterExtensions, with the custom resources of the APIs their
 * bundles installed (a shared dependency's under the extension it was installed with); Helm
 * operators are HelmOperators, whose kinds' custom resources are each one Helm release. Read as
 * the person: a list they may not do is named in `warnings` and left out of the counts.
 */
import { API_VERSION, type BundleDeployment, type ClusterExtension, type HelmOperator } from '../api/types.js';
import { buildInstalledState } from '../installed/index.js';
import type { ConsoleClient } from './client.js';
import { KubeApiError } from '../kube/errors.js';
import type { HealthCounts, Inventory, InventoryOperator, InventoryResource } from './contract/api-types.js';
import { forbiddenSummary } from './errors.js';
import { countHealth, emptyCounts, healthOf, helmOperatorHealth, resourceHealth } from './health.js';
import { apiOf, conditionsOf, type CrdObject } from './resources.js';

const CRD_API = 'apiextensions.k8s.io/v1';

/** Reads as the person; a list or get they may not do (or of a kind not served) becomes a warning. */
class Reader {
  readonly warnings: string[] = [];

  constructor(readonly client: ConsoleClient) {}

  async read<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof KubeApiError) || (err.statusCode !== 403 && err.statusCode !== 404)) throw err;
      this.warnings.push(`${what}: ${err.statusCode === 403 ? forbiddenSummary(err.message) : err.message}`);
      return undefined;
    }
  }

  /** The custom resources of one API (CRD), each with its health. */
  async resourcesOf(crdName: string): Promise<InventoryResource[]> {
    const crd = await this.read(`CRD ${crdName}`, () => this.client.get<CrdObject>({ apiVersion: CRD_API, kind: 'CustomResourceDefinition', name: crdName }));
    if (crd === undefined) return [];
    const api = apiOf(crd);
    const list = await this.read(`${api.kind} (${crdName}) not listed`, () => this.client.list(`${api.group}/${api.version}`, api.kind));
    return (list?.items ?? []).map((o) => ({
      kind: api.kind,
      crd: crdName,
      name: o.metadata.name ?? '',
      ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }),
      ...resourceHealth({ metadata: o.metadata, conditions: conditionsOf(o) }),
    }));
  }

  async resourcesOfAll(crds: readonly string[]): Promise<InventoryResource[]> {
    return (await Promise.all(crds.map((c) => this.resourcesOf(c)))).flat();
  }
}

function operator(o: Omit<InventoryOperator, 'counts'>): InventoryOperator {
  o.resources.sort((a, b) => a.kind.localeCompare(b.kind) || (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name));
  return { ...o, counts: countHealth([o, ...o.resources]) };
}

const byName = (a: { metadata: { name?: string } }, b: { metadata: { name?: string } }): number => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** Each ClusterExtension with the custom resources of the CRDs its set's bundles applied (each bundle under the extension it was installed with). */
async function olmOperators(r: Reader): Promise<InventoryOperator[]> {
  const ces = (await r.read('ClusterExtensions not listed', () => r.client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')))?.items ?? [];
  if (ces.length === 0) return [];
  const bds = (await r.read('BundleDeployments not listed (so neither are the custom resources of OLM operators)', () => r.client.list<BundleDeployment>(API_VERSION, 'BundleDeployment')))?.items ?? [];
  const state = buildInstalledState(bds, ces);
  const out: InventoryOperator[] = [];
  for (const ce of [...ces].sort(byName)) {
    const name = ce.metadata.name ?? '';
    const units = state.units.filter((u) => (u.holder ?? u.needs[0]?.extension) === name);
    const crds = units.flatMap((u) => (u.object.status?.appliedObjects ?? []).filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.name));
    out.push(operator({ type: 'ClusterExtension', name, source: ce.spec.source.catalog.packageName, version: ce.status?.install?.bundle.version ?? '', ...healthOf(ce), crds, resources: await r.resourcesOfAll(crds) }));
  }
  return out;
}

/** Each HelmOperator with the custom resources of its kinds: each one Helm release. */
async function helmOperators(r: Reader): Promise<InventoryOperator[]> {
  const hops = (await r.read('HelmOperators not listed', () => r.client.list<HelmOperator>(API_VERSION, 'HelmOperator')))?.items ?? [];
  const out: InventoryOperator[] = [];
  for (const hop of [...hops].sort(byName)) {
    const chart = hop.status?.chart;
    const source = chart?.name ?? hop.spec.chart.oci?.ref ?? hop.spec.chart.repository?.name ?? '';
    const crds = (hop.status?.kinds ?? []).map((k) => k.crd);
    const resources = await r.resourcesOfAll(crds);
    out.push(operator({ type: 'HelmOperator', name: hop.metadata.name ?? '', source, version: chart?.version ?? '', ...helmOperatorHealth(hop), crds, resources }));
  }
  return out;
}

export async function inventory(client: ConsoleClient): Promise<Inventory> {
  const r = new Reader(client);
  const operators = [...(await olmOperators(r)), ...(await helmOperators(r))];
  const counts: HealthCounts = emptyCounts();
  for (const o of operators) for (const [h, n] of Object.entries(o.counts) as [keyof HealthCounts, number][]) counts[h] += n;
  return { operators, counts, warnings: r.warnings };
}
