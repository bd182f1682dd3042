/**
 * OpenShift's APIs on the local control plane (`binnacle cluster up --openshift`), so operators
 * from OpenShift catalogs and OpenShift-flavoured charts can be installed and tested without an
 * OpenShift cluster: config.openshift.io ClusterVersion (with a version in its status, which
 * `olm.maxOpenShiftVersion` is checked against), Infrastructure and Proxy; route.openshift.io
 * Route; security.openshift.io SecurityContextConstraints; console.openshift.io kinds;
 * image.openshift.io ImageStream and build.openshift.io BuildConfig.
 *
 * Nothing here is written by hand: the CRD manifests are the ones the pinned
 * github.com/openshift/api module ships (copied to the cache by `hack/build-tools.sh
 * openshift-api`). ImageStream and BuildConfig are served by OpenShift's own API server, not as
 * CRDs, and the module has no CRD for them: their schemas are derived from the module's OpenAPI
 * definitions (openapi/openapi.json), references inlined and Kubernetes' special types (Time,
 * Quantity, IntOrString, RawExtension) written as a CRD expects them.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ClusterClient, StatusWriter } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, InputError } from '../util/errors.js';
import { isStrictSemver } from '../util/semver.js';
import { readYamlAll } from '../util/yaml.js';
import { cacheDir, projectRoot } from './layout.js';
import { waitCrdsEstablished } from '../kube/crd-established.js';
import { isRecord } from '../util/object.js';

/** The OpenShift version the local ClusterVersion reports unless told otherwise. */
export const DEFAULT_OPENSHIFT_VERSION = '4.16.0';

const CRD_API = 'apiextensions.k8s.io/v1';
const PART_OF = 'binnacle-openshift-apis';

/** Where `hack/build-tools.sh openshift-api` copies the manifests. */
export function openShiftApiDir(): string {
  return process.env.BINNACLE_OPENSHIFT_API_DIR ?? join(cacheDir(), 'openshift-api');
}

/** The github.com/openshift/api version pinned in hack/openshift-api/go.mod. */
export function pinnedOpenShiftApiVersion(): string {
  const goMod = join(projectRoot(), 'hack', 'openshift-api', 'go.mod');
  const m = /^require\s+github\.com\/openshift\/api\s+(\S+)/m.exec(readFileSync(goMod, 'utf8'));
  if (m?.[1] === undefined) throw new BinnacleError('internal', 'OPENSHIFT_API_PIN', `${goMod}: no "require github.com/openshift/api <version>" line`);
  return m[1];
}

/** Copies the manifests from the pinned module into the cache when they are missing or stale. */
export function ensureOpenShiftApi(logger: Logger): string {
  const dir = openShiftApiDir();
  const version = pinnedOpenShiftApiVersion();
  const have = existsSync(join(dir, 'version')) ? readFileSync(join(dir, 'version'), 'utf8').trim() : undefined;
  if (have !== version) {
    logger.info({ version }, 'copying the OpenShift API manifests from the github.com/openshift/api module');
    const r = spawnSync('bash', [join(projectRoot(), 'hack', 'build-tools.sh'), 'openshift-api'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, BINNACLE_OPENSHIFT_API_DIR: dir },
    });
    if (r.status !== 0) throw new BinnacleError('terminal', 'OPENSHIFT_API_FETCH_FAILED', `fetching github.com/openshift/api ${version} failed (see the output above); is Go installed?`);
  }
  return dir;
}

// --- CRDs from OpenAPI definitions --------------------------------------------------------

type Schema = Record<string, unknown>;

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const DEF_PREFIX = '#/definitions/';

/** Kubernetes types whose OpenAPI form is not what a CRD schema says for them. */
const SPECIAL_TYPES: Record<string, Schema> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { type: 'object' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { 'x-kubernetes-int-or-string': true },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { 'x-kubernetes-int-or-string': true },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { type: 'object', [PRESERVE]: true },
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': { type: 'object', [PRESERVE]: true },
};

/** The definition a node refers to: `$ref`, or OpenAPI v2's `allOf: [{$ref}]` wrapper. */
function refOf(node: Schema): string | undefined {
  if (typeof node.$ref === 'string') return node.$ref;
  const all = node.allOf;
  if (Array.isArray(all) && all.length === 1 && isRecord(all[0]) && typeof all[0].$ref === 'string') return all[0].$ref;
  return undefined;
}

/**
 * A structural CRD schema from an OpenAPI v2 definition: references inlined (a recursive one
 * keeps any object), special types mapped, list/patch hints and defaults left out (OpenShift's
 * own server applies them; a CRD would require list-map keys to be required).
 */
export function structuralFromOpenApi(node: unknown, definitions: Record<string, unknown>, stack: readonly string[] = []): Schema {
  if (!isRecord(node)) return { [PRESERVE]: true };
  const ref = refOf(node);
  if (ref !== undefined) return inlineRef(node, ref, definitions, stack);
  const out: Schema = {};
  if (typeof node.description === 'string') out.description = node.description;
  if (node.type === 'string' && node.format === 'int-or-string') return { ...out, 'x-kubernetes-int-or-string': true };
  if (typeof node.type === 'string') out.type = node.type;
  if (typeof node.format === 'string') out.format = node.format;
  if (Array.isArray(node.enum)) out.enum = node.enum;
  if (Array.isArray(node.required)) out.required = node.required;
  structuralChildren(node, out, definitions, stack);
  // A node that says nothing of its fields keeps whatever they are.
  if (out.type === undefined && out.properties === undefined) out[PRESERVE] = true;
  if (out.type === 'object' && out.properties === undefined && out.additionalProperties === undefined) out[PRESERVE] = true;
  return out;
}

/** properties (an object), items, and additionalProperties (a schema, or true: any field kept). */
function structuralChildren(node: Record<string, unknown>, out: Schema, definitions: Record<string, unknown>, stack: readonly string[]): void {
  if (isRecord(node.properties)) {
    out.type ??= 'object';
    out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, structuralFromOpenApi(v, definitions, stack)]));
  }
  if (node.items !== undefined) out.items = structuralFromOpenApi(node.items, definitions, stack);
  if (isRecord(node.additionalProperties)) out.additionalProperties = structuralFromOpenApi(node.additionalProperties, definitions, stack);
  else if (node.additionalProperties === true) out[PRESERVE] = true;
}

function inlineRef(node: Schema, ref: string, definitions: Record<string, unknown>, stack: readonly string[]): Schema {
  const name = ref.startsWith(DEF_PREFIX) ? ref.slice(DEF_PREFIX.length) : ref;
  const description = typeof node.description === 'string' ? { description: node.description } : {};
  const special = SPECIAL_TYPES[name];
  if (special !== undefined) return { ...description, ...special };
  if (stack.includes(name)) return { ...description, type: 'object', [PRESERVE]: true };
  const target = definitions[name];
  if (target === undefined) throw new BinnacleError('terminal', 'OPENSHIFT_API_SCHEMA', `openapi.json: ${name} is referenced but not defined`);
  return { ...structuralFromOpenApi(target, definitions, [...stack, name]), ...description };
}

interface DerivedApi {
  definition: string;
  group: string;
  version: string;
  kind: string;
  plural: string;
  shortNames: string[];
}

/** The APIs OpenShift serves itself, whose CRDs are derived from the OpenAPI definitions. */
export const DERIVED_APIS: readonly DerivedApi[] = [
  { definition: 'com.github.openshift.api.image.v1.ImageStream', group: 'image.openshift.io', version: 'v1', kind: 'ImageStream', plural: 'imagestreams', shortNames: ['is'] },
  { definition: 'com.github.openshift.api.build.v1.BuildConfig', group: 'build.openshift.io', version: 'v1', kind: 'BuildConfig', plural: 'buildconfigs', shortNames: ['bc'] },
];

export function crdFromOpenApi(api: DerivedApi, definitions: Record<string, unknown>, moduleVersion: string): KubeObject {
  const schema = structuralFromOpenApi({ $ref: `${DEF_PREFIX}${api.definition}` }, definitions);
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  // The object may be created without a status (the server writes it).
  const required = Array.isArray(schema.required) ? (schema.required as string[]).filter((r) => r !== 'status') : [];
  const top: Schema = { ...schema, properties: { ...props, metadata: { type: 'object' } } };
  if (required.length > 0) top.required = required;
  else delete top.required;
  return {
    apiVersion: CRD_API,
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${api.plural}.${api.group}`,
      labels: { 'app.kubernetes.io/part-of': PART_OF },
      annotations: { 'binnacle.dev/derived-from': `github.com/openshift/api@${moduleVersion} openapi/openapi.json#/definitions/${api.definition}` },
    },
    spec: {
      group: api.group,
      names: { kind: api.kind, listKind: `${api.kind}List`, plural: api.plural, singular: api.kind.toLowerCase(), shortNames: api.shortNames },
      scope: 'Namespaced',
      versions: [{ name: api.version, served: true, storage: true, schema: { openAPIV3Schema: top }, subresources: { status: {} } }],
    },
  };
}

/** Every CRD `--openshift` installs: the module's manifests, then the derived ones. */
export function openShiftCrds(dir = openShiftApiDir()): KubeObject[] {
  const crdDir = join(dir, 'crds');
  if (!existsSync(crdDir)) throw new BinnacleError('terminal', 'OPENSHIFT_API_MISSING', `${crdDir} does not exist: run \`bash hack/build-tools.sh openshift-api\``);
  const version = readFileSync(join(dir, 'version'), 'utf8').trim();
  const crds: KubeObject[] = [];
  for (const f of readdirSync(crdDir).filter((n) => n.endsWith('.crd.yaml')).sort()) {
    for (const value of readYamlAll(readFileSync(join(crdDir, f), 'utf8'), join(crdDir, f))) {
      const obj = value as KubeObject | null;
      if (obj === null || obj.kind !== 'CustomResourceDefinition') continue;
      obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'app.kubernetes.io/part-of': PART_OF };
      obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), 'binnacle.dev/source': `github.com/openshift/api@${version} ${f}` };
      crds.push(obj);
    }
  }
  const openapi = JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8')) as { definitions?: Record<string, unknown> };
  for (const api of DERIVED_APIS) crds.push(crdFromOpenApi(api, openapi.definitions ?? {}, version));
  return crds;
}

export interface OpenShiftOptions {
  /** The version the ClusterVersion reports (`olm.maxOpenShiftVersion` is checked against it). */
  version?: string;
  /** The API server's URL, for the Infrastructure's status. */
  apiserver?: string;
  say?: (line: string) => void;
  timeoutMs?: number;
}

type OpenShiftClient = ClusterClient & Pick<StatusWriter, 'applyStatus'>;

/** ClusterVersion `version` at `version`, completed; its cluster ID and start time kept from before. */
async function reportClusterVersion(client: OpenShiftClient, version: string): Promise<void> {
  const cvRef = { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', name: 'version' };
  const existing = await client.find(cvRef);
  const clusterID = (existing?.spec as { clusterID?: string } | undefined)?.clusterID ?? randomUUID();
  const cv = await client.apply({ apiVersion: cvRef.apiVersion, kind: cvRef.kind, metadata: { name: cvRef.name }, spec: { clusterID, channel: `stable-${version.split('.').slice(0, 2).join('.')}` } }, { force: true });
  const image = `quay.io/openshift-release-dev/ocp-release:${version}-x86_64`;
  const started = (existing?.status as { history?: { startedTime?: string }[] } | undefined)?.history?.[0]?.startedTime ?? new Date().toISOString();
  const previous = (existing?.status as { desired?: { version?: string } } | undefined)?.desired?.version;
  await client.applyStatus(
    {
      apiVersion: cvRef.apiVersion,
      kind: cvRef.kind,
      metadata: { name: cvRef.name },
      status: {
        desired: { version, image },
        history: [{ state: 'Completed', version, image, verified: false, startedTime: previous === version ? started : new Date().toISOString(), completionTime: new Date().toISOString() }],
        observedGeneration: cv.metadata.generation ?? 1,
        versionHash: '',
        availableUpdates: null,
      },
    },
    { force: true },
  );
}

/** Infrastructure `cluster`: no platform, one node, the API server's URL when known. */
async function reportInfrastructure(client: OpenShiftClient, apiserver: string | undefined): Promise<void> {
  const infraRef = { apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', name: 'cluster' };
  await client.apply({ apiVersion: infraRef.apiVersion, kind: infraRef.kind, metadata: { name: infraRef.name }, spec: { platformSpec: { type: 'None' } } }, { force: true });
  await client.applyStatus(
    {
      apiVersion: infraRef.apiVersion,
      kind: infraRef.kind,
      metadata: { name: infraRef.name },
      status: {
        infrastructureName: 'binnacle-local',
        platform: 'None',
        platformStatus: { type: 'None' },
        controlPlaneTopology: 'SingleReplica',
        infrastructureTopology: 'SingleReplica',
        ...(apiserver === undefined ? {} : { apiServerURL: apiserver, apiServerInternalURI: apiserver }),
      },
    },
    { force: true },
  );
}

/**
 * Installs the OpenShift CRDs (idempotent), and the cluster-scoped singletons operators read:
 * ClusterVersion `version` reporting `version`, Infrastructure `cluster` (platform None, one
 * node) and Proxy `cluster` (no proxy).
 */
export async function installOpenShiftApis(client: OpenShiftClient, crds: readonly KubeObject[], opts: OpenShiftOptions = {}): Promise<{ crds: string[]; version: string }> {
  const version = opts.version ?? DEFAULT_OPENSHIFT_VERSION;
  if (!isStrictSemver(version)) throw new InputError('OPENSHIFT_VERSION_INVALID', `OpenShift version "${version}" is not a version such as 4.16.0`, { field: 'version' });
  const say = opts.say ?? (() => undefined);
  say(`installing ${crds.length} OpenShift API CRDs`);
  for (const crd of crds) await client.apply(crd, { force: true });
  const names = crds.map((c) => c.metadata.name ?? '');
  await waitCrdsEstablished(client, names, { timeoutMs: opts.timeoutMs ?? 120_000 });
  for (const gv of ['config.openshift.io/v1', 'route.openshift.io/v1', 'security.openshift.io/v1', 'console.openshift.io/v1', 'image.openshift.io/v1', 'build.openshift.io/v1']) client.invalidateDiscovery(gv);

  say(`ClusterVersion "version" reports OpenShift ${version}`);
  await reportClusterVersion(client, version);
  await reportInfrastructure(client, opts.apiserver);
  await client.apply({ apiVersion: 'config.openshift.io/v1', kind: 'Proxy', metadata: { name: 'cluster' }, spec: {} }, { force: true });
  return { crds: names, version };
}
