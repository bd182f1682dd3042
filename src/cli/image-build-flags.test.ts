import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './in-process.test-helper.js';

/** The image config of the only manifest in an OCI layout. */
async function layoutConfig(layout: string): Promise<{ config?: { Entrypoint?: string[]; User?: string } }> {
  const blob = async (digest: string): Promise<unknown> => JSON.parse(await readFile(join(layout, 'blobs', ...digest.split(':')), 'utf8'));
  const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  const manifest = (await blob(index.manifests[0]?.digest ?? '')) as { config: { digest: string } };
  return (await blob(manifest.config.digest)) as { config?: { Entrypoint?: string[]; User?: string } };
}

test("image build --entrypoint and --user: the image config's Entrypoint and User (a Pod's runAsNonRoot reads the numeric user); neither given, neither set; a user name or a relative program refused", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'image-build-cli-'));
  try {
    await mkdir(join(dir, 'tree'));
    await writeFile(join(dir, 'tree', 'manager'), '#!/bin/sh\n', { mode: 0o755 });
    const r = await runCli(['image', 'build', '--layer', `${join(dir, 'tree')}:/`, '--layout', join(dir, 'with'), '--entrypoint', '/manager', '--user', '65532:65532', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const withConfig = await layoutConfig(join(dir, 'with'));
    assert.deepEqual(withConfig.config?.Entrypoint, ['/manager']);
    assert.equal(withConfig.config?.User, '65532:65532');
    const plain = await runCli(['image', 'build', '--layer', `${join(dir, 'tree')}:/`, '--layout', join(dir, 'plain')]);
    assert.equal(plain.code, 0, plain.err);
    const plainConfig = await layoutConfig(join(dir, 'plain'));
    assert.equal(plainConfig.config?.Entrypoint, undefined);
    assert.equal(plainConfig.config?.User, undefined);
    const named = await runCli(['image', 'build', '--layer', `${join(dir, 'tree')}:/`, '--layout', join(dir, 'x'), '--user', 'nobody']);
    assert.notEqual(named.code, 0);
    assert.match(named.err, /--user "nobody": give a numeric uid/);
    const relative = await runCli(['image', 'build', '--layer', `${join(dir, 'tree')}:/`, '--layout', join(dir, 'y'), '--entrypoint', 'manager']);
    assert.notEqual(relative.code, 0);
    assert.match(relative.err, /--entrypoint "manager": give the program's absolute path/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
