/**
 * Bundle sources against real services: image sources pulled from a real `docker-registry` on
 * loopback (anonymous, and one behind htpasswd whose credentials come from a
 * kubernetes.io/dockerconfigjson Secret in the cluster), and configMaps sources read from
 * ConfigMaps in the cluster.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { KubeClient } from '../../src/kube/client.js';
import { RegistryClient, buildImage, pushImage, startLocalRegistry, type LocalRegistry } from '../../src/oci/index.js';
import { digestTree, gcSources, unpackSource, type ProgressEvent } from '../../src/source/index.js';
import { e2eClient, uniqueName } from './env.js';

const logger = pino({ level: 'silent' });

describe('bundle sources', () => {
  let client: KubeClient;
  let base = '';
  let open: LocalRegistry;
  let secured: LocalRegistry;
  const ns = uniqueName('source');
  const bundleFiles: Record<string, string> = {
    'manifests/etcd.clusterserviceversion.yaml': 'apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: etcd.v0.9.4\n',
    'manifests/etcdclusters.crd.yaml': 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n',
    'metadata/annotations.yaml': 'annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n',
  };

  before(async () => {
    client = await e2eClient();
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    base = await mkdtemp(join(tmpdir(), 'source-e2e-'));
    open = await startLocalRegistry({ dataDir: join(base, 'open') });
    const htpasswd = join(base, 'htpasswd');
    await writeFile(htpasswd, execFileSync('htpasswd', ['-Bbn', 'alice', 'wonderland'], { encoding: 'utf8' }));
    secured = await startLocalRegistry({ dataDir: join(base, 'secured'), auth: { htpasswd: { path: htpasswd } } });
  });

  after(async () => {
    await secured.stop().catch(() => undefined);
    await open.stop().catch(() => undefined);
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
    client.close();
    await rm(base, { recursive: true, force: true });
  });

  async function bundleDir(name: string, extra: Record<string, string> = {}): Promise<string> {
    const dir = join(base, 'src', name);
    for (const [path, content] of Object.entries({ ...bundleFiles, ...extra })) {
      await mkdir(join(dir, path, '..'), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    return dir;
  }

  test('image source from a registry: tree, digest pinning, progress, cache reuse and gc', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const image = await buildImage({ layers: [{ dir: await bundleDir('open', { 'manifests/big.txt': big }), prefix: '/' }], labels: { 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1' } });
    const ref = `${open.host}/bundles/etcd:v0.9.4`;
    const pushed = await pushImage(image, ref, new RegistryClient({ auth: () => undefined }));
    const cacheDir = join(base, 'cache-open');
    const events: ProgressEvent[] = [];
    const r = await unpackSource({ type: 'image', ref }, { cacheDir, logger, onProgress: (p) => events.push(p) });
    assert.equal(r.resolved.type, 'image');
    assert.equal(r.resolved.image?.ref, ref);
    assert.equal(r.resolved.image?.digest, pushed.digest);
    assert.equal(await readFile(join(r.dir, 'metadata', 'annotations.yaml'), 'utf8'), bundleFiles['metadata/annotations.yaml']);
    assert.equal((await readFile(join(r.dir, 'manifests', 'big.txt'), 'utf8')).length, big.length);
    assert.equal((await digestTree(r.dir)).digest, r.digest);
    const pulls = events.filter((e) => e.phase === 'pull' && e.bytes !== undefined);
    assert.ok(pulls.length >= 1, 'progress while pulling');
    const lastPull = pulls.at(-1);
    assert.ok(lastPull?.total !== undefined && lastPull.bytes === lastPull.total, `progress reaches the total: ${JSON.stringify(lastPull)}`);

    // The same content by digest: answered from the cache even with the registry unreachable.
    const byDigest = `${open.host}/bundles/etcd@${pushed.digest}`;
    await open.stop();
    const again = await unpackSource({ type: 'image', ref: byDigest }, { cacheDir, logger, allowHostPaths: true });
    assert.equal(again.digest, r.digest);
    assert.deepEqual(again.resolved, { type: 'image', image: { ref: byDigest, digest: pushed.digest } });

    const gc = await gcSources(cacheDir, []);
    assert.equal(gc.removedTrees, 1);
    assert.ok(gc.removedBlobs >= 2, `image blobs go too: ${JSON.stringify(gc)}`);
    assert.deepEqual(await readdir(join(cacheDir, 'trees')), []);
  });

  test('image source behind htpasswd: credentials from a dockerconfigjson Secret', async () => {
    const image = await buildImage({ layers: [{ dir: await bundleDir('secured'), prefix: '/' }], labels: { 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1' } });
    const ref = `${secured.host}/private/etcd:v1`;
    await pushImage(image, ref, new RegistryClient({ auth: { username: 'alice', password: 'wonderland' } }));
    const dockerconfig = { auths: { [secured.host]: { auth: Buffer.from('alice:wonderland').toString('base64') } } };
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'regcred', namespace: ns },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(JSON.stringify(dockerconfig)).toString('base64') },
    });
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'wrongcred', namespace: ns },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { [secured.host]: { username: 'alice', password: 'nope' } } })).toString('base64') },
    });
    const cacheDir = join(base, 'cache-secured');

    const r = await unpackSource({ type: 'image', ref, pullSecret: { namespace: ns, name: 'regcred' } }, { cacheDir, logger, client });
    assert.equal(await readFile(join(r.dir, 'manifests', 'etcd.clusterserviceversion.yaml'), 'utf8'), bundleFiles['manifests/etcd.clusterserviceversion.yaml']);
    assert.match(r.resolved.image?.digest ?? '', /^sha256:[0-9a-f]{64}$/);

    // Without the secret's credentials the registry says no, and the error says which image.
    const fresh = join(base, 'cache-secured-2');
    await assert.rejects(unpackSource({ type: 'image', ref, pullSecret: { namespace: ns, name: 'wrongcred' } }, { cacheDir: fresh, logger, client }), {
      code: 'OCI_UNAUTHORIZED',
    });
    await assert.rejects(unpackSource({ type: 'image', ref, pullSecret: { namespace: ns, name: 'absent' } }, { cacheDir: fresh, logger, client }), {
      code: 'SOURCE_PULL_SECRET_NOT_FOUND',
      message: new RegExp(`Secret ${ns}/absent does not exist`),
    });
  });

  test('configMaps source from ConfigMaps in the cluster', async () => {
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'etcd-manifests', namespace: ns },
      data: {
        'etcd.clusterserviceversion.yaml': bundleFiles['manifests/etcd.clusterserviceversion.yaml'] ?? '',
        'etcdclusters.crd.yaml': bundleFiles['manifests/etcdclusters.crd.yaml'] ?? '',
      },
    });
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'etcd-metadata', namespace: ns },
      data: { 'annotations.yaml': bundleFiles['metadata/annotations.yaml'] ?? '' },
    });
    const cacheDir = join(base, 'cache-cm');
    const r = await unpackSource(
      {
        type: 'configMaps',
        configMaps: [
          { namespace: ns, name: 'etcd-manifests', path: 'manifests' },
          { namespace: ns, name: 'etcd-metadata', path: 'metadata' },
        ],
      },
      { cacheDir, logger, client },
    );
    // The same files as a local directory holding them: the same tree digest.
    const local = await unpackSource({ type: 'local', path: await bundleDir('cm-compare') }, { cacheDir, logger, allowHostPaths: true });
    assert.equal(r.digest, local.digest);
    assert.deepEqual((await readdir(r.dir)).sort(), ['manifests', 'metadata']);

    await assert.rejects(unpackSource({ type: 'configMaps', configMaps: [{ namespace: ns, name: 'nope' }] }, { cacheDir, logger, client }), {
      code: 'SOURCE_CONFIGMAP_NOT_FOUND',
      message: `ConfigMap ${ns}/nope does not exist`,
    });
  });
});
