/**
 * The console API's paths (under /api/), built in one place for the page that calls them; the
 * server's router (../api.ts) answers them, and ../routes.test.ts holds the two together, so a path the
 * page builds and the router does not know (an icon URL without its `packages` segment, once)
 * fails a test instead of a browser. Imports nothing, as api-types.ts, so the page's build takes
 * it in.
 */

/** Path segments, each encoded. */
export const seg = (...parts: string[]): string => parts.map(encodeURIComponent).join('/');

const query = (params: Record<string, string | undefined>): string => {
  const q = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '');
  return q.length === 0 ? '' : `?${q.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
};

/** What `extensions/NAME/PART` answers. */
export type ExtensionPart = 'events' | 'uninstall-preview' | 'apis' | 'revisions' | 'timeline' | 'drift' | 'rollback-preview' | 'rollback' | 'approve';
/** What `crds/CRD/resources/NAME/PART` answers. */
export type ResourcePart = 'delete-preview' | 'drift' | 'timeline';

export const routes = {
  packages: (): string => 'packages',
  packagePage: (catalog: string, pkg: string): string => `catalogs/${seg(catalog, 'packages', pkg)}`,
  packageIcon: (catalog: string, pkg: string): string => `catalogs/${seg(catalog, 'packages', pkg, 'icon')}`,
  plan: (): string => 'plan',
  extensions: (): string => 'extensions',
  extension: (name: string): string => `extensions/${seg(name)}`,
  extensionPart: (name: string, part: ExtensionPart, params: Record<string, string | undefined> = {}): string => `extensions/${seg(name, part)}${query(params)}`,
  helmOperators: (): string => 'helm-operators',
  inventory: (): string => 'inventory',
  crd: (crd: string): string => `crds/${seg(crd)}`,
  resources: (crd: string): string => `crds/${seg(crd, 'resources')}`,
  resource: (crd: string, name: string, namespace?: string): string => `crds/${seg(crd, 'resources', name)}${query({ namespace })}`,
  resourcePart: (crd: string, name: string, part: ResourcePart, namespace?: string): string => `crds/${seg(crd, 'resources', name, part)}${query({ namespace })}`,
};

/** The decoded segments of an API path (`/api/a/b%2Fc` → `[a, b/c]`), as the server routes them; undefined off /api/. */
export function apiParts(pathname: string): string[] | undefined {
  if (!pathname.startsWith('/api/')) return undefined;
  return pathname
    .slice('/api/'.length)
    .split('/')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p));
}
