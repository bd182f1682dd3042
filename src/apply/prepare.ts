/**
 * Objects made ready to apply: ownership stamped, namespaces of namespaced kinds filled in,
 * server-owned fields dropped, the owner reference of a Helm operator's CR set; and a recorded
 * manifest's objects given back their namespaces (Helm's manifest leaves them out).
 */
import { isNotFound } from '../kube/errors.js';
import type { Discovery } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { ValidationResult } from '../util/errors.js';
import { ApplyRefusedError } from './errors.js';
import { stampOwnership } from './ownership.js';
import { identityOf } from './phases.js';
import type { Owner, ReleaseRef, OperationRequest } from './types.js';

/** Stamps ownership, fills in namespaces of namespaced kinds, and drops server-owned fields; a kind nobody serves is refused. */
export async function prepare(client: Pick<Discovery, 'resourceFor'>, objects: readonly KubeObject[], owner: Owner, release: ReleaseRef): Promise<KubeObject[]> {
  const crdScopes = new Map<string, boolean>();
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition') continue;
    const spec = (o.spec ?? {}) as { group?: unknown; names?: { kind?: unknown }; scope?: unknown };
    if (typeof spec.group === 'string' && typeof spec.names?.kind === 'string') crdScopes.set(`${spec.group}/${spec.names.kind}`, spec.scope !== 'Cluster');
  }
  const problems = new ValidationResult(`release ${release.namespace}/${release.name}`);
  const out: KubeObject[] = [];
  for (const o of objects) {
    const group = o.apiVersion.includes('/') ? o.apiVersion.slice(0, o.apiVersion.indexOf('/')) : '';
    let namespaced = crdScopes.get(`${group}/${o.kind}`);
    if (namespaced === undefined) {
      try {
        namespaced = (await client.resourceFor(o.apiVersion, o.kind)).namespaced;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        problems.error('apply.unknown-kind', `${o.kind} ${o.metadata.name ?? ''}: the cluster serves no ${o.kind} in ${o.apiVersion} and no CRD in this release defines it`, { field: `${o.kind}/${o.metadata.name ?? ''}` });
        continue;
      }
    }
    // Server-owned fields would make the apply fail or fight the server.
    const { uid: _uid, resourceVersion: _rv, generation: _gen, creationTimestamp: _ct, deletionTimestamp: _dt, managedFields: _mf, ...metadata } = o.metadata;
    if (namespaced && (metadata.namespace === undefined || metadata.namespace === '')) metadata.namespace = release.namespace;
    if (!namespaced) delete metadata.namespace;
    const clean: KubeObject = { ...o, metadata };
    delete clean.status;
    out.push(stampOwnership(clean, owner, release));
  }
  if (!problems.ok) throw new ApplyRefusedError(problems);
  return out;
}

/**
 * Objects of a recorded manifest with their namespaces: a chart release's manifest is Helm's,
 * which leaves namespaced objects without one (Helm fills it in when it applies). A kind the
 * cluster no longer serves is left as it is: there is nothing of it to find.
 */
export async function withNamespaces(client: Pick<Discovery, 'resourceFor'>, objects: readonly KubeObject[], namespace: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const o of objects) {
    if (o.metadata.namespace !== undefined && o.metadata.namespace !== '') {
      out.push(o);
      continue;
    }
    let namespaced = false;
    try {
      namespaced = (await client.resourceFor(o.apiVersion, o.kind)).namespaced;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    out.push(namespaced ? { ...o, metadata: { ...o.metadata, namespace } } : o);
  }
  return out;
}

/** Namespaced objects in the release namespace get the request's owner reference (a Helm operator's CR owns them). */
export function withOwnerReference(objects: KubeObject[], req: Pick<OperationRequest, 'ownerReference' | 'release'>): KubeObject[] {
  const ref = req.ownerReference;
  if (ref === undefined || ref.uid === '') return objects;
  const owned = { ...ref, controller: true, blockOwnerDeletion: true };
  return objects.map((o) =>
    o.metadata.namespace !== req.release.namespace || o.kind === 'CustomResourceDefinition'
      ? o
      : { ...o, metadata: { ...o.metadata, ownerReferences: [...(o.metadata.ownerReferences ?? []).filter((r) => r.uid !== ref.uid), owned] } },
  );
}

/** Objects once each, the first of each identity kept. */
export function dedupe(objects: readonly KubeObject[]): KubeObject[] {
  const seen = new Map<string, KubeObject>();
  for (const o of objects) if (!seen.has(identityOf(o))) seen.set(identityOf(o), o);
  return [...seen.values()];
}
