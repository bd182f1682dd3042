import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateBundle } from './generate.js';
import { loadBundleDir } from './load.js';
import { validateBundleDir } from './validate.js';
import { buildBundleImage } from './build.js';
import { InputError } from '../util/errors.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');

describe('generateBundle', () => {
  it('writes a valid bundle whose CSV carries the RBAC, deployment, CRDs and examples', async () => {
    const out = await mkdtemp(join(tmpdir(), 'binnacle-gen-'));
    try {
      const res = await generateBundle({
        inputDir: join(testdata, 'generate-input'),
        outputDir: out,
        packageName: 'cache-operator',
        version: '0.1.0',
        channels: ['alpha', 'stable'],
        defaultChannel: 'stable',
      });
      assert.equal(res.csvName, 'cache-operator.v0.1.0');
      assert.deepEqual(res.skipped.map((s) => s.kind), ['Namespace']);
      const b = await loadBundleDir(out);
      assert.equal(b.packageName, 'cache-operator');
      assert.deepEqual(b.annotations?.channels, ['alpha', 'stable']);
      assert.equal(b.annotations?.defaultChannel, 'stable');
      assert.deepEqual(b.csv.permissions.map((p) => [p.serviceAccountName, p.rules.length]), [['cache-operator', 1]]);
      assert.deepEqual(b.csv.clusterPermissions.map((p) => [p.serviceAccountName, p.rules.length]), [['cache-operator', 1]]);
      assert.deepEqual(b.csv.deployments.map((d) => d.name), ['cache-operator']);
      assert.deepEqual(b.csv.ownedCRDs.map((c) => `${c.name}/${c.version}/${c.kind}`), ['caches.demo.example.com/v1alpha1/Cache']);
      assert.deepEqual(b.others.map((o) => o.kind), ['Service']);
      const examples: unknown = JSON.parse(b.csv.annotations['alm-examples'] ?? '[]');
      assert.ok(Array.isArray(examples) && examples.length === 1);
      const { result } = await validateBundleDir(out);
      assert.deepEqual(result.errors(), []);

      const layout = join(out, '..', `${out.split('/').pop() ?? 'x'}-layout`);
      const built = await buildBundleImage(out, { tag: 'localhost:5000/cache-operator-bundle:v0.1.0', layoutDir: layout });
      assert.equal(built.labels['operators.operatorframework.io.bundle.package.v1'], 'cache-operator');
      assert.equal(built.image.manifest.layers.length, 2);
      assert.match(built.image.manifestDigest, /^sha256:[0-9a-f]{64}$/);
      const config: unknown = JSON.parse(await readFile(built.image.blobPath(built.image.manifest.config.digest), 'utf8'));
      assert.equal((config as { config: { Labels: Record<string, string> } }).config.Labels['operators.operatorframework.io.bundle.mediatype.v1'], 'registry+v1');
      await rm(layout, { recursive: true, force: true });
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('rejects bad options as input errors naming the option, never a CLI flag', async () => {
    const base = { inputDir: join(testdata, 'generate-input'), outputDir: '/nonexistent', packageName: 'p', channels: ['a'] };
    const naming = (field: string) => (e: unknown) => e instanceof InputError && e.field === field && !/--/.test(e.message);
    await assert.rejects(generateBundle({ ...base, version: 'v1' }), naming('version'));
    await assert.rejects(generateBundle({ ...base, version: '1.0.0', defaultChannel: 'b' }), naming('defaultChannel'));
    await assert.rejects(generateBundle({ ...base, version: '1.0.0', channels: [] }), naming('channels'));
    await assert.rejects(generateBundle({ ...base, version: '1.0.0', packageName: '' }), naming('packageName'));
  });
});
