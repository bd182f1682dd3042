/**
 * CustomResourceDefinition checks: what the API server's CRD validation rejects (names, group,
 * scope, versions, storage version, printer columns, scale subresource, conversion), plus the
 * structural-schema rules that a v1 CRD must meet. operator-framework/api skips schema checks;
 * Binnacle reports them (errors for v1 CRDs, which the API server would refuse; warnings for
 * v1beta1 CRDs, which it upgrades and which may then be refused).
 */
import { ValidationResult } from '../util/errors.js';
import { toStructural } from './crd-structural.js';
import type { JsonObject } from './decode.js';
import { isRecord } from '../util/object.js';
import { dns1123SubdomainErrors, isDns1123Label } from './names.js';
import type { ManifestObject } from './types.js';

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const COLUMN_TYPES = new Set(['integer', 'number', 'string', 'boolean', 'date']);
const FORBIDDEN_SCHEMA_KEYS = ['$ref', 'additionalItems', 'patternProperties', 'definitions', 'dependencies', 'id'];

export function validateCrd(crd: ManifestObject, r: ValidationResult): void {
  const spec = isRecord(crd.object.spec) ? crd.object.spec : {};
  const ctx: CrdCtx = { crd, spec, r, v1: crd.apiVersion === 'apiextensions.k8s.io/v1', at: (field) => ({ file: crd.file, field }) };
  checkNames(ctx);
  checkVersions(ctx);
  checkConversion(ctx);
}

interface CrdCtx {
  crd: ManifestObject;
  spec: JsonObject;
  r: ValidationResult;
  v1: boolean;
  at: (field: string) => { file: string; field: string };
}

function checkNames({ crd, spec, r, v1, at }: CrdCtx): void {
  const names = isRecord(spec.names) ? spec.names : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  checkMetadata(crd, group, r, at, v1);
  const plural = typeof names.plural === 'string' ? names.plural : '';
  checkGroup(group, r, at);
  if (plural !== '' && group !== '' && crd.name !== `${plural}.${group}`) {
    r.error('crd.name', `must be <plural>.<group> = "${plural}.${group}", got "${crd.name}"`, at('metadata.name'));
  }
  checkNameFields(names, plural, r, at);
  checkScope(spec.scope, v1, r, at);
}

function checkGroup(group: string, r: ValidationResult, at: CrdCtx['at']): void {
  if (group === '') return void r.error('crd.group', 'is required', at('spec.group'));
  if (!group.includes('.')) r.error('crd.group', `"${group}" must contain at least one dot`, at('spec.group'));
  for (const e of dns1123SubdomainErrors(group)) r.error('crd.group', `"${group}" ${e}`, at('spec.group'));
}

/** spec.names: the plural and singular are DNS labels, the kind a name. */
function checkNameFields(names: JsonObject, plural: string, r: ValidationResult, at: CrdCtx['at']): void {
  const kind = typeof names.kind === 'string' ? names.kind : '';
  if (plural === '') r.error('crd.names', 'is required', at('spec.names.plural'));
  else if (!isDns1123Label(plural)) r.error('crd.names', `"${plural}" must be a lower-case DNS label`, at('spec.names.plural'));
  if (typeof names.singular === 'string' && names.singular !== '' && !isDns1123Label(names.singular)) {
    r.error('crd.names', `"${names.singular}" must be a lower-case DNS label`, at('spec.names.singular'));
  }
  if (kind === '') r.error('crd.names', 'is required', at('spec.names.kind'));
  else if (!/^[A-Za-z][A-Za-z0-9]*$/.test(kind)) r.error('crd.names', `"${kind}" is not a valid kind`, at('spec.names.kind'));
}

function checkScope(scope: unknown, v1: boolean, r: ValidationResult, at: CrdCtx['at']): void {
  // v1beta1 defaults a missing scope to Namespaced; v1 does not.
  if (!v1 && (scope === undefined || scope === '')) {
    r.warning('crd.scope', 'is not set; apiextensions.k8s.io/v1beta1 defaults it to Namespaced', at('spec.scope'));
  } else if (scope !== 'Namespaced' && scope !== 'Cluster') {
    r.error('crd.scope', `must be Namespaced or Cluster, got ${JSON.stringify(scope) ?? 'nothing'}`, at('spec.scope'));
  }
}

/** Protected API groups need Kubernetes API review approval; CRDs are cluster-scoped. */
function checkMetadata(crd: ManifestObject, group: string, r: ValidationResult, at: CrdCtx['at'], v1: boolean): void {
  const meta = isRecord(crd.object.metadata) ? crd.object.metadata : {};
  if (typeof meta.namespace === 'string' && meta.namespace !== '') {
    r.error('crd.namespace', 'must not be set: a CustomResourceDefinition is cluster-scoped', at('metadata.namespace'));
  }
  const protectedGroup = ['k8s.io', 'kubernetes.io'].some((g) => group === g || group.endsWith(`.${g}`));
  if (!protectedGroup) return;
  const annotations = isRecord(meta.annotations) ? meta.annotations : {};
  const approval = annotations['api-approved.kubernetes.io'];
  if ((typeof approval !== 'string' || approval === '') && !v1) {
    r.warning('crd.api-approval', `group "${group}" is protected: apiextensions.k8s.io/v1 asks for the api-approved.kubernetes.io annotation, which Binnacle sets to "unapproved, …" when it installs the CRD as v1`, at('metadata.annotations.api-approved.kubernetes.io'));
  } else if (typeof approval !== 'string' || approval === '') {
    r.error('crd.api-approval', `group "${group}" is protected: the CRD needs the api-approved.kubernetes.io annotation (a Kubernetes API review URL, or "unapproved, <reason>")`, at('metadata.annotations.api-approved.kubernetes.io'));
  } else if (!approval.startsWith('unapproved') && !/^https?:\/\//.test(approval)) {
    r.error('crd.api-approval', `"${approval}" must be a URL or start with "unapproved"`, at('metadata.annotations.api-approved.kubernetes.io'));
  }
}

function checkVersions({ crd, spec, r, v1, at }: CrdCtx): void {
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : [];
  const single = typeof spec.version === 'string' && spec.version !== '' ? spec.version : undefined;
  if (versions.length === 0 && (v1 || single === undefined)) r.error('crd.versions', 'must list at least one version', at('spec.versions'));
  if (!v1 && single !== undefined && versions.length > 0 && versions[0]?.name !== single) {
    r.error('crd.versions', `spec.version "${single}" must be the first of spec.versions`, at('spec.version'));
  }
  const seen = new Set<string>();
  let storage = versions.length === 0 ? 1 : 0;
  let served = versions.length === 0 ? 1 : 0;
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    const name = typeof v.name === 'string' ? v.name : '';
    if (!DNS1035_LABEL.test(name)) r.error('crd.versions', `"${name}" must be a DNS-1035 label (e.g. v1alpha1)`, at(`${p}.name`));
    if (seen.has(name)) r.error('crd.versions', `version "${name}" is listed twice`, at(`${p}.name`));
    seen.add(name);
    if (v.storage === true) storage++;
    if (v.served === true) served++;
    // operator-framework/api accepts it; the API server does not, and Binnacle refuses to install it (render.crd-schema).
    if (v1 && !isRecord(v.schema)) r.warning('crd.schema', 'a v1 CRD version needs a schema: the API server refuses it without one, and Binnacle will not install this bundle', at(`${p}.schema`));
    if (isRecord(v.schema) && isRecord(v.schema.openAPIV3Schema)) {
      if (v1) structural(v.schema.openAPIV3Schema, `${p}.schema.openAPIV3Schema`, true, r, crd.file, true);
      else convertible(v.schema.openAPIV3Schema, `${p}.schema.openAPIV3Schema`, spec.preserveUnknownFields !== false, r, crd.file);
    }
    columns(v.additionalPrinterColumns, `${p}.additionalPrinterColumns`, v1 ? 'jsonPath' : 'JSONPath', r, crd.file);
    scale(v.subresources, `${p}.subresources`, r, crd.file);
  });
  if (storage !== 1) r.error('crd.versions', `exactly one version must be the storage version, found ${storage}`, at('spec.versions'));
  if (served === 0) r.error('crd.versions', 'at least one version must be served', at('spec.versions'));
  if (!v1) {
    if (isRecord(spec.validation) && isRecord(spec.validation.openAPIV3Schema)) {
      convertible(spec.validation.openAPIV3Schema, 'spec.validation.openAPIV3Schema', spec.preserveUnknownFields !== false, r, crd.file);
    }
    columns(spec.additionalPrinterColumns, 'spec.additionalPrinterColumns', 'JSONPath', r, crd.file);
    scale(spec.subresources, 'spec.subresources', r, crd.file);
  }
}

function checkConversion({ spec, r, v1, at }: CrdCtx): void {
  const conv = isRecord(spec.conversion) ? spec.conversion : undefined;
  if (conv !== undefined) conversionWebhook(conv, v1, r, at);
  preserveUnknownFields(spec, v1, r, at);
}

function conversionWebhook(conv: JsonObject, v1: boolean, r: ValidationResult, at: CrdCtx['at']): void {
  // Both versions default an unset strategy to None.
  const strategy = conv.strategy === undefined || conv.strategy === '' ? 'None' : conv.strategy;
  if (strategy !== 'None' && strategy !== 'Webhook') r.error('crd.conversion', `spec.conversion.strategy: Unsupported value: ${JSON.stringify(strategy)}: supported values: "None", "Webhook"`, at('spec.conversion.strategy'));
  const { client, clientKey, crv: givenCrv, crvKey } = webhookFields(conv, v1);
  let crv = givenCrv;
  if (strategy === 'Webhook') {
    if (!isRecord(client)) r.error('crd.conversion', `${clientKey}: Required value: required when strategy is set to Webhook`, at(clientKey));
    else if ((client.url === undefined) === (client.service === undefined)) r.error('crd.conversion', `${clientKey}: Required value: exactly one of url or service is required`, at(clientKey));
    // v1beta1 defaults the review versions of a webhook to [v1beta1]; v1 has no default.
    if (!v1 && (crv === undefined || crv === null || (Array.isArray(crv) && crv.length === 0))) crv = ['v1beta1'];
    conversionReviewVersions(crv, crvKey, r, at);
  } else {
    if (client !== undefined && client !== null) r.error('crd.conversion', `${clientKey}: Forbidden: should not be set when strategy is not set to Webhook`, at(clientKey));
    if (Array.isArray(crv) && crv.length > 0) r.error('crd.conversion', `${crvKey}: Forbidden: should not be set when strategy is not set to Webhook`, at(crvKey));
  }
}

/** The webhook's client config and review versions, and their field paths: v1 nests them under `webhook`, v1beta1 does not. */
function webhookFields(conv: JsonObject, v1: boolean): { client: unknown; clientKey: string; crv: unknown; crvKey: string } {
  if (v1) {
    const hook = isRecord(conv.webhook) ? conv.webhook : undefined;
    return { client: hook?.clientConfig, clientKey: 'spec.conversion.webhook.clientConfig', crv: hook?.conversionReviewVersions, crvKey: 'spec.conversion.webhook.conversionReviewVersions' };
  }
  return { client: conv.webhookClientConfig, clientKey: 'spec.conversion.webhookClientConfig', crv: conv.conversionReviewVersions, crvKey: 'spec.conversion.conversionReviewVersions' };
}

function preserveUnknownFields(spec: JsonObject, v1: boolean, r: ValidationResult, at: CrdCtx['at']): void {
  if (v1 && spec.preserveUnknownFields === true) {
    r.error('crd.preserve-unknown-fields', 'must be false in apiextensions.k8s.io/v1; use x-kubernetes-preserve-unknown-fields in the schema', at('spec.preserveUnknownFields'));
  } else if (!v1 && spec.preserveUnknownFields !== false) {
    // The API server (and operator-verify) refuse this today; Binnacle's v1 upgrade turns it into
    // x-kubernetes-preserve-unknown-fields, so the bundle still installs.
    r.warning(
      'crd.preserve-unknown-fields',
      'is true (the v1beta1 default), which Kubernetes 1.22+ refuses; Binnacle installs it as x-kubernetes-preserve-unknown-fields: true on each version schema',
      at('spec.preserveUnknownFields'),
    );
  }
}

const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** The API server's rules for `conversionReviewVersions` of a webhook conversion. */
function conversionReviewVersions(crv: unknown, key: string, r: ValidationResult, at: CrdCtx['at']): void {
  const list = Array.isArray(crv) ? crv.map((v) => (typeof v === 'string' ? v : String(v))) : [];
  if (list.length === 0) {
    r.error('crd.conversion-review-versions', `${key}: Required value: must include at least one of v1, v1beta1`, at(key));
    return;
  }
  const seen = new Set<string>();
  list.forEach((v, i) => {
    if (seen.has(v)) {
      r.error('crd.conversion-review-versions', `${key}[${i}]: Invalid value: ${JSON.stringify(v)}: duplicate version`, at(`${key}[${i}]`));
      return;
    }
    seen.add(v);
    if (!DNS1035_LABEL.test(v) || v.length > 63) r.error('crd.conversion-review-versions', `${key}[${i}]: Invalid value: ${JSON.stringify(v)}: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character`, at(`${key}[${i}]`));
  });
  if (!list.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v))) {
    r.error('crd.conversion-review-versions', `${key}: Invalid value: ${JSON.stringify(list)}: must include at least one of v1, v1beta1`, at(key));
  }
}

function columns(v: unknown, path: string, jsonPathKey: string, r: ValidationResult, file: string): void {
  if (!Array.isArray(v)) return;
  v.forEach((c, i) => {
    if (!isRecord(c)) return;
    const p = `${path}[${i}]`;
    if (typeof c.name !== 'string' || c.name === '') r.error('crd.printer-columns', 'is required', { file, field: `${p}.name` });
    if (typeof c.type !== 'string' || !COLUMN_TYPES.has(c.type)) {
      r.error('crd.printer-columns', `must be one of integer, number, string, boolean, date; got ${JSON.stringify(c.type) ?? 'nothing'}`, { file, field: `${p}.type` });
    }
    const other = jsonPathKey === 'JSONPath' ? 'jsonPath' : 'JSONPath';
    if (typeof c[jsonPathKey] === 'string' && c[jsonPathKey] !== '') return;
    // Go decodes JSON field names case-insensitively, so the other spelling still works there.
    if (typeof c[other] === 'string' && c[other] !== '') r.warning('crd.printer-columns', `is spelled "${other}"; this API version spells it "${jsonPathKey}"`, { file, field: `${p}.${other}` });
    else r.error('crd.printer-columns', 'is required', { file, field: `${p}.${jsonPathKey}` });
  });
}

function scale(sub: unknown, path: string, r: ValidationResult, file: string): void {
  if (!isRecord(sub) || !isRecord(sub.scale)) return;
  const s = sub.scale;
  if (typeof s.specReplicasPath !== 'string' || !s.specReplicasPath.startsWith('.spec.')) {
    r.error('crd.subresources', 'must be a path under .spec', { file, field: `${path}.scale.specReplicasPath` });
  }
  if (typeof s.statusReplicasPath !== 'string' || !s.statusReplicasPath.startsWith('.status.')) {
    r.error('crd.subresources', 'must be a path under .status', { file, field: `${path}.scale.statusReplicasPath` });
  }
}

/**
 * A v1beta1 schema is made structural when Binnacle installs it as v1 (`crd-structural.ts`): one
 * warning when that is needed and loses nothing, an error for each part that cannot be converted.
 */
function convertible(node: JsonObject, path: string, preserveUnknownFields: boolean, r: ValidationResult, file: string): void {
  const probe = new ValidationResult(path);
  structural(node, path, true, probe, file, true);
  if (probe.ok) return;
  const root = node.type === undefined ? { type: 'object', ...node } : node;
  const { problems } = toStructural(root, { path, preserveUnknownFields });
  if (problems.length === 0) {
    r.warning('crd.structural', 'is not structural; Binnacle converts it to a structural schema without loss when it installs the CRD as apiextensions.k8s.io/v1', { file, field: path });
  }
  for (const p of problems) r.error('crd.structural', `${p.reason}: apiextensions.k8s.io/v1 refuses the CRD, and it cannot be made structural without loss`, { file, field: p.field });
}

/** Structural-schema rules, walked over every node; one problem per offending node. */
function structural(node: JsonObject, path: string, root: boolean, r: ValidationResult, file: string, strict: boolean): void {
  const report = (field: string, message: string): void => {
    if (strict) r.error('crd.structural', message, { file, field });
    else r.warning('crd.structural', `${message} (the CRD will be refused once upgraded to apiextensions.k8s.io/v1)`, { file, field });
  };
  const exempt = node['x-kubernetes-int-or-string'] === true || node['x-kubernetes-preserve-unknown-fields'] === true;
  structuralNode(node, path, root, exempt, report);
  if (isRecord(node.properties)) {
    for (const [k, v] of Object.entries(node.properties)) {
      if (isRecord(v)) structural(v, `${path}.properties.${k}`, false, r, file, strict);
      else report(`${path}.properties.${k}`, 'must be a schema object');
    }
  }
  if (isRecord(node.additionalProperties)) structural(node.additionalProperties, `${path}.additionalProperties`, false, r, file, strict);
  if (Array.isArray(node.items)) report(`${path}.items`, 'must be a single schema, not a list');
  else if (isRecord(node.items)) structural(node.items, `${path}.items`, false, r, file, strict);
  else if (node.type === 'array' && !exempt) report(`${path}.items`, 'an array schema must say the schema of its items');
  if (root) rootMetadata(node, path, report);
}

/** The rules on one node itself, its children aside. */
function structuralNode(node: JsonObject, path: string, root: boolean, exempt: boolean, report: (field: string, message: string) => void): void {
  if (root && node.type !== 'object') report(`${path}.type`, 'the root of the schema must be of type object');
  // A node under properties/items without a type: the classic non-structural mistake.
  if (typeof node.type !== 'string' && !exempt && !root) report(`${path}.type`, 'must be set (structural schema)');
  for (const k of FORBIDDEN_SCHEMA_KEYS) if (node[k] !== undefined) report(`${path}.${k}`, `"${k}" is not allowed in a structural schema`);
  if (node.uniqueItems === true) report(`${path}.uniqueItems`, 'uniqueItems cannot be true');
  if (node.additionalProperties !== undefined && node.additionalProperties !== false && node.properties !== undefined) {
    report(`${path}.additionalProperties`, 'properties and additionalProperties cannot both be set');
  }
}

/** At the root, `metadata` may only constrain name and generateName. */
function rootMetadata(node: JsonObject, path: string, report: (field: string, message: string) => void): void {
  if (!isRecord(node.properties) || !isRecord(node.properties.metadata)) return;
  const m = node.properties.metadata;
  const extra = Object.keys(isRecord(m.properties) ? m.properties : {}).filter((k) => k !== 'name' && k !== 'generateName');
  if (extra.length > 0) report(`${path}.properties.metadata`, `only name and generateName may be constrained in metadata, found ${extra.join(', ')}`);
}
