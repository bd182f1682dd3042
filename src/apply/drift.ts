/**
 * Drift: how the live objects of a release differ from what its deployed revision applied.
 * The revision's manifest (what `helm get manifest` prints) is the reference, with the
 * namespaces the applier fills in. Only the fields the manifest sets are compared, so what the
 * API server defaults or another controller adds is not drift; an object the manifest has and
 * the cluster lacks is missing. A zero value the manifest sets where the server stores it as
 * unset and defaults it (`imagePullPolicy: ""` → IfNotPresent, a probe's `timeoutSeconds: 0` → 1;
 * SERVER_DEFAULTS) is not drift against that default while Binnacle's applied configuration
 * still holds the field (server-side apply gives a field to whoever changes it). Values of a
 * Secret's data are never shown, only that they differ.
 * The console's drift view and the custom-resource delete preview read releases through here.
 */
import type { Discovery, ObjectReader } from '../kube/ports.js';
import { FIELD_MANAGER } from '../kube/client.js';
import { isForbidden, isNotFound } from '../kube/errors.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import { errorMessage } from '../util/errors.js';
import { appliesField, withoutPointers, type Pointer } from './drift-policy.js';
import { optionalApi } from './optional-kinds.js';
import { parseManifest } from './release.js';
import { ReleaseStore, type StoreClient } from './release-store.js';
import type { FieldDrift, ObjectDrift, ReleaseRef, ReleaseRevision } from './types.js';
import { isRecord } from '../util/object.js';

export type DriftClient = Pick<ObjectReader, 'list' | 'find'> & Pick<Discovery, 'resourceFor'>;

export type { FieldDrift, ObjectDrift } from './types.js';

export interface ReleaseDrift {
  release: string;
  namespace: string;
  /** The deployed revision compared; absent when the release has none. */
  revision?: number;
  chart?: string;
  /** Objects of the manifest compared with the cluster. */
  checked: number;
  drifted: ObjectDrift[];
  /** Objects of optional APIs the cluster does not serve (the applier skipped them too). */
  skipped: string[];
  message?: string;
}

/** The release's deployed revision, if it has one. */
export async function deployedRevision(client: Pick<ObjectReader, 'list'>, release: ReleaseRef): Promise<ReleaseRevision | undefined> {
  // Reading the history only lists Secrets.
  const history = await new ReleaseStore(client as StoreClient).history(release);
  return [...history].reverse().find((r) => r.status === 'deployed');
}

/** The revision's objects with the namespaces the applier gives them; objects of unserved optional APIs apart. */
export async function revisionObjects(client: Pick<Discovery, 'resourceFor'>, manifest: string, release: ReleaseRef, where: string): Promise<{ objects: KubeObject[]; skipped: KubeObject[] }> {
  const out = { objects: [] as KubeObject[], skipped: [] as KubeObject[] };
  for (const o of parseManifest(manifest, where)) {
    let namespaced: boolean | undefined;
    try {
      namespaced = (await client.resourceFor(o.apiVersion, o.kind)).namespaced;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      if (optionalApi(o.apiVersion, o.kind) !== undefined) {
        out.skipped.push(o);
        continue;
      }
    }
    const { namespace, ...meta } = o.metadata;
    if (namespaced === false) out.objects.push({ ...o, metadata: meta });
    else out.objects.push({ ...o, metadata: { ...meta, namespace: namespace === undefined || namespace === '' ? release.namespace : namespace } });
  }
  return out;
}

export function describeObject(o: Pick<KubeObject, 'kind' | 'metadata'>): string {
  const ns = o.metadata.namespace;
  return `${o.kind} ${ns === undefined || ns === '' ? '' : `${ns}/`}${o.metadata.name ?? ''}`;
}

// --- comparing one object -------------------------------------------------------------------

type Rec = Record<string, unknown>;

/** Set by the server, or how the object is found: never drift. */
const SERVER_META = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink']);
/** Maps whose values are resource quantities ("1" and "1000m" are the same CPU). */
const QUANTITY_MAPS = new Set(['limits', 'requests', 'hard', 'capacity', 'allocatable', 'overhead']);
const QUANTITY_KEYS = new Set(['sizeLimit']);

/**
 * What the API server stores for a field of a built-in kind given its zero value, where the field
 * is a plain (not pointer) string or integer, so that "" or 0 reads as unset and is defaulted
 * (k8s.io/kubernetes pkg/apis/core/v1/defaults.go): the field's key, the key of what holds it
 * (a container of `containers`, a probe, a port of `ports`, a pod's `spec`), and the defaults.
 * Only these are excused, only there, and only to these values: a zero value the server keeps as
 * it is (`privileged: false`, `replicas: 0`), a ConfigMap's data, or a custom resource's field
 * of the same name, against anything else live is drift, whoever holds the field (Binnacle holds
 * it too after applying another revision's value, a failed upgrade's say).
 */
const CONTAINERS = ['containers', 'initContainers', 'ephemeralContainers'];
const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'];
const SERVER_DEFAULTS: ReadonlyMap<string, { in: readonly string[]; values: readonly unknown[] }> = new Map([
  ['imagePullPolicy', { in: CONTAINERS, values: ['IfNotPresent', 'Always'] }], // the one the container's image gets (defaultPullPolicy)
  ['terminationMessagePath', { in: CONTAINERS, values: ['/dev/termination-log'] }],
  ['terminationMessagePolicy', { in: CONTAINERS, values: ['File'] }],
  ['protocol', { in: ['ports'], values: ['TCP'] }],
  ['scheme', { in: ['httpGet'], values: ['HTTP'] }],
  ['timeoutSeconds', { in: PROBES, values: [1] }],
  ['periodSeconds', { in: PROBES, values: [10] }],
  ['successThreshold', { in: PROBES, values: [1] }],
  ['failureThreshold', { in: PROBES, values: [3] }],
  ['dnsPolicy', { in: ['spec'], values: ['ClusterFirst'] }],
  ['restartPolicy', { in: ['spec'], values: ['Always'] }],
  ['schedulerName', { in: ['spec'], values: ['default-scheduler'] }],
  ['sessionAffinity', { in: ['spec'], values: ['None'] }],
]);
/** The API groups whose kinds the server defaults as above (a custom resource's schema defaults are its own). */
const BUILT_IN_API_VERSIONS = new Set(['v1', 'apps/v1', 'batch/v1']);

/**
 * The pull policy the API server gives a container that sets none (SetDefaults_Container):
 * Always for an image tagged `latest`, or with neither a tag nor a digest; else IfNotPresent.
 */
export function defaultPullPolicy(image: unknown): 'Always' | 'IfNotPresent' | undefined {
  if (typeof image !== 'string' || image === '') return undefined;
  const at = image.indexOf('@');
  const name = at < 0 ? image : image.slice(0, at);
  const colon = name.lastIndexOf(':');
  const tag = colon > name.lastIndexOf('/') ? name.slice(colon + 1) : undefined;
  return tag === 'latest' || (tag === undefined && at < 0) ? 'Always' : 'IfNotPresent';
}

/**
 * Whether the server stores `live` for the zero value a built-in kind's field was given; `liveParent`
 * is the live object holding the field (a container's pull policy defaults by its image: a failed
 * revision's `Always` on a tagged image is not the server's default, and is drift).
 */
function serverDefault(key: string, parentKey: string, live: unknown, liveParent: Record<string, unknown> | undefined): boolean {
  const d = SERVER_DEFAULTS.get(key);
  if (d === undefined || !d.in.includes(parentKey)) return false;
  if (key === 'imagePullPolicy') return live === defaultPullPolicy(liveParent?.image);
  return d.values.includes(live);
}

const SUFFIX: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

/** A Kubernetes resource quantity's value, or undefined when `v` is not one. */
export function quantityValue(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/.exec(v.trim());
  if (m === null) return undefined;
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2].slice(1));
  return base * (SUFFIX[m[3] ?? ''] ?? 1);
}

function sameQuantity(a: unknown, b: unknown): boolean {
  const x = quantityValue(a);
  const y = quantityValue(b);
  if (x === undefined || y === undefined) return false;
  return x === y || Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

const keySegment = (k: string): string => (/^[A-Za-z_$][\w$-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);
const join = (path: string, k: string): string => {
  const seg = keySegment(k);
  return path === '' ? (seg.startsWith('.') ? seg.slice(1) : seg) : `${path}${seg}`;
};

/** A list whose items are maps named by a unique `name` (containers, env, ports, volumes): matched by name, not position. */
function namedItems(list: readonly unknown[]): Map<string, Rec> | undefined {
  if (list.length === 0) return undefined;
  const byName = new Map<string, Rec>();
  for (const item of list) {
    if (!isRecord(item) || typeof item.name !== 'string' || byName.has(item.name)) return undefined;
    byName.set(item.name, item);
  }
  return byName;
}

const isUnset = (v: unknown): boolean => v === undefined || v === null;
/** What Go's `omitempty` leaves out when the server stores it: an unset live field matches it. */
const isZero = (v: unknown): boolean => v === '' || v === false || v === 0 || (Array.isArray(v) && v.length === 0) || (isRecord(v) && Object.keys(v).length === 0);

/** One comparison: where its differences go, and whether Binnacle's applied configuration holds the live field at a pointer. */
interface Walk {
  out: FieldDrift[];
  held: (p: Pointer) => boolean;
  /** A kind whose zero values the server defaults (SERVER_DEFAULTS). */
  builtIn: boolean;
}

/** Whether a value the manifest sets is the live one: equal, the same quantity, or the same number as a string. */
function sameValue(desired: unknown, live: unknown, key: string, parentKey: string): boolean {
  if (desired === live) return true;
  if ((QUANTITY_MAPS.has(parentKey) || QUANTITY_KEYS.has(key)) && sameQuantity(desired, live)) return true;
  // A value the server stores in its declared type (an int-or-string given as "8080").
  return typeof desired !== typeof live && (typeof desired === 'number' || typeof live === 'number') && String(desired) === String(live);
}

/** `at` is the live field's pointer (list items by their index in the live list). */
function compare(desired: unknown, live: unknown, path: string, at: Pointer, key: string, parentKey: string, w: Walk, liveParent?: Record<string, unknown>): void {
  if (isUnset(desired)) return; // the manifest does not set it
  if (isUnset(live)) {
    // A map the live object lacks is one difference, unless all it sets are zero values.
    const sub: Walk = { ...w, out: [] };
    if (isRecord(desired)) for (const [k, v] of Object.entries(desired)) compare(v, undefined, join(path, k), [...at, k], k, key, sub);
    if (isRecord(desired) ? sub.out.length > 0 : !isZero(desired)) w.out.push({ path, manifest: desired });
    return;
  }
  if (isRecord(desired)) {
    if (!isRecord(live)) return void w.out.push({ path, manifest: desired, live });
    for (const [k, v] of Object.entries(desired)) compare(v, live[k], join(path, k), [...at, k], k, key, w, live);
    return;
  }
  if (Array.isArray(desired)) {
    if (!Array.isArray(live)) return void w.out.push({ path, manifest: desired, live });
    return compareLists(desired, live, path, at, key, parentKey, w);
  }
  if (sameValue(desired, live, key, parentKey)) return;
  // A zero value Binnacle applied, which the server took as unset and defaulted (a container's
  // imagePullPolicy "" stored as IfNotPresent): while Binnacle's applied configuration still
  // holds the field no one else changed it, and applying it again would change nothing.
  if (w.builtIn && isZero(desired) && serverDefault(key, parentKey, live, liveParent) && w.held(at)) return;
  w.out.push({ path, manifest: desired, live });
}

/** Items named alike are matched by name; other lists by position. An item the manifest lacks is drift too. */
function compareLists(desired: readonly unknown[], live: readonly unknown[], path: string, at: Pointer, key: string, parentKey: string, w: Walk): void {
  const named = namedItems(desired);
  const liveNamed = named === undefined ? undefined : namedItems(live);
  if (named !== undefined && liveNamed !== undefined) {
    for (const [name, item] of named) {
      const index = live.findIndex((x) => isRecord(x) && x.name === name);
      compare(item, liveNamed.get(name), `${path}[name=${name}]`, [...at, String(index)], key, parentKey, w);
    }
    for (const [name, item] of liveNamed) if (!named.has(name)) w.out.push({ path: `${path}[name=${name}]`, live: item });
    return;
  }
  desired.forEach((item, i) => compare(item, live[i], `${path}[${i}]`, [...at, String(i)], key, parentKey, w));
  for (let i = desired.length; i < live.length; i++) w.out.push({ path: `${path}[${i}]`, live: live[i] });
}

/** A Secret's stringData as the data the server stores it as. */
function secretData(o: KubeObject): Rec {
  const data: Rec = isRecord(o.data) ? { ...o.data } : {};
  if (isRecord(o.stringData)) for (const [k, v] of Object.entries(o.stringData)) if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
  return data;
}

/**
 * The fields `desired` (a manifest's object) sets whose value in `live` differs. Metadata the
 * server owns, `status`, and fields the manifest leaves out are not compared; nor is a zero
 * value the server defaulted in a field the applied configuration of `manager` (Binnacle's by
 * default) holds (see the top).
 */
export function fieldDrift(desired: KubeObject, live: KubeObject, manager: string = FIELD_MANAGER): FieldDrift[] {
  const isSecret = desired.kind === 'Secret' && desired.apiVersion === 'v1';
  const builtIn = BUILT_IN_API_VERSIONS.has(desired.apiVersion) && desired.kind !== 'ConfigMap' && !isSecret;
  const w: Walk = { out: [], held: (p) => appliesField(live, manager, p), builtIn };
  for (const [k, v] of Object.entries(desired)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'status' || (isSecret && (k === 'data' || k === 'stringData'))) continue;
    if (k === 'metadata') {
      const meta = isRecord(v) ? v : {};
      const liveMeta: Rec = isRecord(live.metadata) ? live.metadata : {};
      for (const [mk, mv] of Object.entries(meta)) if (!SERVER_META.has(mk)) compare(mv, liveMeta[mk], join('metadata', mk), ['metadata', mk], mk, 'metadata', w);
      continue;
    }
    compare(v, live[k], k, [k], k, '', w);
  }
  if (isSecret) {
    // Compared as the data stringData becomes, never shown: no field of it is taken as defaulted.
    const fields: Walk = { out: [], held: () => false, builtIn: false };
    compare(secretData(desired), isRecord(live.data) ? live.data : {}, 'data', ['data'], 'data', '', fields);
    for (const f of fields.out) w.out.push({ path: f.path, hidden: true });
  }
  return w.out;
}

// --- a release -----------------------------------------------------------------------------

/** One object of the manifest against the cluster, leaving out the `ignored` fields on both sides: undefined when it matches. */
export async function objectDrift(client: { find(ref: ObjectRef): Promise<KubeObject | undefined> }, desired: KubeObject, ignored: readonly Pointer[] = []): Promise<ObjectDrift | undefined> {
  const ns = desired.metadata.namespace;
  const base = { apiVersion: desired.apiVersion, kind: desired.kind, name: desired.metadata.name ?? '', ...(ns === undefined ? {} : { namespace: ns }) };
  let live: KubeObject | undefined;
  try {
    live = await client.find({ apiVersion: desired.apiVersion, kind: desired.kind, name: base.name, ...(ns === undefined ? {} : { namespace: ns }) });
  } catch (err) {
    return { ...base, state: 'unreadable', fields: [], message: isForbidden(err) ? `forbidden: ${errorMessage(err)}` : errorMessage(err) };
  }
  if (live === undefined) return { ...base, state: 'missing', fields: [] };
  if (live.metadata.deletionTimestamp !== undefined) return { ...base, state: 'missing', fields: [], message: `being deleted since ${live.metadata.deletionTimestamp}` };
  const fields = fieldDrift(withoutPointers(desired, ignored), withoutPointers(live, ignored));
  return fields.length === 0 ? undefined : { ...base, state: 'changed', fields };
}

/** How the live objects of `release` differ from its deployed revision's manifest. */
export async function releaseDrift(client: DriftClient, release: ReleaseRef): Promise<ReleaseDrift> {
  const rev = await deployedRevision(client, release);
  const base = { release: release.name, namespace: release.namespace };
  if (rev === undefined) return { ...base, checked: 0, drifted: [], skipped: [], message: 'no deployed revision: nothing to compare' };
  const { objects, skipped } = await revisionObjects(client, rev.manifest, release, `release ${release.namespace}/${release.name} revision ${rev.revision}`);
  const results = await Promise.all(objects.map((o) => objectDrift(client, o)));
  return {
    ...base,
    revision: rev.revision,
    chart: `${rev.chart.name}-${rev.chart.version}`,
    checked: objects.length,
    drifted: results.filter((r): r is ObjectDrift => r !== undefined),
    skipped: skipped.map(describeObject),
  };
}
