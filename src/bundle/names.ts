/**
 * Object names the converter makes: Kubernetes length limits, OLM's naming of webhook services
 * and certificate secrets, and short stable hashes for names that must be unique per content.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';

const MAX_NAME = 63;

/** `base-suffix`, cutting `base` so the whole fits in 63 characters (as OLM does). */
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

export { canonicalJson };

// Same alphabet as Kubernetes' rand.SafeEncodeString: no vowels, no look-alikes.
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/** A short, stable, DNS-safe hash of a value. */
export function shortHash(v: unknown): string {
  const digest = createHash('sha256').update(canonicalJson(v)).digest();
  let out = '';
  for (let i = 0; i < 10; i++) out += SAFE[(digest[i] ?? 0) % SAFE.length] ?? 'b';
  return out;
}

/** A name unique for this content: `<base>-<hash>`, within 63 characters. */
export function uniqueName(base: string, content: unknown): string {
  return nameForBaseAndSuffix(base, shortHash(content));
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
