/**
 * The shapes every Kubernetes object shares. Kind-specific fields stay `unknown` until a
 * typed accessor checks them; callers that know a kind narrow with their own interfaces.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

/** One entry of `metadata.managedFields` (server-side apply's field ownership), as far as Binnacle reads it. */
export interface ManagedFieldsEntry {
  manager?: string;
  /** `Apply` (server-side apply) or `Update` (create, update, patch). */
  operation?: string;
  /** Set for a subresource's entry (`status`, `scale`). */
  subresource?: string;
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  time?: string;
}

/** The object's managedFields entries (what is not an object left out: the server sends none such). */
export function managedFieldsOf(obj: { metadata: ObjectMeta }): ManagedFieldsEntry[] {
  return (obj.metadata.managedFields ?? []).filter((e): e is ManagedFieldsEntry => typeof e === 'object' && e !== null && !Array.isArray(e));
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
  /**
   * Objects left out of `items` because they nest deeper than the client reads
   * (util/nesting.ts, MAX_OBJECT_NESTING): only their identity (see `stubOf`).
   */
  refused?: KubeObject[];
}

/** A stand-in for an object not read whole: its apiVersion, kind and the scalar fields of its metadata, which never nest. */
export function stubOf(obj: KubeObject): KubeObject {
  const m: ObjectMeta = obj.metadata ?? {};
  const meta: ObjectMeta = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp'] as const) if (typeof m[k] === 'string') meta[k] = m[k];
  if (typeof m.generation === 'number') meta.generation = m.generation;
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: meta };
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** Where an object lives: enough to GET it. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export function isKubeObject(v: unknown): v is KubeObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o.apiVersion === 'string' && typeof o.kind === 'string' && typeof o.metadata === 'object' && o.metadata !== null;
}

export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function gvkOf(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): GroupVersionKind {
  return { ...parseApiVersion(obj.apiVersion), kind: obj.kind };
}

export function refOf(obj: KubeObject): ObjectRef {
  const ref: ObjectRef = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '' };
  if (obj.metadata.namespace !== undefined) ref.namespace = obj.metadata.namespace;
  return ref;
}

/** `namespace/name`, or `name` for cluster-scoped objects: the work-queue key. */
export function objectKey(meta: { namespace?: string | undefined; name?: string | undefined }): string {
  return meta.namespace !== undefined && meta.namespace !== '' ? `${meta.namespace}/${meta.name ?? ''}` : (meta.name ?? '');
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace !== undefined && ref.namespace !== '' ? `${ref.namespace}/` : ''}${ref.name}`;
}

/** The longest message a condition holds (metav1.Condition's `maxLength`, which every CRD of conditions repeats). */
export const MAX_CONDITION_MESSAGE = 32768;

/**
 * `message` cut to what a condition holds, saying how much was cut: a longer one makes the API
 * server refuse the whole status write, and the condition would go on saying what it said before.
 */
export function conditionMessage(message: string): string {
  if (message.length <= MAX_CONDITION_MESSAGE) return message;
  const note = (n: number): string => `… (${n} more characters)`;
  let cut = MAX_CONDITION_MESSAGE - note(message.length).length;
  const c = message.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--; // not half a surrogate pair
  return message.slice(0, cut) + note(message.length - cut);
}

/** Sets or replaces the condition of `type`, keeping lastTransitionTime when status is unchanged. */
export function setCondition(conditions: Condition[], next: Omit<Condition, 'lastTransitionTime'>, now = new Date()): Condition[] {
  const prev = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = prev !== undefined && prev.status === next.status ? prev.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const merged: Condition = { ...next, message: conditionMessage(next.message), lastTransitionTime };
  return [...conditions.filter((c) => c.type !== next.type), merged];
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
