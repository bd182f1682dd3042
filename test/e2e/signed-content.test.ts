/**
 * Signed content on the local control plane and registry (issue 31 §3): a catalog and a bundle
 * signed by `binnacle sign`'s code are accepted; an unsigned catalog, an unsigned bundle and one
 * signed by an untrusted key are refused with a condition naming the artifact, its digest and the
 * reason, while what was installed keeps running; a key rotation (old and new key both in the
 * Secret) accepts content signed by the new key. A HelmOperator serves a signed OCI chart and
 * refuses an unsigned one.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningManager } from '../../src/controllers/manager.js';
import { RegistryClient, buildImage, generateSigningKeyPair, parsePrivateKey, pushImage, signImage } from '../../src/oci/index.js';
import { LABEL_CATALOG_CONFIGS } from '../../src/catalog-render/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type Condition } from '../../src/kube/types.js';
import { API_VERSION, type BundleDeployment, type ClusterCatalog, type HelmOperator } from '../../src/api/types.js';
import { MediaType, sha256Digest } from '../../src/oci/index.js';
import { HelmMediaType } from '../../src/helm/chart-source/oci.js';
import { chartArchive } from '../../src/helm/chart-source/fixtures.test-helper.js';
import { adminInstaller, e2eClient, e2eRegistry, eventually, startE2eManager, uniqueName } from './env.js';

const started = Date.now();
let client: KubeClient;
let manager: RunningManager;
let work = '';
const ns = uniqueName('signed');
const repo = uniqueName('signed');
const oldKey = generateSigningKeyPair();
const newKey = generateSigningKeyPair();
const registry = (): RegistryClient => new RegistryClient({ auth: () => undefined });
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const created: { kind: string; name: string }[] = [];

async function push(name: string, files: Record<string, string>, labels: Record<string, string> = {}): Promise<string> {
  const dir = join(work, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const image = await buildImage({ layers: [{ dir, prefix: '/' }], labels, outputDir: join(work, `layout-${name}`) });
  const ref = `${e2eRegistry()}/${repo}/${name}:v1`;
  await pushImage(image, ref, registry());
  return ref;
}

const sign = (ref: string, pem: string) => signImage(registry(), ref, parsePrivateKey(pem, 'key'));

async function keys(pubs: Record<string, string>): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'signing-keys', namespace: ns }, type: 'Opaque', data: Object.fromEntries(Object.entries(pubs).map(([k, v]) => [k, b64(v)])) });
}

const verify = () => ({ provider: 'cosign' as const, secretRef: { namespace: ns, name: 'signing-keys' } });

async function condition(kind: 'ClusterCatalog' | 'BundleDeployment' | 'HelmOperator', name: string, type: string, want: (c: Condition) => boolean, timeoutMs = 90_000): Promise<Condition> {
  try {
    return await eventually(`${kind} ${name} ${type}`, async () => {
      const o = await client.get<ClusterCatalog | BundleDeployment>({ apiVersion: API_VERSION, kind, name });
      const c = findCondition(o.status?.conditions, type);
      return c !== undefined && want(c) ? c : undefined;
    }, timeoutMs, 500);
  } catch (err) {
    const o = await client.find<ClusterCatalog>({ apiVersion: API_VERSION, kind, name });
    throw new Error(`${String(err)}\n${(o?.status?.conditions ?? []).map((c) => `  ${c.type}=${c.status} ${c.reason}: ${c.message}`).join('\n')}`, { cause: err });
  }
}

const FBC = `schema: olm.package\nname: demo\ndefaultChannel: stable\n---\nschema: olm.channel\nname: stable\npackage: demo\nentries:\n  - name: demo.v1.0.0\n---\nschema: olm.bundle\nname: demo.v1.0.0\npackage: demo\nimage: registry.example/demo-bundle:1.0.0\nproperties:\n  - type: olm.package\n    value: {packageName: demo, version: 1.0.0}\n`;
const bundle = (value: string) => ({ 'manifests/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: signed-demo\n  namespace: ${ns}\ndata:\n  value: ${value}\n` });

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-signed-'));
  await adminInstaller(client, ns);
  await keys({ 'old.pub': oldKey.publicKey });
  manager = await startE2eManager('signed-content', client, work, { healthTimeoutMs: 60_000 });
});

after(async () => {
  for (const o of created) await client.delete({ apiVersion: API_VERSION, kind: o.kind, name: o.name }).catch(() => undefined);
  // Finalizers (a HelmOperator's CRDs, a BundleDeployment's objects) need the manager still running.
  for (const o of created) await eventually(`${o.kind} ${o.name} gone`, async () => ((await client.find({ apiVersion: API_VERSION, kind: o.kind, name: o.name })) === undefined ? true : undefined), 60_000).catch(() => undefined);
  await manager?.stop();
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
  await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${ns}-installer` }).catch(() => undefined);
  client.close();
  await rm(work, { recursive: true, force: true });
  console.log(`# signed-content e2e: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

test('a signed catalog is served; an unsigned one is refused, naming image, digest and reason', async () => {
  const signed = await push('catalog-signed', { 'configs/catalog.yaml': FBC }, { [LABEL_CATALOG_CONFIGS]: '/configs' });
  const unsigned = await push('catalog-unsigned', { 'configs/catalog.yaml': FBC.replace('demo', 'other') }, { [LABEL_CATALOG_CONFIGS]: '/configs' });
  await sign(signed, oldKey.privateKey);
  for (const [name, ref] of [[`${repo}-good`, signed], [`${repo}-bad`, unsigned]] as const) {
    await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name }, spec: { source: { type: 'Image', image: { ref }, verify: verify() } } });
    created.push({ kind: 'ClusterCatalog', name });
  }
  await condition('ClusterCatalog', `${repo}-good`, 'Serving', (c) => c.status === 'True');
  const refused = await condition('ClusterCatalog', `${repo}-bad`, 'Progressing', (c) => c.reason === 'VerificationFailed');
  assert.match(refused.message, new RegExp(`${unsigned.replace(/[.]/g, '\\.')} \\(digest sha256:[0-9a-f]{64}\\) is refused: it has no cosign signature`));
  const serving = await condition('ClusterCatalog', `${repo}-bad`, 'Serving', () => true);
  assert.equal(serving.status, 'False');
});

test('a signed bundle installs; an unsigned or wrongly signed update is refused and the installed one keeps running; a key rotation accepts the new key', async () => {
  const name = `${repo}-bd`;
  const v1 = await push('bundle-v1', bundle('one'));
  await sign(v1, oldKey.privateKey);
  const spec = (ref: string) => ({ source: { type: 'image', image: { ref }, verify: verify() }, format: 'plain', installNamespace: ns, serviceAccount: { name: 'installer' } });
  await client.apply({ apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name }, spec: spec(v1) });
  created.push({ kind: 'BundleDeployment', name });
  await condition('BundleDeployment', name, 'Installed', (c) => c.status === 'True');
  const cm = async () => (await client.get<{ data?: Record<string, string> } & import('../../src/kube/types.js').KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'signed-demo' })).data?.value;
  assert.equal(await cm(), 'one');

  // Unsigned content: refused, and what runs stays.
  const v2 = await push('bundle-v2', bundle('two'));
  await client.apply({ apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name }, spec: spec(v2) });
  const unsigned = await condition('BundleDeployment', name, 'Unpacked', (c) => c.reason === 'VerificationFailed');
  assert.match(unsigned.message, /bundle-v2:v1 \(digest sha256:[0-9a-f]{64}\) is refused: it has no cosign signature/);
  assert.equal(await cm(), 'one', 'the installed bundle keeps running');

  // Signed by a key the Secret does not hold yet: refused too.
  await sign(v2, newKey.privateKey);
  await client.patch({ apiVersion: API_VERSION, kind: 'BundleDeployment', name }, { metadata: { annotations: { 'signed-e2e/try': '1' } } });
  await condition('BundleDeployment', name, 'Unpacked', (c) => c.reason === 'VerificationFailed' && /no trusted key .*old\.pub.* verifies it/.test(c.message));
  assert.equal(await cm(), 'one');

  // Rotation: the new key joins the old one; the new content is accepted.
  await keys({ 'old.pub': oldKey.publicKey, 'new.pub': newKey.publicKey });
  await client.patch({ apiVersion: API_VERSION, kind: 'BundleDeployment', name }, { metadata: { annotations: { 'signed-e2e/try': '2' } } });
  await condition('BundleDeployment', name, 'Unpacked', (c) => c.status === 'True');
  await eventually('the new bundle applied', async () => ((await cm()) === 'two' ? true : undefined), 60_000, 500);
});

/** A tiny Helm chart pushed as an OCI artifact (what `helm push` makes). */
async function pushChart(name: string, version: string): Promise<string> {
  const archive = chartArchive(name, version);
  const config = Buffer.from(JSON.stringify({ name, version, apiVersion: 'v2' }));
  const ref = `${e2eRegistry()}/${repo}/charts/${name}`;
  for (const b of [archive, config]) await registry().uploadBlob(ref, { digest: sha256Digest(b), size: b.length, open: () => b });
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config: { mediaType: HelmMediaType.config, digest: sha256Digest(config), size: config.length },
    layers: [{ mediaType: HelmMediaType.chart, digest: sha256Digest(archive), size: archive.length }],
  };
  await registry().putManifest(`${ref}:${version}`, Buffer.from(JSON.stringify(manifest)), MediaType.ociManifest);
  return ref;
}

test("a HelmOperator serves a signed OCI chart and refuses an unsigned one, naming chart, digest and reason", async () => {
  const signed = await pushChart('signedapp', '1.0.0');
  const unsigned = await pushChart('unsignedapp', '1.0.0');
  await sign(`${signed}:1.0.0`, newKey.privateKey);
  await keys({ 'old.pub': oldKey.publicKey, 'new.pub': newKey.publicKey });
  const hop = (name: string, ref: string, kind: string) => ({
    apiVersion: API_VERSION,
    kind: 'HelmOperator',
    metadata: { name },
    spec: { chart: { oci: { ref: `oci://${ref}`, insecure: true }, version: '1.0.0', verify: verify() }, kinds: [{ group: `${repo}.e2e.binnacle.dev`, version: 'v1alpha1', kind }], serviceAccount: { name: 'installer' } },
  });
  await client.apply(hop(`${repo}-chart-good`, signed, 'SignedApp'));
  created.push({ kind: 'HelmOperator', name: `${repo}-chart-good` });
  await client.apply(hop(`${repo}-chart-bad`, unsigned, 'UnsignedApp'));
  created.push({ kind: 'HelmOperator', name: `${repo}-chart-bad` });
  await condition('HelmOperator', `${repo}-chart-good`, 'Ready', (c) => c.status === 'True', 120_000);
  const good = await client.get<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name: `${repo}-chart-good` });
  assert.equal(good.status?.chart?.version, '1.0.0');
  const refused = await condition('HelmOperator', `${repo}-chart-bad`, 'Ready', (c) => c.reason === 'VerificationFailed');
  assert.match(refused.message, /charts\/unsignedapp:1\.0\.0 \(digest sha256:[0-9a-f]{64}\) is refused: it has no cosign signature/);
  const bad = await client.get<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name: `${repo}-chart-bad` });
  assert.equal(bad.status?.chart, undefined, 'nothing of the refused chart was loaded');
  assert.equal(await client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `unsignedapps.${repo}.e2e.binnacle.dev` }), undefined, 'no CRD for its kind');
});
