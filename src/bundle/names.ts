/**
 * Object names the converter makes: Kubernetes length limits, OLM's naming of webhook services
 * and certificate secrets, and OLM v1's content-hashed names of the RBAC made from CSV permissions.
 */
import { createHash } from 'node:crypto';

const MAX_NAME = 63;

/**
 * `base-suffix`, cutting `base` so the whole fits in 63 characters. OLM cuts only when base and
 * suffix pass 63 together, so for a base of exactly 63 minus the suffix its name is 64 long,
 * which a Service refuses; Binnacle's is 63 (the only case where the two differ).
 */
export function nameForBaseAndSuffix(base: string, suffix: string): string {
  const room = MAX_NAME - suffix.length - 1;
  const cut = base.length > room ? base.slice(0, Math.max(room, 0)) : base;
  return `${cut}-${suffix}`;
}

/** OLM v0/v1: a deployment's webhook service is `<deployment with dots as dashes>-service`. */
export function webhookServiceName(deploymentName: string): string {
  return nameForBaseAndSuffix(deploymentName.replaceAll('.', '-'), 'service');
}

/** The serving-certificate secret of that service: `<service>-cert`. */
export function certSecretName(serviceName: string): string {
  return nameForBaseAndSuffix(serviceName, 'cert');
}

/**
 * Go's encoding/json text of a string: JSON.stringify's, plus the escapes Go adds for HTML and
 * for the JavaScript line terminators (`<`, `>`, `&`, U+2028, U+2029 as \u00XX / \u20XX).
 */
function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function goJsonStrings(v: unknown): string {
  return Array.isArray(v) ? `[${v.map((x) => goJsonString(String(x))).join(',')}]` : 'null';
}

/** rbac/v1 PolicyRule's fields in Go's order; all but `verbs` are `omitempty`. */
const POLICY_RULE_FIELDS: readonly (readonly [string, boolean])[] = [
  ['verbs', false],
  ['apiGroups', true],
  ['resources', true],
  ['resourceNames', true],
  ['nonResourceURLs', true],
];

/**
 * A CSV permission (operator-framework/api's StrategyDeploymentPermissions) as Go's
 * encoding/json writes the typed struct, with json.Encoder's trailing newline: fields in
 * struct order, empty `omitempty` lists left out, fields the types lack dropped.
 */
function goPermissionJson(p: { serviceAccountName: string; rules: readonly Record<string, unknown>[] }): string {
  const rule = (r: Record<string, unknown>): string =>
    `{${POLICY_RULE_FIELDS.filter(([k, omitEmpty]) => !(omitEmpty && (!Array.isArray(r[k]) || r[k].length === 0)))
      .map(([k]) => `"${k}":${goJsonStrings(r[k])}`)
      .join(',')}}`;
  return `{"serviceAccountName":${goJsonString(p.serviceAccountName)},"rules":[${p.rules.map(rule).join(',')}]}\n`;
}

/**
 * The name OLM v1 gives the Role, RoleBinding, ClusterRole and ClusterRoleBinding it makes from
 * a CSV permission (operator-controller's render.DefaultUniqueNameGenerator): `<base>-<hash>`,
 * the hash base 36 of the SHA-224 of the permission's Go JSON (hash.DeepHashObject), `base`
 * cut as util.ObjectNameForBaseAndSuffix cuts it: only when base and hash together pass 63
 * characters, to 62 minus the hash, so a name of exactly 64 can occur (RBAC names may be 253).
 * The same names as OLM v1's mean an install it made can be adopted object for object.
 */
export function permissionObjectName(base: string, permission: { serviceAccountName: string; rules: readonly Record<string, unknown>[] }): string {
  const digest = createHash('sha224').update(goPermissionJson(permission)).digest('hex');
  const hash = BigInt(`0x${digest}`).toString(36);
  const cut = base.length + hash.length > MAX_NAME ? base.slice(0, MAX_NAME - hash.length - 1) : base;
  return `${cut}-${hash}`;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Reasons `name` is not a DNS-1123 subdomain (empty when it is one). */
export function dns1123SubdomainErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 253) errs.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(name)) {
    errs.push("must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character");
  }
  return errs;
}

export function isDns1123Label(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL.test(name);
}
