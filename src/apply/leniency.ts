/**
 * What OLM tolerates and server-side apply does not, done before anything is checked or
 * applied: an object whose optional API the cluster does not serve is skipped (see
 * `optional-kinds.ts`), and fields an object's schema does not declare are dropped (see
 * `prune-unknown-fields.ts`). Both are reported, never silent.
 *
 * An object's schema is the one its CRD in the same release declares (the schema that will be
 * in force once the release is applied), else the one the server publishes. Without a schema
 * nothing is dropped, and the server has the last word.
 */
import { isNotFound } from '../kube/errors.js';
import type { KindSchema, SchemaSource } from '../kube/openapi.js';
import { gvkOf, parseApiVersion, refOf, type KubeObject } from '../kube/types.js';
import type { ApplierClient } from './types.js';
import { optionalApi } from './optional-kinds.js';
import { pruneUnknownFields } from './prune-unknown-fields.js';
import type { DroppedField, SkippedObject } from './types.js';
import { isRecord } from '../util/object.js';

export interface LeniencyOptions {
  client: Pick<ApplierClient, 'resourceFor'>;
  /** Where schemas come from; without it no field is dropped. */
  schemas?: SchemaSource | undefined;
}

export interface LenientObjects {
  /** What to apply: every object not skipped, with undeclared fields dropped. */
  objects: KubeObject[];
  skipped: SkippedObject[];
  dropped: DroppedField[];
}

export async function makeLenient(objects: readonly KubeObject[], opts: LeniencyOptions): Promise<LenientObjects> {
  const crds = releaseCrds(objects);
  const snapshot = opts.schemas === undefined ? undefined : await opts.schemas.snapshot();
  const objectMeta = snapshot === undefined ? undefined : await snapshot.objectMeta();
  const out: LenientObjects = { objects: [], skipped: [], dropped: [] };
  for (const obj of objects) {
    const crd = crds.get(groupKind(obj));
    if (crd === undefined && !(await served(obj, opts.client))) {
      const optional = optionalApi(obj.apiVersion, obj.kind);
      if (optional !== undefined) {
        out.skipped.push({ object: refOf(obj), reason: `the cluster does not serve ${obj.apiVersion} ${obj.kind}: ${optional.reason}` });
        continue;
      }
      // Not optional: the applier refuses it, naming it.
      out.objects.push(obj);
      continue;
    }
    const schema = crd !== undefined ? crdSchema(crd, obj) : await snapshot?.kind(gvkOf(obj));
    if (schema === undefined) {
      out.objects.push(obj);
      continue;
    }
    const pruned = pruneUnknownFields(obj, schema, { objectMeta });
    out.objects.push(pruned.object);
    for (const path of pruned.dropped) out.dropped.push({ object: refOf(obj), path, schema: schema.origin });
    for (const r of pruned.renamed) out.dropped.push({ object: refOf(obj), path: r.path, schema: schema.origin, renamedTo: r.to });
  }
  return out;
}

async function served(obj: KubeObject, client: LeniencyOptions['client']): Promise<boolean> {
  try {
    await client.resourceFor(obj.apiVersion, obj.kind);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

function groupKind(o: { apiVersion: string; kind: string }): string {
  return `${parseApiVersion(o.apiVersion).group}/${o.kind}`;
}

/** The release's own CRDs (apiextensions.k8s.io/v1), by the group/kind they define. */
function releaseCrds(objects: readonly KubeObject[]): Map<string, KubeObject> {
  const out = new Map<string, KubeObject>();
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition' || o.apiVersion !== 'apiextensions.k8s.io/v1') continue;
    const spec = isRecord(o.spec) ? o.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    if (typeof spec.group === 'string' && typeof names.kind === 'string') out.set(`${spec.group}/${names.kind}`, o);
  }
  return out;
}

/** The schema `crd` declares for `obj`'s version, as the server will publish it. */
function crdSchema(crd: KubeObject, obj: KubeObject): KindSchema | undefined {
  const spec = isRecord(crd.spec) ? crd.spec : {};
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : [];
  const { version } = parseApiVersion(obj.apiVersion);
  const v = versions.find((x) => x.name === version);
  const schema = isRecord(v?.schema) ? v.schema.openAPIV3Schema : undefined;
  if (!isRecord(schema)) return undefined;
  return { gvk: gvkOf(obj), root: schema, resolve: () => undefined, origin: `CustomResourceDefinition ${crd.metadata.name ?? ''}` };
}

