/**
 * A bundle kept in ConfigMaps, named in a catalog's `olm.bundle` `image` field. A catalog served
 * from ConfigMaps (`binnacle run bundle DIR`, no registry) cannot name an OCI image, so it names
 * the ConfigMaps instead: `configmaps://<namespace>/<name>:<path>,<name>:<path>`, each ConfigMap's
 * keys landing in `<path>` (`manifests`, `metadata`). A ClusterExtension turns that into a
 * `configMaps` bundle source.
 */
import type { ConfigMapRef } from './types.js';

export const CONFIGMAPS_IMAGE_SCHEME = 'configmaps://';

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const PATH = /^[-._a-zA-Z0-9/]*$/;

/** `configmaps://ns/a:manifests,b:metadata` for ConfigMaps that all live in `namespace`. */
export function formatConfigMapsImage(namespace: string, refs: readonly { name: string; path?: string }[]): string {
  return `${CONFIGMAPS_IMAGE_SCHEME}${namespace}/${refs.map((r) => (r.path === undefined || r.path === '' ? r.name : `${r.name}:${r.path}`)).join(',')}`;
}

/** The ConfigMaps an `image` names, or undefined when it is no `configmaps://` reference (or a malformed one). */
export function parseConfigMapsImage(image: string): ConfigMapRef[] | undefined {
  if (!image.startsWith(CONFIGMAPS_IMAGE_SCHEME)) return undefined;
  const rest = image.slice(CONFIGMAPS_IMAGE_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  const namespace = rest.slice(0, slash);
  if (!NAME.test(namespace)) return undefined;
  const out: ConfigMapRef[] = [];
  for (const part of rest.slice(slash + 1).split(',')) {
    const [name = '', path, extra] = part.split(':');
    if (extra !== undefined || !NAME.test(name) || (path !== undefined && (!PATH.test(path) || path.split('/').includes('..')))) return undefined;
    out.push({ namespace, name, ...(path === undefined || path === '' ? {} : { path }) });
  }
  return out.length === 0 ? undefined : out;
}
