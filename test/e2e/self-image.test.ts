/**
 * The manager image built by Binnacle's own OCI builder, no Docker: on a base image given by
 * reference and digest (here a stand-in pushed to the e2e registry), the base's layers come
 * first and its config is kept, then one layer under /opt/binnacle with the compiled output,
 * Helm's engine and only the production packages of the lock file; the entry point runs the
 * manager as a non-root user. A base without a digest is refused. The release published beside
 * it (`build-self-image --release V`) runs exactly that image, by digest.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildImage, pushImage, RegistryClient } from '../../src/oci/index.js';
import type { ImageManifest } from '../../src/oci/manifest.js';
import { buildSelfImage, productionPackages } from '../../src/self/image.js';
import { fetchSelfVersion, publishSelfVersion, selfVersionRepository } from '../../src/self/release.js';
import { e2eRegistry, uniqueName } from './env.js';

const client = new RegistryClient({ insecure: true });
let root: string;
let base: string;

async function put(path: string, text: string): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, text);
}

/** Paths in a gzipped tar layer. */
function tarPaths(gz: Buffer): string[] {
  const tar = gunzipSync(gz);
  const out: string[] = [];
  for (let off = 0; off + 512 <= tar.length; ) {
    const name = tar.subarray(off, off + 100).toString('utf8').replace(/\0.*$/s, '');
    if (name === '') break;
    const prefix = tar.subarray(off + 345, off + 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(tar.subarray(off + 124, off + 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    out.push(prefix === '' ? name : `${prefix}/${name}`);
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

before(async () => {
  const work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-self-image-'));
  // A stand-in Node base image: one layer and a config with an Env.
  const baseTree = join(work, 'base');
  await put(join(baseTree, 'usr', 'local', 'bin', 'node'), '#!/bin/sh\n');
  const built = await buildImage({ layers: [{ dir: baseTree, prefix: '/' }], labels: { 'org.example.base': 'node' }, outputDir: join(work, 'base-layout') });
  const pushed = await pushImage(built, `${e2eRegistry()}/${uniqueName('base')}/node:20`, client);
  base = pushed.ref;
  // A repository root as `npm ci && npm run build` leaves it.
  root = join(work, 'root');
  await put(join(root, 'dist', 'cli', 'main.js'), 'export {};\n');
  await put(join(root, 'bin', 'binnacle.js'), '#!/usr/bin/env node\n');
  await put(join(root, 'package.json'), '{"name":"binnacle"}\n');
  // Helm's engine through a symlink, as a worktree sharing another's build has it: the image gets the files.
  await put(join(work, 'shared-helm-wasm', 'helm.wasm'), 'wasm');
  await put(join(work, 'shared-helm-wasm', 'helm-engine'), 'native engine');
  await mkdir(join(root, '.cache'), { recursive: true });
  await symlink(join(work, 'shared-helm-wasm'), join(root, '.cache', 'helm-wasm'));
  await put(join(root, '.cache', 'console', 'app.js'), '// the console page\n');
  await put(join(root, '.cache', 'console', 'app.css'), '/* its styles */\n');
  await put(join(root, 'node_modules', 'prod-a', 'index.js'), '');
  await put(join(root, 'node_modules', 'prod-a', 'node_modules', 'nested', 'index.js'), '');
  await put(join(root, 'node_modules', 'dev-b', 'index.js'), '');
  await put(
    join(root, 'package-lock.json'),
    JSON.stringify({ packages: { '': {}, 'node_modules/prod-a': {}, 'node_modules/prod-a/node_modules/nested': {}, 'node_modules/dev-b': { dev: true } } }),
  );
});

describe('self image', () => {
  test('the lock file names the production packages', () => {
    assert.deepEqual(productionPackages(JSON.stringify({ packages: { '': {}, 'node_modules/a': {}, 'node_modules/b': { dev: true }, 'node_modules/c': { devOptional: true } } })), ['node_modules/a']);
  });

  test('built on the base, with the compiled output and production packages under /opt/binnacle', async () => {
    const target = `${e2eRegistry()}/${uniqueName('binnacle')}/binnacle:e2e`;
    const img = await buildSelfImage({ root, base, target, client });
    assert.match(img.ref, /@sha256:[0-9a-f]{64}$/);
    const pulled = await client.resolveImage(img.ref);
    const baseImage = await client.resolveImage(base);
    const m: ImageManifest = pulled.manifest;
    assert.equal(m.layers.length, baseImage.manifest.layers.length + 1);
    assert.deepEqual(m.layers.slice(0, -1).map((l) => l.digest), baseImage.manifest.layers.map((l) => l.digest), "the base's layers come first");
    const config = JSON.parse((await client.getBlobBytes(img.ref, m.config.digest)).toString()) as { config: { Entrypoint: string[]; Cmd: string[]; User: string; Labels: Record<string, string> }; rootfs: { diff_ids: string[] } };
    assert.deepEqual(config.config.Entrypoint, ['node', '--optimize-for-size', '--no-maglev', '/opt/binnacle/bin/binnacle.js']);
    assert.deepEqual(config.config.Cmd, ['manager']);
    assert.equal(config.config.User, '65532:65532');
    assert.equal(config.config.Labels['org.example.base'], 'node', "the base's config is kept");
    assert.equal(config.rootfs.diff_ids.length, m.layers.length);
    const last = m.layers[m.layers.length - 1];
    const paths = tarPaths(await client.getBlobBytes(img.ref, last?.digest ?? '', last?.size, 64 * 1024 * 1024));
    for (const p of ['opt/binnacle/dist/cli/main.js', 'opt/binnacle/bin/binnacle.js', 'opt/binnacle/.cache/helm-wasm/helm.wasm', 'opt/binnacle/.cache/helm-wasm/helm-engine', 'opt/binnacle/.cache/console/app.js', 'opt/binnacle/.cache/console/app.css', 'opt/binnacle/node_modules/prod-a/index.js', 'opt/binnacle/node_modules/prod-a/node_modules/nested/index.js']) {
      assert.ok(paths.includes(p), `${p} is in the layer (have ${paths.join(', ')})`);
    }
    assert.ok(!paths.some((p) => p.includes('dev-b')), 'dev packages are left out');
  });

  test('the release published beside the built image runs it by digest', async () => {
    const target = `${e2eRegistry()}/${uniqueName('binnacle')}/binnacle:e2e`;
    const img = await buildSelfImage({ root, base, target, client });
    const repository = selfVersionRepository(`${target.replace(/:e2e$/, '')}-release`);
    const rel = await publishSelfVersion({ version: '1.2.3', image: img.ref, repository, client });
    assert.equal(rel.image, img.ref);
    const got = await fetchSelfVersion({ version: '1.2.3', repository, client });
    const d = got.objects.find((o) => o.kind === 'Deployment') as { spec: { template: { spec: { containers: { image: string }[] } } } } | undefined;
    assert.equal(d?.spec.template.spec.containers[0]?.image, img.ref);
    assert.equal(got.config.version, '1.2.3');
  });

  test("without the console's built page the image is refused, naming the file and the build", async () => {
    const empty = await mkdtemp(join(tmpdir(), 'binnacle-e2e-no-console-'));
    await assert.rejects(buildSelfImage({ root, base, target: `${e2eRegistry()}/x/binnacle:e2e`, client, consoleAssetsDir: empty }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'SELF_IMAGE_INPUT_MISSING');
      assert.equal(err.message, `${join(empty, 'app.js')} is missing: run \`npm run build\``);
      return true;
    });
  });

  test('a base image without a digest is refused', async () => {
    await assert.rejects(buildSelfImage({ root, base: `${e2eRegistry()}/library/node:20`, target: `${e2eRegistry()}/x/binnacle:e2e`, client }), /by reference and digest/);
  });

  test("the helm-operator variant: operator-sdk's entry point in an empty /opt/helm as user 1001, the same program under /opt/binnacle", async () => {
    const target = `${e2eRegistry()}/${uniqueName('binnacle')}/helm-operator:e2e`;
    const img = await buildSelfImage({ root, base, target, client, variant: 'helm-operator' });
    const m: ImageManifest = (await client.resolveImage(img.ref)).manifest;
    const config = JSON.parse((await client.getBlobBytes(img.ref, m.config.digest)).toString()) as { config: { Entrypoint: string[]; Cmd?: string[]; User: string; WorkingDir: string; Env: string[] } };
    assert.deepEqual(config.config.Entrypoint, ['node', '--optimize-for-size', '--no-opt', '--no-sparkplug', '--no-maglev', '/opt/binnacle/bin/binnacle.js', 'helm-operator', 'run', '--watches-file=./watches.yaml']);
    assert.deepEqual(config.config.Cmd, []);
    assert.equal(config.config.WorkingDir, '/opt/helm');
    assert.equal(config.config.User, '1001');
    assert.ok(config.config.Env.includes('HOME=/opt/helm'));
    const layerPaths = await Promise.all(m.layers.slice(-2).map(async (l) => tarPaths(await client.getBlobBytes(img.ref, l.digest, l.size, 64 * 1024 * 1024))));
    assert.ok(layerPaths[0]?.includes('opt/binnacle/bin/binnacle.js'), 'the program');
    assert.deepEqual(layerPaths[1]?.map((p) => p.replace(/\/$/, '')), ['opt', 'opt/helm'], 'an empty /opt/helm for the project’s watches.yaml and helm-charts/');
  });
});
