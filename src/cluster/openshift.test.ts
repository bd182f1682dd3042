import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crdFromOpenApi, DERIVED_APIS, structuralFromOpenApi } from './openshift.js';

const defs: Record<string, unknown> = {
  'x.Thing': {
    type: 'object',
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', default: {} },
      spec: { allOf: [{ $ref: '#/definitions/x.Spec' }], default: {}, description: 'the spec' },
      status: { $ref: '#/definitions/x.Status' },
    },
  },
  'x.Spec': {
    type: 'object',
    properties: {
      when: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time' },
      cpu: { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' },
      port: { type: 'string', format: 'int-or-string' },
      raw: { $ref: '#/definitions/io.k8s.apimachinery.pkg.runtime.RawExtension' },
      labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
      tags: { type: 'array', items: { $ref: '#/definitions/x.Spec' }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
    },
  },
  'x.Status': { type: 'object', properties: { phase: { type: 'string', enum: ['A', 'B'] } } },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { type: 'string', format: 'date-time' },
};

test('OpenAPI definitions become a structural CRD schema: references inlined, special types mapped, recursion cut', () => {
  const s = structuralFromOpenApi({ $ref: '#/definitions/x.Thing' }, defs) as { properties: Record<string, Record<string, unknown>> };
  const spec = s.properties.spec as { description: string; properties: Record<string, Record<string, unknown>> };
  assert.equal(spec.description, 'the spec');
  assert.deepEqual(spec.properties.when, { type: 'string', format: 'date-time' });
  assert.deepEqual(spec.properties.cpu, { 'x-kubernetes-int-or-string': true });
  assert.deepEqual(spec.properties.port, { 'x-kubernetes-int-or-string': true });
  assert.deepEqual(spec.properties.raw, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(spec.properties.labels, { type: 'object', additionalProperties: { type: 'string' } });
  // A Spec inside a Spec keeps any object; list-map hints (which need required keys in a CRD) are left out.
  assert.deepEqual(spec.properties.tags, { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
  assert.deepEqual(s.properties.metadata, { type: 'object' });
  assert.throws(() => structuralFromOpenApi({ $ref: '#/definitions/x.Missing' }, defs), /x\.Missing is referenced but not defined/);
});

test('a derived CRD: names from the API, status optional, status subresource', () => {
  const api = { ...DERIVED_APIS[0]!, definition: 'x.Thing' };
  const crd = crdFromOpenApi(api, defs, 'v0.0.0-test') as unknown as { metadata: { name: string; annotations: Record<string, string> }; spec: { versions: { schema: { openAPIV3Schema: { required?: string[] } }; subresources: unknown }[] } };
  assert.equal(crd.metadata.name, 'imagestreams.image.openshift.io');
  assert.match(crd.metadata.annotations['binnacle.dev/derived-from'] ?? '', /github\.com\/openshift\/api@v0\.0\.0-test openapi\/openapi\.json#\/definitions\/x\.Thing/);
  assert.deepEqual(crd.spec.versions[0]?.schema.openAPIV3Schema.required, ['spec']);
  assert.deepEqual(crd.spec.versions[0]?.subresources, { status: {} });
});
