/**
 * Bundle images through a real `docker-registry` on loopback: `bundle build --push`, then
 * `bundle validate`, `bundle render` and `bundle fbc` from the image reference.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startLocalRegistry, type LocalRegistry } from '../oci/index.js';
import { runCli as cli } from '../cli/in-process.test-helper.js';

const testdata = path.join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');

describe('bundle images', { timeout: 120_000 }, () => {
  let registry: LocalRegistry;
  let base: string;

  before(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'bundle-img-'));
    registry = await startLocalRegistry({ dataDir: path.join(base, 'registry') });
  });
  after(async () => {
    await registry.stop();
    await rm(base, { recursive: true, force: true });
  });

  it('builds and pushes a bundle image, then validates, renders and records it from the reference', async () => {
    const ref = `${registry.host}/webhook-operator-bundle:v0.2.0`;
    const built = await cli(['bundle', 'build', path.join(testdata, 'webhook-operator'), '--tag', ref, '--push', '-o', 'json']);
    assert.equal(built.code, 0, built.err);
    const info = JSON.parse(built.out) as { digest: string; pushed?: { ref: string } };
    assert.match(info.pushed?.ref ?? '', /@sha256:[0-9a-f]{64}$/);

    const cache = path.join(base, 'cache');
    const validated = await cli(['bundle', 'validate', ref, '--cache-dir', cache, '-o', 'json']);
    assert.equal(validated.code, 0, validated.out + validated.err);
    const rendered = await cli(['bundle', 'render', ref, '--install-namespace', 'ops', '--cache-dir', cache, '-o', 'json']);
    assert.equal(rendered.code, 0, rendered.err);
    const list = JSON.parse(rendered.out) as { items: { kind: string }[] };
    assert.ok(list.items.some((o) => o.kind === 'ValidatingWebhookConfiguration'));
    assert.ok(list.items.some((o) => o.kind === 'Secret'));
    const fbc = await cli(['bundle', 'fbc', ref, '--cache-dir', cache]);
    assert.equal(fbc.code, 0, fbc.err);
    const rec = JSON.parse(fbc.out) as { image: string; package: string };
    assert.equal(rec.image, ref);
    assert.equal(rec.package, 'webhook-operator');
  });
});
