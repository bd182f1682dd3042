/**
 * Binnacle's ValidatingAdmissionPolicies (built into the API server, no webhook to run) that let
 * only Binnacle's manager do something: the pieces they share.
 *
 * - CEL literals, written the way CEL reads them.
 * - Who the manager is: asked of the API server (SelfSubjectReview), whatever identity it runs as.
 * - Which identities a policy exempts: recorded on the policy (annotation), so that managers of
 *   several identities on one cluster (one moving from a process to a Pod, or test managers side
 *   by side) add theirs instead of taking the others' away. Deleting the policy resets the list;
 *   each manager installs it again at start.
 */
import { BinnacleError } from '../util/errors.js';
import { isNotFound } from './errors.js';
import type { Discovery, ObjectReader, ObjectWriter } from './ports.js';
import type { KubeObject } from './types.js';

export const ADMISSION_API = 'admissionregistration.k8s.io/v1';
/** On a policy: the JSON list of the identities it exempts. */
export const EXEMPT_IDENTITIES_ANNOTATION = 'binnacle.dev/exempt-identities';

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

/** A ValidatingAdmissionPolicy of Binnacle's and its binding (to every object it matches), with `validationActions`. */
export function policyWithBinding(name: string, spec: Record<string, unknown>, validationActions: readonly ('Deny' | 'Warn' | 'Audit')[]): KubeObject[] {
  const labels = { 'app.kubernetes.io/part-of': 'binnacle' };
  return [
    { apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicy', metadata: { name, labels }, spec },
    { apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name, labels }, spec: { policyName: name, validationActions: [...validationActions] } },
  ];
}

/** The identities the installed policy `name` records as exempt; none when it is missing or its record is not a list of names. */
async function recordedExempt(client: Pick<ObjectReader, 'find'>, name: string): Promise<string[]> {
  const live = await client.find({ apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicy', name });
  const text = live?.metadata.annotations?.[EXEMPT_IDENTITIES_ANNOTATION];
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  } catch {
    return [];
  }
}

/**
 * Installs (or updates) a policy and its binding, built by `build` for the identities it exempts:
 * `exempt` and those the installed policy already exempts. Answers the identities exempted.
 */
export async function installExemptingPolicy(
  client: Pick<ObjectWriter, 'apply'> & Pick<ObjectReader, 'find'>,
  name: string,
  exempt: readonly string[],
  build: (exempt: readonly string[]) => KubeObject[],
): Promise<string[]> {
  const all = [...new Set([...(await recordedExempt(client, name)), ...exempt])].sort();
  for (const obj of build(all)) {
    const annotated = obj.kind === 'ValidatingAdmissionPolicy' ? { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [EXEMPT_IDENTITIES_ANNOTATION]: JSON.stringify(all) } } } : obj;
    await client.apply(annotated, { force: true });
  }
  return all;
}
