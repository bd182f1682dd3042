/**
 * Writes testdata/: the revision record Secrets Binnacle writes (src/apply/release.ts, the one
 * encoder) for a chart release rendered by Binnacle's Helm engine, two revisions of
 * prometheus-pushgateway from the charts corpus (revision 1 superseded, revision 2 deployed, with
 * Binnacle's owner and digest labels), and a bundle release's record. records_test.go reads them
 * with Helm 4's own storage driver and actions (`helm list`, `history`, `get`, `status`).
 *
 * usage: npx tsx test/helm-records/make-fixtures.ts   (after `bash hack/build-tools.sh helm-wasm`)
 *        BINNACLE_RECORDS_OUT=DIR writes them there instead (records.test.ts: fresh ones each run)
 */
import { cp, mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { revisionRecordSecret, type ReleaseRecordInput } from '../../src/apply/release.js';
import type { Owner } from '../../src/apply/types.js';
import { renderChart } from '../../src/helm/chart-render.js';
import { createHelmEngine } from '../../src/helm-engine/index.js';

const CORPUS_CHART = path.resolve(import.meta.dirname, '../../../shared/corpus/charts/prometheus-community__prometheus-pushgateway');
const OUT = process.env.BINNACLE_RECORDS_OUT ?? path.join(import.meta.dirname, 'testdata');
const owner: Owner = { kind: 'HelmRelease', name: 'pg', namespace: 'team-a', uid: '00000000-0000-0000-0000-000000000001', apiVersion: 'binnacle.dev/v1alpha1' };

/**
 * The chart, copied with every file's mtime set to one date: Helm 4 keeps each file's mtime in the
 * record (`modtime`), and a corpus checkout's mtimes are the time it was made, so records made from
 * it directly differ on every machine.
 */
async function chartWithFixedTimes(when: Date): Promise<{ dir: string; tmp: string }> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'binnacle-records-chart-'));
  const dir = path.join(tmp, path.basename(CORPUS_CHART));
  await cp(CORPUS_CHART, dir, { recursive: true });
  const entries = await readdir(dir, { recursive: true });
  for (const e of [...entries, '']) await utimes(path.join(dir, e), when, when);
  return { dir, tmp };
}

const when = ['2026-12-01T10:00:00.000Z', '2026-12-01T11:00:00.000Z'];
const { dir: CHART, tmp } = await chartWithFixedTimes(new Date('2026-11-30T00:00:00.000Z'));
const engine = createHelmEngine();
try {
  await mkdir(OUT, { recursive: true });
  for (const revision of [1, 2]) {
    const values = { replicaCount: revision };
    const r = await renderChart({ chart: CHART, chartDigest: 'sha256:fixture', release: { name: 'pg', namespace: 'team-a' }, values, revision, engine });
    const input: ReleaseRecordInput = {
      name: 'pg',
      namespace: 'team-a',
      version: revision,
      status: revision === 2 ? 'deployed' : 'superseded',
      description: revision === 2 ? 'Upgrade complete' : 'Install complete',
      firstDeployed: when[0] as string,
      lastDeployed: when[revision - 1] as string,
      chart: r.chart,
      config: values,
      manifest: r.content.manifest,
      content: r.content,
      inputDigest: r.inputDigest,
      ownerGeneration: revision,
    };
    const secret = revisionRecordSecret(input, owner, new Date(when[revision - 1] as string), 'created');
    await writeFile(path.join(OUT, `pg.v${revision}.json`), `${JSON.stringify(secret, null, 2)}\n`);
  }
  const bundle: ReleaseRecordInput = {
    name: 'op',
    namespace: 'team-a',
    version: 1,
    status: 'deployed',
    description: 'Install complete',
    firstDeployed: when[0] as string,
    lastDeployed: when[0] as string,
    chart: { name: 'op-bundle', version: '1.2.3', appVersion: '1.2.3' },
    config: {},
    manifest: '---\n# Source: op/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op\n  namespace: team-a\n',
  };
  await writeFile(path.join(OUT, 'op.v1.json'), `${JSON.stringify(revisionRecordSecret(bundle, owner, new Date(when[0] as string), 'created'), null, 2)}\n`);
} finally {
  await engine.close();
  await rm(tmp, { recursive: true, force: true });
}
