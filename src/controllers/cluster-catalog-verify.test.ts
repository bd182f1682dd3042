import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { CLUSTER_CATALOG_CRD } from '../api/crds.js';
import { API_VERSION, FINALIZER_CLEANUP } from '../api/types.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import type { Condition, KubeObject } from '../kube/types.js';
import { SignatureVerificationError, type PulledImage } from '../oci/index.js';
import type { VerifyPolicy } from '../source/index.js';
import { CatalogRegistry } from './catalog-registry.js';
import { ClusterCatalogReconciler, type ImageVerify } from './cluster-catalog.js';

const logger = pino({ level: 'silent' });
const ctx = { logger, signal: new AbortController().signal };
const GOOD = `sha256:${'a'.repeat(64)}`;
const EVIL = `sha256:${'b'.repeat(64)}`;

/** A ClusterCatalog `ops` with this source, as written (a source the types would not allow included). */
function catalog(source: Record<string, unknown>): KubeObject {
  return { apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'ops', finalizers: [FINALIZER_CLEANUP] }, spec: { source } };
}

/** The one fake cluster holding `obj`; every status written to it, as sent. */
function fakeClient(obj: KubeObject): { client: FakeClient; writes: Record<string, unknown>[] } {
  const cluster = new FakeCluster({ objects: [CLUSTER_CATALOG_CRD, obj] });
  return {
    client: cluster.client(),
    get writes() {
      return cluster.statusApplied.map((a) => a.obj.status as Record<string, unknown>);
    },
  };
}

async function fbcDir(root: string): Promise<string> {
  const dir = join(root, 'img');
  await mkdir(join(dir, 'configs'), { recursive: true });
  await writeFile(join(dir, 'configs', 'catalog.yaml'), 'schema: olm.package\nname: demo\ndefaultChannel: stable\n---\nschema: olm.channel\nname: stable\npackage: demo\nentries:\n  - name: demo.v1.0.0\n---\nschema: olm.bundle\nname: demo.v1.0.0\npackage: demo\nimage: registry.example/demo-bundle:1.0.0\nproperties:\n  - type: olm.package\n    value: {packageName: demo, version: 1.0.0}\n');
  return dir;
}

const conditionOf = (writes: Record<string, unknown>[], type: string): Condition | undefined => (writes.at(-1)?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
const verify = { provider: 'cosign', secretRef: { namespace: 'binnacle-system', name: 'catalog-keys' } };

test('a ClusterCatalog with verify: pulled at the verified digest when signed; a refused image is not served and the last good content stays', async () => {
  const root = await mkdtemp(join(tmpdir(), 'catalog-verify-'));
  try {
    const dir = await fbcDir(root);
    const pulls: string[] = [];
    const policies: VerifyPolicy[] = [];
    let signed = true;
    const verifyPort: ImageVerify = (ref, policy) => {
      policies.push(policy);
      if (!signed) return Promise.reject(new SignatureVerificationError(ref, EVIL, 'SignatureMismatch', 'no valid signature: no trusted key verifies it'));
      return Promise.resolve(`registry.example/catalog@${GOOD}`);
    };
    const pull = (ref: string): Promise<PulledImage> => {
      pulls.push(ref);
      return Promise.resolve({ digest: GOOD, dir, labels: {} });
    };
    const registry = new CatalogRegistry();
    const cat = catalog({ type: 'Image', image: { ref: 'registry.example/catalog:latest' }, verify });
    const kube = fakeClient(cat);
    const r = new ClusterCatalogReconciler({ client: kube.client, registry, pull, storeDir: join(root, 'store'), serverUrl: 'http://127.0.0.1:1', verify: verifyPort });
    await r.reconcile({ key: 'ops', name: 'ops' }, ctx);
    assert.deepEqual(pulls, [`registry.example/catalog@${GOOD}`], 'pulled at exactly the verified digest');
    assert.deepEqual(policies[0], { provider: 'cosign', secretRef: { namespace: 'binnacle-system', name: 'catalog-keys' } });
    assert.equal(conditionOf(kube.writes, 'Serving')?.status, 'True');

    signed = false;
    await r.reconcile({ key: 'ops', name: 'ops' }, ctx);
    assert.equal(pulls.length, 1, 'a refused image is not pulled');
    const progressing = conditionOf(kube.writes, 'Progressing');
    assert.equal(progressing?.reason, 'VerificationFailed');
    assert.match(progressing?.message ?? '', new RegExp(`registry\\.example/catalog:latest \\(digest ${EVIL}\\) is refused`));
    assert.equal(registry.get('ops')?.digest, GOOD, 'the last good content is still served');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a ClusterCatalog from ConfigMaps with verify is refused, naming the source type', async () => {
  const cat = catalog({ type: 'ConfigMaps', configMaps: [{ namespace: 'a', name: 'b' }], verify });
  const kube = fakeClient(cat);
  const r = new ClusterCatalogReconciler({ client: kube.client, registry: new CatalogRegistry(), pull: () => Promise.reject(new Error('no pull')), storeDir: '/nonexistent', serverUrl: 'http://127.0.0.1:1' });
  await r.reconcile({ key: 'ops', name: 'ops' }, ctx);
  const progressing = conditionOf(kube.writes, 'Progressing');
  assert.equal(progressing?.reason, 'Blocked');
  assert.match(progressing?.message ?? '', /spec\.source\.verify: a ConfigMaps source cannot carry an OCI signature/);
});

test('a follower verifies the digest the leader resolved again with the catalog\'s policy: a refused one is neither pulled nor served, and nothing is written', async () => {
  const root = await mkdtemp(join(tmpdir(), 'catalog-verify-'));
  try {
    const dir = await fbcDir(root);
    const verified: string[] = [];
    const policies: VerifyPolicy[] = [];
    const pulls: string[] = [];
    let signed = true;
    const verifyPort: ImageVerify = (ref, policy) => {
      verified.push(ref);
      policies.push(policy);
      return signed ? Promise.resolve(ref) : Promise.reject(new SignatureVerificationError(ref, GOOD, 'SignatureMismatch', 'no valid signature: no trusted key verifies it'));
    };
    const pull = (ref: string): Promise<PulledImage> => {
      pulls.push(ref);
      return Promise.resolve({ digest: GOOD, dir, labels: {} });
    };
    const cat = catalog({ type: 'Image', image: { ref: 'registry.example/catalog:latest' }, verify });
    // What the leader wrote: this digest resolved, served.
    cat.status = {
      resolvedSource: { type: 'Image', image: { ref: `registry.example/catalog@${GOOD}` } },
      observedGeneration: 1,
      conditions: [{ type: 'Serving', status: 'True', reason: 'Available', message: '', lastTransitionTime: new Date().toISOString() }],
    };
    const kube = fakeClient(cat);
    const registry = new CatalogRegistry();
    const r = new ClusterCatalogReconciler({ client: kube.client, registry, pull, storeDir: join(root, 'store'), serverUrl: 'http://127.0.0.1:1', verify: verifyPort, follow: true });

    signed = false;
    await r.reconcile({ key: 'ops', name: 'ops' }, ctx);
    assert.deepEqual(verified, [`registry.example/catalog@${GOOD}`], 'the status digest verified, not the tag');
    assert.deepEqual(policies, [verify], "with the catalog's own policy");
    assert.deepEqual(pulls, [], 'a digest its policy refuses is not pulled');
    assert.equal(registry.get('ops'), undefined, 'nor served');
    assert.deepEqual(kube.writes, [], 'a follower writes no status');

    signed = true;
    await r.reconcile({ key: 'ops', name: 'ops' }, ctx);
    assert.deepEqual(pulls, [`registry.example/catalog@${GOOD}`], 'pulled at the verified digest');
    assert.equal(registry.get('ops')?.digest, GOOD);
    assert.deepEqual(kube.writes, []);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
