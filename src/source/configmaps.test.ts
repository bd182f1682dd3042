import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { parseDockerConfig, pullSecretCredentials } from './image.js';
import { secretReader } from './secrets.js';
import { unpackSource } from './unpack.js';

const logger = pino({ level: 'silent' });

/** The one fake cluster holding `objects`, read as its admin. */
function fakeClient(objects: KubeObject[]): FakeClient {
  return new FakeCluster({ objects }).client();
}

function cm(namespace: string, name: string, data: Record<string, unknown>, binaryData?: Record<string, unknown>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name }, data, ...(binaryData === undefined ? {} : { binaryData }) };
}

async function withCache(fn: (cacheDir: string) => Promise<void>): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), 'source-cm-'));
  try {
    await fn(join(base, 'cache'));
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

test('data and binaryData keys become files under each path', async () => {
  await withCache(async (cacheDir) => {
    const client = fakeClient([
      cm('olm', 'manifests', { 'csv.yaml': 'kind: ClusterServiceVersion\n' }, { 'icon.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0]).toString('base64') }),
      cm('olm', 'metadata', { 'annotations.yaml': 'annotations: {}\n' }),
    ]);
    const source = {
      type: 'configMaps',
      configMaps: [
        { namespace: 'olm', name: 'manifests', path: 'manifests' },
        { namespace: 'olm', name: 'metadata', path: 'metadata' },
      ],
    } as const;
    const r = await unpackSource({ ...source, configMaps: [...source.configMaps] }, { cacheDir, logger, client });
    assert.deepEqual(r.resolved, { type: 'configMaps' });
    assert.equal(await readFile(join(r.dir, 'manifests', 'csv.yaml'), 'utf8'), 'kind: ClusterServiceVersion\n');
    assert.deepEqual([...(await readFile(join(r.dir, 'manifests', 'icon.png')))], [0x89, 0x50, 0x4e, 0x47, 0]);
    assert.equal(await readFile(join(r.dir, 'metadata', 'annotations.yaml'), 'utf8'), 'annotations: {}\n');
  });
});

test('a missing ConfigMap, a clash of files, bad keys and no client give clear errors', async () => {
  await withCache(async (cacheDir) => {
    const client = fakeClient([cm('a', 'one', { 'x.yaml': '1' }), cm('a', 'two', { 'x.yaml': '2' }), cm('a', 'bad', { 'x.yaml': 5 })]);
    await assert.rejects(unpackSource({ type: 'configMaps', configMaps: [{ namespace: 'a', name: 'gone' }] }, { cacheDir, logger, client }), {
      code: 'SOURCE_CONFIGMAP_NOT_FOUND',
      message: 'ConfigMap a/gone does not exist',
    });
    await assert.rejects(
      unpackSource(
        {
          type: 'configMaps',
          configMaps: [
            { namespace: 'a', name: 'one' },
            { namespace: 'a', name: 'two' },
          ],
        },
        { cacheDir, logger, client },
      ),
      { code: 'SOURCE_CONFIGMAP_CONFLICT', message: /ConfigMap a\/two: x\.yaml: file x\.yaml is also given by ConfigMap a\/one/ },
    );
    await assert.rejects(
      unpackSource(
        {
          type: 'configMaps',
          configMaps: [
            { namespace: 'a', name: 'one', path: 'x.yaml' },
            { namespace: 'a', name: 'two' },
          ],
        },
        { cacheDir, logger, client },
      ),
      { code: 'SOURCE_CONFIGMAP_CONFLICT', message: /ConfigMap a\/two: x\.yaml: file x\.yaml clashes with a directory/ },
    );
    await assert.rejects(unpackSource({ type: 'configMaps', configMaps: [{ namespace: 'a', name: 'bad' }] }, { cacheDir, logger, client }), {
      code: 'SOURCE_CONFIGMAP_INVALID',
      message: /ConfigMap a\/bad: data\.x\.yaml: expected a string/,
    });
    await assert.rejects(unpackSource({ type: 'configMaps', configMaps: [{ namespace: 'a', name: 'one' }] }, { cacheDir, logger }), { code: 'SOURCE_NO_CLIENT' });
    await assert.rejects(unpackSource({ type: 'configMaps', configMaps: [{ namespace: 'a', name: 'one' }] }, { cacheDir, logger, client, maxBytes: 0 }), {
      code: 'SOURCE_TOO_LARGE',
    });
  });
});

test('pull secrets: dockerconfigjson and dockercfg, and what is wrong with bad ones', async () => {
  const auth = Buffer.from('alice:wonderland').toString('base64');
  const secret = (name: string, type: string, data: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: 'ns', name },
    type,
    data,
  });
  const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64');
  const client = secretReader(fakeClient([
    secret('good', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64({ auths: { 'https://registry.example:5000/v1/': { auth } } }) }),
    secret('legacy', 'kubernetes.io/dockercfg', { '.dockercfg': b64({ 'docker.io': { username: 'u', password: 'p' } }) }),
    secret('opaque', 'Opaque', { x: 'eA==' }),
    secret('empty', 'kubernetes.io/dockerconfigjson', {}),
    secret('garbage', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': Buffer.from('{"auths": {"r": {"auth": "c2VjcmV0LXB3"}} oops').toString('base64') }),
  ]), 'tester');
  const good = await pullSecretCredentials(client, { namespace: 'ns', name: 'good' });
  assert.deepEqual(good.get('registry.example:5000'), { username: 'alice', password: 'wonderland' });
  const legacy = await pullSecretCredentials(client, { namespace: 'ns', name: 'legacy' });
  assert.deepEqual(legacy.get('registry-1.docker.io'), { username: 'u', password: 'p' }, 'Docker Hub aliases');
  await assert.rejects(pullSecretCredentials(client, { namespace: 'ns', name: 'missing' }), { code: 'SOURCE_PULL_SECRET_NOT_FOUND', message: /Secret ns\/missing does not exist/ });
  await assert.rejects(pullSecretCredentials(client, { namespace: 'ns', name: 'opaque' }), { code: 'SOURCE_PULL_SECRET', message: /Secret ns\/opaque: type: type is "Opaque"/ });
  await assert.rejects(pullSecretCredentials(client, { namespace: 'ns', name: 'empty' }), { code: 'SOURCE_PULL_SECRET', message: /data\["\.dockerconfigjson"\]: is missing/ });
  await assert.rejects(pullSecretCredentials(client, { namespace: 'ns', name: 'garbage' }), { code: 'SOURCE_PULL_SECRET', message: /is not valid JSON/ });
  // The parser's message would quote the Secret's text: only the place is named.
  await assert.rejects(pullSecretCredentials(client, { namespace: 'ns', name: 'garbage' }), (err: Error) => !err.message.includes('c2VjcmV0') && err.cause === undefined);
  assert.throws(() => parseDockerConfig({ auths: { h: { auth: Buffer.from('nocolon').toString('base64') } } }, 'x', false), {
    code: 'SOURCE_PULL_SECRET',
    message: /x: auths\.h\.auth: expected base64 of "user:password"/,
  });
  assert.throws(() => parseDockerConfig({ auths: { h: {} } }, 'x', false), { code: 'SOURCE_PULL_SECRET', message: /auths\.h: has neither/ });
  assert.throws(() => parseDockerConfig({ auths: [] }, 'x', false), { code: 'SOURCE_PULL_SECRET' });
});
