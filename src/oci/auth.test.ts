import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';
import { credentialsFromAuthFiles, parseChallenges } from './auth.js';

test('parseChallenges reads Bearer params with commas inside quotes, and Basic', () => {
  assert.deepEqual(parseChallenges('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"'), [
    { scheme: 'bearer', params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull,push' } },
  ]);
  assert.deepEqual(parseChallenges('Basic realm="Registry Realm"'), [{ scheme: 'basic', params: { realm: 'Registry Realm' } }]);
  assert.deepEqual(parseChallenges(''), []);
});

test('credentials come from the first auth file that has the host; docker.io aliases work', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'oci-auth-'));
  try {
    const first = join(dir, 'auth.json');
    const second = join(dir, 'config.json');
    await writeFile(first, JSON.stringify({ auths: { 'quay.io': { auth: Buffer.from('alice:s3cr:et').toString('base64') } } }));
    await writeFile(
      second,
      JSON.stringify({
        auths: {
          'quay.io': { auth: Buffer.from('bob:nope').toString('base64') },
          'https://index.docker.io/v1/': { username: 'hub', password: 'pw' },
          'https://127.0.0.1:5000/v2/': { identitytoken: 'tok' },
        },
      }),
    );
    const lookup = credentialsFromAuthFiles([first, second, join(dir, 'missing.json')]);
    assert.deepEqual(lookup('quay.io'), { username: 'alice', password: 's3cr:et' });
    assert.deepEqual(lookup('docker.io'), { username: 'hub', password: 'pw' });
    assert.deepEqual(lookup('127.0.0.1:5000'), { identityToken: 'tok' });
    assert.equal(lookup('ghcr.io'), undefined);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a broken auth file is an InputError naming the file and field', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'oci-auth-'));
  try {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{ not json');
    assert.throws(() => credentialsFromAuthFiles([bad])('x.io'), (err: unknown) => err instanceof InputError && err.file === bad && err.code === 'OCI_AUTH_FILE');
    await writeFile(bad, JSON.stringify({ auths: { 'x.io': { auth: Buffer.from('nocolon').toString('base64') } } }));
    assert.throws(() => credentialsFromAuthFiles([bad])('x.io'), (err: unknown) => err instanceof InputError && err.field === 'auths["x.io"].auth');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
