/**
 * The ClusterCatalog reconciler's steps (HandleFinalizer → Validate → Pull → LoadAndServe), driven
 * with fakes: an in-memory client that counts status writes, a pull that hands back a fixture tree,
 * and the real registry and store. Each step's failure branch, and at most one status write per
 * reconcile.
 */
// test process: its own (its endless-read guard stops the process)
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { access, cp, mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { API_VERSION, FINALIZER_CLEANUP, type ClusterCatalog, type ClusterCatalogSpec } from '../api/types.js';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { DEFAULT_MAX_CATALOG_BYTES, DEFAULT_MAX_FILE_BYTES } from '../catalog/load.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog-render/index.js';
import { CLUSTER_CATALOG_CRD } from '../api/crds.js';
import type { ReconcileResult } from '../kube/controller.js';
import { FakeCluster, faults } from '../kube/fake-cluster.test-helper.js';
import type { Condition, KubeObject } from '../kube/types.js';
import type { PulledImage } from '../oci/index.js';
import { withoutEndlessRead } from '../util/endless-read.test-helper.js';
import { CatalogRegistry } from './catalog-registry.js';
import { ClusterCatalogReconciler, type ImagePull } from './cluster-catalog.js';

const logger = pino({ level: 'silent' });
const DIGEST = 'sha256:' + 'c'.repeat(64);
const IMAGE = 'quay.io/example/catalog:latest';
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** The one fake cluster holding the ClusterCatalog `ops`: what the reconciler wrote to it, and another writer's hand. */
class Kube {
  readonly cluster = new FakeCluster({ objects: [CLUSTER_CATALOG_CRD] });
  private readonly ref = { apiVersion: API_VERSION, kind: 'ClusterCatalog', name: 'ops' };

  get catalog(): ClusterCatalog | undefined {
    return this.cluster.get(this.ref) as ClusterCatalog | undefined;
  }

  /** Changes the catalog as someone else would (kubectl edit, the API server marking it deleted). */
  change(fn: (c: ClusterCatalog) => void): void {
    const c = structuredClone(this.catalog);
    assert.ok(c !== undefined);
    fn(c);
    this.cluster.put(c);
  }

  /** The catalog goes at once (no finalizer held it). */
  remove(): void {
    this.cluster.remove(this.ref);
  }

  /** Every status the reconciler wrote, as sent. */
  get statusWrites(): Record<string, unknown>[] {
    return this.cluster.statusApplied.filter((a) => a.obj.kind === 'ClusterCatalog').map((a) => a.obj.status as Record<string, unknown>);
  }

  /** The next patch of the catalog (a finalizer's) fails with a conflict. */
  failNextPatch(): void {
    this.cluster.inject({ verb: 'patch', kind: 'ClusterCatalog', error: faults.conflict });
  }
}

interface Harness {
  kube: Kube;
  registry: CatalogRegistry;
  storeDir: string;
  pulls: string[];
  reconcile: (signal?: AbortSignal) => Promise<ReconcileResult | undefined>;
}

/** A reconciler over one ClusterCatalog named `ops`; `pull` answers with the valid fixture catalog unless told otherwise. */
async function harness(spec: Partial<ClusterCatalogSpec> & Record<string, unknown>, pull?: ImagePull, follow = false): Promise<Harness> {
  const storeDir = await mkdtemp(join(tmpdir(), 'cc-test-'));
  dirs.push(storeDir);
  const kube = new Kube();
  const catalog: ClusterCatalog = {
    apiVersion: API_VERSION,
    kind: 'ClusterCatalog',
    metadata: { name: 'ops', finalizers: [FINALIZER_CLEANUP] },
    spec: { source: { type: 'Image', image: { ref: IMAGE } }, ...spec },
  };
  kube.cluster.put(catalog);
  const registry = new CatalogRegistry();
  const pulls: string[] = [];
  const fixture: PulledImage = { digest: DIGEST, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/fbc/valid' } };
  const r = new ClusterCatalogReconciler({
    client: kube.cluster.client(),
    registry,
    pull: (ref, opts) => {
      pulls.push(ref);
      return pull === undefined ? Promise.resolve(fixture) : pull(ref, opts);
    },
    storeDir,
    serverUrl: 'http://127.0.0.1:8083',
    retryAfterMs: 7_000,
    follow,
  });
  return { kube, registry, storeDir, pulls, reconcile: (signal?: AbortSignal) => r.reconcile({ key: 'ops', name: 'ops' }, { logger, signal: signal ?? new AbortController().signal }) };
}

function condition(status: Record<string, unknown> | undefined, type: string): Condition | undefined {
  return (status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
}

describe('ClusterCatalog reconciler, step by step with fakes', () => {
  test('success: the image is pulled, loaded, stored and served; status is written once with the digest, the URL and Serving', async () => {
    const h = await harness({ source: { type: 'Image', image: { ref: IMAGE, pollIntervalMinutes: 5 } } });
    const result = await h.reconcile();
    assert.deepEqual(h.pulls, [IMAGE]);
    assert.equal(h.registry.get('ops')?.digest, DIGEST);
    assert.equal(h.kube.statusWrites.length, 1, 'one status write per reconcile');
    const status = h.kube.statusWrites[0];
    assert.deepEqual(status?.resolvedSource, { type: 'Image', image: { ref: `quay.io/example/catalog@${DIGEST}` } });
    assert.deepEqual(status?.urls, { base: 'http://127.0.0.1:8083/catalogs/ops' });
    assert.equal(condition(status, 'Serving')?.status, 'True');
    assert.equal(condition(status, 'Progressing')?.reason, 'Succeeded');
    assert.deepEqual(result, { requeueAfterMs: 5 * 60_000 });
    await h.reconcile();
    assert.equal(h.kube.statusWrites.length, 1, 'the next reconcile (a poll that found the same content) has nothing new to say: no write');
    assert.equal(h.kube.catalog?.status?.lastUnpacked, status?.lastUnpacked, 'lastUnpacked kept');
  });

  test('a label added to a served catalog selects it now: the registry has the new labels and says so to its listeners, without loading the content again', async () => {
    const h = await harness({});
    await h.reconcile();
    const loaded = h.registry.get('ops');
    const changed: string[] = [];
    h.registry.onChange((name) => changed.push(name));
    const c = h.kube.catalog as ClusterCatalog;
    h.kube.cluster.put({ ...c, metadata: { ...c.metadata, labels: { team: 'monitoring' } } });
    await h.reconcile();
    assert.deepEqual(h.registry.get('ops')?.labels, { team: 'monitoring' });
    assert.equal(h.registry.get('ops')?.config, loaded?.config, 'the same content, not loaded again');
    assert.deepEqual(changed, ['ops']);
    await h.reconcile();
    assert.deepEqual(changed, ['ops'], 'unchanged labels say nothing');
  });

  describe('HandleFinalizer', () => {
    test('success: a catalog without the cleanup finalizer gets it and the reconcile goes on', async () => {
      const h = await harness({});
      h.kube.change((c) => (c.metadata.finalizers = []));
      await h.reconcile();
      assert.deepEqual(h.kube.catalog?.metadata.finalizers, [FINALIZER_CLEANUP]);
      assert.equal(h.registry.get('ops')?.digest, DIGEST);
      assert.equal(h.kube.statusWrites.length, 1);
    });

    test('failure: the finalizer patch fails; the error is said in status (Progressing=True Retrying, one write) and thrown for backoff; nothing is pulled', async () => {
      const h = await harness({});
      h.kube.change((c) => (c.metadata.finalizers = []));
      h.kube.failNextPatch();
      await assert.rejects(h.reconcile(), /has been modified/);
      assert.deepEqual(h.pulls, []);
      assert.equal(h.kube.statusWrites.length, 1);
      const progressing = h.kube.catalog?.status?.conditions?.find((c) => c.type === 'Progressing');
      assert.equal(progressing?.reason, 'Retrying');
      assert.match(progressing?.message ?? '', /has been modified/);
    });

    test('deleting: the catalog stops being served, its stored content goes, the finalizer is removed; no status written', async () => {
      const h = await harness({});
      await h.reconcile();
      await access(join(h.storeDir, 'ops'));
      h.kube.change((c) => (c.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
      const writes = h.kube.statusWrites.length;
      assert.equal(await h.reconcile(), undefined);
      assert.equal(h.registry.get('ops'), undefined);
      await assert.rejects(access(join(h.storeDir, 'ops')), /ENOENT/);
      assert.deepEqual((h.kube.cluster.patched.at(-1)?.patch as { metadata?: { finalizers?: string[] } } | undefined)?.metadata?.finalizers, [], 'the finalizer is removed');
      assert.equal(h.kube.catalog, undefined, 'and with it gone the catalog goes');
      assert.equal(h.kube.statusWrites.length, writes);
    });

    test('deleting: a failed finalizer removal is thrown; the catalog is no longer served', async () => {
      const h = await harness({});
      await h.reconcile();
      h.kube.change((c) => (c.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
      h.kube.failNextPatch();
      await assert.rejects(h.reconcile(), /has been modified/);
      assert.equal(h.registry.get('ops'), undefined);
    });
  });

  describe('Validate', () => {
    test('failure: a source with no image ref is Progressing=False Blocked; nothing is pulled; one write; no requeue', async () => {
      const h = await harness({ source: { type: 'Image', image: { ref: '' } } });
      assert.equal(await h.reconcile(), undefined);
      assert.deepEqual(h.pulls, []);
      assert.equal(h.kube.statusWrites.length, 1);
      const progressing = condition(h.kube.statusWrites[0], 'Progressing');
      assert.equal(progressing?.status, 'False');
      assert.equal(progressing?.reason, 'Blocked');
      assert.match(progressing?.message ?? '', /spec\.source: type must be Image/);
    });

    test('failure: a credential in the image ref is Blocked, named, and never pulled (the ref is not echoed back)', async () => {
      const h = await harness({ source: { type: 'Image', image: { ref: 'user:s3cret@quay.io/example/catalog:latest' } } });
      await h.reconcile();
      assert.deepEqual(h.pulls, []);
      assert.equal(h.kube.statusWrites.length, 1);
      const progressing = condition(h.kube.statusWrites[0], 'Progressing');
      assert.equal(progressing?.reason, 'Blocked');
      assert.match(progressing?.message ?? '', /^spec\.source\.image\.ref: /);
      assert.doesNotMatch(JSON.stringify(h.kube.statusWrites[0]), /s3cret/);
    });

    test('availabilityMode Unavailable: served content is withdrawn, Serving=False Unavailable, nothing pulled, one write', async () => {
      const h = await harness({});
      await h.reconcile();
      h.kube.change((c) => (c.spec.availabilityMode = 'Unavailable'));
      await h.reconcile();
      assert.deepEqual(h.pulls, [IMAGE], 'pulled once, for the first reconcile only');
      assert.equal(h.registry.get('ops'), undefined);
      assert.equal(h.kube.statusWrites.length, 2);
      assert.equal(condition(h.kube.statusWrites[1], 'Serving')?.reason, 'Unavailable');
    });
  });

  describe('Pull', () => {
    test('failure: a pull error is Progressing=True Retrying and Serving=False (nothing good yet); one write; retried after retryAfterMs', async () => {
      const h = await harness({}, () => Promise.reject(new Error('registry said 503')));
      const result = await h.reconcile();
      assert.deepEqual(result, { requeueAfterMs: 7_000 });
      assert.equal(h.kube.statusWrites.length, 1);
      const progressing = condition(h.kube.statusWrites[0], 'Progressing');
      assert.equal(progressing?.status, 'True');
      assert.equal(progressing?.reason, 'Retrying');
      assert.match(progressing?.message ?? '', /pulling quay\.io\/example\/catalog:latest: registry said 503/);
      assert.equal(condition(h.kube.statusWrites[0], 'Serving')?.status, 'False');
    });

    test('failure after good content: the last good catalog stays served and Serving stays True', async () => {
      let fail = false;
      const h = await harness({}, () => (fail ? Promise.reject(new Error('registry said 503')) : Promise.resolve({ digest: DIGEST, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/fbc/valid' } })));
      await h.reconcile();
      fail = true;
      await h.reconcile();
      assert.equal(h.registry.get('ops')?.digest, DIGEST);
      assert.equal(h.kube.statusWrites.length, 2);
      assert.equal(condition(h.kube.statusWrites[1], 'Progressing')?.reason, 'Retrying');
      assert.equal(condition(h.kube.statusWrites[1], 'Serving')?.status, 'True');
    });

    test('failure: ConfigMaps that cannot be read are Retrying, naming them; one write', async () => {
      const h = await harness({ source: { type: 'ConfigMaps', configMaps: [{ namespace: 'team-a', name: 'fbc' }] } });
      const result = await h.reconcile();
      assert.deepEqual(result, { requeueAfterMs: 7_000 });
      assert.deepEqual(h.pulls, [], 'ConfigMaps are read, not pulled');
      assert.equal(h.kube.statusWrites.length, 1);
      assert.match(condition(h.kube.statusWrites[0], 'Progressing')?.message ?? '', /reading ConfigMaps team-a\/fbc/);
    });
  });

  describe('LoadAndServe', () => {
    test('failure: an image whose catalog cannot be read is InvalidCatalog; nothing is served; one write', async () => {
      const h = await harness({}, () => Promise.resolve({ digest: DIGEST, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/bad/broken-yaml' } }));
      const result = await h.reconcile();
      assert.deepEqual(result, { requeueAfterMs: 7_000 });
      assert.equal(h.registry.get('ops'), undefined);
      assert.equal(h.kube.statusWrites.length, 1);
      const progressing = condition(h.kube.statusWrites[0], 'Progressing');
      assert.equal(progressing?.reason, 'InvalidCatalog');
      assert.match(progressing?.message ?? '', new RegExp(`image quay\\.io/example/catalog@${DIGEST}`));
    });

    test('failure: a catalog over the loader\'s bounds (a file of the bound on one catalog) is InvalidCatalog, naming the bound; nothing of it is read or served', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cc-too-large-'));
      dirs.push(dir);
      await cp(join(CATALOG_TESTDATA, 'fbc', 'valid'), join(dir, 'configs'), { recursive: true });
      // Sparse: nothing is written; read, it would be 512 MiB of NUL bytes held in memory.
      await writeFile(join(dir, 'configs', 'zz.json'), '');
      await truncate(join(dir, 'configs', 'zz.json'), DEFAULT_MAX_CATALOG_BYTES);
      const h = await harness({}, () => Promise.resolve({ digest: DIGEST, dir, labels: { [LABEL_CATALOG_CONFIGS]: '/configs' } }));
      await withoutEndlessRead('loading a catalog over the bound', () => h.reconcile());
      assert.equal(h.registry.get('ops'), undefined);
      const progressing = condition(h.kube.statusWrites[0], 'Progressing');
      assert.equal(progressing?.reason, 'InvalidCatalog');
      // One file this large crosses the bound on one file first (both are the loader's: load-limits.test.ts).
      assert.match(progressing?.message ?? '', new RegExp(`error \\[fbc\\.file-too-large\\] .*zz\\.json: file is ${DEFAULT_MAX_CATALOG_BYTES} bytes, over the ${DEFAULT_MAX_FILE_BYTES}-byte limit`));
    });

    test('the same content at another priority is served at it without being unpacked again (the file being served is not rewritten)', async () => {
      const h = await harness({});
      await h.reconcile();
      const before = h.registry.get('ops');
      assert.ok(before !== undefined);
      const { ino } = await stat(before.stored.file);
      h.kube.change((c) => (c.spec.priority = 5));
      await h.reconcile();
      const after = h.registry.get('ops');
      assert.equal(after?.priority, 5);
      assert.equal(after?.stored, before.stored, 'the same stored catalog');
      assert.equal((await stat(before.stored.file)).ino, ino, 'the same file');
    });

    test('content refused as invalid is refused again by its digest without being read again; other content is read', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cc-refused-'));
      dirs.push(dir);
      await cp(join(CATALOG_TESTDATA, 'bad', 'broken-yaml'), join(dir, 'configs'), { recursive: true });
      let digest = DIGEST;
      const h = await harness({}, () => Promise.resolve({ digest, dir, labels: { [LABEL_CATALOG_CONFIGS]: '/configs' } }));
      await h.reconcile();
      const first = condition(h.kube.statusWrites.at(-1), 'Progressing');
      assert.equal(first?.reason, 'InvalidCatalog');
      // Were it read again, the catalog gone from its tree would say so.
      await rm(join(dir, 'configs'), { recursive: true });
      await h.reconcile();
      assert.deepEqual(condition(h.kube.catalog?.status as Record<string, unknown>, 'Progressing')?.message, first?.message, 'the same refusal, the tree not read');
      // A new generation reads it again (a refusal may have come from a damaged tree, not the content).
      h.kube.change((c) => (c.spec.priority = 3));
      assert.equal(h.kube.catalog?.metadata.generation, 2);
      await h.reconcile();
      const again = condition(h.kube.catalog?.status as Record<string, unknown>, 'Progressing');
      assert.equal(again?.reason, 'InvalidCatalog');
      assert.notEqual(again?.message, first?.message, 'read again at the new generation');
      assert.match(again?.message ?? '', /not in the image/);
      digest = 'sha256:' + 'd'.repeat(64);
      await h.reconcile();
      const other = condition(h.kube.catalog?.status as Record<string, unknown>, 'Progressing');
      assert.equal(other?.reason, 'InvalidCatalog');
      assert.notEqual(other?.message, first?.message, 'new content is read');
      assert.match(other?.message ?? '', /ddddd/);
    });

    test('a catalog whose package has no default channel, and a channel with two heads, is served, as catalogd serves it (OLM v1 resolution reads every channel and entry)', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cc-nodefault-'));
      dirs.push(dir);
      await mkdir(join(dir, 'configs'));
      const fbc = [
        { schema: 'olm.package', name: 'test' },
        { schema: 'olm.channel', name: 'beta', package: 'test', entries: [{ name: 'test.1.0.0' }, { name: 'test.1.0.4' }] },
        { schema: 'olm.bundle', name: 'test.1.0.0', package: 'test', image: 'example.com/test:1.0.0', properties: [{ type: 'olm.package', value: { packageName: 'test', version: '1.0.0' } }] },
        { schema: 'olm.bundle', name: 'test.1.0.4', package: 'test', image: 'example.com/test:1.0.4', properties: [{ type: 'olm.package', value: { packageName: 'test', version: '1.0.4' } }] },
      ];
      await writeFile(join(dir, 'configs', 'catalog.json'), fbc.map((o) => JSON.stringify(o)).join('\n'));
      const h = await harness({}, () => Promise.resolve({ digest: DIGEST, dir, labels: { [LABEL_CATALOG_CONFIGS]: '/configs' } }));
      await h.reconcile();
      assert.equal(h.registry.get('ops')?.digest, DIGEST, 'served');
      assert.equal(condition(h.kube.statusWrites[0], 'Progressing')?.reason, 'Succeeded');
    });

    test('the registry resolves on the catalog without its bundles\' manifests (olm.bundle.object), while the store serves every byte of them', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cc-objects-'));
      dirs.push(dir);
      await mkdir(join(dir, 'configs'));
      const csv = Buffer.from(JSON.stringify({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', metadata: { name: 'test.v1.0.0' }, spec: { description: 'x'.repeat(5000) } })).toString('base64');
      const fbc = [
        { schema: 'olm.package', name: 'test', defaultChannel: 'stable' },
        { schema: 'olm.channel', name: 'stable', package: 'test', entries: [{ name: 'test.v1.0.0' }] },
        { schema: 'olm.bundle', name: 'test.v1.0.0', package: 'test', image: 'example.com/test:1.0.0', properties: [{ type: 'olm.package', value: { packageName: 'test', version: '1.0.0' } }, { type: 'olm.bundle.object', value: { data: csv } }] },
      ];
      await writeFile(join(dir, 'configs', 'catalog.json'), fbc.map((o) => JSON.stringify(o)).join('\n'));
      const h = await harness({}, () => Promise.resolve({ digest: DIGEST, dir, labels: { [LABEL_CATALOG_CONFIGS]: '/configs' } }));
      await h.reconcile();
      const served = h.registry.get('ops');
      assert.ok(served !== undefined, 'served');
      assert.deepEqual(served.config.bundles[0]?.properties.map((p) => p.type), ['olm.package'], 'resolution keeps what it reads');
      const stored = await readFile(served.stored.file, 'utf8');
      assert.ok(stored.includes(csv), 'the HTTP API serves the bundle object as the image holds it');
    });

    test('failure: a catalog that breaks the model rules is InvalidCatalog, and the last good content stays served', async () => {
      const other = 'sha256:' + 'd'.repeat(64);
      let bad = false;
      const h = await harness({}, () => Promise.resolve(bad ? { digest: other, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/invalid-model' } } : { digest: DIGEST, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/fbc/valid' } }));
      await h.reconcile();
      bad = true;
      await h.reconcile();
      assert.equal(h.registry.get('ops')?.digest, DIGEST, 'the last good content is still served');
      assert.equal(h.kube.statusWrites.length, 2);
      assert.equal(condition(h.kube.statusWrites[1], 'Progressing')?.reason, 'InvalidCatalog');
      assert.equal(condition(h.kube.statusWrites[1], 'Serving')?.status, 'True');
    });
  });

  test('a catalog that is gone is dropped from the registry; nothing is written', async () => {
    const h = await harness({});
    await h.reconcile();
    h.kube.remove();
    assert.equal(await h.reconcile(), undefined);
    assert.equal(h.registry.get('ops'), undefined);
    assert.equal(h.kube.statusWrites.length, 1);
  });
});

describe('ClusterCatalog reconciler as a follower (a replica that does not lead)', () => {
  const RESOLVED = `quay.io/example/catalog@${DIGEST}`;
  /** The status the leader wrote: `ref` resolved for the catalog's current generation (or `generationBehind` ones before), Serving unless told otherwise. */
  const resolvedBy = (h: Harness, ref: string, generationBehind = 0, serving: 'True' | 'False' = 'True'): void =>
    h.kube.change((c) => {
      const at = new Date().toISOString();
      c.status = {
        resolvedSource: { type: 'Image', image: { ref } },
        observedGeneration: (c.metadata.generation ?? 1) - generationBehind,
        conditions: [{ type: 'Serving', status: serving, reason: serving === 'True' ? 'Available' : 'Retrying', message: '', lastTransitionTime: at }],
      };
    });
  const nothingWritten = (h: Harness): void => {
    assert.deepEqual(h.kube.cluster.writes, [], 'the follower wrote nothing');
    assert.deepEqual(h.kube.statusWrites, [], 'no status written');
  };

  test('serves exactly the digest the leader resolved, verified by pulling it by digest, and writes nothing', async () => {
    const h = await harness({}, undefined, true);
    resolvedBy(h, RESOLVED);
    h.kube.cluster.writes.length = 0;
    await h.reconcile();
    assert.deepEqual(h.pulls, [RESOLVED], 'pulled by the digest in status, never the tag');
    assert.equal(h.registry.get('ops')?.digest, DIGEST);
    nothingWritten(h);
    await h.reconcile();
    assert.deepEqual(h.pulls, [RESOLVED, RESOLVED]);
    assert.ok(h.registry.get('ops') !== undefined, 'the same content still served');
  });

  test('nothing resolved yet, or resolved for an older generation: nothing pulled, nothing served, nothing written', async () => {
    const h = await harness({}, undefined, true);
    h.kube.cluster.writes.length = 0;
    assert.equal(await h.reconcile(), undefined, "the leader's status write brings it back");
    assert.deepEqual(h.pulls, []);
    nothingWritten(h);
    resolvedBy(h, RESOLVED, 1);
    h.kube.cluster.writes.length = 0;
    await h.reconcile();
    assert.deepEqual(h.pulls, []);
    assert.equal(h.registry.get('ops'), undefined);
    nothingWritten(h);
  });

  test('a status that names another repository, a tag, or no reference is not followed: whoever writes status chooses among the digests of the repository the spec names, no further', async () => {
    for (const ref of ['quay.io/attacker/catalog@' + DIGEST, 'quay.io/example/catalog:latest', 'docker.io/example/catalog@' + DIGEST, 'not a reference', '']) {
      const h = await harness({}, undefined, true);
      resolvedBy(h, ref);
      h.kube.cluster.writes.length = 0;
      await h.reconcile();
      assert.deepEqual(h.pulls, [], ref);
      assert.equal(h.registry.get('ops'), undefined, ref);
      nothingWritten(h);
    }
  });

  test('the leader serving nothing (Serving False, its last resolved source kept): the follower drops what it served', async () => {
    const h = await harness({}, undefined, true);
    resolvedBy(h, RESOLVED);
    await h.reconcile();
    assert.ok(h.registry.get('ops') !== undefined);
    resolvedBy(h, RESOLVED, 0, 'False');
    h.kube.cluster.writes.length = 0;
    await h.reconcile();
    assert.equal(h.registry.get('ops'), undefined, 'not served where the leader serves nothing');
    assert.equal(h.pulls.length, 1, 'nothing pulled');
    nothingWritten(h);
  });

  test('a follower stopped while its reconcile is in flight publishes nothing: the registry is the leader\'s then', async () => {
    const stop = new AbortController();
    const h = await harness({}, () => {
      stop.abort();
      return Promise.resolve({ digest: DIGEST, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/fbc/valid' } });
    }, true);
    resolvedBy(h, RESOLVED);
    await h.reconcile(stop.signal);
    assert.deepEqual(h.pulls, [RESOLVED]);
    assert.equal(h.registry.get('ops'), undefined);
  });

  test('a pull that fails leaves nothing served and nothing written, and is tried again', async () => {
    const h = await harness({}, () => Promise.reject(new Error('registry down')), true);
    resolvedBy(h, RESOLVED);
    h.kube.cluster.writes.length = 0;
    const result = await h.reconcile();
    assert.deepEqual(result, { requeueAfterMs: 7_000 });
    assert.equal(h.registry.get('ops'), undefined);
    nothingWritten(h);
  });

  test('a catalog being deleted is no longer served and its store is removed; the finalizer is the leader\'s to remove', async () => {
    const h = await harness({}, undefined, true);
    resolvedBy(h, RESOLVED);
    await h.reconcile();
    assert.ok(h.registry.get('ops') !== undefined);
    h.kube.change((c) => {
      c.metadata.deletionTimestamp = new Date().toISOString();
    });
    h.kube.cluster.writes.length = 0;
    await h.reconcile();
    assert.equal(h.registry.get('ops'), undefined);
    await assert.rejects(access(join(h.storeDir, 'ops')), 'its stored content is gone');
    assert.deepEqual(h.kube.catalog?.metadata.finalizers, [FINALIZER_CLEANUP], 'the finalizer stays');
    nothingWritten(h);
  });

  test('ConfigMaps: served when they still hold what the leader read (the digest of their files), not when they changed since; nothing written', async () => {
    const fbc = [
      { schema: 'olm.package', name: 'p', defaultChannel: 'stable' },
      { schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1.0.0' }] },
      { schema: 'olm.bundle', name: 'p.v1.0.0', package: 'p', image: 'quay.io/x/p:1', properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }] },
    ];
    const configMap = (content: object[]): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'fbc' }, data: { 'catalog.json': content.map((x) => JSON.stringify(x)).join('\n') } });
    const spec = { source: { type: 'ConfigMaps' as const, configMaps: [{ namespace: 'team-a', name: 'fbc' }] } };
    // The leader reads them and says what it resolved.
    const leader = await harness(spec);
    leader.kube.cluster.put(configMap(fbc));
    await leader.reconcile();
    const resolved = (leader.kube.statusWrites[0]?.resolvedSource as { image: { ref: string } } | undefined)?.image.ref;
    assert.match(resolved ?? '', /@sha256:[0-9a-f]{64}$/);
    const follower = await harness(spec, undefined, true);
    follower.kube.cluster.put(configMap(fbc));
    resolvedBy(follower, resolved ?? '');
    follower.kube.cluster.writes.length = 0;
    await follower.reconcile();
    assert.equal(follower.registry.get('ops')?.digest, leader.registry.get('ops')?.digest, 'the same content as the leader');
    nothingWritten(follower);
    // Changed since the leader read them: not served until the leader says so.
    const changed = await harness(spec, undefined, true);
    changed.kube.cluster.put(configMap([...fbc, { schema: 'olm.bundle', name: 'p.v1.1.0', package: 'p', image: 'quay.io/x/p:2', properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.1.0' } }] }]));
    resolvedBy(changed, resolved ?? '');
    changed.kube.cluster.writes.length = 0;
    assert.deepEqual(await changed.reconcile(), { requeueAfterMs: 5 * 60_000 }, "the leader's next status write brings it back; a look in 5 minutes all the same");
    assert.equal(changed.registry.get('ops'), undefined);
    nothingWritten(changed);
  });
});
