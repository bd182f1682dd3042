/**
 * The discovery and OpenAPI v3 documents the one fake cluster (fake-cluster.test-helper.ts)
 * answers to raw GETs, as kubectl reads them: `/apis` (the group list), `/openapi/v3` (the index
 * of group-version documents) and `/openapi/v3/apis/<group>/<version>` (a document with one
 * component schema per kind, marked with its group-version-kind). A kind an Established CRD
 * serves can be held out of either, as the API server holds it for a few seconds after
 * Established (discovery and the OpenAPI controller catch up on their own).
 */

/** A kind the fake serves, as discovery names it. */
export interface ServedKind {
  group: string;
  version: string;
  kind: string;
}

/** `group/version/Kind`, the key of the fake's lag sets. */
export function servedKey(k: ServedKind): string {
  return `${k.group}/${k.version}/${k.kind}`;
}

function groupVersionPath(k: { group: string; version: string }): string {
  return k.group === '' ? `api/${k.version}` : `apis/${k.group}/${k.version}`;
}

/** The APIGroupList of `/apis`: every named group with a kind in discovery, and its versions. */
function groupList(kinds: readonly ServedKind[]): unknown {
  const groups = new Map<string, Set<string>>();
  for (const k of kinds) if (k.group !== '') groups.set(k.group, (groups.get(k.group) ?? new Set()).add(k.version));
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups].map(([name, versions]) => ({ name, versions: [...versions].map((version) => ({ groupVersion: `${name}/${version}`, version })) })),
  };
}

/** The `/openapi/v3` index: one URL per group-version with a kind in OpenAPI, carrying a hash of what it holds. */
function openApiIndex(kinds: readonly ServedKind[]): unknown {
  const byPath = new Map<string, string[]>();
  for (const k of kinds) byPath.set(groupVersionPath(k), [...(byPath.get(groupVersionPath(k)) ?? []), k.kind]);
  const hash = (names: readonly string[]): string => Buffer.from(names.join(',')).toString('hex').slice(0, 16);
  return { paths: Object.fromEntries([...byPath].map(([path, names]) => [path, { serverRelativeURL: `/openapi/v3/${path}?hash=${hash(names)}` }])) };
}

/** One group-version's OpenAPI v3 document: a component schema per kind. */
function openApiDocument(kinds: readonly ServedKind[], path: string): unknown {
  const here = kinds.filter((k) => groupVersionPath(k) === path);
  if (here.length === 0) return undefined;
  const name = (k: ServedKind): string => [...(k.group === '' ? ['io.k8s.api.core'] : k.group.split('.').reverse()), k.version, k.kind].join('.');
  return {
    openapi: '3.0.0',
    components: { schemas: Object.fromEntries(here.map((k) => [name(k), { type: 'object', 'x-kubernetes-group-version-kind': [{ group: k.group, version: k.version, kind: k.kind }] }])) },
  };
}

/**
 * The answer to a GET of `path` when it is one of these documents; undefined for any other path.
 * `inDiscovery` and `inOpenApi` are the kinds each one lists now.
 */
export function discoveryDocument(path: string, inDiscovery: readonly ServedKind[], inOpenApi: readonly ServedKind[]): { status: number; body: unknown } | undefined {
  if (path === '/apis') return { status: 200, body: groupList(inDiscovery) };
  if (path === '/openapi/v3') return { status: 200, body: openApiIndex(inOpenApi) };
  if (!path.startsWith('/openapi/v3/')) return undefined;
  const doc = openApiDocument(inOpenApi, path.slice('/openapi/v3/'.length));
  return doc === undefined ? { status: 404, body: { kind: 'Status', reason: 'NotFound', code: 404 } } : { status: 200, body: doc };
}
