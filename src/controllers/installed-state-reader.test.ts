/**
 * The default installed-state view: the caches are read once they have seen this manager's own
 * writes; the API server is listed at first, after a delete, when the caches lag, and when the
 * installed-state lock was taken anew.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../api/types.js';
import { ALL_CRDS } from '../api/crds.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { CachedInstalledStateReader, type KindCache } from './installed-state-reader.js';

const ce: ClusterExtension = {
  apiVersion: API_VERSION,
  kind: 'ClusterExtension',
  metadata: { name: 'demo' },
  spec: { namespace: 'ns', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'demo' } } },
};

/** A cache that has seen everything up to `seen`. */
class FakeCache<T extends KubeObject> implements KindCache<T> {
  seen = 0;
  readonly asked: string[] = [];
  constructor(private readonly items: T[]) {}
  get(key: string): T | undefined {
    return this.items.find((x) => x.metadata.name === key);
  }
  list(): T[] {
    return this.items;
  }
  waitForResourceVersion(rv: string | undefined): Promise<boolean> {
    this.asked.push(rv ?? '');
    return Promise.resolve(rv === undefined || rv === '' || Number(rv) <= this.seen);
  }
}

/** The reader over the one fake cluster holding the extension `demo`, with caches that have seen nothing yet; `rv` is the cluster's resourceVersion now. */
function setup(): { reader: CachedInstalledStateReader; deployments: FakeCache<BundleDeployment>; extensions: FakeCache<ClusterExtension>; lock: { acquisitions: number; withLock: <T>(fn: () => Promise<T>) => Promise<T> }; lists: () => string[]; rv: number } {
  const cluster = new FakeCluster({ objects: [...ALL_CRDS, ce] });
  const deployments = new FakeCache<BundleDeployment>([]);
  const extensions = new FakeCache<ClusterExtension>([ce]);
  const lock = { acquisitions: 1, withLock: <T>(fn: () => Promise<T>): Promise<T> => fn() };
  const lists = (): string[] => cluster.log.filter((r) => r.verb === 'list').map((r) => r.kind);
  return { reader: new CachedInstalledStateReader({ client: cluster.client(), lock, caches: { deployments, extensions } }), deployments, extensions, lock, lists, rv: cluster.resourceVersion };
}

describe('CachedInstalledStateReader', () => {
  test('the first read lists the API server; the next reads the caches once they have seen what the list saw', async () => {
    const { reader, deployments, extensions, lists, rv } = setup();
    assert.equal((await reader.read('demo'))?.extension.metadata.name, 'demo');
    assert.deepEqual(reader.reads, { cached: 0, live: 1 });
    assert.deepEqual(lists().sort(), ['BundleDeployment', 'ClusterExtension']);
    deployments.seen = rv - 1;
    extensions.seen = rv - 1;
    await reader.read('demo');
    assert.deepEqual(reader.reads, { cached: 0, live: 2 }, 'caches behind the live list are not read');
    deployments.seen = rv;
    extensions.seen = rv;
    await reader.read('demo');
    assert.deepEqual(reader.reads, { cached: 1, live: 2 });
    assert.equal(extensions.asked.at(-1), String(rv), 'waits for the resourceVersion the live list saw');
  });

  test('caches that have not seen this manager\'s last write are not read', async () => {
    const { reader, deployments, extensions, rv } = setup();
    await reader.read('demo');
    deployments.seen = rv;
    extensions.seen = rv;
    reader.wrote('deployments', { apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name: 'x', resourceVersion: String(rv + 2) } });
    await reader.read('demo');
    assert.deepEqual(reader.reads, { cached: 0, live: 2 });
  });

  test('after a delete, and when the lock was taken anew, the API server is listed', async () => {
    const { reader, deployments, extensions, lock } = setup();
    deployments.seen = 100;
    extensions.seen = 100;
    await reader.read('demo');
    await reader.read('demo');
    assert.deepEqual(reader.reads, { cached: 1, live: 1 });
    reader.deleting();
    await reader.read('demo');
    assert.deepEqual(reader.reads, { cached: 1, live: 2 });
    lock.acquisitions = 2;
    await reader.read('demo');
    assert.deepEqual(reader.reads, { cached: 1, live: 3 });
    await reader.read('demo');
    assert.deepEqual(reader.reads, { cached: 2, live: 3 });
  });

  test('a resourceVersion that is not an integer cannot be compared: the API server is listed', async () => {
    const { reader, deployments, extensions } = setup();
    deployments.seen = 100;
    extensions.seen = 100;
    await reader.read('demo');
    reader.wrote('extensions', { apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name: 'demo', resourceVersion: 'abc' } });
    await reader.read('demo');
    assert.deepEqual(reader.reads, { cached: 0, live: 2 });
  });

  test('an extension that is gone reads as undefined', async () => {
    const { reader } = setup();
    assert.equal(await reader.read('gone'), undefined);
  });
});
