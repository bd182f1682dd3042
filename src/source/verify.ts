/**
 * The verification policy of a source (`verify: {provider: cosign, secretRef: {namespace, name}}`,
 * as Flux's `spec.verify` on OCIRepository): the artifact must carry a cosign signature that one of
 * the public keys in the Secret verifies (every data key ending in `.pub`; several keys = a key
 * rotation). Only OCI artifacts can carry such a signature: a policy on a git, http, ConfigMaps or
 * local source is refused, naming the source type. The key Secret is read through the caller's
 * SecretReader, i.e. as the installing identity, as pull secrets are.
 */
import { parsePublicKey, type TrustedKey } from '../oci/index.js';
import { InputError } from '../util/errors.js';
import { readSecret, type SecretReader, type SecretRef } from './secrets.js';
import { isRecord } from '../util/object.js';

export const VERIFY_PROVIDERS = ['cosign'] as const;

export interface VerifyPolicy {
  provider: 'cosign';
  /** A Secret whose `*.pub` data keys are PEM public keys. */
  secretRef: SecretRef;
}

/** Why a source type cannot be verified (for refusals that name it), or undefined when it can. */
export function unverifiableSourceReason(type: string): string | undefined {
  if (type === 'image' || type === 'Image' || type === 'oci') return undefined;
  return `a ${type} source cannot carry an OCI signature, so it cannot be verified; use an image source, or remove verify`;
}

/**
 * Checks a `verify` object; every problem is passed to `error(field, message)`. `namespaced`
 * says whether `secretRef.namespace` is required (cluster-scoped objects) or taken from `defaultNamespace`.
 */
export function parseVerifyPolicy(value: unknown, field: string, error: (field: string, message: string) => void, defaultNamespace?: string): VerifyPolicy | undefined {
  if (!isRecord(value)) {
    error(field, 'expected an object {provider: cosign, secretRef: {namespace, name}}');
    return undefined;
  }
  let ok = true;
  for (const k of Object.keys(value)) {
    if (k !== 'provider' && k !== 'secretRef') {
      error(`${field}.${k}`, 'unknown field; expected one of provider, secretRef');
      ok = false;
    }
  }
  const provider = value.provider ?? 'cosign';
  if (provider === 'notation') {
    error(`${field}.provider`, 'notation is not supported; use cosign');
    ok = false;
  } else if (provider !== 'cosign') {
    error(`${field}.provider`, `${JSON.stringify(provider)} is not a provider; expected cosign`);
    ok = false;
  }
  const ref = value.secretRef;
  if (!isRecord(ref)) {
    error(`${field}.secretRef`, 'is required: a Secret whose *.pub keys are the trusted public keys');
    return undefined;
  }
  const name = ref.name;
  const namespace = ref.namespace ?? defaultNamespace;
  if (typeof name !== 'string' || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) {
    error(`${field}.secretRef.name`, 'expected a Secret name');
    ok = false;
  }
  if (typeof namespace !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace)) {
    error(`${field}.secretRef.namespace`, 'expected a namespace name');
    ok = false;
  }
  for (const k of Object.keys(ref)) {
    if (k !== 'name' && k !== 'namespace') {
      error(`${field}.secretRef.${k}`, 'unknown field; expected one of namespace, name');
      ok = false;
    }
  }
  if (!ok || typeof name !== 'string' || typeof namespace !== 'string') return undefined;
  return { provider: 'cosign', secretRef: { namespace, name } };
}

/** The wire form of a policy. */
export function verifyPolicyToJson(p: VerifyPolicy): Record<string, unknown> {
  return { provider: p.provider, secretRef: { namespace: p.secretRef.namespace, name: p.secretRef.name } };
}

/**
 * The trusted keys of a policy, read through `reader` (the installing identity in a controller).
 * A Secret without a `*.pub` key, or with one that is not a PEM public key, is refused naming the field.
 */
export async function trustedKeysFromSecret(reader: SecretReader, ref: SecretRef): Promise<TrustedKey[]> {
  const secret = await readSecret(reader, ref, 'verification key');
  const what = `Secret ${ref.namespace}/${ref.name}`;
  const data = isRecord(secret.data) ? secret.data : {};
  const names = Object.keys(data)
    .filter((k) => k.endsWith('.pub'))
    .sort();
  if (names.length === 0) throw new InputError('SIGNATURE_NO_KEYS', 'has no key ending in .pub (each holds one PEM public key, e.g. cosign.pub)', { file: what, field: 'data' });
  return names.map((name) => {
    const v = data[name];
    const field = `${what} data["${name}"]`;
    if (typeof v !== 'string') throw new InputError('SIGNATURE_BAD_KEY', 'expected base64 text', { file: what, field: `data["${name}"]` });
    return { name: `${ref.namespace}/${ref.name}:${name}`, key: parsePublicKey(Buffer.from(v, 'base64').toString('utf8'), field) };
  });
}
