/**
 * steps.go's ClusterObjectSet steps that only the `@BoxcutterRuntime` scenarios use (EXCLUDED.md):
 * a ClusterExtension's active revisions and the ClusterObjectSets it owns, a ClusterObjectSet's
 * annotations and labels, its phase objects (gone or no longer owned; kept in Secrets) and the
 * Secrets it refers to (present, immutable, labelled, owned by it, of a type). Same patterns, same
 * kubectl calls (the resources named with their group, as steps.ts does: Binnacle serves kinds of
 * the same names), same waits and the same error messages; `%q` is written as JSON quotes.
 */
import { gunzipSync } from 'node:zlib';
import { Then, type DataTable } from '@cucumber/cucumber';
import { parse as parseYaml } from 'yaml';
import { k8s, OLM_NAMESPACE, waitFor, type ScenarioWorld } from './world.js';

const CLUSTER_OBJECT_SETS = 'clusterobjectsets.olm.operatorframework.io';
const CLUSTER_EXTENSIONS = 'clusterextensions.olm.operatorframework.io';
/** ocv1.ClusterObjectSetKind. */
const CLUSTER_OBJECT_SET_KIND = 'ClusterObjectSet';
const REVISION_NAME_LABEL = 'olm.operatorframework.io/revision-name';

type JsonMap = Record<string, unknown>;

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Go's `%q` for the names in messages. */
const quote = (s: string): string => JSON.stringify(s);
const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** unstructured.NestedFieldNoCopy: each field through a map; undefined when one is missing or not a map. */
function nestedField(obj: JsonMap, ...fields: string[]): unknown {
  let cur: unknown = obj;
  for (const f of fields) {
    if (!isMap(cur) || !Object.hasOwn(cur, f)) return undefined;
    cur = cur[f];
  }
  return cur;
}
/** unstructured.NestedSlice: undefined unless the field is a list. */
function nestedSlice(obj: JsonMap, ...fields: string[]): unknown[] | undefined {
  const v = nestedField(obj, ...fields);
  return Array.isArray(v) ? v : undefined;
}
/** unstructured.NestedMap: undefined unless the field is a map. */
function nestedMap(obj: JsonMap, ...fields: string[]): JsonMap | undefined {
  const v = nestedField(obj, ...fields);
  return isMap(v) ? v : undefined;
}
/** unstructured.NestedString (and Unstructured's getters): "" unless the field is a string. */
function nestedString(obj: JsonMap, ...fields: string[]): string {
  const v = nestedField(obj, ...fields);
  return typeof v === 'string' ? v : '';
}
/** unstructured.NestedStringMap (GetAnnotations, GetLabels): undefined when missing, not a map or a value is not a string. */
function nestedStringMap(obj: JsonMap, ...fields: string[]): Record<string, string> | undefined {
  const m = nestedMap(obj, ...fields);
  if (m === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) {
    if (typeof v !== 'string') return undefined;
    out[k] = v;
  }
  return out;
}

interface OwnerReference {
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}
/** Unstructured.GetOwnerReferences: none unless `metadata.ownerReferences` is a list of maps. */
function ownerReferences(obj: JsonMap): OwnerReference[] {
  const refs = nestedSlice(obj, 'metadata', 'ownerReferences');
  if (refs === undefined || !refs.every(isMap)) return [];
  return refs.map((r) => ({ kind: nestedString(r, 'kind'), name: nestedString(r, 'name'), uid: nestedString(r, 'uid'), ...(typeof r.controller === 'boolean' ? { controller: r.controller } : {}) }));
}

/** toUnstructured (steps.go:385): YAML (or JSON) into a map; nothing at all is an empty object. */
function toUnstructured(text: string): JsonMap {
  const v = parseYaml(text) as unknown;
  if (v === null || v === undefined) return {};
  if (!isMap(v)) throw new Error(`not an object: ${text.slice(0, 200)}`);
  return v;
}

/** getResource (steps.go:2113): `kubectl get <kind> <name> -n <namespace> -o yaml`, the namespace passed even when empty. */
async function getResource(kind: string, name: string, namespace: string): Promise<JsonMap> {
  return toUnstructured(await k8s('get', kind, name, '-n', namespace, '-o', 'yaml'));
}

interface Secret {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; ownerReferences?: OwnerReference[] };
  immutable?: boolean;
  type?: string;
}
const secretName = (s: Secret): string => `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`;

/** listReferredSecrets (steps.go:1304): the Secrets in the OLM namespace labelled with the revision's name; read once. */
async function listReferredSecrets(revisionName: string): Promise<Secret[]> {
  let out: string;
  try {
    out = await k8s('get', 'secrets', '-n', OLM_NAMESPACE, '-l', `${REVISION_NAME_LABEL}=${revisionName}`, '-o', 'json');
  } catch (err) {
    throw new Error(`listing referred secrets for revision ${quote(revisionName)}: ${errText(err)}`, { cause: err });
  }
  let list: unknown;
  try {
    list = JSON.parse(out) as unknown;
    if (list !== null && (!isMap(list) || (list.items !== undefined && list.items !== null && !Array.isArray(list.items)))) throw new Error(`not a Secret list: ${out.slice(0, 200)}`);
  } catch (err) {
    throw new Error(`unmarshalling Secret list: ${errText(err)}`, { cause: err });
  }
  const items = isMap(list) && Array.isArray(list.items) ? (list.items as unknown[]) : [];
  return items.map((s) => (isMap(s) ? (s as Secret) : {}));
}

/** collectReferredSecretNames (steps.go:1271): waits until the ClusterObjectSet can be read, then every distinct `ref.name` of its phase objects, in order. */
async function collectReferredSecretNames(revisionName: string): Promise<string[]> {
  let obj: JsonMap = {};
  await waitFor(`${CLUSTER_OBJECT_SETS} ${revisionName} can be read`, async () => {
    obj = await getResource(CLUSTER_OBJECT_SETS, revisionName, '');
    return true;
  });
  const names: string[] = [];
  for (const phase of nestedSlice(obj, 'spec', 'phases') ?? []) {
    if (!isMap(phase)) continue;
    for (const phaseObj of nestedSlice(phase, 'objects') ?? []) {
      if (!isMap(phaseObj)) continue;
      const name = nestedString(phaseObj, 'ref', 'name');
      if (name !== '' && !names.includes(name)) names.push(name);
    }
  }
  if (names.length === 0) throw new Error(`no referred secret names found in ClusterObjectSet ${quote(revisionName)}`);
  return names;
}

const MAX_DECOMPRESSED_SIZE = 10 * 1024 * 1024; // 10 MiB

/** A key of a Secret's data, gunzipped when it starts with gzip's magic bytes (resolveObjectRef's middle). */
function secretData(data: Buffer, key: string, where: string): Buffer {
  if (data.length < 2 || data[0] !== 0x1f || data[1] !== 0x8b) return data;
  // gzip.NewReader reads the 10-byte header first, and refuses a method other than deflate.
  if (data.length < 10 || data[2] !== 8) throw new Error(`creating gzip reader for key ${quote(key)} in Secret ${where}: ${data.length < 10 ? 'unexpected EOF' : 'gzip: invalid header'}`);
  try {
    return gunzipSync(data, { maxOutputLength: MAX_DECOMPRESSED_SIZE });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw new Error(`decompressed data for key ${quote(key)} in Secret ${where} exceeds maximum size (${MAX_DECOMPRESSED_SIZE} bytes)`, { cause: err });
    throw new Error(`decompressing key ${quote(key)} in Secret ${where}: ${errText(err)}`, { cause: err });
  }
}

interface ObjectSourceRef {
  name: string;
  namespace: string;
  key: string;
}

/** resolveObjectRef (steps.go:2252): the object a phase keeps in a Secret's key (JSON, gzipped or not). */
async function resolveObjectRef(ref: ObjectSourceRef): Promise<JsonMap> {
  const where = `${ref.namespace}/${ref.name}`;
  let out: string;
  try {
    out = await k8s('get', 'secret', ref.name, '-n', ref.namespace, '-o', 'json');
  } catch (err) {
    throw new Error(`getting Secret ${where}: ${errText(err)}`, { cause: err });
  }
  let data: JsonMap;
  try {
    const secret = JSON.parse(out) as unknown;
    const d = isMap(secret) ? secret.data : undefined;
    if (d !== undefined && d !== null && !isMap(d)) throw new Error('data is not a map');
    data = d ?? {};
  } catch (err) {
    throw new Error(`unmarshaling Secret ${where}: ${errText(err)}`, { cause: err });
  }
  if (!Object.hasOwn(data, ref.key)) throw new Error(`key ${quote(ref.key)} not found in Secret ${where}`);
  const encoded = data[ref.key];
  if (encoded !== null && typeof encoded !== 'string') throw new Error(`unmarshaling Secret ${where}: data[${quote(ref.key)}] is not base64 text`);
  const raw = secretData(Buffer.from(encoded ?? '', 'base64'), ref.key, where);
  let obj: unknown;
  try {
    obj = JSON.parse(raw.toString('utf8')) as unknown;
    if (obj !== null && !isMap(obj)) throw new Error('not a JSON object');
  } catch (err) {
    throw new Error(`unmarshaling object from key ${quote(ref.key)} in Secret ${where}: ${errText(err)}`, { cause: err });
  }
  return obj ?? {};
}

/**
 * Whether `kubectl get … -o json` of a ClusterObjectSet decodes as Go's typed ocv1.ClusterObjectSet:
 * an inline phase object is an unstructured.Unstructured, whose decoder refuses one without a kind.
 */
function decodesAsClusterObjectSet(rev: JsonMap): boolean {
  for (const phase of nestedSlice(rev, 'spec', 'phases') ?? []) {
    for (const o of isMap(phase) ? (nestedSlice(phase, 'objects') ?? []) : []) {
      if (isMap(o) && Object.hasOwn(o, 'object') && !(isMap(o.object) && nestedString(o.object, 'kind') !== '')) return false;
    }
  }
  return true;
}

/** A phase object of ClusterObjectSetObjectsNotFoundOrNotOwned: resolved from its Secret ref, or inline. */
async function phaseObject(revisionName: string, phase: JsonMap, i: number, j: number, o: unknown): Promise<JsonMap> {
  const phaseObj = isMap(o) ? o : {};
  const ref = nestedMap(phaseObj, 'ref') ?? {};
  const refName = nestedString(ref, 'name');
  if (refName !== '') {
    try {
      return await resolveObjectRef({ name: refName, namespace: nestedString(ref, 'namespace'), key: nestedString(ref, 'key') });
    } catch (err) {
      throw new Error(`resolving ref in phase ${quote(nestedString(phase, 'name'))} object ${j}: ${errText(err)}`, { cause: err });
    }
  }
  const inline = nestedMap(phaseObj, 'object');
  if (inline !== undefined && Object.keys(inline).length > 0) return inline;
  throw new Error(`clusterobjectset ${quote(revisionName)} phase ${i} object ${j} has neither ref nor inline object`);
}

/** The `name`s of `.status.activeRevisions` as json.Unmarshal into []ocv1.RevisionStatus reads them; throws where it fails. */
function activeRevisionNames(v: string): Set<string> {
  const list = JSON.parse(v) as unknown;
  if (list === null) return new Set();
  if (!Array.isArray(list)) throw new Error(`not a list: ${v}`);
  return new Set(
    list.map((rev: unknown) => {
      if (rev === null) return '';
      if (!isMap(rev) || (rev.name !== undefined && rev.name !== null && typeof rev.name !== 'string')) throw new Error(`not a RevisionStatus: ${JSON.stringify(rev)}`);
      return typeof rev.name === 'string' ? rev.name : '';
    }),
  );
}

/** parseKeyValueTable (steps.go:2483): a header row naming `key` and `value`, at least one row; both substituted. */
function parseKeyValueTable(w: ScenarioWorld, table: DataTable): Map<string, string> {
  const rows = table.raw();
  if (rows.length < 2) throw new Error('table must have a header row and at least one data row');
  const header = rows[0] ?? [];
  const keyIdx = header.lastIndexOf('key');
  const valueIdx = header.lastIndexOf('value');
  if (keyIdx === -1 || valueIdx === -1) throw new Error("table must have 'key' and 'value' columns");
  const maxIdx = Math.max(keyIdx, valueIdx);
  const result = new Map<string, string>();
  rows.slice(1).forEach((row, rowIdx) => {
    if (row.length <= maxIdx) throw new Error(`table row ${rowIdx + 2} has ${row.length} cells, expected at least ${maxIdx + 1}`);
    result.set(w.substitute(row[keyIdx] ?? ''), w.substitute(row[valueIdx] ?? ''));
  });
  return result;
}

/** matchLabels (steps.go:2418): every expected pair present with its value. */
function matchLabels(actual: Record<string, string> | undefined, expected: ReadonlyMap<string, string>): boolean {
  for (const [k, v] of expected) if (actual === undefined || !Object.hasOwn(actual, k) || actual[k] !== v) return false;
  return true;
}

// --- ClusterExtension revisions ---

/** ClusterExtensionOwnsClusterObjectSets (steps.go:544): waits until exactly N ClusterObjectSets carry `owner-name=<extension>`. */
Then(/^ClusterExtension "([^"]+)" owns (\d+) ClusterObjectSets?$/i, async function (this: ScenarioWorld, extNameIn: string, count: string) {
  const extName = this.substitute(extNameIn);
  const expectedCount = Number.parseInt(count, 10);
  let last = '';
  await waitFor(`${expectedCount} ClusterObjectSet(s) labelled olm.operatorframework.io/owner-name=${extName}`, async () => {
    last = await k8s('get', CLUSTER_OBJECT_SETS, '-l', `olm.operatorframework.io/owner-name=${extName}`, '-o', 'jsonpath={.items[*].metadata.name}');
    return last.trim().split(/\s+/).filter((n) => n !== '').length === expectedCount;
  }, () => JSON.stringify(last));
});

/** ClusterExtensionReportsActiveRevisions (steps.go:901): waits until the names of `status.activeRevisions` are exactly the listed ones (comma-separated, each trimmed and substituted). */
Then(/^ClusterExtension reports "([^"]+)" as active revision(s?)$/i, async function (this: ScenarioWorld, rawRevisionNames: string, _plural: string) {
  const expected = new Set(rawRevisionNames.split(',').map((rev) => this.substitute(rev.trim())));
  let last = '';
  await waitFor(`${CLUSTER_EXTENSIONS} ${this.clusterExtensionName} active revisions are ${JSON.stringify([...expected])}`, async () => {
    last = await k8s('get', CLUSTER_EXTENSIONS, this.clusterExtensionName, '-o', 'jsonpath={.status.activeRevisions}');
    const names = activeRevisionNames(last);
    return names.size === expected.size && [...names].every((n) => expected.has(n));
  }, () => last);
});

// --- ClusterObjectSet metadata ---

/** ClusterObjectSetHasAnnotationWithValue (steps.go:980): waits until the annotation's value is the doc string, as written (not substituted). */
Then(/^ClusterObjectSet "([^"]+)" contains annotation "([^"]+)" with value$/i, async function (this: ScenarioWorld, revisionNameIn: string, annotationKey: string, annotationValue: string) {
  const revisionName = this.substitute(revisionNameIn.trim());
  const expectedValue = annotationValue;
  let last = '';
  await waitFor(`${CLUSTER_OBJECT_SETS} ${revisionName} annotation ${annotationKey}=${JSON.stringify(expectedValue)}`, async () => {
    const annotations = nestedStringMap(await getResource(CLUSTER_OBJECT_SETS, revisionName, ''), 'metadata', 'annotations');
    last = annotations === undefined ? 'no annotations' : JSON.stringify(annotations);
    if (annotations === undefined) return false;
    return (annotations[annotationKey] ?? '') === expectedValue;
  }, () => last);
});

/** ClusterObjectSetHasLabelWithValue (steps.go:1003): waits until the label has the (substituted) value. */
Then(/^ClusterObjectSet "([^"]+)" has label "([^"]+)" with value "([^"]+)"$/i, async function (this: ScenarioWorld, revisionNameIn: string, labelKey: string, labelValueIn: string) {
  const revisionName = this.substitute(revisionNameIn.trim());
  const labelValue = this.substitute(labelValueIn);
  let last = '';
  await waitFor(`${CLUSTER_OBJECT_SETS} ${revisionName} label ${labelKey}=${labelValue}`, async () => {
    const labels = nestedStringMap(await getResource(CLUSTER_OBJECT_SETS, revisionName, ''), 'metadata', 'labels');
    last = labels === undefined ? 'no labels' : JSON.stringify(labels);
    if (labels === undefined) return false;
    return (labels[labelKey] ?? '') === labelValue;
  }, () => last);
});

// --- ClusterObjectSet phase objects ---

/** ClusterObjectSetObjectsNotFoundOrNotOwned (steps.go:1024): the ClusterObjectSet read (waited for), then each phase object in turn (from its Secret, or inline) waited for until gone or not owned by it (kind, name and uid). */
Then(/^ClusterObjectSet "([^"]+)" phase objects are not found or not owned by the revision$/i, async function (this: ScenarioWorld, revisionNameIn: string) {
  const revisionName = this.substitute(revisionNameIn.trim());
  let rev: JsonMap = {};
  await waitFor(`${CLUSTER_OBJECT_SETS} ${revisionName} can be read`, async () => {
    const out = await k8s('get', CLUSTER_OBJECT_SETS, revisionName, '-o', 'json');
    const parsed = JSON.parse(out) as unknown;
    if (!isMap(parsed) || !decodesAsClusterObjectSet(parsed)) return false;
    rev = parsed;
    return true;
  });
  const revUid = nestedString(rev, 'metadata', 'uid');
  for (const [i, p] of (nestedSlice(rev, 'spec', 'phases') ?? []).entries()) {
    const phase = isMap(p) ? p : {};
    for (const [j, o] of (nestedSlice(phase, 'objects') ?? []).entries()) {
      const obj = await phaseObject(revisionName, phase, i, j, o);
      const kind = nestedString(obj, 'kind');
      const name = nestedString(obj, 'metadata', 'name');
      const namespace = nestedString(obj, 'metadata', 'namespace');
      if (kind === '') throw new Error(`clusterobjectset ${quote(revisionName)} has a phase object with empty kind`);
      if (name === '') throw new Error(`clusterobjectset ${quote(revisionName)} has a phase object with empty name (kind ${quote(kind)}, namespace ${quote(namespace)})`);
      let last = '';
      await waitFor(`${kind} ${namespace}/${name} not found or not owned by ClusterObjectSet ${revisionName}`, async () => {
        const args = ['get', kind, name, '--ignore-not-found', '-o', 'json'];
        if (namespace !== '') args.push('-n', namespace);
        const out = await k8s(...args);
        if (out.trim() === '') return true;
        const refs = ownerReferences(toUnstructured(out));
        last = JSON.stringify(refs);
        return !refs.some((ref) => ref.kind === CLUSTER_OBJECT_SET_KIND && ref.name === revisionName && ref.uid === revUid);
      }, () => last);
    }
  }
});

/** ClusterObjectSetPhaseObjectsManagedInSecrets (steps.go:1102): waits until it has phases, each with objects, every one a `ref` with a name. */
Then(/^ClusterObjectSet "([^"]+)" phase objects are managed in Kubernetes secrets$/i, async function (this: ScenarioWorld, revisionNameIn: string) {
  const revisionName = this.substitute(revisionNameIn.trim());
  let last = '';
  await waitFor(`every phase object of ${CLUSTER_OBJECT_SETS} ${revisionName} is a Secret ref`, async () => {
    const phases = nestedSlice(await getResource(CLUSTER_OBJECT_SETS, revisionName, ''), 'spec', 'phases');
    last = phases === undefined ? 'no spec.phases' : JSON.stringify(phases);
    if (phases === undefined || phases.length === 0) return false;
    return phases.every((phase) => {
      const objects = isMap(phase) ? nestedSlice(phase, 'objects') : undefined;
      if (objects === undefined || objects.length === 0) return false;
      return objects.every((o) => {
        const ref = isMap(o) ? nestedMap(o, 'ref') : undefined;
        return ref !== undefined && Object.keys(ref).length > 0 && nestedString(ref, 'name') !== '';
      });
    });
  }, () => last);
});

// --- the Secrets a ClusterObjectSet refers to ---

/** ClusterObjectSetReferredSecretsExist (steps.go:1148): each Secret its phase objects name, waited for in the namespace. */
Then(/^ClusterObjectSet "([^"]+)" referred secrets exist in "([^"]+)" namespace$/i, async function (this: ScenarioWorld, revisionNameIn: string, namespaceIn: string) {
  const revisionName = this.substitute(revisionNameIn.trim());
  const namespace = this.substitute(namespaceIn.trim());
  for (const name of await collectReferredSecretNames(revisionName)) {
    await waitFor(`Secret ${namespace}/${name}`, async () => {
      await getResource('secret', name, namespace);
      return true;
    });
  }
});

/** ClusterObjectSetReferredSecretsAreImmutable (steps.go:1169): read once; at least one, each `immutable: true`. */
Then(/^ClusterObjectSet "([^"]+)" referred secrets are immutable$/i, async function (this: ScenarioWorld, revisionNameIn: string) {
  const revisionName = this.substitute(revisionNameIn.trim());
  const secrets = await listReferredSecrets(revisionName);
  if (secrets.length === 0) throw new Error(`no referred secrets found for revision ${quote(revisionName)}`);
  for (const s of secrets) if (s.immutable !== true) throw new Error(`referred secret ${secretName(s)} is not immutable`);
});

/** ClusterObjectSetReferredSecretsContainLabels (steps.go:1190): waits until there are some and each carries every pair of the table. */
Then(/^ClusterObjectSet "([^"]+)" referred secrets contain labels$/i, async function (this: ScenarioWorld, revisionNameIn: string, table: DataTable) {
  const revisionName = this.substitute(revisionNameIn.trim());
  let expected: Map<string, string>;
  try {
    expected = parseKeyValueTable(this, table);
  } catch (err) {
    throw new Error(`invalid labels table: ${errText(err)}`, { cause: err });
  }
  let last = '';
  await waitFor(`the Secrets of ${revisionName} carry the labels ${JSON.stringify(Object.fromEntries(expected))}`, async () => {
    const secrets = await listReferredSecrets(revisionName);
    last = JSON.stringify(secrets.map((s) => ({ name: secretName(s), labels: s.metadata?.labels })));
    if (secrets.length === 0) return false;
    return secrets.every((s) => matchLabels(s.metadata?.labels, expected));
  }, () => last);
});

/** ClusterObjectSetReferredSecretsOwnedByObjectSet (steps.go:1216): read once; each has a controller ownerReference to the ClusterObjectSet (kind, name and uid). */
Then(/^ClusterObjectSet "([^"]+)" referred secrets are owned by the object set$/i, async function (this: ScenarioWorld, revisionNameIn: string) {
  const revisionName = this.substitute(revisionNameIn.trim());
  let cosObj: JsonMap;
  try {
    cosObj = await getResource(CLUSTER_OBJECT_SETS, revisionName, '');
  } catch (err) {
    throw new Error(`getting ClusterObjectSet ${quote(revisionName)}: ${errText(err)}`, { cause: err });
  }
  const cosUid = nestedString(cosObj, 'metadata', 'uid');
  const secrets = await listReferredSecrets(revisionName);
  if (secrets.length === 0) throw new Error(`no referred secrets found for revision ${quote(revisionName)}`);
  for (const s of secrets) {
    const ref = ownerReferences(s as JsonMap).find((r) => r.kind === CLUSTER_OBJECT_SET_KIND && r.name === revisionName && r.uid === cosUid);
    if (ref === undefined) throw new Error(`secret ${secretName(s)} does not have ownerReference to ClusterObjectSet ${quote(revisionName)} (uid ${cosUid})`);
    if (ref.controller !== true) throw new Error(`secret ${secretName(s)} has ownerReference to ClusterObjectSet but controller is not true`);
  }
});

/** ClusterObjectSetReferredSecretsHaveType (steps.go:1254): read once; at least one, each of the type. */
Then(/^ClusterObjectSet "([^"]+)" referred secrets have type "([^"]+)"$/i, async function (this: ScenarioWorld, revisionNameIn: string, expectedType: string) {
  const revisionName = this.substitute(revisionNameIn.trim());
  const secrets = await listReferredSecrets(revisionName);
  if (secrets.length === 0) throw new Error(`no referred secrets found for revision ${quote(revisionName)}`);
  for (const s of secrets) {
    const type = s.type ?? '';
    if (type !== expectedType) throw new Error(`secret ${secretName(s)} has type ${quote(type)}, expected ${quote(expectedType)}`);
  }
});
