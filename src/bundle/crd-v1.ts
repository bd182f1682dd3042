/**
 * apiextensions.k8s.io/v1beta1 CRDs are no longer served (Kubernetes 1.22+), yet old bundles
 * ship them; OLM upgrades them to v1 before creating them, and so does Binnacle. The mapping is
 * the API server's own: per-version schema/subresources/printer columns, `JSONPath` →
 * `jsonPath`, `webhookClientConfig` → `webhook.clientConfig`. A v1beta1 CRD that preserved
 * unknown fields (the v1beta1 default) keeps doing so via `x-kubernetes-preserve-unknown-fields`.
 */
import { isRecord, type JsonObject } from './decode.js';

export function crdToV1(input: JsonObject): JsonObject {
  const crd = withoutNamespace(input);
  if (crd.apiVersion !== 'apiextensions.k8s.io/v1beta1') return crd;
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
  spec.versions = listed.map((v) => {
    const out: JsonObject = { name: v.name, served: v.served ?? true, storage: v.storage ?? false };
    for (const k of ['deprecated', 'deprecationWarning'] as const) if (v[k] !== undefined) out[k] = v[k];
    const schema = isRecord(v.schema) ? v.schema : isRecord(validation) ? validation : undefined;
    let open = isRecord(schema) && isRecord(schema.openAPIV3Schema) ? schema.openAPIV3Schema : { type: 'object' };
    // v1 requires an object at the root; v1beta1 schemas often leave the root type out.
    if (open.type === undefined) open = { type: 'object', ...open };
    if (preserve) open = { ...open, 'x-kubernetes-preserve-unknown-fields': true };
    out.schema = { openAPIV3Schema: open };
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
  return { ...crd, apiVersion: 'apiextensions.k8s.io/v1', spec };
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
