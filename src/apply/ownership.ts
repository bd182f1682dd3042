/**
 * Ownership marks. Every object Binnacle applies carries its owner's kind, name and (for a
 * namespaced owner) namespace as labels, plus the label and annotations by which Helm
 * recognises a release's objects. An object that exists without our owner's marks belongs to
 * someone else, and we do not take it over unless the caller asks to adopt it. As Helm does
 * (its `meta.helm.sh/release-name`/`release-namespace` check), an object marked for another
 * release is that release's, whatever else its labels say.
 */
import type { KubeObject } from '../kube/types.js';
import type { AdoptControlledBy, Owner, ReleaseRef } from './types.js';

export const OWNER_KIND_LABEL = 'binnacle.dev/owner-kind';
export const OWNER_NAME_LABEL = 'binnacle.dev/owner-name';
/** Only on objects of a namespaced owner; objects stamped before it existed are judged by Helm's release-namespace annotation. */
export const OWNER_NAMESPACE_LABEL = 'binnacle.dev/owner-namespace';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const HELM_RELEASE_NAME_ANNOTATION = 'meta.helm.sh/release-name';
export const HELM_RELEASE_NAMESPACE_ANNOTATION = 'meta.helm.sh/release-namespace';

/** A copy of `obj` with the owner's labels and Helm's release marks set. */
export function stampOwnership(obj: KubeObject, owner: Owner, release: ReleaseRef): KubeObject {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      labels: { ...(obj.metadata.labels ?? {}), ...ownerLabels(owner), [MANAGED_BY_LABEL]: 'Helm' },
      annotations: {
        ...(obj.metadata.annotations ?? {}),
        [HELM_RELEASE_NAME_ANNOTATION]: release.name,
        [HELM_RELEASE_NAMESPACE_ANNOTATION]: release.namespace,
      },
    },
  };
}

/** The labels that name an owner: kind, name and, for a namespaced owner, its namespace. */
export function ownerLabels(owner: Owner): Record<string, string> {
  return { [OWNER_KIND_LABEL]: owner.kind, [OWNER_NAME_LABEL]: owner.name, ...(owner.namespace === undefined ? {} : { [OWNER_NAMESPACE_LABEL]: owner.namespace }) };
}

/**
 * Whether `obj` is `owner`'s object in `release`: our labels name this owner (its namespace
 * too), and Helm's release marks, when present, name this release. An object stamped before
 * owners had a namespace label is judged by Helm's release-namespace annotation instead.
 */
export function isOwnedBy(obj: Pick<KubeObject, 'metadata'>, owner: Owner, release: ReleaseRef): boolean {
  const labels = obj.metadata.labels ?? {};
  if (labels[OWNER_KIND_LABEL] !== owner.kind || labels[OWNER_NAME_LABEL] !== owner.name) return false;
  const annotations = obj.metadata.annotations ?? {};
  const releaseName = annotations[HELM_RELEASE_NAME_ANNOTATION];
  const releaseNamespace = annotations[HELM_RELEASE_NAMESPACE_ANNOTATION];
  if (releaseName !== undefined && (releaseName !== release.name || releaseNamespace !== release.namespace)) return false;
  const ownerNamespace = labels[OWNER_NAMESPACE_LABEL];
  if (owner.namespace === undefined) return ownerNamespace === undefined;
  return ownerNamespace === owner.namespace || (ownerNamespace === undefined && releaseNamespace === owner.namespace);
}

/** An owner in words: `Kind name`, or `Kind namespace/name` for a namespaced one. */
export function ownerName(owner: Owner): string {
  return `${owner.kind} ${owner.namespace === undefined ? '' : `${owner.namespace}/`}${owner.name}`;
}

/** Whether anyone holds `obj` by the marks describeOwner reads: an owner's labels, a Helm release, a managed-by label, a controller. */
export function heldBySomeone(obj: Pick<KubeObject, 'metadata'>): boolean {
  const labels = obj.metadata.labels ?? {};
  return (
    labels[OWNER_KIND_LABEL] !== undefined ||
    labels[MANAGED_BY_LABEL] !== undefined ||
    obj.metadata.annotations?.[HELM_RELEASE_NAME_ANNOTATION] !== undefined ||
    (obj.metadata.ownerReferences ?? []).some((r) => r.controller === true)
  );
}

/** Who holds an object, in words, for refusal messages. */
export function describeOwner(obj: Pick<KubeObject, 'metadata'>): string {
  const labels = obj.metadata.labels ?? {};
  const annotations = obj.metadata.annotations ?? {};
  const kind = labels[OWNER_KIND_LABEL];
  const name = labels[OWNER_NAME_LABEL];
  const namespace = labels[OWNER_NAMESPACE_LABEL];
  if (kind !== undefined && name !== undefined) return ownerName({ kind, name, ...(namespace === undefined ? {} : { namespace }) });
  const release = annotations[HELM_RELEASE_NAME_ANNOTATION];
  if (release !== undefined) return `Helm release ${annotations[HELM_RELEASE_NAMESPACE_ANNOTATION] ?? ''}/${release}`;
  const managedBy = labels[MANAGED_BY_LABEL];
  if (managedBy !== undefined) return `${managedBy} (app.kubernetes.io/managed-by)`;
  const controller = obj.metadata.ownerReferences?.find((r) => r.controller === true);
  if (controller !== undefined) return `${controller.kind} ${controller.name} (controller reference)`;
  return 'no Binnacle owner (created outside Binnacle)';
}

/** Helm's annotation that keeps an object when its release is uninstalled or no longer renders it. */
export const RESOURCE_POLICY_ANNOTATION = 'helm.sh/resource-policy';

/**
 * Whether Helm would leave this object in place at uninstall or prune: `helm.sh/resource-policy:
 * keep` on the manifest's object (what `helm uninstall` reads) or on the live one (what an
 * upgrade reads), compared as Helm does, trimmed and in any case.
 */
export function keptByResourcePolicy(...objects: (Pick<KubeObject, 'metadata'> | undefined)[]): boolean {
  return objects.some((o) => o?.metadata.annotations?.[RESOURCE_POLICY_ANNOTATION]?.trim().toLowerCase() === 'keep');
}

/**
 * Whether `live` is what another installer made for the same owner: its controller is that very
 * object (kind, name and uid: not a namesake made since) and it carries that installer's owner
 * labels. Anyone who can write the object could forge both, but then it was theirs to give: what
 * is taken over is only an object of this release's own name and kind, in its own scope.
 */
export function controlledBy(live: KubeObject, by: AdoptControlledBy): boolean {
  const c = by.controlledBy;
  const controller = live.metadata.ownerReferences?.find((r) => r.controller === true);
  if (controller === undefined || controller.apiVersion !== c.apiVersion || controller.kind !== c.kind || controller.name !== c.name || controller.uid !== c.uid) return false;
  const labels = live.metadata.labels ?? {};
  return Object.entries(by.ownerLabels).every(([k, v]) => labels[k] === v);
}
