/**
 * Ownership marks. Every object Binnacle applies carries its owner's kind and name as labels,
 * plus the label and annotations by which Helm recognises a release's objects. An object that
 * exists without our owner's marks belongs to someone else, and we do not take it over unless
 * the caller asks to adopt it.
 */
import type { KubeObject } from '../kube/types.js';
import type { Owner, ReleaseRef } from './types.js';

export const OWNER_KIND_LABEL = 'binnacle.dev/owner-kind';
export const OWNER_NAME_LABEL = 'binnacle.dev/owner-name';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const HELM_RELEASE_NAME_ANNOTATION = 'meta.helm.sh/release-name';
export const HELM_RELEASE_NAMESPACE_ANNOTATION = 'meta.helm.sh/release-namespace';

/** A copy of `obj` with the owner's labels and Helm's release marks set. */
export function stampOwnership(obj: KubeObject, owner: Owner, release: ReleaseRef): KubeObject {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      labels: { ...(obj.metadata.labels ?? {}), [OWNER_KIND_LABEL]: owner.kind, [OWNER_NAME_LABEL]: owner.name, [MANAGED_BY_LABEL]: 'Helm' },
      annotations: {
        ...(obj.metadata.annotations ?? {}),
        [HELM_RELEASE_NAME_ANNOTATION]: release.name,
        [HELM_RELEASE_NAMESPACE_ANNOTATION]: release.namespace,
      },
    },
  };
}

export function isOwnedBy(obj: Pick<KubeObject, 'metadata'>, owner: Owner): boolean {
  const labels = obj.metadata.labels ?? {};
  return labels[OWNER_KIND_LABEL] === owner.kind && labels[OWNER_NAME_LABEL] === owner.name;
}

/** Who holds an object, in words, for refusal messages. */
export function describeOwner(obj: Pick<KubeObject, 'metadata'>): string {
  const labels = obj.metadata.labels ?? {};
  const annotations = obj.metadata.annotations ?? {};
  const kind = labels[OWNER_KIND_LABEL];
  const name = labels[OWNER_NAME_LABEL];
  if (kind !== undefined && name !== undefined) return `${kind} ${name}`;
  const release = annotations[HELM_RELEASE_NAME_ANNOTATION];
  if (release !== undefined) return `Helm release ${annotations[HELM_RELEASE_NAMESPACE_ANNOTATION] ?? ''}/${release}`;
  const managedBy = labels[MANAGED_BY_LABEL];
  if (managedBy !== undefined) return `${managedBy} (app.kubernetes.io/managed-by)`;
  const controller = obj.metadata.ownerReferences?.find((r) => r.controller === true);
  if (controller !== undefined) return `${controller.kind} ${controller.name} (controller reference)`;
  return 'no Binnacle owner (created outside Binnacle)';
}
