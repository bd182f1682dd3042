/**
 * Releases above a Secret's 1 MiB: stored whole in part Secrets, with a Helm record that keeps
 * everything but the chart's templates and files (the owner's own values included); read back
 * whole; removed with the release.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { decodeRevisionRecord, RELEASE_PART_TYPE, RELEASE_PARTS_ANNOTATION } from './release.js';
import { ReleaseStore } from './release-store.js';
import type { ReleaseRecordInput } from './release.js';

function bigRelease(version: number): ReleaseRecordInput {
  // Random bytes do not compress: about 3 MB of templates.
  const templates = Array.from({ length: 3 }, (_, i) => ({ name: `templates/t${i}.yaml`, data: randomBytes(1024 * 1024).toString('base64') }));
  return {
    name: 'big',
    namespace: 'ns',
    version,
    status: 'deployed',
    description: 'Install complete',
    firstDeployed: '2026-11-23T00:00:00Z',
    lastDeployed: '2026-11-23T00:00:00Z',
    chart: { name: 'big', version: '1.0.0' },
    config: { a: 1, fromValuesFrom: 's3cret' },
    ownerValues: { a: 1 },
    manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
    content: { chart: { metadata: { name: 'big', version: '1.0.0', apiVersion: 'v2' }, lock: null, templates, values: {}, schema: null, files: [] }, manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n', hooks: [] },
  };
}

describe('large releases', () => {
  test('are stored in parts under a Helm record without templates, and read back whole', async () => {
    const cluster = new FakeCluster();
    const store = new ReleaseStore(cluster.client());
    const input = bigRelease(1);
    await store.create(input, { kind: 'HelmOperatorCR', name: 'big' });
    const secrets = [...cluster.objects.values()].filter((o) => o.kind === 'Secret');
    const main = secrets.find((s) => s.type === 'helm.sh/release.v1');
    const parts = secrets.filter((s) => s.type === RELEASE_PART_TYPE);
    assert.ok(main !== undefined);
    assert.ok(parts.length >= 4, `${parts.length} parts`);
    for (const s of secrets) assert.ok(JSON.stringify(s.data).length < 1024 * 1024, `${s.metadata.name ?? ''} fits a Secret`);
    assert.equal(main.metadata.annotations?.[RELEASE_PARTS_ANNOTATION], String(parts.length));
    // What helm reads: the record without templates, with the manifest and values.
    const helmView = decodeRevisionRecord(Buffer.from((main.data as { release: string }).release, 'base64').toString('utf8')) as { chart: { templates: unknown[] }; manifest: string; config: unknown };
    assert.deepEqual(helmView.chart.templates, []);
    assert.equal(helmView.manifest, input.manifest);
    assert.deepEqual(helmView.config, { a: 1, fromValuesFrom: 's3cret' });
    // The owner's own values (binnacle helm rollback's source) stay in the record Helm reads, beside its members.
    assert.deepEqual((helmView as { binnacle_owner_values?: unknown }).binnacle_owner_values, { a: 1 });

    const [rev] = await store.history({ name: 'big', namespace: 'ns' });
    assert.ok(rev !== undefined);
    assert.deepEqual((rev.content?.chart as { templates: unknown[] }).templates, input.content?.chart.templates);
    assert.deepEqual([rev.config, rev.ownerValues], [input.config, { a: 1 }], 'config and own values read back apart');

    const updated = await store.setStatus(rev, 'superseded');
    const [again] = await store.history({ name: 'big', namespace: 'ns' });
    assert.equal(again?.status, 'superseded');
    assert.deepEqual(again?.ownerValues, { a: 1 }, 'kept when the status is written');
    assert.deepEqual((again?.content?.chart as { templates: unknown[] }).templates, input.content?.chart.templates);

    await store.deleteAll({ name: 'big', namespace: 'ns' }, [updated]);
    assert.equal([...cluster.objects.values()].filter((o) => o.kind === 'Secret').length, 0, 'parts go with the record');
  });
});
