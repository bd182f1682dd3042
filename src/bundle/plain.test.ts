import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPlainBundleDir } from './plain.js';
import { BundleLoadError } from './load.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');

describe('loadPlainBundleDir', () => {
  it('reads every manifest under manifests/, nested directories included, in a stable order', async () => {
    const b = await loadPlainBundleDir(join(testdata, 'plain-bundle'));
    assert.deepEqual(b.objects.map((o) => `${o.file}#${o.index} ${o.kind}/${o.name}`), [
      'manifests/config.yaml#0 Namespace/plain-system',
      'manifests/config.yaml#1 ConfigMap/plain-config',
      'manifests/nested/sa.yaml#0 ServiceAccount/plain-sa',
    ]);
  });

  it('an object without kind is an error naming file and field', async () => {
    await assert.rejects(loadPlainBundleDir(join(testdata, 'bad', 'plain-no-kind')), (e: unknown) => {
      assert.ok(e instanceof BundleLoadError);
      assert.equal(e.file, 'x.yaml');
      assert.equal(e.field, 'kind');
      return true;
    });
  });
});
