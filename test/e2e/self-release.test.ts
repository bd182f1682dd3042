/**
 * `install-self --version V` against the e2e registry, through the CLI: releases 0.0.1 and 0.0.2
 * published with `release-self` (each running its own stand-in manager image, pinned by digest)
 * into a release repository, 0.0.1 then re-published with a ClusterRole and a CRD that 0.0.2
 * drops; `install-self --version 0.0.1` installs that release (status-self judges it by its own
 * objects), a second run changes nothing, `--version 0.0.2` moves the Deployment to 0.0.2's image,
 * repairs what was deleted by hand and prunes the ClusterRole, keeping the CRD while it has a
 * custom resource (the next install prunes it); a version the repository lacks names the tags it
 * has, the image repository given as the release repository is named as a container image, and
 * `--namespace` cannot re-target a release; `--image` after a release prunes what the binary's
 * manifests lack; uninstall-self removes every object the installed release had.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/types.js';
import { buildImage, parseReference, pushImage, RegistryClient } from '../../src/oci/index.js';
import { pushSelfVersion, selfVersionManifests } from '../../src/self/index.js';
import { e2eClient, e2eKubeconfig, e2eRegistry, uniqueName } from './env.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'binnacle.js');
const NS = 'binnacle-system';
const NAME = 'binnacle-manager';
const RBAC = 'rbac.authorization.k8s.io/v1';
const LABELS = { 'app.kubernetes.io/name': 'binnacle', 'app.kubernetes.io/part-of': 'binnacle', 'app.kubernetes.io/managed-by': 'binnacle-install-self' };
/** What this test's 0.0.1 has and 0.0.2 drops. */
const LEGACY_ROLE: KubeObject = { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'binnacle-legacy', labels: LABELS }, rules: [{ apiGroups: ['binnacle.dev'], resources: ['legacies'], verbs: ['get'] }] };
const LEGACY_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'legacies.binnacle.dev', labels: LABELS },
  spec: {
    group: 'binnacle.dev',
    scope: 'Cluster',
    names: { kind: 'Legacy', plural: 'legacies', singular: 'legacy', listKind: 'LegacyList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};
const CRD_REF = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'legacies.binnacle.dev' };
const ROLE_REF = { apiVersion: RBAC, kind: 'ClusterRole', name: 'binnacle-legacy' };

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

/** Gone, or on its way (a namespace or CRD the API server is still finishing). */
async function gone(ref: { apiVersion: string; kind: string; name: string; namespace?: string }): Promise<boolean> {
  const live = await client.find(ref);
  return live === undefined || live.metadata.deletionTimestamp !== undefined;
}

type Row = { kind: string; name: string; namespace?: string; state: string; note?: string };
const rowsIn = (rows: Row[], state: string): string[] => rows.filter((o) => o.state === state).map((o) => `${o.kind} ${o.name}`);

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

    // This test's 0.0.1 also has a ClusterRole and a CRD that 0.0.2 drops (as a later release may).
    const rendered = selfVersionManifests({ version: '0.0.1', image: r1.image });
    const extended = await pushSelfVersion({ config: rendered.config, objects: [...rendered.objects, LEGACY_ROLE, LEGACY_CRD] }, parseReference(releaseRepo), new RegistryClient({ insecure: true }));
    assert.notEqual(extended.ref, r1.ref);
  });

  test('--version 0.0.1 installs that release; again changes nothing', async () => {
    const first = await binnacle(['install-self', '--version', '0.0.1', '--release-repo', releaseRepo, '-o', 'json']);
    assert.equal(first.code, 0, first.stderr);
    const r1 = JSON.parse(first.stdout) as { version: string; image: string; namespace: string; objects: { kind: string; state: string }[] };
    assert.equal(r1.version, '0.0.1');
    assert.equal(r1.image, images.get('0.0.1'));
    assert.equal(r1.namespace, NS);
    assert.ok(r1.objects.some((o) => o.kind === 'Deployment' && o.state === 'created'), JSON.stringify(r1.objects));
    assert.deepEqual(rowsIn(r1.objects as Row[], 'created').filter((x) => x.includes('legac')), ['ClusterRole binnacle-legacy', 'CustomResourceDefinition legacies.binnacle.dev']);
    assert.match(first.stderr, /release 0\.0\.1 from /);
    assert.deepEqual(await deployment(), { image: images.get('0.0.1'), version: '0.0.1' });
    await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'clusterextensions.binnacle.dev' });

    const again = await binnacle(['install-self', '--version', '0.0.1', '-o', 'json'], { BINNACLE_RELEASE_REPO: releaseRepo });
    assert.equal(again.code, 0, again.stderr);
    const r2 = JSON.parse(again.stdout) as { objects: { kind: string; name: string; state: string }[] };
    assert.deepEqual(r2.objects.filter((o) => o.state !== 'unchanged' && o.state !== 'skipped'), [], 'the second install changes nothing');

    const st = await binnacle(['status-self', '-o', 'json']);
    assert.equal(st.code, 0, st.stderr);
    const status = JSON.parse(st.stdout) as { state: string; source: string; version?: string; image?: string; objects: { kind: string; name: string; present: boolean }[] };
    assert.equal(status.state, 'installed');
    assert.equal(status.version, '0.0.1');
    assert.equal(status.source, 'record');
    assert.deepEqual(status.objects.filter((o) => o.name.includes('legac')), [
      { kind: 'ClusterRole', name: 'binnacle-legacy', present: true },
      { kind: 'CustomResourceDefinition', name: 'legacies.binnacle.dev', present: true },
    ], 'judged by release 0.0.1\'s own objects');

    // Judged by 0.0.1: its ClusterRole deleted by hand is missing.
    await client.delete(ROLE_REF);
    const half = await binnacle(['status-self']);
    assert.equal(half.code, 1);
    assert.match(half.stderr, /half-installed \(missing ClusterRole binnacle-legacy\): run `binnacle install-self --version 0\.0\.1` to repair/);
    const fixed = await binnacle(['install-self', '--version', '0.0.1', '-o', 'json'], { BINNACLE_RELEASE_REPO: releaseRepo });
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.deepEqual(rowsIn((JSON.parse(fixed.stdout) as { objects: Row[] }).objects, 'created'), ['ClusterRole binnacle-legacy']);
  });

  test("--version 0.0.2 upgrades the Deployment to 0.0.2's image, repairs what was deleted by hand, prunes what 0.0.2 lacks and keeps a CRD while it has custom resources", async () => {
    await client.create({ apiVersion: 'binnacle.dev/v1', kind: 'Legacy', metadata: { name: 'keep-me' } });
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

    assert.deepEqual(rowsIn(r.objects, 'pruned'), ['ClusterRole binnacle-legacy']);
    assert.equal(await client.find(ROLE_REF), undefined);
    assert.match(up.stderr, /pruned ClusterRole binnacle-legacy: not in release 0\.0\.2/);
    assert.deepEqual(rowsIn(r.objects, 'kept'), ['CustomResourceDefinition legacies.binnacle.dev']);
    assert.match(up.stderr, /kept CustomResourceDefinition legacies\.binnacle\.dev: not in release 0\.0\.2, but 1 custom resource\(s\) remain \(Legacy keep-me\)/);
    assert.equal(await gone(CRD_REF), false, 'the CRD and its custom resource stay');
    await client.get({ apiVersion: 'binnacle.dev/v1', kind: 'Legacy', name: 'keep-me' });
    assert.match(st.stderr, /left from an earlier install: CustomResourceDefinition legacies\.binnacle\.dev/);
    const json = JSON.parse((await binnacle(['status-self', '-o', 'json'])).stdout) as { objects: { name: string }[]; leftovers: string[] };
    assert.ok(!json.objects.some((o) => o.name.includes('legac')), 'judged by 0.0.2, which lacks them');
    assert.deepEqual(json.leftovers, ['CustomResourceDefinition legacies.binnacle.dev']);

    // Once its custom resource is gone, the next install prunes the CRD.
    await client.delete({ apiVersion: 'binnacle.dev/v1', kind: 'Legacy', name: 'keep-me' });
    const again = await binnacle(['install-self', '--version', '0.0.2', '--release-repo', releaseRepo, '-o', 'json']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(rowsIn((JSON.parse(again.stdout) as { objects: Row[] }).objects, 'pruned'), ['CustomResourceDefinition legacies.binnacle.dev']);
    assert.ok(await gone(CRD_REF));
    const after = JSON.parse((await binnacle(['status-self', '-o', 'json'])).stdout) as { state: string; leftovers: string[] };
    assert.deepEqual(after, { ...after, state: 'installed', leftovers: [] });
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

  test("--image after a release prunes what this binary's manifests lack; uninstall-self removes every object the installed release had", async () => {
    const one = await binnacle(['install-self', '--version', '0.0.1', '--release-repo', releaseRepo]);
    assert.equal(one.code, 0, one.stderr);
    await client.get(ROLE_REF);

    const img = await binnacle(['install-self', '--image', 'registry.example/binnacle:e2e', '-o', 'json']);
    assert.equal(img.code, 0, img.stderr);
    const r = JSON.parse(img.stdout) as { version?: string; previousVersion?: string; objects: Row[] };
    assert.equal(r.version, undefined);
    assert.equal(r.previousVersion, '0.0.1');
    assert.deepEqual(rowsIn(r.objects, 'pruned'), ['ClusterRole binnacle-legacy', 'CustomResourceDefinition legacies.binnacle.dev']);
    assert.match(img.stderr, /pruned ClusterRole binnacle-legacy, CustomResourceDefinition legacies\.binnacle\.dev: not in this binary's manifests/);
    assert.deepEqual(await deployment(), { image: 'registry.example/binnacle:e2e', version: undefined }, 'the release annotation went with the release');
    assert.equal(await client.find(ROLE_REF), undefined);

    const back = await binnacle(['install-self', '--version', '0.0.1', '--release-repo', releaseRepo, '-o', 'json']);
    assert.equal(back.code, 0, back.stderr);
    const st = await binnacle(['status-self', '-o', 'json']);
    assert.equal(st.code, 0, st.stderr);
    const installed = (JSON.parse(st.stdout) as { objects: { kind: string; name: string; namespace?: string; present: boolean }[] }).objects;
    assert.ok(installed.some((o) => o.name === 'binnacle-legacy' && o.present));
    assert.ok(installed.every((o) => o.present), JSON.stringify(installed));

    const un = await binnacle(['uninstall-self']);
    assert.equal(un.code, 0, un.stderr);
    // Every object of 0.0.1 and the record, plus whatever earlier installs' records still kept.
    const deletedCount = Number(/deleted (\d+) objects/.exec(un.stderr)?.[1] ?? NaN);
    assert.ok(deletedCount >= installed.length + 1, `deleted ${deletedCount} objects, at least the ${installed.length} of 0.0.1 and the record: ${un.stderr}`);
    const apiVersions = new Map([
      ['Namespace', 'v1'], ['ServiceAccount', 'v1'], ['Service', 'v1'], ['Secret', 'v1'], ['Deployment', 'apps/v1'], ['CustomResourceDefinition', 'apiextensions.k8s.io/v1'],
      ['ClusterRole', RBAC], ['ClusterRoleBinding', RBAC], ['Role', RBAC], ['RoleBinding', RBAC],
    ]);
    const left: string[] = [];
    for (const o of installed) {
      const apiVersion = apiVersions.get(o.kind);
      assert.ok(apiVersion !== undefined, `an API version for ${o.kind}`);
      if (!(await gone({ apiVersion, kind: o.kind, name: o.name, ...(o.namespace === undefined ? {} : { namespace: o.namespace }) }))) left.push(`${o.kind} ${o.name}`);
    }
    assert.deepEqual(left, []);
    assert.ok(await gone({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'binnacle-install-record' }));
    const none = await binnacle(['status-self', '-o', 'json']);
    assert.equal(none.code, 1);
    assert.equal((JSON.parse(none.stdout) as { state: string }).state, 'not-installed');
  });
});
