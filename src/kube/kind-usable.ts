/**
 * Whether kubectl can use a kind yet. A CRD's Established=True says the API server serves its
 * kind, but kubectl finds a kind through discovery (`/apis`, then the group-version's resource
 * list) and `kubectl explain` reads its schema from the OpenAPI v3 document of its
 * group-version: both catch up a few seconds after Established (the APIService the server
 * registers for a new group, and its OpenAPI controller). This asks each one anew (no cache,
 * as kubectl after a miss) and says what is still missing.
 */
import type { RawRequester } from './ports.js';
import { OpenApiDocument, groupVersionPath } from './openapi.js';
import { isRecord } from '../util/object.js';

/** A kind as discovery lists it: its group, version, kind and plural resource name. */
export interface KindName {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

async function getJson(client: RawRequester, path: string): Promise<{ status: number; body: unknown }> {
  const r = await client.rawRequest('GET', path);
  if (r.status !== 200) return { status: r.status, body: undefined };
  try {
    return { status: 200, body: JSON.parse(r.body) as unknown };
  } catch {
    return { status: 200, body: undefined };
  }
}

function arrayAt(v: unknown, key: string): unknown[] {
  const a = isRecord(v) ? v[key] : undefined;
  return Array.isArray(a) ? a : [];
}

/** In `/apis` (named groups only) and in the group-version's resource list, as kubectl's discovery finds it. */
async function inDiscovery(client: RawRequester, k: KindName): Promise<boolean> {
  if (k.group !== '') {
    const groups = await getJson(client, '/apis');
    const group = arrayAt(groups.body, 'groups').find((g) => isRecord(g) && g.name === k.group);
    if (!arrayAt(group, 'versions').some((v) => isRecord(v) && v.version === k.version)) return false;
  }
  const list = await getJson(client, `/${groupVersionPath(k)}`);
  return arrayAt(list.body, 'resources').some((r) => isRecord(r) && r.name === k.plural && r.kind === k.kind);
}

/** In the OpenAPI v3 document of its group-version; true when the server publishes no OpenAPI v3 at all (nothing to wait for). */
async function inOpenApi(client: RawRequester, k: KindName): Promise<boolean> {
  const index = await getJson(client, '/openapi/v3');
  if (index.status === 404) return true;
  const paths = isRecord(index.body) ? index.body.paths : undefined;
  const entry = isRecord(paths) ? paths[groupVersionPath(k)] : undefined;
  const url = isRecord(entry) ? entry.serverRelativeURL : undefined;
  if (typeof url !== 'string') return false;
  const doc = await getJson(client, url);
  return doc.status === 200 && OpenApiDocument.parse(groupVersionPath(k), doc.body).kind(k) !== undefined;
}

/** What kubectl still lacks to use the kind (`discovery`, `OpenAPI v3`); empty when it can use it. */
export async function kindPending(client: RawRequester, k: KindName): Promise<string[]> {
  const pending: string[] = [];
  if (!(await inDiscovery(client, k))) pending.push('discovery');
  if (!(await inOpenApi(client, k))) pending.push('OpenAPI v3');
  return pending;
}
