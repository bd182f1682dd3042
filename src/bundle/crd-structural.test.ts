/**
 * Structural conversion of CRD schemas. The shapes come from v1beta1 CRDs of real 2021 bundles
 * (argocd, prometheus, strimzi, enmasse, mongodb, appsody, metering, …); every conversion of
 * that corpus was checked against a v1.36 API server with a server-side dry run.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { crdToV1 } from './crd-v1.js';
import { CrdSchemaError, toStructural } from './crd-structural.js';
import type { JsonObject } from './decode.js';

const strict = (schema: JsonObject) => toStructural(schema, { path: 's', preserveUnknownFields: false });
const lenient = (schema: JsonObject) => toStructural(schema, { path: 's', preserveUnknownFields: true });

function v1beta1(schema: JsonObject, extra: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: { group: 'example.com', version: 'v1', names: { kind: 'Widget', plural: 'widgets' }, validation: { openAPIV3Schema: schema }, ...extra },
  };
}

describe('toStructural', () => {
  it('infers missing types from keywords; a node with none accepts any value', () => {
    const { schema, problems } = strict({
      type: 'object',
      properties: {
        status: { properties: { phase: { enum: ['Ready', 'Failed'] } } },
        list: { items: { type: 'string' } },
        anything: { description: 'free form' },
        nothing: null,
        limit: { maximum: 10 },
        tags: { type: 'array' },
      },
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(schema.properties, {
      status: { type: 'object', properties: { phase: { type: 'string', enum: ['Ready', 'Failed'] } } },
      list: { type: 'array', items: { type: 'string' } },
      anything: { description: 'free form', 'x-kubernetes-preserve-unknown-fields': true },
      nothing: { 'x-kubernetes-preserve-unknown-fields': true },
      // Without a type the maximum applies to numbers only; so it stays.
      limit: { maximum: 10, 'x-kubernetes-preserve-unknown-fields': true },
      tags: { type: 'array', items: { 'x-kubernetes-preserve-unknown-fields': true } },
    });
  });

  it('anyOf/oneOf of integer and string becomes int-or-string, branch checks moving to the node', () => {
    const { schema, problems } = strict({
      type: 'object',
      properties: {
        port: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        divisor: { anyOf: [{ type: 'integer' }, { type: 'string' }], pattern: '^[0-9]+$' },
        heap: { anyOf: [{ minimum: 0, type: 'integer', format: 'int64' }, { minLength: 3, type: 'string' }] },
        surge: { oneOf: [{ type: 'integer' }, { type: 'string' }] },
        canonical: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      },
    });
    assert.deepEqual(problems, []);
    const ios = { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true };
    assert.deepEqual(schema.properties, {
      port: ios,
      divisor: { ...ios, pattern: '^[0-9]+$' },
      heap: { ...ios, minimum: 0, minLength: 3 },
      surge: ios,
      canonical: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
    });
  });

  it('an int-or-string whose branch check would apply to both types is refused', () => {
    const { problems } = strict({ type: 'object', properties: { p: { anyOf: [{ type: 'integer' }, { type: 'string', enum: ['a'] }] } } });
    assert.deepEqual(problems.map((p) => p.field), ['s.properties.p.anyOf']);
  });

  it('structure inside junctors moves out when the branches agree; checks stay', () => {
    const { schema, problems } = strict({
      type: 'object',
      properties: {
        username: {
          anyOf: [
            { type: 'object', description: 'inline', properties: { value: { type: 'string', description: 'Value' } } },
            { type: 'object', properties: { valueFromSecret: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
          ],
        },
      },
    });
    assert.deepEqual(problems, []);
    assert.deepEqual((schema.properties as JsonObject).username, {
      type: 'object',
      properties: { value: { type: 'string', description: 'Value' }, valueFromSecret: { type: 'object', properties: { name: { type: 'string' } } } },
      anyOf: [{ properties: { value: {} } }, { properties: { valueFromSecret: { required: ['name'], properties: { name: {} } } } }],
    });
  });

  it('branches of different types, tuples and pattern properties are reported with their paths', () => {
    const { problems } = strict({
      type: 'object',
      properties: {
        listeners: { oneOf: [{ type: 'array', items: { type: 'object' } }, { type: 'object', properties: { plain: { type: 'object' } } }] },
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
        labels: { type: 'object', patternProperties: { '^x-': { type: 'string' } } },
        odd: { type: 'int32' },
      },
    });
    assert.deepEqual(
      problems.map((p) => p.field),
      ['s.properties.listeners.oneOf[0].type', 's.properties.listeners.oneOf[1].type', 's.properties.pair.items', 's.properties.labels.patternProperties', 's.properties.odd.type'],
    );
    assert.match(problems[0]?.reason ?? '', /branches differ in type/);
    assert.match(problems[4]?.reason ?? '', /"int32" is not a type/);
  });

  it('root metadata keeps name/generateName constraints and drops what restates ObjectMeta', () => {
    const { schema, problems } = strict({
      type: 'object',
      properties: {
        metadata: {
          description: 'Standard object metadata',
          type: 'object',
          properties: {
            name: { type: 'string', maxLength: 63 },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
            creationTimestamp: { type: 'string', format: 'date-time' },
            ownerReferences: { type: 'array', items: { type: 'object', required: ['uid'], properties: { uid: { type: 'string' } } } },
          },
        },
      },
    });
    assert.deepEqual(problems, []);
    assert.deepEqual((schema.properties as JsonObject).metadata, { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } });
    const lossy = strict({ type: 'object', properties: { metadata: { type: 'object', properties: { namespace: { type: 'string', pattern: '^prod-' } } } } });
    assert.deepEqual(lossy.problems.map((p) => p.field), ['s.properties.metadata.properties.namespace']);
  });

  it('a CRD that kept unknown fields keeps them at every level (not in metadata, not in maps)', () => {
    const { schema } = lenient({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        metadata: { type: 'object' },
        spec: { type: 'object', properties: { labels: { type: 'object', additionalProperties: { type: 'string' } }, nested: { properties: {} } } },
        status: { type: 'object' },
      },
    });
    assert.deepEqual(schema.properties, {
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: { labels: { type: 'object', additionalProperties: { type: 'string' } }, nested: { type: 'object', properties: {}, 'x-kubernetes-preserve-unknown-fields': true } },
        'x-kubernetes-preserve-unknown-fields': true,
      },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    });
  });

  it('id, additionalItems next to one items schema and uniqueItems of scalars are rewritten', () => {
    const { schema, problems } = strict({ type: 'object', id: 'widget', properties: { tags: { type: 'array', items: { type: 'string' }, additionalItems: false, uniqueItems: true } } });
    assert.deepEqual(problems, []);
    assert.deepEqual(schema, { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } } });
  });

  it('leaves a structural schema as it is', async () => {
    const crd = parse(await readFile(join(import.meta.dirname, 'testdata', 'conversion-operator', '1.0.0', 'things.crd.yaml'), 'utf8')) as JsonObject;
    assert.deepEqual(crdToV1(crd), crd);
    const embedded = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, properties: { metadata: { type: 'object', description: 'kept' } } },
            choice: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, oneOf: [{ required: ['a'], properties: { a: {} } }, { required: ['b'] }] },
            port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          },
        },
      },
    };
    assert.deepEqual(strict(embedded), { schema: embedded, problems: [] });
  });
});

describe('crdToV1', () => {
  it('converts a non-structural v1beta1 CRD into one v1 accepts', () => {
    const out = crdToV1(v1beta1({ properties: { spec: { properties: { port: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, config: {} } } } }));
    const schema = ((out.spec as JsonObject).versions as JsonObject[])[0]?.schema as JsonObject;
    assert.deepEqual(schema.openAPIV3Schema, {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        spec: {
          type: 'object',
          properties: { port: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true }, config: { 'x-kubernetes-preserve-unknown-fields': true } },
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    });
  });

  it('a CRD that cannot be converted without loss is an error naming the CRD, the field path and the reason', () => {
    assert.throws(
      () => crdToV1(v1beta1({ type: 'object', properties: { spec: { properties: { tls: { anyOf: [{ type: 'string' }, { type: 'object', properties: { secret: { type: 'string' } } }] } } } } })),
      (err: unknown) => {
        assert.ok(err instanceof CrdSchemaError);
        assert.equal(err.code, 'CRD_NOT_STRUCTURAL');
        assert.equal(err.crd, 'widgets.example.com');
        assert.deepEqual(err.problems.map((p) => p.field), ['spec.validation.openAPIV3Schema.properties.spec.properties.tls.anyOf[0].type', 'spec.validation.openAPIV3Schema.properties.spec.properties.tls.anyOf[1].type']);
        assert.match(err.message, /CustomResourceDefinition widgets\.example\.com: its schema is not structural.*\n {2}spec\.validation\.openAPIV3Schema\.properties\.spec\.properties\.tls\.anyOf\[0\]\.type: a branch of type string under a node whose branches differ in type/);
        return true;
      },
    );
  });

  it('per-version schemas are converted and reported at their own paths', () => {
    const crd = v1beta1({}, { validation: undefined, version: undefined, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { properties: { spec: { patternProperties: {} } } } } }] });
    assert.throws(() => crdToV1(crd), (err: unknown) => err instanceof CrdSchemaError && err.problems[0]?.field === 'spec.versions[0].schema.openAPIV3Schema.properties.spec.patternProperties');
  });

  it('a v1beta1 CRD in a protected group gets the "unapproved" annotation v1 asks for', () => {
    const crd = v1beta1({ type: 'object' });
    (crd.spec as JsonObject).group = 'sparkoperator.k8s.io';
    const out = crdToV1(crd);
    assert.match(String((out.metadata as JsonObject & { annotations: JsonObject }).annotations['api-approved.kubernetes.io']), /^unapproved, converted from apiextensions\.k8s\.io\/v1beta1/);
    const other = crdToV1(v1beta1({ type: 'object' }));
    assert.equal((other.metadata as JsonObject).annotations, undefined);
  });
});
