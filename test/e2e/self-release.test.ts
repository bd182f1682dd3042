/**
 * `install-self --version V` against the e2e registry, through the CLI: releases 0.0.1 and 0.0.2
 * published with `release-self` (each running its own stand-in manager image, pinned by digest)
 * into a release repository; `install-self --version 0.0.1` installs that release, a second run
 * changes nothing, `--version 0.0.2` moves the Deployment to 0.0.2's image and repairs what was
 * deleted by hand; a version the repository lacks names the tags it has, the image repository
 * given as the release repository is named as a container image, and `--namespace` cannot
 * re-target a release.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KubeClient } from '../../src/kube/client.js';
import { buildImage, pushImage, RegistryClient } from '../../src/oci/index.js';
import { e2eClient, e2eKubeconfig, e2eRegistry, uniqueName } from './env.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'binnacle.js');
const NS = 'binnacle-system';
const NAME = 'binnacle-manager';

let client: KubeClient;
let work: string;
let imageRepo: string;
let releaseRepo: string;
/** The stand-in manager image of each version, by digest. */
const images = new Map<string, string>();

async function binnacle(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args, '--kubeconfig', e2eKubeconfig()], { env: { ...process.env, BINNACLE_FROM_SOURCE: '1', ...env }, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Without --kubeconfig: release-self talks to the registry only. */
async function release(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, 'release-self', ...args], { env: { ...process.env, BINNACLE_FROM_SOURCE: '1', ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function deployment(): Promise<{ image: string; version: string | undefined }> {
  const d = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: NAME });
  const image = (d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]?.image ?? '';
  return { image, version: d.metadata.annotations?.['binnacle.dev/release-version'] };
}

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-self-release-'));
  const base = uniqueName('self-release');
  imageRepo = `${e2eRegistry()}/${base}/binnacle`;
  releaseRepo = `${e2eRegistry()}/${base}/binnacle-release`;
  // A stand-in manager image per version (kwok runs no containers): one file that differs.
  for (const v of ['0.0.1', '0.0.2']) {
    const tree = join(work, `image-${v}`);
    await mkdir(join(tree, 'opt', 'binnacle'), { recursive: true });
    await writeFile(join(tree, 'opt', 'binnacle', 'VERSION'), `${v}\n`);
    const built = await buildImage({ layers: [{ dir: tree, prefix: '/' }], labels: { 'org.opencontainers.image.version': v }, outputDir: join(work, `layout-${v}`) });
    const pushed = await pushImage(built, `${imageRepo}:${v}`, new RegistryClient({ insecure: true }));
    images.set(v, pushed.ref);
  }
});

after(async () => {
  await binnacle(['uninstall-self', '--force', '--timeout', '30']);
  client.close();
  await rm(work, { recursive: true, force: true });
});

describe('install-self --version', () => {
  test('release-self publishes 0.0.1 and 0.0.2 (the repository from the flag, then from $BINNACLE_RELEASE_REPO), each pinning its image', async () => {
    const one = await release(['--version', '0.0.1', '--image', `${imageRepo}:0.0.1`, '--release-repo', releaseRepo, '-o', 'json']);
    assert.equal(one.code, 0, one.stderr);
    const r1 = JSON.parse(one.stdout) as { version: string; ref: string; image: string };
    assert.equal(r1.image, images.get('0.0.1'), 'the tag was pinned to the digest it points at');
    assert.match(r1.ref, new RegExp(`^${releaseRepo.replace(/[.]/g, '\\.')}@sha256:[0-9a-f]{64}$`));
    assert.match(one.stderr, /binnacle install-self --version 0\.0\.1 --release-repo/);
    const two = await release(['--version', '0.0.2', '--image', `${imageRepo}:0.0.2`, '-o', 'json'], { BINNACLE_RELEASE_REPO: releaseRepo });
    assert.equal(two.code, 0, two.stderr);
    assert.deepEqual((await new RegistryClient({ insecure: true }).listTags(releaseRepo)).sort(), ['0.0.1', '0.0.2']);
  });

  test('--version 0.0.1 installs that release; again changes nothing', async () => {
    const first = await binnacle(['install-self', '--version', '0.0.1', '--release-repo', releaseRepo, '-o', 'json']);
    assert.equal(first.code, 0, first.stderr);
    const r1 = JSON.parse(first.stdout) as { version: string; image: string; namespace: string; objects: { kind: string; state: string }[] };
    assert.equal(r1.version, '0.0.1');
    assert.equal(r1.image, images.get('0.0.1'));
    assert.equal(r1.namespace, NS);
    assert.ok(r1.objects.some((o) => o.kind === 'Deployment' && o.state === 'created'), JSON.stringify(r1.objects));
    assert.match(first.stderr, /release 0\.0\.1 from /);
    assert.deepEqual(await deployment(), { image: images.get('0.0.1'), version: '0.0.1' });
    await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'clusterextensions.binnacle.dev' });

    const again = await binnacle(['install-self', '--version', '0.0.1', '-o', 'json'], { BINNACLE_RELEASE_REPO: releaseRepo });
    assert.equal(again.code, 0, again.stderr);
    const r2 = JSON.parse(again.stdout) as { objects: { kind: string; name: string; state: string }[] };
    assert.deepEqual(r2.objects.filter((o) => o.state !== 'unchanged' && o.state !== 'skipped'), [], 'the second install changes nothing');

    const st = await binnacle(['status-self', '-o', 'json']);
    assert.equal(st.code, 0, st.stderr);
    const status = JSON.parse(st.stdout) as { state: string; version?: string; image?: string };
    assert.equal(status.state, 'installed');
    assert.equal(status.version, '0.0.1');
  });

  test("--version 0.0.2 upgrades the Deployment to 0.0.2's image, and repairs what was deleted by hand", async () => {
    await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: NAME });
    const up = await binnacle(['install-self', '--version', '0.0.2', '--release-repo', releaseRepo, '-o', 'json']);
    assert.equal(up.code, 0, up.stderr);
    const r = JSON.parse(up.stdout) as { version: string; image: string; objects: { kind: string; name: string; state: string }[] };
    assert.equal(r.version, '0.0.2');
    assert.equal(r.objects.find((o) => o.kind === 'Deployment')?.state, 'configured');
    assert.equal(r.objects.find((o) => o.kind === 'ClusterRole' && o.name === NAME)?.state, 'created');
    assert.match(up.stderr, /re-created ClusterRole binnacle-manager/);
    assert.deepEqual(await deployment(), { image: images.get('0.0.2'), version: '0.0.2' });
    assert.notEqual(images.get('0.0.1'), images.get('0.0.2'));
    const st = await binnacle(['status-self']);
    assert.equal(st.code, 0, st.stderr);
    assert.match(st.stderr, /installed, release 0\.0\.2, image /);
  });

  test('a version the repository lacks names the tags it has; the image repository is named as a container image; nothing changes', async () => {
    const missing = await binnacle(['install-self', '--version', '0.0.9', '--release-repo', releaseRepo]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /release 0\.0\.9 not found in .*binnacle-release; it has: 0\.0\.2, 0\.0\.1\./);
    assert.match(missing.stderr, /binnacle release-self --version 0\.0\.9/);
    assert.doesNotMatch(missing.stderr, /\n\s+at /, 'no stack trace');

    const image = await binnacle(['install-self', '--version', '0.0.1', '--release-repo', imageRepo]);
    assert.equal(image.code, 1);
    assert.match(image.stderr, /binnacle:0\.0\.1 is a container image \(config application\/vnd\.oci\.image\.config\.v1\+json\), not a Binnacle release/);

    const empty = await binnacle(['install-self', '--version', '0.0.1', '--release-repo', `${e2eRegistry()}/${uniqueName('none')}/binnacle-release`]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /has no releases/);

    const ns = await binnacle(['install-self', '--version', '0.0.1', '--release-repo', releaseRepo, '-n', 'elsewhere']);
    assert.equal(ns.code, 2);
    assert.match(ns.stderr, /--namespace elsewhere: release 0\.0\.1 installs into namespace binnacle-system/);

    const both = await binnacle(['install-self', '--version', '0.0.1', '--image', `${imageRepo}:0.0.1`]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--image and --version exclude each other/);

    assert.deepEqual(await deployment(), { image: images.get('0.0.2'), version: '0.0.2' }, 'the failed runs changed nothing');
  });
});
