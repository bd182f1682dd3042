import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aliasLines, BILLION_LAUGHS, BOMB_REASON } from '../util/yaml.test-helper.js';
import { crdFromOpenApi, DERIVED_APIS, openShiftCrds, structuralFromOpenApi } from './openshift.js';

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
  const crd = crdFromOpenApi(api, defs, 'v0.0.0-test');
  assert.equal(crd.metadata.name, 'imagestreams.image.openshift.io');
  assert.match(crd.metadata.annotations?.['binnacle.dev/derived-from'] ?? '', /github\.com\/openshift\/api@v0\.0\.0-test openapi\/openapi\.json#\/definitions\/x\.Thing/);
  const spec = crd.spec as { versions: { schema: { openAPIV3Schema: { required?: string[] } }; subresources: unknown }[] };
  assert.deepEqual(spec.versions[0]?.schema.openAPIV3Schema.required, ['spec']);
  assert.deepEqual(spec.versions[0]?.subresources, { status: {} });
});

test('openShiftCrds reads CRD files with more than 100 YAML aliases; an alias bomb is refused naming the file and document', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'openshift-api-'));
  try {
    await mkdir(join(dir, 'crds'));
    await writeFile(join(dir, 'version'), 'v0.0.0-test\n');
    await writeFile(join(dir, 'openapi.json'), JSON.stringify({ definitions: Object.fromEntries(DERIVED_APIS.map((a) => [a.definition, { type: 'object', properties: { spec: { type: 'object' } } }])) }));
    const crd = 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.x.io}\n';
    await writeFile(join(dir, 'crds', 'a.crd.yaml'), `${crd}${aliasLines(500)}`);
    const crds = openShiftCrds(dir);
    assert.equal((crds.find((c) => c.metadata.name === 'things.x.io') as { aliases?: unknown[] } | undefined)?.aliases?.length, 500);
    await writeFile(join(dir, 'crds', 'b.crd.yaml'), `${crd}---\n${BILLION_LAUGHS}`);
    assert.throws(() => openShiftCrds(dir), { code: 'YAML_ALIASES', message: `${join(dir, 'crds', 'b.crd.yaml')}: document 2: ${BOMB_REASON}` });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
