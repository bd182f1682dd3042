import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { API_VERSION, type ClusterExtension } from '../api/types.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { ReleaseStore } from '../apply/release-store.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import { bombObject, BOMB_REASON_IN_OBJECT, manyAliasesObject } from '../util/yaml.test-helper.js';
import { rollbackExtension, rollbackPreview } from './release-history.js';

const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } };

function crd(versions: string[], stored?: string[]): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { kind: 'Thing', plural: 'things' }, versions: versions.map((v, i) => ({ name: v, served: true, storage: i === versions.length - 1, schema })) },
    ...(stored === undefined ? {} : { status: { storedVersions: stored } }),
  };
}

/** An extension at 2.0.0 whose release has revision 1 (1.0.0, CRD v1) and revision 2 (2.0.0, CRD v1+v2). */
async function cluster(stored: string[], extraInRevision1 = ''): Promise<{ client: KubeClient; patches: unknown[] }> {
  const fake = new FakeCluster();
  const ce: ClusterExtension = {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: 'ext' },
    spec: { namespace: 'ns', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'p' } } },
    status: { install: { bundle: { name: 'p.v2.0.0', version: '2.0.0', package: 'p', image: 'img', catalog: 'c' }, bundleDeployment: 'ext-p', namespace: 'ns' } },
  };
  fake.put(ce);
  fake.put(crd(['v1', 'v2'], stored));
  const patches: unknown[] = [];
  const client = {
    ...fake.client(),
    get: (ref: ObjectRef) => {
      const o = fake.get(ref);
      return o === undefined ? Promise.reject(new Error(`no ${ref.kind} ${ref.name}`)) : Promise.resolve(o);
    },
    find: (ref: ObjectRef) => Promise.resolve(fake.get(ref)),
    patch: (ref: ObjectRef, patch: unknown) => {
      patches.push({ ref: ref.name, patch });
      return Promise.resolve(fake.get(ref));
    },
  } as unknown as KubeClient;
  const store = new ReleaseStore(client);
  const at = '2026-01-01T00:00:00Z';
  for (const [version, status, crdVersions] of [[1, 'superseded', ['v1']], [2, 'deployed', ['v1', 'v2']]] as const) {
    const chartVersion = `${version}.0.0`;
    await store.create({ name: 'ext-p', namespace: 'ns', version, status, description: `install ${chartVersion}`, firstDeployed: at, lastDeployed: at, chart: { name: 'p', version: chartVersion }, config: {}, manifest: stringify(crd([...crdVersions])) + (version === 1 ? extraInRevision1 : '') }, { kind: 'BundleDeployment', name: 'ext-p' });
  }
  return { client, patches };
}

describe('rollback', () => {
  it('warns when an older revision would leave a stored version of a CRD behind', async () => {
    const { client } = await cluster(['v1', 'v2']);
    const p = await rollbackPreview(client, 'ext');
    assert.deepEqual({ from: p.from, to: p.to, revision: p.revision }, { from: '2.0.0', to: '1.0.0', revision: 1 });
    assert.equal(p.dataAtRisk, true);
    assert.deepEqual(p.crdProblems.map((x) => [x.crd, x.rule]), [['things.example.com', 'crd.stored-version-removed']]);
    assert.match(p.crdProblems[0]?.message ?? '', /v2 is in status\.storedVersions/);
  });

  it('no data at risk when no stored version is left behind; the other CRD changes are still said', async () => {
    const { client } = await cluster(['v1']);
    const p = await rollbackPreview(client, 'ext');
    assert.equal(p.dataAtRisk, false);
    assert.deepEqual(p.crdProblems.map((x) => x.rule), ['crd.served-version-removed']);
  });

  it('a version not in the history is refused by the preview', async () => {
    const { client } = await cluster(['v1']);
    await assert.rejects(rollbackPreview(client, 'ext', '0.5.0'), /no revision at version 0\.5\.0/);
  });

  it('pins the earlier version under SelfCertified', async () => {
    const { client, patches } = await cluster(['v1']);
    assert.deepEqual(await rollbackExtension(client, 'ext'), { from: '2.0.0', to: '1.0.0' });
    assert.deepEqual(patches, [{ ref: 'ext', patch: { spec: { source: { catalog: { version: '1.0.0', upgradeConstraintPolicy: 'SelfCertified' } } } } }]);
  });
});

describe('rollback preview of a revision with YAML aliases', () => {
  it('reads a revision whose manifest has more than 100 aliases', async () => {
    const { client } = await cluster(['v1', 'v2'], `---\n${manyAliasesObject()}`);
    const p = await rollbackPreview(client, 'ext');
    assert.deepEqual(p.crdProblems.map((x) => x.rule), ['crd.stored-version-removed']);
  });

  it('an alias bomb in the revision is RELEASE_MANIFEST naming the release, revision and document', async () => {
    const { client } = await cluster(['v1', 'v2'], `---\n${bombObject()}`);
    await assert.rejects(rollbackPreview(client, 'ext'), { code: 'RELEASE_MANIFEST', message: `release ns/ext-p revision 1: manifest document 2: ${BOMB_REASON_IN_OBJECT}` });
  });
});
