import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crdForChart, kindForChart, pluralForKind } from './crd.js';
import { checkStructural } from './structural.js';
import { InputError, ValidationError } from '../../util/errors.js';
import type { StructuralSchema } from './types.js';

const spec: StructuralSchema = { type: 'object', properties: { replicas: { type: 'integer', nullable: true } }, 'x-kubernetes-preserve-unknown-fields': true };

interface Version {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: { properties: Record<string, unknown> } };
  subresources: unknown;
  additionalPrinterColumns: { name: string; jsonPath: string; type: string }[];
}

function version(crd: Record<string, unknown>): Version {
  const s = crd.spec as { versions: Version[] };
  const [v] = s.versions;
  assert.ok(v !== undefined);
  return v;
}

describe('crdForChart', () => {
  it('builds a v1 CRD with the values schema as spec, free-form status, status subresource and printer columns', () => {
    const crd = crdForChart({ group: 'charts.example.com', version: 'v1alpha1', kind: 'Nginx', scope: 'Namespaced', spec, shortNames: ['NGX'] });
    assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(crd.kind, 'CustomResourceDefinition');
    assert.equal(crd.metadata.name, 'nginxes.charts.example.com');
    assert.deepEqual((crd.spec as Record<string, unknown>).names, { kind: 'Nginx', listKind: 'NginxList', plural: 'nginxes', singular: 'nginx', shortNames: ['ngx'] });
    assert.equal((crd.spec as Record<string, unknown>).scope, 'Namespaced');
    const v = version(crd);
    assert.equal(v.name, 'v1alpha1');
    assert.ok(v.served && v.storage);
    assert.deepEqual(v.subresources, { status: {} });
    const props = v.schema.openAPIV3Schema.properties;
    assert.deepEqual(props.spec, spec);
    assert.deepEqual(props.status, { type: 'object', description: 'Observed state of the Helm release: conditions and the deployed release.', 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(
      v.additionalPrinterColumns.map((c) => `${c.name} ${c.jsonPath}`),
      ['Release .status.deployedRelease.name', 'Deployed .status.conditions[?(@.type=="Deployed")].status', 'Reason .status.conditions[?(@.type=="Deployed")].reason', 'Age .metadata.creationTimestamp'],
    );
    assert.deepEqual(checkStructural(v.schema.openAPIV3Schema), []);
  });

  it('lower-cases given plural and singular, and is cluster-scoped on request', () => {
    const crd = crdForChart({ group: 'charts.example.com', version: 'v1', kind: 'KubePrometheusStack', plural: 'KubePrometheusStacks', singular: 'KubePrometheusStack', scope: 'Cluster', spec });
    assert.equal(crd.metadata.name, 'kubeprometheusstacks.charts.example.com');
    assert.equal((crd.spec as Record<string, unknown>).scope, 'Cluster');
  });

  it('refuses bad names with an InputError naming the field', () => {
    assert.throws(() => crdForChart({ group: 'nodots', version: 'v1', kind: 'A', scope: 'Cluster', spec }), (e: unknown) => e instanceof InputError && e.field === 'group');
    assert.throws(() => crdForChart({ group: 'a.b', version: 'V1', kind: 'A', scope: 'Cluster', spec }), (e: unknown) => e instanceof InputError && e.field === 'version');
    assert.throws(() => crdForChart({ group: 'a.b', version: 'v1', kind: 'my-kind', scope: 'Cluster', spec }), (e: unknown) => e instanceof InputError && e.field === 'kind');
    assert.throws(() => crdForChart({ group: 'a.b', version: 'v1', kind: 'A', plural: 'a_s', scope: 'Cluster', spec }), (e: unknown) => e instanceof InputError && e.field === 'plural');
  });

  it('refuses a spec schema that is not structural, listing every problem', () => {
    const bad: StructuralSchema = { type: 'object', properties: { a: {}, b: { type: 'array' } } };
    assert.throws(
      () => crdForChart({ group: 'a.b', version: 'v1', kind: 'A', scope: 'Cluster', spec: bad }),
      (e: unknown) => e instanceof ValidationError && e.result.errors().length === 2 && e.message.includes('properties[spec].properties[a].type'),
    );
  });
});

describe('names', () => {
  it('derives a kind from a chart name', () => {
    assert.equal(kindForChart('kube-prometheus-stack'), 'KubePrometheusStack');
    assert.equal(kindForChart('pelorus/charts/exporters'), 'Exporters');
    assert.equal(kindForChart('prometheus-node_exporter'), 'PrometheusNodeExporter');
    assert.equal(kindForChart('3scale'), 'Chart3scale');
    assert.throws(() => kindForChart('--'), InputError);
  });

  it('pluralizes kinds in simple English', () => {
    assert.equal(pluralForKind('Redis'), 'redises');
    assert.equal(pluralForKind('Policy'), 'policies');
    assert.equal(pluralForKind('Gateway'), 'gateways');
    assert.equal(pluralForKind('Box'), 'boxes');
    assert.equal(pluralForKind('Grafana'), 'grafanas');
  });
});
