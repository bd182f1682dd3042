/**
 * Reading the Secrets a source names (an image's pull secret, an http or git source's basic-auth
 * Secret) through a port, so that the caller decides whose identity reads them. A controller
 * passes the installing ServiceAccount's (impersonated) client: a spec can then use only Secrets
 * that account may read, never any Secret the manager could. Errors name the Secret and the
 * identity that asked, and never quote the Secret's data.
 */
import type { ObjectReader } from '../kube/ports.js';
import { isForbidden, isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, InputError } from '../util/errors.js';
import { isRecord } from '../util/object.js';

export interface SecretRef {
  namespace: string;
  name: string;
}

/** The port: who reads (for messages) and how. */
export interface SecretReader {
  /** The identity that reads, for messages: e.g. `service account ns/installer`. */
  readonly identity: string;
  get(ref: SecretRef): Promise<KubeObject>;
}

/** A SecretReader over `client`, which must already act as `identity` (impersonated or not). */
export function secretReader(client: Pick<ObjectReader, 'get'>, identity: string): SecretReader {
  return { identity, get: (ref) => client.get({ apiVersion: 'v1', kind: 'Secret', namespace: ref.namespace, name: ref.name }) };
}

/**
 * The Secret, as a plain record. Missing: `SOURCE_SECRET_NOT_FOUND`; the identity may not read
 * it: `SOURCE_SECRET_FORBIDDEN`, naming both, so the fix (grant `get` on that Secret to that
 * identity, or name a Secret it may read) is in the message. `purpose` says what it was for.
 */
export async function readSecret(reader: SecretReader, ref: SecretRef, purpose: string, notFoundCode = 'SOURCE_SECRET_NOT_FOUND'): Promise<Record<string, unknown>> {
  const what = `Secret ${ref.namespace}/${ref.name}`;
  try {
    return await reader.get(ref);
  } catch (err) {
    if (isNotFound(err)) throw new BinnacleError('transient', notFoundCode, `${purpose} ${what} does not exist (read as ${reader.identity})`, { cause: err });
    if (isForbidden(err)) {
      throw new BinnacleError(
        'transient',
        'SOURCE_SECRET_FORBIDDEN',
        `${reader.identity} may not read the ${purpose} ${what}: grant it "get" on that Secret, or name a Secret it may read`,
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * `username` and `password` of a basic-auth Secret (type `kubernetes.io/basic-auth` or `Opaque`
 * with those keys), as Flux's `secretRef` of a GitRepository or HelmRepository takes them.
 */
export async function basicAuthFromSecret(reader: SecretReader, ref: SecretRef, purpose: string): Promise<{ username: string; password: string }> {
  const secret = await readSecret(reader, ref, purpose);
  const what = `Secret ${ref.namespace}/${ref.name}`;
  const data = isRecord(secret.data) ? secret.data : {};
  const field = (key: string): string => {
    const v = data[key];
    if (typeof v !== 'string' || v === '') throw new InputError('SOURCE_SECRET', 'is missing (a basic-auth Secret has username and password)', { file: what, field: `data.${key}` });
    return Buffer.from(v, 'base64').toString('utf8');
  };
  return { username: field('username'), password: field('password') };
}
