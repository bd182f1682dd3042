/**
 * `publishChartVersion` up to the push, through Helm's engine, with the catalog's bundles as local
 * bundle directories (the template renderer reads a directory in place): the bundle it writes
 * carries the replaces/skipRange the template's catalog gives, and a release that must not
 * happen fails naming the file and field before anything is pushed (the registry given does not
 * exist: reaching it would fail otherwise) and leaves the template as it was.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBundleDir } from '../../bundle/index.js';
import { InputError, UsageError } from '../../util/errors.js';
import { createHelmEngine } from '../../helm-engine/engine.js';
import { helmBundle } from '../helm-bundle/index.js';
import { publishChartVersion, type ChartPublishOptions } from './index.js';

const engine = createHelmEngine();
/** Nothing listens on port 1: a push there fails. */
const NOWHERE = '127.0.0.1:1/acme';
let work: string;

async function chart(version: string): Promise<string> {
  const dir = join(work, `beacon-${version}`);
  await mkdir(join(dir, 'templates'), { recursive: true });
  await writeFile(join(dir, 'Chart.yaml'), `apiVersion: v2\nname: beacon\nversion: ${version}\n`);
  await writeFile(join(dir, 'values.yaml'), 'message: hello\n');
  await writeFile(join(dir, 'templates', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  message: {{ .Values.message | quote }}\n');
  return dir;
}

function options(o: Partial<ChartPublishOptions> & { chart: string; template: string }): ChartPublishOptions {
  return { kinds: ['Beacon'], bundleRepository: `${NOWHERE}/beacon-bundle`, catalogImage: `${NOWHERE}/catalog:latest`, cacheDir: join(work, 'cache'), image: 'registry.example.com/binnacle:1.0.0', engine, ...o };
}

let template: string;
let text: string;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'binnacle-helm-release-test-'));
  // The catalog today: beacon 1.0.0 and 1.1.0, as bundle directories.
  for (const v of ['1.0.0', '1.1.0']) await helmBundle({ chart: await chart(v), kinds: ['Beacon'], outputDir: join(work, `bundle-${v}`), channels: ['stable-v1'], image: 'registry.example.com/binnacle:1.0.0', engine });
  template = join(work, 'catalog.yaml');
  text = `schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: false\nstable:\n  bundles:\n    - image: ${join(work, 'bundle-1.0.0')}\n    - image: ${join(work, 'bundle-1.1.0')}\n`;
  await writeFile(template, text);
});

after(async () => {
  await engine.close();
  await rm(work, { recursive: true, force: true });
});

describe('helm release', { timeout: 300_000 }, () => {
  test('writes the next bundle with the edges the catalog gives, then stops at the push it cannot make, the template untouched', async () => {
    const out = join(work, 'next');
    await assert.rejects(publishChartVersion(options({ chart: await chart('1.2.0'), template, outputDir: out })), (e: unknown) => !(e instanceof InputError && e.code.startsWith('RELEASE_')));
    const b = await loadBundleDir(out);
    assert.equal(b.name, 'beacon.v1.2.0');
    assert.equal(b.csv.replaces, 'beacon.v1.1.0');
    assert.equal(b.csv.annotations['olm.skipRange'], '>=1.0.0 <1.2.0');
    assert.deepEqual(b.annotations?.channels, ['stable-v1']);
    assert.equal(await readFile(template, 'utf8'), text);
  });

  test('a version the catalog has, or one older than its head, is refused naming the template, before anything is written', async () => {
    const out = join(work, 'never');
    await assert.rejects(publishChartVersion(options({ chart: await chart('1.1.0'), template, outputDir: out })), (e: unknown) => e instanceof InputError && e.code === 'RELEASE_VERSION_EXISTS' && e.file === template && e.field === 'version');
    await assert.rejects(publishChartVersion(options({ chart: await chart('1.0.5'), template, outputDir: out })), (e: unknown) => e instanceof InputError && e.code === 'RELEASE_NOT_NEWER' && e.field === 'stable.bundles' && /not newer than the catalog's head of stable, beacon\.v1\.1\.0/.test(e.message));
    await assert.rejects(readFile(join(out, 'metadata', 'annotations.yaml')), 'no bundle written');
    assert.equal(await readFile(template, 'utf8'), text);
  });

  test('a missing chart, a missing template and a repository with a tag are refused, each naming what is wrong', async () => {
    await assert.rejects(publishChartVersion(options({ chart: join(work, 'no-such-chart'), template })), (e: unknown) => e instanceof InputError && e.code === 'HELM_BUNDLE_CHART' && e.file === join(work, 'no-such-chart'));
    await assert.rejects(publishChartVersion(options({ chart: await chart('1.2.0'), template: join(work, 'none.yaml') })), (e: unknown) => e instanceof InputError && e.code === 'RELEASE_TEMPLATE' && e.file === join(work, 'none.yaml'));
    await assert.rejects(publishChartVersion(options({ chart: await chart('1.2.0'), template, bundleRepository: `${NOWHERE}/beacon-bundle:v1` })), (e: unknown) => e instanceof UsageError && /--bundle-repository .*without tag or digest/.test(e.message));
  });
});
