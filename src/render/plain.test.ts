import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRenderer, type RenderContext, type Renderer } from './index.js';
import { BundleLoadError } from '../bundle/index.js';
import { TerminalError } from '../util/errors.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'bundle', 'testdata');

function ctx(dir: string): RenderContext {
  return {
    dir,
    spec: { source: { type: 'local', local: { path: dir } }, format: 'plain', installNamespace: 'plain-ns' },
    name: 'plain',
    digest: 'sha256:0',
    client: undefined,
    revision: 1,
  };
}

describe('plain renderer (reads bundles with bundle/plain.ts, the one plain loader)', () => {
  const renderer = createRenderer();
  const render = (c: RenderContext): ReturnType<Renderer['bundle']> => renderer.bundle(c);

  it('renders every manifest, in a stable order, keeping the namespaces they name', async () => {
    const r = await render(ctx(join(testdata, 'plain-bundle')));
    assert.deepEqual(r.objects.map((o) => `${o.kind}/${o.metadata.name}@${o.metadata.namespace ?? ''}`), [
      'Namespace/plain-system@',
      'ConfigMap/plain-config@plain-system',
      'ServiceAccount/plain-sa@plain-system',
    ]);
  });

  it('an object without kind is refused naming the file; an empty bundle is EmptyBundle', async (t) => {
    await assert.rejects(render(ctx(join(testdata, 'bad', 'plain-no-kind'))), (e: unknown) => e instanceof BundleLoadError && e.file === 'x.yaml');
    const empty = await mkdtemp(join(tmpdir(), 'plain-empty-'));
    t.after(() => rm(empty, { recursive: true, force: true }));
    await assert.rejects(render(ctx(empty)), (e: unknown) => e instanceof TerminalError && /no manifests/.test(e.message));
  });
});
