/**
 * Pruning against real schemas: `testdata/openapi-v3-fragments.json` holds the Deployment, Role
 * and CustomResourceDefinition schemas (with every schema they refer to) from the
 * `/openapi/v3/<group-version>` documents of Kubernetes v1.36.3 (api/openapi-spec/v3 in
 * k8s.io/kubernetes), descriptions removed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenApiDocument, StaticSchemas, type KindSchema } from '../kube/openapi.js';
import type { KubeObject } from '../kube/types.js';
import { crdOf, WIDGET } from './crd.test-helper.js';
import { pruneUnknownFields } from './prune-unknown-fields.js';

const raw = JSON.parse(readFileSync(join(import.meta.dirname, 'testdata', 'openapi-v3-fragments.json'), 'utf8')) as Record<string, unknown>;
const docs = Object.entries(raw).map(([path, doc]) => OpenApiDocument.parse(path, doc));
const schemas = new StaticSchemas(docs);

async function schemaOf(group: string, version: string, kind: string): Promise<KindSchema> {
  const s = await (await schemas.snapshot()).kind({ group, version, kind });
  assert.ok(s !== undefined, `${group}/${version} ${kind} is in the test data`);
  return s;
}

async function objectMeta(): Promise<KindSchema> {
  const s = await (await schemas.snapshot()).objectMeta();
  assert.ok(s !== undefined);
  return s;
}

const deployment = (): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'op', namespace: 'ops', labels: { app: 'op' }, annotations: { 'example.com/x': 'y' } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'op' } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    template: {
      metadata: { labels: { app: 'op' } },
      spec: {
        serviceAccountName: 'op',
        containers: [
          {
            name: 'manager',
            image: 'op:1',
            args: ['--leader-elect'],
            env: [
              { name: 'A', value: '1', resources: { limits: { cpu: '1' } } },
              { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
            ],
            ports: [{ containerPort: 8080, name: 'metrics', protocol: 'TCP', failureThreshold: 3 }],
            resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: 0.1 } },
            livenessProbe: { httpGet: { path: '/healthz', port: 8081 }, failureThreshold: 3 },
          },
        ],
      },
    },
  },
});

test('drops undeclared fields of a Deployment and keeps everything declared', async () => {
  const input = deployment();
  const before = structuredClone(input);
  const res = pruneUnknownFields(input, await schemaOf('apps', 'v1', 'Deployment'));
  assert.deepEqual(res.dropped, [
    'spec.template.spec.containers[name="manager"].env[name="A"].resources',
    'spec.template.spec.containers[name="manager"].ports[containerPort=8080,protocol="TCP"].failureThreshold',
  ]);
  const expected = deployment();
  const container = (((expected.spec as Record<string, Record<string, Record<string, unknown>>>).template?.spec as { containers: Record<string, unknown[]>[] }).containers)[0];
  assert.ok(container !== undefined);
  delete (container.env?.[0] as Record<string, unknown>).resources;
  delete (container.ports?.[0] as Record<string, unknown>).failureThreshold;
  assert.deepEqual(res.object, expected);
  assert.deepEqual(input, before, 'the input is not changed');
});

test('a declared object keeps its map values, int-or-string and quantities as they are', async () => {
  const res = pruneUnknownFields(deployment(), await schemaOf('apps', 'v1', 'Deployment'));
  const spec = res.object.spec as { strategy: unknown; template: { metadata: unknown; spec: { containers: { resources: unknown }[] } } };
  assert.deepEqual(spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } });
  assert.deepEqual(spec.template.metadata, { labels: { app: 'op' } });
  assert.deepEqual(spec.template.spec.containers[0]?.resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: 0.1 } });
  assert.deepEqual(res.object.metadata, { name: 'op', namespace: 'ops', labels: { app: 'op' }, annotations: { 'example.com/x': 'y' } });
});

test('metadata is pruned as ObjectMeta; status and unknown top-level fields too', async () => {
  const obj: KubeObject = { ...deployment(), metadata: { name: 'op', ...({ labelz: { a: 'b' } } as object) }, extra: true };
  const res = pruneUnknownFields(obj, await schemaOf('apps', 'v1', 'Deployment'));
  assert.deepEqual(res.dropped.filter((p) => !p.startsWith('spec.')), ['metadata.labelz', 'extra']);
});

test('a Role rule with `apigroups` gets it as apiGroups, as Go decodes it; beside apiGroups it is dropped', async () => {
  const role: KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'op' },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apigroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
      { apiGroups: ['batch'], apigroups: ['apps'], resources: ['jobs'], verbs: ['get'] },
    ],
  };
  const res = pruneUnknownFields(role, await schemaOf('rbac.authorization.k8s.io', 'v1', 'Role'));
  assert.deepEqual(res.renamed, [{ path: 'rules[1].apigroups', to: 'apiGroups' }]);
  assert.deepEqual(res.dropped, ['rules[2].apigroups']);
  assert.deepEqual(res.object.rules, [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
    { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get'] },
  ]);
});

test('stray keys in a CRD schema are dropped; open parts of JSONSchemaProps are kept', async () => {
  const crd = crdOf(WIDGET, {
    spec: {
      type: 'object',
      'x-descriptors': ['urn:alm:descriptor:com.tectonic.ui:text'],
      properties: { size: { type: 'integer', default: 3, example: 'anything' }, tags: { type: 'array', items: { type: 'string', strayInItems: 1 } } },
    },
  });
  const res = pruneUnknownFields(crd, await schemaOf('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition'));
  // `items` is JSONSchemaPropsOrArray, which the schema leaves open: kept as the server keeps it.
  assert.deepEqual(res.dropped, ['spec.versions[0].schema.openAPIV3Schema.properties.spec.x-descriptors']);
});

/** A CRD's published schema: what the API server serves for custom resources. */
function widgetSchema(meta: KindSchema): KindSchema {
  const root = {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: {
          size: { type: 'integer' },
          port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          selector: { type: 'object', additionalProperties: { type: 'object', properties: { key: { type: 'string' } } } },
          config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { level: { type: 'object', properties: { n: { type: 'integer' } } } } },
          raw: { type: 'object' },
          template: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } },
          },
          items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
          closed: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } },
        },
      },
    },
  };
  return { gvk: { group: 'example.com', version: 'v1', kind: 'Widget' }, root, resolve: meta.resolve, origin: 'test' };
}

test('custom resources: preserve-unknown-fields, additionalProperties, open objects, embedded resources, lists', async () => {
  const meta = await objectMeta();
  const widget: KubeObject = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', ...({ bogus: 1 } as object) },
    spec: {
      size: 3,
      sise: 4,
      port: 'http',
      labels: { a: 'b' },
      selector: { one: { key: 'k', junk: true } },
      config: { anything: { goes: 1 }, level: { n: 1, m: 2 } },
      raw: { free: { form: true } },
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', nonsense: 1 }, spec: { replicas: 1, replica: 2 }, other: 1 },
      items: [{ name: 'a', extra: 1 }, 'not-an-object'],
      closed: { a: 'x', b: 'y' },
    },
  };
  const res = pruneUnknownFields(widget, widgetSchema(meta), { objectMeta: meta });
  assert.deepEqual(res.dropped.sort(), [
    'metadata.bogus',
    'spec.closed.b',
    'spec.config.level.m',
    'spec.items[0].extra',
    'spec.selector.one.junk',
    'spec.sise',
    'spec.template.metadata.nonsense',
    'spec.template.other',
    'spec.template.spec.replica',
  ]);
  const spec = res.object.spec as Record<string, unknown>;
  assert.deepEqual(spec.config, { anything: { goes: 1 }, level: { n: 1 } }, 'preserve-unknown-fields keeps unknown keys, prunes declared children');
  assert.deepEqual(spec.raw, { free: { form: true } }, 'an object with no declared properties is left open');
  assert.equal(spec.port, 'http');
  assert.deepEqual(spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { replicas: 1 } });
  assert.deepEqual(spec.items, [{ name: 'a' }, 'not-an-object'], 'a value of the wrong type is left for the server to reject');
});

test('a null in a field that is not nullable is left out, silently, as the API server does on create; nullable and free-form nulls stay', async () => {
  const meta = await objectMeta();
  const base = widgetSchema(meta);
  const root = structuredClone(base.root) as { properties: { spec: { properties: Record<string, unknown> } } };
  root.properties.spec.properties.maybe = { type: 'string', nullable: true };
  const schema: KindSchema = { ...base, root };
  const widget: KubeObject = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', ...({ creationTimestamp: null } as object) },
    spec: { size: null, port: null, maybe: null, labels: { a: null, b: 'x' }, config: { anything: null }, raw: { free: null }, items: [{ name: null }] },
  };
  const res = pruneUnknownFields(widget, schema, { objectMeta: meta });
  assert.deepEqual(res.dropped, []);
  assert.deepEqual(res.object.metadata, { name: 'w' });
  assert.deepEqual(res.object.spec, { maybe: null, labels: { b: 'x' }, config: { anything: null }, raw: { free: null }, items: [{}] });
});

test('without an ObjectMeta schema, an open metadata is kept; nothing to drop answers the same object', async () => {
  const meta = await objectMeta();
  const obj: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', ...({ bogus: 1 } as object) }, spec: { size: 1 } };
  assert.deepEqual(pruneUnknownFields(obj, widgetSchema(meta)).dropped, []);
  const clean = pruneUnknownFields(deployment(), await schemaOf('apps', 'v1', 'Deployment'));
  assert.deepEqual(pruneUnknownFields(clean.object, await schemaOf('apps', 'v1', 'Deployment')).dropped, []);
});

test('cyclic references end', () => {
  const loop = { $ref: '#/components/schemas/Loop' };
  const schema: KindSchema = {
    gvk: { group: 'x', version: 'v1', kind: 'Loop' },
    root: { allOf: [loop], properties: { a: { type: 'string' } } },
    resolve: () => ({ allOf: [loop] }),
    origin: 'test',
  };
  const res = pruneUnknownFields({ apiVersion: 'x/v1', kind: 'Loop', metadata: { name: 'l' }, a: 'x', b: 'y' }, schema);
  assert.deepEqual(res.dropped, ['b']);
});
