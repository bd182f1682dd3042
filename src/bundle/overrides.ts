/**
 * Deployment overrides, like OLM's Subscription `spec.config`: env, envFrom, volumes,
 * volumeMounts, tolerations, resources, nodeSelector, affinity, annotations. Applied to every
 * Deployment of the bundle with OLM's merge rules (see operator-lifecycle-manager
 * `pkg/controller/operators/olm/overrides/inject`).
 */
import { isDeepStrictEqual } from 'node:util';
import { Decoder, type JsonObject } from './decode.js';
import { isRecord } from '../util/object.js';
import type { Problem } from '../util/errors.js';

export interface DeploymentOverrides {
  env?: JsonObject[];
  envFrom?: JsonObject[];
  volumes?: JsonObject[];
  volumeMounts?: JsonObject[];
  tolerations?: JsonObject[];
  resources?: JsonObject;
  nodeSelector?: Record<string, string>;
  affinity?: JsonObject;
  annotations?: Record<string, string>;
}

const KNOWN = new Set(['env', 'envFrom', 'volumes', 'volumeMounts', 'tolerations', 'resources', 'nodeSelector', 'affinity', 'annotations', 'selector']);

/** Checks an overrides document (e.g. a `--config` file); every bad field is a problem. */
export function decodeOverrides(value: unknown, file: string): { overrides: DeploymentOverrides; problems: Problem[] } {
  const d = new Decoder(file);
  const overrides: DeploymentOverrides = {};
  if (!isRecord(value)) {
    d.bad('', 'must be a mapping of env, envFrom, volumes, volumeMounts, tolerations, resources, nodeSelector, affinity, annotations');
    return { overrides, problems: d.problems };
  }
  for (const key of Object.keys(value)) if (!KNOWN.has(key)) d.bad(key, 'is not a deployment override field', 'overrides.unknown-field');
  for (const key of ['env', 'envFrom', 'volumes', 'volumeMounts', 'tolerations'] as const) {
    if (value[key] === undefined) continue;
    const items = d.records(value, key, '').map((r) => r.value);
    if (key === 'env' || key === 'volumes' || key === 'volumeMounts') {
      items.forEach((it, i) => {
        if (typeof it.name !== 'string' || it.name === '') d.bad(`${key}[${i}].name`, 'is required', 'field.required');
      });
    }
    overrides[key] = items;
  }
  const resources = d.record(value, 'resources', '');
  if (resources !== undefined) overrides.resources = resources;
  const affinity = d.record(value, 'affinity', '');
  if (affinity !== undefined) overrides.affinity = affinity;
  if (value.nodeSelector !== undefined) overrides.nodeSelector = d.stringMap(value, 'nodeSelector', '');
  if (value.annotations !== undefined) overrides.annotations = d.stringMap(value, 'annotations', '');
  return { overrides, problems: d.problems };
}

function records(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.filter(isRecord) : [];
}

/** Merges by `name`: an override replaces the entry of the same name, others are appended. */
function mergeByName(existing: JsonObject[], add: JsonObject[]): JsonObject[] {
  const out = [...existing];
  for (const a of add) {
    const i = out.findIndex((e) => e.name === a.name);
    if (i >= 0) out[i] = structuredClone(a);
    else out.push(structuredClone(a));
  }
  return out;
}

function appendUnique(existing: JsonObject[], add: JsonObject[]): JsonObject[] {
  const out = [...existing];
  for (const a of add) if (!out.some((e) => isDeepStrictEqual(e, a))) out.push(structuredClone(a));
  return out;
}

function emptyPart(v: unknown): boolean {
  if (!isRecord(v)) return true;
  return Object.values(v).every((x) => x === undefined || x === null || (Array.isArray(x) && x.length === 0) || (isRecord(x) && emptyPart(x)));
}

/** Applies overrides to a Deployment object in place. */
export function applyOverrides(deployment: JsonObject, o: DeploymentOverrides): void {
  const spec = isRecord(deployment.spec) ? deployment.spec : {};
  const template = isRecord(spec.template) ? spec.template : {};
  const pod: JsonObject = isRecord(template.spec) ? template.spec : {};
  for (const c of records(pod.containers)) overrideContainer(c, o);
  if (o.volumes !== undefined && o.volumes.length > 0) pod.volumes = mergeByName(records(pod.volumes), o.volumes);
  if (o.tolerations !== undefined && o.tolerations.length > 0) pod.tolerations = appendUnique(records(pod.tolerations), o.tolerations);
  if (o.nodeSelector !== undefined) pod.nodeSelector = { ...o.nodeSelector };
  if (o.affinity !== undefined) applyAffinity(pod, o.affinity);
  if (o.annotations !== undefined && Object.keys(o.annotations).length > 0) {
    // Existing annotations win over the override, on the Deployment and on its pod template.
    addMissingAnnotations(deployment, o.annotations);
    addMissingAnnotations(template, o.annotations);
  }
}

/** A container's env, envFrom, volume mounts and resources, as the overrides set them. */
function overrideContainer(c: JsonObject, o: DeploymentOverrides): void {
  if (o.env !== undefined && o.env.length > 0) c.env = mergeByName(records(c.env), o.env);
  if (o.envFrom !== undefined && o.envFrom.length > 0) c.envFrom = appendUnique(records(c.envFrom), o.envFrom);
  if (o.volumeMounts !== undefined && o.volumeMounts.length > 0) c.volumeMounts = mergeByName(records(c.volumeMounts), o.volumeMounts);
  if (o.resources !== undefined) c.resources = structuredClone(o.resources);
}

/** The annotations an object does not have yet; the ones it has are kept. */
function addMissingAnnotations(obj: JsonObject, annotations: Record<string, string>): void {
  const meta = isRecord(obj.metadata) ? obj.metadata : (obj.metadata = {});
  meta.annotations = { ...annotations, ...(isRecord(meta.annotations) ? meta.annotations : {}) };
}

/** `{}` erases the affinity; a set part replaces that part; an empty part erases it. */
function applyAffinity(pod: JsonObject, a: JsonObject): void {
  const parts = ['nodeAffinity', 'podAffinity', 'podAntiAffinity'] as const;
  if (parts.every((p) => a[p] === undefined || a[p] === null)) {
    delete pod.affinity;
    return;
  }
  const prev: JsonObject = isRecord(pod.affinity) ? pod.affinity : {};
  const current: JsonObject = {};
  for (const p of parts) {
    const v = a[p];
    // Unset in the override: keep; empty: erase; otherwise: replace.
    const next = v === undefined || v === null ? prev[p] : emptyPart(v) ? undefined : structuredClone(v);
    if (next !== undefined) current[p] = next;
  }
  if (Object.keys(current).length === 0) delete pod.affinity;
  else pod.affinity = current;
}
