import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { ANNOTATION_BUNDLE_VERSION, API_VERSION, LABEL_NEEDED_BY_PREFIX, LABEL_PACKAGE, type ClusterExtension } from '../api/types.js';
import { BUNDLE_DEPLOYMENT_CRD, CLUSTER_EXTENSION_CRD } from '../api/crds.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import { ReleaseStore } from '../apply/release-store.js';
import type { KubeObject } from '../kube/types.js';
import { bombObject, BOMB_REASON_IN_OBJECT, manyAliasesObject } from '../util/yaml.test-helper.js';
import { extensionHistory, rollbackExtension, rollbackPreview } from './release-history.js';

const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } };

/** A CRD serving `versions`; `stored` is its status.storedVersions, the last of them the version it stores now (else the last served). */
function crd(versions: string[], stored?: string[]): KubeObject {
  const storage = stored?.at(-1) ?? versions.at(-1);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { kind: 'Thing', plural: 'things' }, versions: versions.map((v) => ({ name: v, served: true, storage: v === storage, schema })) },
    ...(stored === undefined ? {} : { status: { storedVersions: stored } }),
  };
}

/** An extension at 2.0.0 whose release has revision 1 (1.0.0, CRD v1) and revision 2 (2.0.0, CRD v1+v2). */
async function cluster(stored: string[], extraInRevision1 = ''): Promise<{ client: FakeClient; fake: FakeCluster }> {
  const fake = new FakeCluster({ objects: [CLUSTER_EXTENSION_CRD] });
  const ce: ClusterExtension = {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: 'ext' },
    spec: { namespace: 'ns', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'p' } } },
    status: { install: { bundle: { name: 'p.v2.0.0', version: '2.0.0', package: 'p', image: 'img', catalog: 'c' }, bundleDeployment: 'ext-p', namespace: 'ns' } },
  };
  fake.put(ce);
  fake.put(crd(['v1', 'v2'], stored));
  const client = fake.client();
  const store = new ReleaseStore(client);
  const at = '2026-01-01T00:00:00Z';
  for (const [version, status, crdVersions] of [[1, 'superseded', ['v1']], [2, 'deployed', ['v1', 'v2']]] as const) {
    const chartVersion = `${version}.0.0`;
    await store.create({ name: 'ext-p', namespace: 'ns', version, status, description: `install ${chartVersion}`, firstDeployed: at, lastDeployed: at, chart: { name: 'p', version: chartVersion }, config: {}, manifest: stringify(crd([...crdVersions])) + (version === 1 ? extraInRevision1 : '') }, { kind: 'BundleDeployment', name: 'ext-p' });
  }
  return { client, fake };
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
    const { client, fake } = await cluster(['v1']);
    const from = fake.writes.length;
    assert.deepEqual(await rollbackExtension(client, 'ext'), { from: '2.0.0', to: '1.0.0' });
    assert.deepEqual(fake.writes.slice(from), ['patch ClusterExtension ext'], 'one patch of the extension, nothing else');
    const ce = fake.get({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'ext' }) as ClusterExtension | undefined;
    assert.deepEqual(ce?.spec.source.catalog, { packageName: 'p', version: '1.0.0', upgradeConstraintPolicy: 'SelfCertified' });
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

describe('history', () => {
  it("lists the release's revisions and names a record it cannot read (not history) instead of dropping it", async () => {
    const { client, fake } = await cluster(['v1', 'v2']);
    fake.put(BUNDLE_DEPLOYMENT_CRD);
    fake.put({
      apiVersion: API_VERSION,
      kind: 'BundleDeployment',
      metadata: { name: 'ext-p', labels: { [LABEL_PACKAGE]: 'p', [`${LABEL_NEEDED_BY_PREFIX}ext`]: 'requested' }, annotations: { [ANNOTATION_BUNDLE_VERSION]: '2.0.0' } },
      spec: { installNamespace: 'ns' },
    });
    // Planted beside the release's records: Helm's name and labels, a body that is no record.
    fake.put({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'helm.sh/release.v1',
      metadata: { name: 'sh.helm.release.v1.ext-p.v3', namespace: 'ns', labels: { owner: 'helm', name: 'ext-p', version: '3', status: 'deployed' } },
      data: { release: Buffer.from(Buffer.from('not a release record').toString('base64')).toString('base64') },
    });
    const h = await extensionHistory(client, 'ext');
    assert.deepEqual(h.releases.map((r) => [r.release, r.revisions.map((x) => [x.revision, x.status])]), [['ext-p', [[1, 'superseded'], [2, 'deployed']]]]);
    assert.deepEqual(h.releases[0]?.refused.map((r) => r.secret), ['ns/sh.helm.release.v1.ext-p.v3']);
    assert.notEqual(h.releases[0]?.refused[0]?.reason ?? '', '');
  });
});
