/**
 * Custom resources of installed operators' APIs, as the person sees and changes them. An API is
 * a CRD: one Binnacle applied for a BundleDeployment (its CSV in the catalog gives the spec
 * descriptors and `alm-examples` the form uses) or one a HelmOperator generated from its
 * chart's values schema. The page builds its form from the schema of the version the CRD
 * stores (`contract/schema-form.ts`); objects come back as JSON from the form or YAML from the editor,
 * are checked against the CRD's names and scope here, and are then judged by the API server,
 * whose field errors reach the page naming the field. Deleting one is previewed first: its
 * finalizers, whether the person may, and — for a Helm operator's resource, which is a release —
 * the release and the objects of its deployed manifest that go with it.
 */
import { API_VERSION, type BundleDeployment, type ClusterExtension, type HelmOperator } from '../api/types.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../apply/ownership.js';
import { buildInstalledState, unitsNeededBy } from '../installed/index.js';
import type { ConsoleClient } from './client.js';
import { findCondition, type KubeObject } from '../kube/types.js';
import { deployedRevision, describeObject, revisionObjects } from '../apply/drift.js';
import { redactSecrets } from '../apply/redact-manifest.js';
import type { ReleaseRef } from '../apply/types.js';
import { isForbidden } from '../kube/errors.js';
import { errorMessage } from '../util/errors.js';
import type { ApiView, ConditionView, CrdView, HelmOperatorApis, ResourceDeletePreview, ResourceSummary } from './contract/api-types.js';
import { YamlAliasError, yamlPackage, yamlValue } from '../util/yaml.js';
import { csvMetadataOf, type CatalogCache } from './catalog-view.js';
import { InputError } from './errors.js';
import { exampleFor, type SpecDescriptor } from './contract/schema-form.js';
import { isRecord } from '../util/object.js';

const CRD_API = 'apiextensions.k8s.io/v1';
export const HELM_OPERATOR_LABEL = 'binnacle.dev/helm-operator';

type Rec = Record<string, unknown>;
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');

export interface CrdObject extends KubeObject {
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; plural: string };
    versions: { name: string; served: boolean; storage: boolean; schema?: { openAPIV3Schema?: unknown } }[];
  };
}

/** The version a form is for: the one the CRD stores, if served; else the first served. */
function formVersion(crd: CrdObject): CrdObject['spec']['versions'][number] | undefined {
  const served = crd.spec.versions.filter((v) => v.served);
  return served.find((v) => v.storage) ?? served[0];
}

export function apiOf(crd: CrdObject): ApiView {
  const v = formVersion(crd);
  return {
    crd: crd.metadata.name ?? '',
    group: crd.spec.group,
    version: v?.name ?? '',
    kind: crd.spec.names.kind,
    plural: crd.spec.names.plural,
    namespaced: crd.spec.scope === 'Namespaced',
    helmOperator: crd.metadata.labels?.[HELM_OPERATOR_LABEL],
  };
}

export async function getCrd(client: ConsoleClient, name: string): Promise<CrdObject> {
  return client.get<CrdObject>({ apiVersion: CRD_API, kind: 'CustomResourceDefinition', name });
}

/** What the CSV of the bundle that installed `crd` says of it: descriptors, display name, example. */
async function csvHints(client: ConsoleClient, catalogs: CatalogCache, crd: CrdObject): Promise<{ package?: string; displayName?: string; description?: string; descriptors: SpecDescriptor[]; example?: Rec }> {
  if (crd.metadata.labels?.[OWNER_KIND_LABEL] !== 'BundleDeployment') return { descriptors: [] };
  const bdName = crd.metadata.labels[OWNER_NAME_LABEL];
  const bd = await client.find<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: bdName ?? '' });
  if (bd === undefined) return { descriptors: [] };
  const state = buildInstalledState([bd], []);
  const unit = state.units[0];
  if (unit === undefined) return { descriptors: [] };
  const { catalogs: served } = await catalogs.served(client);
  const bundle = served.flatMap((c) => (unit.catalog === undefined || c.name === unit.catalog ? c.config.bundles : [])).find((b) => b.name === unit.bundleName);
  const meta = csvMetadataOf(bundle);
  const owned = isRecord(meta.crdDescriptions) && Array.isArray(meta.crdDescriptions.owned) ? meta.crdDescriptions.owned.filter(isRecord) : [];
  const version = formVersion(crd)?.name;
  const desc = owned.find((o) => o.name === crd.metadata.name && o.version === version) ?? owned.find((o) => o.name === crd.metadata.name);
  const descriptors = Array.isArray(desc?.specDescriptors) ? desc.specDescriptors.filter((d): d is SpecDescriptor => isRecord(d) && typeof d.path === 'string') : [];
  const ann = isRecord(meta.annotations) ? meta.annotations : {};
  const example = exampleFor(ann['alm-examples'] ?? ann['olm.examples'], crd.spec.group, crd.spec.names.kind);
  return {
    package: unit.package,
    ...(typeof desc?.displayName === 'string' ? { displayName: desc.displayName } : {}),
    ...(typeof desc?.description === 'string' ? { description: desc.description } : {}),
    descriptors,
    ...(example === undefined ? {} : { example }),
  };
}

/** The APIs (CRDs) the bundles of an extension's set installed, its own first. */
export async function extensionApis(client: ConsoleClient, name: string): Promise<ApiView[]> {
  await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  const [bds, ces] = await Promise.all([client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'), client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')]);
  const state = buildInstalledState(bds.items, ces.items);
  const out: ApiView[] = [];
  const units = unitsNeededBy(state, name).sort((a, b) => Number(b.holder === name) - Number(a.holder === name));
  for (const u of units) {
    for (const ref of u.object.status?.appliedObjects ?? []) {
      if (ref.kind !== 'CustomResourceDefinition') continue;
      const crd = await client.find<CrdObject>({ apiVersion: CRD_API, kind: 'CustomResourceDefinition', name: ref.name });
      if (crd !== undefined) out.push({ ...apiOf(crd), package: u.package });
    }
  }
  return out;
}

/** The kinds each HelmOperator serves. */
export async function helmOperatorApis(client: ConsoleClient): Promise<HelmOperatorApis[]> {
  const list = await client.list<HelmOperator>(API_VERSION, 'HelmOperator');
  return list.items.map((h) => ({
    name: h.metadata.name ?? '',
    ready: findCondition(h.status?.conditions, 'Ready')?.status ?? 'Unknown',
    chart: h.status?.chart === undefined ? '' : `${h.status.chart.name} ${h.status.chart.version}`,
    kinds: (h.status?.kinds ?? []).map((k) => ({ kind: k.kind, crd: k.crd })),
  }));
}

/** A custom resource's status.conditions, as far as they are conditions. */
export function conditionsOf(o: KubeObject): (ConditionView & { observedGeneration?: number })[] {
  const conds = (isRecord(o.status) && Array.isArray(o.status.conditions) ? o.status.conditions : []).filter(isRecord);
  return conds.map((c) => ({ type: text(c.type), status: text(c.status), reason: text(c.reason), message: text(c.message), ...(typeof c.observedGeneration === 'number' ? { observedGeneration: c.observedGeneration } : {}) }));
}

function summary(o: KubeObject): ResourceSummary {
  return {
    name: o.metadata.name ?? '',
    namespace: o.metadata.namespace,
    created: o.metadata.creationTimestamp ?? '',
    conditions: conditionsOf(o).map(({ type, status, reason, message }) => ({ type, status, reason, message })),
  };
}

/** One API: its schema, the CSV's hints, and the custom resources the person may list. */
export async function crdView(client: ConsoleClient, catalogs: CatalogCache, name: string): Promise<CrdView> {
  const crd = await getCrd(client, name);
  const api = apiOf(crd);
  const warnings: string[] = [];
  let hints: Awaited<ReturnType<typeof csvHints>> = { descriptors: [] };
  try {
    hints = await csvHints(client, catalogs, crd);
  } catch (err) {
    // The form still works from the schema alone.
    warnings.push(`the CSV's descriptors and examples could not be read: ${errorMessage(err)}`);
  }
  const items = (await client.list(`${api.group}/${api.version}`, api.kind)).items.map(summary).sort((a, b) => (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name));
  return { ...api, ...hints, schema: formVersion(crd)?.schema?.openAPIV3Schema ?? {}, items, warnings };
}

function refOf(api: ApiView, name: string, namespace: string | undefined): { apiVersion: string; kind: string; name: string; namespace?: string } {
  return { apiVersion: `${api.group}/${api.version}`, kind: api.kind, name, ...(api.namespaced && namespace !== undefined ? { namespace } : {}) };
}

function checkedRef(api: ApiView, name: string, namespace: string | undefined): ReturnType<typeof refOf> {
  if (api.namespaced && (namespace === undefined || namespace === '')) throw new InputError('namespace', `${api.kind} is namespaced: give ?namespace=`);
  return refOf(api, name, namespace);
}

export async function getResource(client: ConsoleClient, crdName: string, name: string, namespace: string | undefined): Promise<KubeObject> {
  const api = apiOf(await getCrd(client, crdName));
  return withoutSecretData(await client.get(checkedRef(api, name, namespace)));
}

/**
 * A custom resource as the console shows it: a Helm release's `status.deployedRelease.manifest`
 * with every Secret's values redacted, whoever wrote it (an older Binnacle, or helm-operator,
 * which leaves them there): who may read the resource is not who may read the namespace's Secrets.
 */
export function withoutSecretData(obj: KubeObject): KubeObject {
  const status = isRecord(obj.status) ? obj.status : undefined;
  const deployed = status !== undefined && isRecord(status.deployedRelease) ? status.deployedRelease : undefined;
  if (deployed === undefined || typeof deployed.manifest !== 'string') return obj;
  return { ...obj, status: { ...status, deployedRelease: { ...deployed, manifest: redactSecrets(deployed.manifest) } } };
}

/** The release a Helm operator's custom resource is: named as the resource, in its namespace (after checking it exists). */
export async function releaseOfResource(client: ConsoleClient, crdName: string, name: string, namespace: string | undefined): Promise<ReleaseRef> {
  const api = apiOf(await getCrd(client, crdName));
  if (api.helmOperator === undefined) throw new InputError('crd', `${api.kind} is not a Helm operator's kind: its objects are not releases`);
  if (namespace === undefined || namespace === '') throw new InputError('namespace', `${api.kind} is namespaced: give ?namespace=`);
  await client.get(refOf(api, name, namespace));
  return { name, namespace };
}

/** Whether the person may `verb` the object, by a SelfSubjectAccessReview; undefined when it cannot be asked. */
async function mayI(client: ConsoleClient, verb: string, api: ApiView, name: string, namespace: string | undefined): Promise<boolean | undefined> {
  try {
    const review = await client.create<KubeObject & { status?: { allowed?: boolean } }>({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { verb, group: api.group, resource: api.plural, name, ...(api.namespaced && namespace !== undefined ? { namespace } : {}) } },
    });
    return review.status?.allowed === true;
  } catch {
    return undefined;
  }
}

type ReleasePreview = NonNullable<ResourceDeletePreview['release']>;

/**
 * The release a Helm operator's custom resource is, and the objects its uninstall deletes: from
 * the release's deployed revision, or — when the person may not read release records — from the
 * manifest the resource's status.deployedRelease repeats.
 */
async function releasePreview(client: ConsoleClient, cr: KubeObject, namespace: string): Promise<ReleasePreview> {
  const release = { name: cr.metadata.name ?? '', namespace };
  const where = `release ${namespace}/${release.name}`;
  let warning: string | undefined;
  try {
    const rev = await deployedRevision(client, release);
    if (rev !== undefined) {
      const { objects, skipped } = await revisionObjects(client, rev.manifest, release, `${where} revision ${rev.revision}`);
      return { ...release, revision: rev.revision, chart: `${rev.chart.name}-${rev.chart.version}`, objects: [...objects, ...skipped].map(describeObject), from: 'release' };
    }
  } catch (err) {
    if (!isForbidden(err)) throw err;
    warning = `its release records cannot be read (${errorMessage(err)}); the objects listed are those its status says were deployed`;
  }
  const deployed = isRecord(cr.status) && isRecord(cr.status.deployedRelease) ? cr.status.deployedRelease : undefined;
  if (deployed === undefined || typeof deployed.manifest !== 'string') return { ...release, objects: [], from: 'none', warning: warning ?? 'it has no deployed revision: nothing of it is installed' };
  const { objects, skipped } = await revisionObjects(client, deployed.manifest, release, `${where} (status.deployedRelease)`);
  return { ...release, objects: [...objects, ...skipped].map(describeObject), from: 'status', ...(warning === undefined ? {} : { warning }) };
}

/** What deleting the custom resource deletes, before it is deleted. */
export async function deletePreview(client: ConsoleClient, crdName: string, name: string, namespace: string | undefined): Promise<ResourceDeletePreview> {
  const api = apiOf(await getCrd(client, crdName));
  const cr = await client.get(checkedRef(api, name, namespace));
  const ns = api.namespaced ? cr.metadata.namespace : undefined;
  const preview: ResourceDeletePreview = { kind: api.kind, name, ...(ns === undefined ? {} : { namespace: ns }), finalizers: cr.metadata.finalizers ?? [], mayDelete: await mayI(client, 'delete', api, name, ns) };
  if (api.helmOperator !== undefined && ns !== undefined) preview.release = await releasePreview(client, cr, ns);
  return preview;
}

/** Deletes the custom resource as the person; false when it was already gone. */
export async function deleteResource(client: ConsoleClient, crdName: string, name: string, namespace: string | undefined): Promise<boolean> {
  const api = apiOf(await getCrd(client, crdName));
  return client.delete(checkedRef(api, name, namespace));
}

/** The object a request sends: `object` (the form) or `yaml` (the editor); YAML errors name the line. */
export function objectFromBody(body: Rec): Rec {
  if (typeof body.yaml === 'string') {
    const doc = yamlPackage().parseDocument(body.yaml, { prettyErrors: true });
    const first = doc.errors[0];
    if (first !== undefined) throw new InputError('yaml', `not YAML${first.linePos?.[0] === undefined ? '' : ` (line ${first.linePos[0].line}, column ${first.linePos[0].col})`}: ${first.message.split('\n')[0] ?? ''}`);
    let v: unknown;
    try {
      v = yamlValue(doc, 'yaml');
    } catch (err) {
      if (err instanceof YamlAliasError) throw new InputError('yaml', err.reason);
      throw err;
    }
    if (!isRecord(v)) throw new InputError('yaml', 'expected one object (a mapping with apiVersion, kind, metadata, spec)');
    return v;
  }
  if (isRecord(body.object)) return body.object;
  throw new InputError('body', 'give "object" (a JSON object) or "yaml" (text)');
}

/** Checks `obj` against the CRD's group, kind and scope, filling apiVersion and kind when left out. */
export function checkAgainst(api: ApiView, obj: Rec): KubeObject {
  const apiVersion = `${api.group}/${api.version}`;
  if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersion) throw new InputError('apiVersion', `${JSON.stringify(obj.apiVersion)}: this API is ${apiVersion}`);
  if (obj.kind !== undefined && obj.kind !== api.kind) throw new InputError('kind', `${JSON.stringify(obj.kind)}: this API is ${api.kind}`);
  const metadata = isRecord(obj.metadata) ? obj.metadata : {};
  if (typeof metadata.name !== 'string' || metadata.name.trim() === '') throw new InputError('metadata.name', 'required');
  const ns = metadata.namespace;
  if (api.namespaced && (typeof ns !== 'string' || ns === '')) throw new InputError('metadata.namespace', `required: ${api.kind} is namespaced`);
  if (!api.namespaced && ns !== undefined && ns !== '') throw new InputError('metadata.namespace', `${api.kind} is cluster-scoped: leave it empty`);
  const { namespace: _ns, ...rest } = metadata;
  const scoped = api.namespaced && typeof ns === 'string' ? { namespace: ns } : {};
  return { ...obj, apiVersion, kind: api.kind, metadata: { ...rest, name: metadata.name.trim(), ...scoped } };
}

export async function createResource(client: ConsoleClient, crdName: string, body: Rec): Promise<KubeObject> {
  const api = apiOf(await getCrd(client, crdName));
  const obj = checkAgainst(api, objectFromBody(body));
  const { status: _status, ...rest } = obj;
  return client.create(rest);
}

/** Replaces the object (PUT, with the resourceVersion it was read at: a concurrent change is a 409). */
export async function updateResource(client: ConsoleClient, crdName: string, name: string, namespace: string | undefined, body: Rec): Promise<KubeObject> {
  const api = apiOf(await getCrd(client, crdName));
  const obj = checkAgainst(api, objectFromBody(body));
  if (obj.metadata.name !== name) throw new InputError('metadata.name', `${JSON.stringify(obj.metadata.name)}: a name cannot change (editing ${name})`);
  if (api.namespaced && obj.metadata.namespace !== namespace) throw new InputError('metadata.namespace', `a namespace cannot change (editing ${namespace ?? ''}/${name})`);
  if (obj.metadata.resourceVersion === undefined) {
    const live = await client.get(refOf(api, name, namespace));
    obj.metadata.resourceVersion = live.metadata.resourceVersion;
  }
  return client.update(obj);
}
