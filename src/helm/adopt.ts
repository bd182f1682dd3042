/**
 * Adopting a release that `helm install` made: its records and live objects get Binnacle's
 * owner marks for a Helm-operator kind, and a custom resource is created whose spec is the
 * release's values. The kind's reconciler then continues the same history (the next revision
 * is an upgrade of the same objects, applied in place): no reinstall, no downtime. The `helm`
 * CLI keeps working on the release throughout.
 */
import { ownerLabels, parseManifest, ReleaseStore, type ReleaseRef } from '../apply/index.js';
import type { ClusterClient } from '../kube/ports.js';
import { isNotFound } from '../kube/errors.js';
import { refOf, type KubeObject } from '../kube/types.js';
import { BinnacleError } from '../util/errors.js';

export interface AdoptOptions {
  release: ReleaseRef;
  /** The kind whose CR takes the release over. */
  kind: { group: string; version: string; kind: string };
}

export interface AdoptResult {
  cr: KubeObject;
  revision: number;
  objects: number;
}

export async function adoptRelease(client: ClusterClient, o: AdoptOptions): Promise<AdoptResult> {
  const where = `release ${o.release.namespace}/${o.release.name}`;
  const apiVersion = o.kind.group === '' ? o.kind.version : `${o.kind.group}/${o.kind.version}`;
  try {
    await client.resourceFor(apiVersion, o.kind.kind);
  } catch (err) {
    if (isNotFound(err)) throw new BinnacleError('input', 'HELM_ADOPT_KIND', `the cluster serves no ${o.kind.kind} in ${apiVersion}: create the HelmOperator (or run the Helm operator) that serves it first`);
    throw err;
  }
  const store = new ReleaseStore(client);
  const history = await store.history(o.release);
  const deployed = [...history].reverse().find((r) => r.status === 'deployed');
  if (deployed === undefined) throw new BinnacleError('input', 'HELM_ADOPT_NO_RELEASE', `${where} has no deployed revision to adopt`);
  const owner = [...history].reverse().find((r) => r.owner !== undefined)?.owner;
  if (owner !== undefined && (owner.kind !== o.kind.kind || owner.name !== o.release.name)) {
    throw new BinnacleError('terminal', 'HELM_ADOPT_OWNED', `${where} already belongs to ${owner.kind} ${owner.name}`);
  }
  const existing = await client.find({ apiVersion, kind: o.kind.kind, namespace: o.release.namespace, name: o.release.name });
  if (existing !== undefined && owner === undefined) throw new BinnacleError('input', 'HELM_ADOPT_EXISTS', `${o.kind.kind} ${o.release.namespace}/${o.release.name} exists already and does not hold ${where}`);

  const marks = { metadata: { labels: ownerLabels({ kind: o.kind.kind, name: o.release.name, namespace: o.release.namespace }) } };
  // The live objects first (the reconciler must find them ours), then the records.
  let objects = 0;
  for (const obj of parseManifest(deployed.manifest, `${where} revision ${deployed.revision}`)) {
    let ref = refOf(obj);
    if (ref.namespace === undefined) {
      const info = await client.resourceFor(obj.apiVersion, obj.kind).catch(() => undefined);
      if (info?.namespaced === true) ref = { ...ref, namespace: o.release.namespace };
    }
    if ((await client.find(ref).catch(() => undefined)) === undefined) continue;
    await client.patch(ref, marks);
    objects++;
  }
  for (const rev of history) {
    await client.patch({ apiVersion: 'v1', kind: 'Secret', namespace: o.release.namespace, name: `sh.helm.release.v1.${o.release.name}.v${rev.revision}` }, marks);
  }
  const cr: KubeObject = existing ?? (await client.create({ apiVersion, kind: o.kind.kind, metadata: { name: o.release.name, namespace: o.release.namespace }, spec: deployed.config }));
  return { cr, revision: deployed.revision, objects };
}
