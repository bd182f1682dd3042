/**
 * PlatformOperators' ClusterExtensions are the cluster's must-haves: nobody removes or changes
 * them except through their PlatformOperator. The API server enforces it with a
 * ValidatingAdmissionPolicy (built in, no webhook server to run), which the manager installs at
 * start-up: DELETE of such an extension, or an UPDATE that changes its spec or its ownership,
 * is refused with a message saying how to do it instead — unless the request comes from the
 * manager itself (whatever identity it runs as, asked of the API server with a
 * SelfSubjectReview) or from the garbage collector removing a deleted PlatformOperator's
 * extensions. Status is a subresource the policy does not match, so status writes go through.
 */
import type { Logger } from 'pino';
import type { Discovery, ObjectReader, ObjectWriter } from '../kube/ports.js';
import { celHasLabel, celNotExempt, celString, GARBAGE_COLLECTOR_IDENTITIES, installExemptingPolicy, policyGround, policyWithBinding, type PolicyGround } from '../kube/admission-policy.js';
import type { KubeObject } from '../kube/types.js';
import { API_VERSION, GROUP, LABEL_OWNER_KIND, LABEL_OWNER_NAME } from '../api/types.js';
import { BinnacleError } from '../util/errors.js';

export const PROTECTION_POLICY_NAME = 'binnacle-platform-operator-extensions';
export const PLATFORM_OWNER_KIND = 'PlatformOperator';

/** The PlatformOperator that owns `obj` (by controller reference, else by Binnacle's labels). */
export function platformOwner(obj: Pick<KubeObject, 'metadata'>): string | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.kind === PLATFORM_OWNER_KIND && r.apiVersion.startsWith(`${GROUP}/`));
  if (ref !== undefined) return ref.name;
  const labels = obj.metadata.labels ?? {};
  return labels[LABEL_OWNER_KIND] === PLATFORM_OWNER_KIND ? labels[LABEL_OWNER_NAME] : undefined;
}

/** What to do instead of deleting or changing a PlatformOperator's extension, in words. */
export function protectedAdvice(extension: string, platformOperator: string, pkg: string): string {
  return (
    `ClusterExtension ${extension} is installed by PlatformOperator ${platformOperator}, which keeps it on the cluster, and cannot be removed or changed directly. ` +
    `To uninstall it, remove package ${pkg} from spec.packages of PlatformOperator ${platformOperator} (kubectl edit platformoperator ${platformOperator}); ` +
    `to change it, change that entry; or delete the PlatformOperator to remove all of its packages`
  );
}

/** Refuses (error code `EXTENSION_PROTECTED`) to go on with a PlatformOperator's extension, saying what to do instead. */
export async function refuseIfPlatformOwned(client: Pick<ObjectReader, 'find'>, extension: string): Promise<void> {
  const ce = await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: extension });
  if (ce !== undefined) refuseIfPlatformOwnedObject(ce);
}

/** The same refusal for a ClusterExtension already read. */
export function refuseIfPlatformOwnedObject(ce: KubeObject): void {
  const owner = platformOwner(ce);
  if (owner === undefined) return;
  const extension = ce.metadata.name ?? '';
  const spec = ce.spec as { source?: { catalog?: { packageName?: unknown } } } | undefined;
  const pkg = spec?.source?.catalog?.packageName;
  throw new BinnacleError('input', 'EXTENSION_PROTECTED', protectedAdvice(extension, owner, typeof pkg === 'string' ? pkg : extension));
}

/** The label is the same on both objects: both unset, or both set to one value (CEL). */
function sameLabel(key: string): string {
  return `(${celHasLabel('object', key)} == ${celHasLabel('oldObject', key)} && (!${celHasLabel('object', key)} || object.metadata.labels[${celString(key)}] == oldObject.metadata.labels[${celString(key)}]))`;
}

const PO_REF = `r.kind == ${celString(PLATFORM_OWNER_KIND)} && r.apiVersion.startsWith(${celString(`${GROUP}/`)})`;

/** The expressions of the policy, built in one place so that tests can read them. */
export function protectionExpressions(exemptUsers: readonly string[]): {
  ownedByPlatformOperator: string;
  notExempt: string;
  platformOperator: string;
  packageName: string;
  deleteAllowed: string;
  updateAllowed: string;
  deleteMessage: string;
  updateMessage: string;
} {
  const ownedByRef = `(has(oldObject.metadata.ownerReferences) && oldObject.metadata.ownerReferences.exists(r, ${PO_REF}))`;
  const ownedByLabel = `(${celHasLabel('oldObject', LABEL_OWNER_KIND)} && oldObject.metadata.labels[${celString(LABEL_OWNER_KIND)}] == ${celString(PLATFORM_OWNER_KIND)})`;
  const sameRefs =
    '(has(object.metadata.ownerReferences) == has(oldObject.metadata.ownerReferences) && (!has(object.metadata.ownerReferences) || object.metadata.ownerReferences == oldObject.metadata.ownerReferences))';
  const advice = (verb: string): string =>
    `'ClusterExtension ' + oldObject.metadata.name + ' is installed by PlatformOperator ' + variables.platformOperator + ', which keeps it on the cluster, and cannot be ${verb} directly. ` +
    `To uninstall it, remove package ' + variables.packageName + ' from spec.packages of PlatformOperator ' + variables.platformOperator + ' (kubectl edit platformoperator ' + variables.platformOperator + '); ` +
    `to change it, change that entry; or delete the PlatformOperator to remove all of its packages'`;
  return {
    ownedByPlatformOperator: `${ownedByRef} || ${ownedByLabel}`,
    notExempt: celNotExempt(exemptUsers),
    platformOperator:
      `${ownedByRef} ? oldObject.metadata.ownerReferences.filter(r, ${PO_REF})[0].name : ` +
      `(${celHasLabel('oldObject', LABEL_OWNER_NAME)} ? oldObject.metadata.labels[${celString(LABEL_OWNER_NAME)}] : 'unknown')`,
    packageName:
      "has(oldObject.spec) && has(oldObject.spec.source) && has(oldObject.spec.source.catalog) && has(oldObject.spec.source.catalog.packageName) ? oldObject.spec.source.catalog.packageName : oldObject.metadata.name",
    deleteAllowed: "request.operation != 'DELETE'",
    updateAllowed: `request.operation != 'UPDATE' || (object.spec == oldObject.spec && ${sameRefs} && ${sameLabel(LABEL_OWNER_KIND)} && ${sameLabel(LABEL_OWNER_NAME)})`,
    deleteMessage: advice('removed'),
    updateMessage: advice('changed'),
  };
}

/** The ValidatingAdmissionPolicy and its binding; `exemptUsers` may do anything. */
export function protectionPolicy(exemptUsers: readonly string[]): KubeObject[] {
  const x = protectionExpressions([...new Set(exemptUsers)].sort());
  return policyWithBinding(
    PROTECTION_POLICY_NAME,
    {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [GROUP], apiVersions: ['*'], operations: ['UPDATE', 'DELETE'], resources: ['clusterextensions'] }],
      },
      matchConditions: [
        { name: 'owned-by-a-platform-operator', expression: x.ownedByPlatformOperator },
        { name: 'not-binnacle-or-the-garbage-collector', expression: x.notExempt },
      ],
      variables: [
        { name: 'platformOperator', expression: x.platformOperator },
        { name: 'packageName', expression: x.packageName },
      ],
      validations: [
        { expression: x.deleteAllowed, messageExpression: x.deleteMessage, reason: 'Forbidden' },
        { expression: x.updateAllowed, messageExpression: x.updateMessage, reason: 'Forbidden' },
      ],
    },
    ['Deny'],
  );
}

// --- installing it ----------------------------------------------------------------------------

/**
 * Installs (or updates) the policy, exempting this client's own identity (`ground`, asked of the
 * API server when not given), the garbage collector's and `alsoExempt`. Answers the exempt
 * identities, or undefined when the API server serves no ValidatingAdmissionPolicy (before
 * Kubernetes 1.30) and nothing is protected.
 */
export async function ensurePlatformProtection(
  client: Pick<ObjectWriter, 'create' | 'apply'> & Pick<Discovery, 'resourceFor'>,
  logger: Logger,
  alsoExempt: readonly string[] = [],
  ground?: PolicyGround,
): Promise<string[] | undefined> {
  const { serves, identity } = ground ?? (await policyGround(client));
  if (!serves || identity === undefined) {
    logger.warn('the API server serves no ValidatingAdmissionPolicy: PlatformOperators’ extensions are not protected from direct deletion');
    return undefined;
  }
  const exempt = await installExemptingPolicy(client, [identity, ...GARBAGE_COLLECTOR_IDENTITIES, ...alsoExempt], protectionPolicy);
  logger.info({ exempt }, 'PlatformOperators’ extensions are protected');
  return exempt;
}
