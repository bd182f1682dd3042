/**
 * Drift as the console shows it: for an installed extension, each release of its set (one per
 * BundleDeployment) against the live objects; for a Helm operator's custom resource, its
 * release. The comparing is `src/apply/drift.ts`'s; this only finds the releases, reading as
 * the person (a release's records are Secrets: without list on them, the answer is 403).
 */
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../api/types.js';
import { releaseDrift } from '../apply/drift.js';
import { releaseOf } from '../controllers/release-history.js';
import { buildInstalledState, describeNeeds, unitsNeededBy } from '../installed/index.js';
import type { KubeClient } from '../kube/client.js';
import type { ExtensionDrift, ReleaseDriftView } from './api-types.js';
import { InputError } from './errors.js';
import { apiOf, getCrd } from './resources.js';

export async function extensionDrift(client: KubeClient, name: string): Promise<ExtensionDrift> {
  await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  const [bds, ces] = await Promise.all([client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'), client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')]);
  const state = buildInstalledState(bds.items, ces.items);
  const releases: ExtensionDrift['releases'] = [];
  for (const unit of unitsNeededBy(state, name)) {
    const drift = await releaseDrift(client, releaseOf(unit));
    releases.push({ bundleDeployment: unit.bundleDeployment, package: unit.package, neededBy: describeNeeds(unit.needs), ...(drift satisfies ReleaseDriftView) });
  }
  return { name, releases };
}

/** The release of a Helm operator's custom resource (the release is named as the resource, in its namespace). */
export async function resourceDrift(client: KubeClient, crdName: string, name: string, namespace: string | undefined): Promise<ReleaseDriftView> {
  const api = apiOf(await getCrd(client, crdName));
  if (api.helmOperator === undefined) throw new InputError('crd', `${api.kind} is not a Helm operator's kind: its objects are not releases`);
  if (namespace === undefined || namespace === '') throw new InputError('namespace', `${api.kind} is namespaced: give ?namespace=`);
  await client.get({ apiVersion: `${api.group}/${api.version}`, kind: api.kind, name, namespace });
  return releaseDrift(client, { name, namespace });
}
