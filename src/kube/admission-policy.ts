/**
 * Binnacle's ValidatingAdmissionPolicies (built into the API server, no webhook to run) that let
 * only Binnacle's manager do something: the pieces they share.
 *
 * - CEL literals, written the way CEL reads them.
 * - Who the manager is: asked of the API server (SelfSubjectReview), whatever identity it runs as.
 * - Which identities a policy exempts: the starting manager's (and the few it names), never a
 *   list that grows with every identity that once ran a manager.
 */
import { BinnacleError } from '../util/errors.js';
import { isNotFound } from './errors.js';
import type { Discovery, ObjectWriter } from './ports.js';
import type { KubeObject } from './types.js';

export const ADMISSION_API = 'admissionregistration.k8s.io/v1';

/** A CEL string literal. JSON's escapes (\" \\ \n \uXXXX …) are all valid CEL escapes. */
export function celString(s: string): string {
  return JSON.stringify(s);
}

export function celStringList(xs: readonly string[]): string {
  return `[${xs.map(celString).join(', ')}]`;
}

/** `obj.metadata.labels[key]` is set (CEL). */
export function celHasLabel(obj: string, key: string): string {
  return `(has(${obj}.metadata.labels) && ${celString(key)} in ${obj}.metadata.labels)`;
}

/** The request does not come from one of `users` (CEL). */
export function celNotExempt(users: readonly string[]): string {
  return `!(request.userInfo.username in ${celStringList(users)})`;
}

/** The identities the garbage collector deletes and orphans as (kube-controller-manager's, with and without its per-controller credentials). */
export const GARBAGE_COLLECTOR_IDENTITIES: readonly string[] = ['system:kube-controller-manager', 'system:serviceaccount:kube-system:generic-garbage-collector'];

/** The user name the API server knows this client as (SelfSubjectReview). */
export async function clientIdentity(client: Pick<ObjectWriter, 'create'>): Promise<string> {
  const review = await client.create({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} });
  const status = review.status as { userInfo?: { username?: unknown } } | undefined;
  const user = status?.userInfo?.username;
  if (typeof user !== 'string' || user === '') throw new BinnacleError('terminal', 'IDENTITY_UNKNOWN', 'the API server did not say who this client is (SelfSubjectReview has no user name)');
  return user;
}

/** Whether the API server serves ValidatingAdmissionPolicy (Kubernetes 1.30 and later). */
export async function servesAdmissionPolicies(client: Pick<Discovery, 'resourceFor'>): Promise<boolean> {
  try {
    await client.resourceFor(ADMISSION_API, 'ValidatingAdmissionPolicy');
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** What installing Binnacle's admission policies needs to know of the API server: asked once at a manager's start. */
export interface PolicyGround {
  /** Whether it serves ValidatingAdmissionPolicy. */
  serves: boolean;
  /** This client's user name, where it does. */
  identity: string | undefined;
}

export async function policyGround(client: Pick<ObjectWriter, 'create'> & Pick<Discovery, 'resourceFor'>): Promise<PolicyGround> {
  const serves = await servesAdmissionPolicies(client);
  return { serves, identity: serves ? await clientIdentity(client) : undefined };
}

/** A ValidatingAdmissionPolicy of Binnacle's and its binding (to every object it matches), with `validationActions`. */
export function policyWithBinding(name: string, spec: Record<string, unknown>, validationActions: readonly ('Deny' | 'Warn' | 'Audit')[]): KubeObject[] {
  const labels = { 'app.kubernetes.io/part-of': 'binnacle' };
  return [
    { apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicy', metadata: { name, labels }, spec },
    { apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name, labels }, spec: { policyName: name, validationActions: [...validationActions] } },
  ];
}

/**
 * Installs (or updates) a policy and its binding, built by `build` for the identities it exempts.
 * The last manager to start decides them: an identity that ran a manager before (a person's, a
 * namespace's since removed) is not kept exempt.
 */
export async function installExemptingPolicy(client: Pick<ObjectWriter, 'apply'>, exempt: readonly string[], build: (exempt: readonly string[]) => KubeObject[]): Promise<string[]> {
  const all = [...new Set(exempt)].sort();
  for (const obj of build(all)) await client.apply(obj, { force: true });
  return all;
}
