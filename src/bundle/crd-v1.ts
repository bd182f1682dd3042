/**
 * apiextensions.k8s.io/v1beta1 CRDs are no longer served (Kubernetes 1.22+), yet old bundles
 * ship them; OLM upgrades them to v1 before creating them, and so does Binnacle. The mapping is
 * the API server's own: per-version schema/subresources/printer columns, `JSONPath` →
 * `jsonPath`, `webhookClientConfig` → `webhook.clientConfig`. A v1beta1 CRD that preserved
 * unknown fields (the v1beta1 default) keeps doing so via `x-kubernetes-preserve-unknown-fields`.
 *
 * v1 accepts only structural schemas: every schema, v1beta1's or v1's, is made structural where
 * that loses nothing (`crd-structural.ts`); otherwise `CrdSchemaError` names the CRD and each
 * field path with the reason.
 */
import type { JsonObject } from './decode.js';
import { isRecord } from '../util/object.js';
import { CrdSchemaError, toStructural, type StructuralProblem } from './crd-structural.js';

export function crdToV1(input: JsonObject): JsonObject {
  const crd = withoutNamespace(input);
  if (crd.apiVersion !== 'apiextensions.k8s.io/v1beta1') return structuralV1(crd);
  const src = isRecord(crd.spec) ? crd.spec : {};
  const {
    version,
    versions,
    validation,
    subresources,
    additionalPrinterColumns,
    preserveUnknownFields,
    conversion,
    ...rest
  } = src;
  const preserve = preserveUnknownFields !== false;
  const listed: JsonObject[] = Array.isArray(versions) ? versions.filter(isRecord) : [];
  if (listed.length === 0 && typeof version === 'string') listed.push({ name: version, served: true, storage: true });

  const spec: JsonObject = { ...rest };
  if (spec.scope === undefined || spec.scope === '') spec.scope = 'Namespaced';
  const problems: StructuralProblem[] = [];
  spec.versions = listed.map((v, i) => {
    const out: JsonObject = { name: v.name, served: v.served ?? true, storage: v.storage ?? false };
    for (const k of ['deprecated', 'deprecationWarning'] as const) if (v[k] !== undefined) out[k] = v[k];
    const schema = isRecord(v.schema) ? v.schema : isRecord(validation) ? validation : undefined;
    let open = isRecord(schema) && isRecord(schema.openAPIV3Schema) ? schema.openAPIV3Schema : { type: 'object' };
    // v1 requires an object at the root; v1beta1 schemas often leave the root type out.
    if (open.type === undefined) open = { type: 'object', ...open };
    if (preserve) open = { ...open, 'x-kubernetes-preserve-unknown-fields': true };
    const path = isRecord(v.schema) ? `spec.versions[${i}].schema.openAPIV3Schema` : 'spec.validation.openAPIV3Schema';
    const structural = toStructural(open, { path, preserveUnknownFields: preserve });
    // One top-level schema shared by every version: report its problems once.
    if (isRecord(v.schema) || i === 0) problems.push(...structural.problems);
    out.schema = { openAPIV3Schema: structural.schema };
    const sub = v.subresources ?? subresources;
    if (sub !== undefined) out.subresources = sub;
    const cols = v.additionalPrinterColumns ?? additionalPrinterColumns;
    if (Array.isArray(cols)) out.additionalPrinterColumns = cols.filter(isRecord).map(printerColumnToV1);
    return out;
  });
  if (listed.length === 1 && listed.every((v) => v.storage !== true)) {
    const only = (spec.versions as JsonObject[])[0];
    if (only !== undefined) only.storage = true;
  }
  if (isRecord(conversion)) {
    const c: JsonObject = { strategy: conversion.strategy ?? 'None' };
    if (conversion.strategy === 'Webhook') {
      c.webhook = {
        ...(conversion.webhookClientConfig === undefined ? {} : { clientConfig: conversion.webhookClientConfig }),
        conversionReviewVersions: conversion.conversionReviewVersions ?? ['v1beta1'],
      };
    }
    spec.conversion = c;
  }
  if (problems.length > 0) throw new CrdSchemaError(crdName(crd), problems);
  return { ...crd, apiVersion: 'apiextensions.k8s.io/v1', metadata: approvedMetadata(crd, spec), spec };
}

/** The annotation v1 requires of CRDs in Kubernetes' own groups (*.k8s.io, *.kubernetes.io). */
export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';

/**
 * v1beta1 let a CRD use a protected group without an API review; v1 asks for the
 * `api-approved.kubernetes.io` annotation, with "unapproved, <reason>" as the way to say there
 * was none. A converted CRD says so instead of being refused.
 */
function approvedMetadata(crd: JsonObject, spec: JsonObject): JsonObject {
  const meta = isRecord(crd.metadata) ? crd.metadata : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  const protectedGroup = ['k8s.io', 'kubernetes.io'].some((g) => group === g || group.endsWith(`.${g}`));
  const annotations = isRecord(meta.annotations) ? meta.annotations : {};
  if (!protectedGroup || (typeof annotations[API_APPROVED_ANNOTATION] === 'string' && annotations[API_APPROVED_ANNOTATION] !== '')) return meta;
  return { ...meta, annotations: { ...annotations, [API_APPROVED_ANNOTATION]: 'unapproved, converted from apiextensions.k8s.io/v1beta1, which did not require an API review' } };
}

/** A v1 CRD's schemas, made structural where that loses nothing (a structural one is unchanged). */
function structuralV1(crd: JsonObject): JsonObject {
  if (crd.apiVersion !== 'apiextensions.k8s.io/v1' || !isRecord(crd.spec) || !Array.isArray(crd.spec.versions)) return crd;
  const problems: StructuralProblem[] = [];
  const versions = crd.spec.versions.map((v: unknown, i) => {
    if (!isRecord(v) || !isRecord(v.schema) || !isRecord(v.schema.openAPIV3Schema)) return v;
    const structural = toStructural(v.schema.openAPIV3Schema, { path: `spec.versions[${i}].schema.openAPIV3Schema`, preserveUnknownFields: false });
    problems.push(...structural.problems);
    return { ...v, schema: { ...v.schema, openAPIV3Schema: structural.schema } };
  });
  if (problems.length > 0) throw new CrdSchemaError(crdName(crd), problems);
  return { ...crd, spec: { ...crd.spec, versions } };
}

function crdName(crd: JsonObject): string {
  return isRecord(crd.metadata) && typeof crd.metadata.name === 'string' ? crd.metadata.name : '(unnamed)';
}

function printerColumnToV1(col: JsonObject): JsonObject {
  const { JSONPath, ...rest } = col;
  // A column already spelled `jsonPath` passes through unchanged.
  return JSONPath === undefined ? rest : { ...rest, jsonPath: JSONPath };
}

/** A copy without `metadata.namespace`: CRDs are cluster-scoped (validation reports the mistake). */
function withoutNamespace(crd: JsonObject): JsonObject {
  const copy = structuredClone(crd);
  if (isRecord(copy.metadata) && copy.metadata.namespace !== undefined) {
    const { namespace: _ns, ...meta } = copy.metadata;
    copy.metadata = meta;
  }
  return copy;
}
