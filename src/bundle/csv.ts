/**
 * Decoding a ClusterServiceVersion object into its typed view. Every field of the wrong type
 * is reported (file + field path); decoding carries on with a default so all are found at once.
 */
import { Decoder, typeName, type JsonObject } from './decode.js';
import { isRecord } from '../util/object.js';
import type {
  ApiServiceDescription,
  ClusterServiceVersion,
  CrdDescription,
  StrategyDeployment,
  StrategyPermission,
  WebhookDescription,
} from './types.js';

export const CSV_KIND = 'ClusterServiceVersion';

export function decodeCsv(obj: JsonObject, d: Decoder): ClusterServiceVersion {
  const meta = d.record(obj, 'metadata', '', true) ?? {};
  const spec = d.record(obj, 'spec', '', true) ?? {};
  const name = d.str(meta, 'name', 'metadata', true) ?? '';
  const annotations = d.stringMap(meta, 'annotations', 'metadata');
  const labels = d.stringMap(meta, 'labels', 'metadata');

  const crds = d.record(spec, 'customresourcedefinitions', 'spec') ?? {};
  const apis = d.record(spec, 'apiservicedefinitions', 'spec') ?? {};
  const install = d.record(spec, 'install', 'spec') ?? {};
  const strategySpec = d.record(install, 'spec', 'spec.install') ?? {};

  const csv: ClusterServiceVersion = {
    name,
    labels,
    annotations,
    version: versionString(spec, d),
    skips: d.strings(spec, 'skips', 'spec'),
    installModes: d.records(spec, 'installModes', 'spec').map(({ value, path }) => ({
      type: d.str(value, 'type', path, true) ?? '',
      supported: d.bool(value, 'supported', path) ?? false,
    })),
    ownedCRDs: crdDescriptions(d, crds, 'owned'),
    requiredCRDs: crdDescriptions(d, crds, 'required'),
    ownedAPIServices: apiDescriptions(d, apis, 'owned'),
    requiredAPIServices: apiDescriptions(d, apis, 'required'),
    strategy: d.str(install, 'strategy', 'spec.install') ?? '',
    deployments: deployments(d, strategySpec),
    permissions: permissions(d, strategySpec, 'permissions'),
    clusterPermissions: permissions(d, strategySpec, 'clusterPermissions'),
    webhooks: webhooks(d, spec),
    relatedImages: d.records(spec, 'relatedImages', 'spec').map(({ value, path }) => ({
      name: d.str(value, 'name', path) ?? '',
      image: d.str(value, 'image', path) ?? '',
    })),
    raw: obj,
    file: d.file,
  };
  const namespace = d.str(meta, 'namespace', 'metadata');
  if (namespace !== undefined) csv.namespace = namespace;
  const replaces = d.str(spec, 'replaces', 'spec');
  if (replaces !== undefined && replaces !== '') csv.replaces = replaces;
  const skipRange = annotations['olm.skipRange'];
  if (skipRange !== undefined && skipRange !== '') csv.skipRange = skipRange;
  const minKube = d.str(spec, 'minKubeVersion', 'spec');
  if (minKube !== undefined && minKube !== '') csv.minKubeVersion = minKube;
  const displayName = d.str(spec, 'displayName', 'spec');
  if (displayName !== undefined) csv.displayName = displayName;
  return csv;
}

/** `spec.version` is a semver string; YAML may have made `1.0` a number, which Go rejects too. */
function versionString(spec: JsonObject, d: Decoder): string {
  const v = spec.version;
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  d.bad('spec.version', `must be a string, got ${typeName(v)} (quote it)`);
  return typeof v === 'number' ? String(v) : '';
}

function crdDescriptions(d: Decoder, crds: JsonObject, key: 'owned' | 'required'): CrdDescription[] {
  return d.records(crds, key, 'spec.customresourcedefinitions').map(({ value, path }) => {
    const out: CrdDescription = { ...requiredStrings(d, value, path, ['name', 'version', 'kind']), field: path, ...optionalStrings(d, value, path, ['displayName', 'description']) };
    return out;
  });
}

/** The string fields `keys` of `value`, each required (`''` when missing, which `d` reports). */
function requiredStrings<K extends string>(d: Decoder, value: JsonObject, path: string, keys: readonly K[]): Record<K, string> {
  return Object.fromEntries(keys.map((k) => [k, d.str(value, k, path, true) ?? ''])) as Record<K, string>;
}

/** The string fields `keys` of `value` that are set. */
function optionalStrings<K extends string>(d: Decoder, value: JsonObject, path: string, keys: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) {
    const v = d.str(value, k, path);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function apiDescriptions(d: Decoder, apis: JsonObject, key: 'owned' | 'required'): ApiServiceDescription[] {
  return d.records(apis, key, 'spec.apiservicedefinitions').map(({ value, path }) => {
    const out: ApiServiceDescription = { ...requiredStrings(d, value, path, ['name', 'group', 'version', 'kind']), field: path, ...optionalStrings(d, value, path, ['deploymentName']) };
    const port = value.containerPort;
    if (typeof port === 'number') out.containerPort = port;
    else if (port !== undefined && port !== null) d.bad(`${path}.containerPort`, `must be a number, got ${typeName(port)}`);
    return out;
  });
}

function deployments(d: Decoder, strategySpec: JsonObject): StrategyDeployment[] {
  return d.records(strategySpec, 'deployments', 'spec.install.spec').map(({ value, path }) => {
    const spec = d.record(value, 'spec', path, true) ?? {};
    checkDeploymentSpec(d, spec, `${path}.spec`);
    return {
      name: d.str(value, 'name', path, true) ?? '',
      spec,
      label: d.stringMap(value, 'label', path),
      field: path,
    };
  });
}

/** Enough of apps/v1 DeploymentSpec to be sure it is one: a pod template with containers. */
function checkDeploymentSpec(d: Decoder, spec: JsonObject, path: string): void {
  const selector = d.record(spec, 'selector', path);
  if (selector !== undefined) d.stringMap(selector, 'matchLabels', `${path}.selector`);
  if (spec.replicas !== undefined && spec.replicas !== null && typeof spec.replicas !== 'number') {
    d.bad(`${path}.replicas`, `must be a number, got ${typeName(spec.replicas)}`);
  }
  const template = d.record(spec, 'template', path, true);
  if (template === undefined) return;
  const tmeta = d.record(template, 'metadata', `${path}.template`);
  if (tmeta !== undefined) {
    d.stringMap(tmeta, 'labels', `${path}.template.metadata`);
    d.stringMap(tmeta, 'annotations', `${path}.template.metadata`);
  }
  const podSpec = d.record(template, 'spec', `${path}.template`, true);
  if (podSpec === undefined) return;
  const pp = `${path}.template.spec`;
  if (!Array.isArray(podSpec.containers) || podSpec.containers.length === 0) {
    d.bad(`${pp}.containers`, 'must be a non-empty list of containers; this is not a Deployment spec', 'deployment.spec');
  }
  for (const key of ['containers', 'initContainers'] as const) {
    for (const { value, path: cp } of d.records(podSpec, key, pp)) {
      d.str(value, 'name', cp, true);
      d.str(value, 'image', cp);
      for (const listKey of ['env', 'ports', 'volumeMounts', 'args', 'command'] as const) d.list(value, listKey, cp);
    }
  }
  d.list(podSpec, 'volumes', pp);
  d.list(podSpec, 'tolerations', pp);
}

function permissions(d: Decoder, strategySpec: JsonObject, key: string): StrategyPermission[] {
  return d.records(strategySpec, key, 'spec.install.spec').map(({ value, path }) => ({
    serviceAccountName: d.str(value, 'serviceAccountName', path) ?? '',
    rules: d.records(value, 'rules', path).map((r) => r.value),
    field: path,
  }));
}

function webhooks(d: Decoder, spec: JsonObject): WebhookDescription[] {
  return d.records(spec, 'webhookdefinitions', 'spec').map(({ value, path }) => {
    const port = value.containerPort;
    let containerPort = 443;
    if (typeof port === 'number') containerPort = port;
    else if (port !== undefined && port !== null) d.bad(`${path}.containerPort`, `must be a number, got ${typeName(port)}`);
    const out: WebhookDescription = {
      generateName: d.str(value, 'generateName', path, true) ?? '',
      type: d.str(value, 'type', path, true) ?? '',
      deploymentName: d.str(value, 'deploymentName', path) ?? '',
      containerPort,
      conversionCRDs: d.strings(value, 'conversionCRDs', path),
      raw: value,
      field: path,
    };
    const tp = value.targetPort;
    if (typeof tp === 'number' || typeof tp === 'string') out.targetPort = tp;
    else if (isRecord(tp) || Array.isArray(tp)) d.bad(`${path}.targetPort`, `must be a number or a name, got ${typeName(tp)}`);
    const wp = d.str(value, 'webhookPath', path);
    if (wp !== undefined) out.webhookPath = wp;
    return out;
  });
}
