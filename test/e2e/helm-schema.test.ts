/**
 * Values schemas against a real API server: for every top-level chart of the corpus, the CRD
 * built from its values schema is accepted and becomes Established, and a CR whose spec is the
 * chart's own default values is stored exactly as sent (created with strict field validation,
 * so an undeclared field is an error instead of being pruned silently). A second CR sets every
 * top-level key to null, as a user deleting chart defaults does, and keeps those nulls too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crdForChart, kindForChart, parseValuesYaml, valuesSchema } from '../../src/helm/schema/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/types.js';
import { loadCorpusCharts } from '../corpus/helm-charts.test-helper.js';
import { CRD_DELETION_TIMEOUT_MS, e2eClient, eventually, kubectl, uniqueName } from './env.js';

const GROUP = 'schema-e2e.binnacle.dev';
const VERSION = 'v1alpha1';
const API_VERSION = `${GROUP}/${VERSION}`;

const charts = (await loadCorpusCharts()).filter((c) => c.topLevel);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Creates an object with strict field validation: unknown or duplicate fields are errors, not warnings. */
async function createStrict(client: KubeClient, obj: KubeObject): Promise<KubeObject> {
  const path = await client.pathFor(obj.apiVersion, obj.kind, { namespace: obj.metadata.namespace });
  return (await client.requestJson('POST', path, { body: obj, query: { fieldValidation: 'Strict' }, what: `create ${obj.kind} ${obj.metadata.name ?? ''}` })) as KubeObject;
}

async function established(client: KubeClient, name: string): Promise<void> {
  await eventually(
    `CRD ${name} Established`,
    async () => {
      const crd = await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
      const status = crd.status;
      const conditions = isRecord(status) && Array.isArray(status.conditions) ? status.conditions : [];
      return conditions.some((c) => isRecord(c) && c.type === 'Established' && c.status === 'True') ? true : undefined;
    },
    60_000,
  );
}

async function removeCrd(client: KubeClient, name: string): Promise<void> {
  const ref = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name };
  await client.delete(ref);
  await eventually(`CRD ${name} gone`, async () => ((await client.find(ref)) === undefined ? true : undefined), CRD_DELETION_TIMEOUT_MS);
}

describe('helm values schema e2e', () => {
  let client: KubeClient;
  const ns = uniqueName('helm-schema');
  const kinds = new Set<string>();

  before(async () => {
    assert.ok(charts.length > 0, 'the corpus has charts');
    client = await e2eClient();
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });

  after(async () => {
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
    client.close();
  });

  for (const chart of charts) {
    it(`${chart.name}: CRD established, default values stored exactly`, async () => {
      let kind = kindForChart(chart.chartDir);
      for (let i = 2; kinds.has(kind); i++) kind = `${kindForChart(chart.chartDir)}${i}`;
      kinds.add(kind);
      const { schema } = valuesSchema({ valuesYaml: chart.valuesYaml, ...(chart.schemaJson === undefined ? {} : { schemaJson: chart.schemaJson }), chartName: chart.name });
      const crd = crdForChart({ group: GROUP, version: VERSION, kind, scope: 'Namespaced', spec: schema });
      const crdName = crd.metadata.name ?? '';
      if ((await client.find({ apiVersion: crd.apiVersion, kind: crd.kind, name: crdName })) !== undefined) await removeCrd(client, crdName);
      await createStrict(client, crd);
      try {
        await established(client, crdName);
        client.invalidateDiscovery(API_VERSION);

        // Through JSON, as the API server sees it: YAML-only forms (1.0) compare as they travel.
        const defaults = JSON.parse(JSON.stringify(parseValuesYaml(chart.valuesYaml, `${chart.name}/values.yaml`).values)) as Record<string, unknown>;
        await eventually(`${kind} served`, async () => (await client.resourceFor(API_VERSION, kind)).name, 30_000);
        await createStrict(client, { apiVersion: API_VERSION, kind, metadata: { name: 'defaults', namespace: ns }, spec: defaults });
        const got = await client.get({ apiVersion: API_VERSION, kind, name: 'defaults', namespace: ns });
        assert.deepEqual(got.spec, defaults, `${chart.name}: the API server changed the chart's default values`);

        const nulls = Object.fromEntries(Object.keys(defaults).map((k) => [k, null]));
        await createStrict(client, { apiVersion: API_VERSION, kind, metadata: { name: 'nulls', namespace: ns }, spec: nulls });
        const gotNulls = await client.get({ apiVersion: API_VERSION, kind, name: 'nulls', namespace: ns });
        assert.deepEqual(gotNulls.spec, nulls, `${chart.name}: nulls deleting chart defaults were dropped`);

        for (const name of ['defaults', 'nulls']) await client.delete({ apiVersion: API_VERSION, kind, name, namespace: ns });
      } finally {
        await removeCrd(client, crdName);
      }
    });
  }

  it('kubectl shows the Helm-operator columns and status is a subresource', async () => {
    const kind = 'SchemaColumns';
    const { schema } = valuesSchema({ valuesYaml: '# -- How many pods to run\nreplicas: 1\n', chartName: 'columns' });
    const crd = crdForChart({ group: GROUP, version: VERSION, kind, scope: 'Namespaced', spec: schema, shortNames: ['hscol'] });
    const crdName = crd.metadata.name ?? '';
    await createStrict(client, crd);
    try {
      await established(client, crdName);
      client.invalidateDiscovery(API_VERSION);
      await eventually(`${kind} served`, async () => (await client.resourceFor(API_VERSION, kind)).name, 30_000);
      const cr = await createStrict(client, { apiVersion: API_VERSION, kind, metadata: { name: 'one', namespace: ns }, spec: { replicas: 2 }, status: { ignored: true } });
      assert.equal(cr.status, undefined, 'status is not written through the main resource');
      await client.update(
        { ...cr, apiVersion: API_VERSION, kind, status: { deployedRelease: { name: 'one' }, conditions: [{ type: 'Deployed', status: 'True', reason: 'InstallSuccessful' }] } },
        'status',
      );
      const out = await kubectl('get', 'hscol', '-n', ns, '-o', 'wide');
      const [header, row] = out.trim().split('\n');
      assert.match(header ?? '', /^NAME\s+RELEASE\s+DEPLOYED\s+REASON\s+AGE$/);
      assert.match(row ?? '', /^one\s+one\s+True\s+InstallSuccessful\s+\S+$/);
      const explain = await kubectl('explain', 'schemacolumns.spec.replicas', '--api-version', API_VERSION);
      assert.match(explain, /How many pods to run/);
    } finally {
      await removeCrd(client, crdName);
    }
  });
});
