import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../util/errors.js';
import { catalogServing } from './commands/manager.js';

test('manager --catalog-base-url and --catalog-tls-cert/--catalog-tls-key: checked before anything starts, each refusal naming its flag', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'catalog-tls-flags-'));
  const pem = join(dir, 'tls.crt');
  await writeFile(pem, '-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n');
  const notPem = join(dir, 'junk');
  await writeFile(notPem, 'junk');
  assert.deepEqual(await catalogServing({}), {});
  assert.deepEqual(await catalogServing({ catalogBaseUrl: 'https://binnacle-catalogs.binnacle-system.svc/' }), { catalogBaseUrl: 'https://binnacle-catalogs.binnacle-system.svc' });
  const both = await catalogServing({ catalogTlsCert: pem, catalogTlsKey: pem });
  assert.match(both.catalogTls?.certPem ?? '', /BEGIN CERTIFICATE/);
  const refusals: [Parameters<typeof catalogServing>[0], RegExp][] = [
    [{ catalogTlsCert: pem }, /--catalog-tls-cert and --catalog-tls-key go together/],
    [{ catalogTlsKey: pem }, /--catalog-tls-cert and --catalog-tls-key go together/],
    [{ catalogTlsCert: join(dir, 'missing'), catalogTlsKey: pem }, /--catalog-tls-cert .*missing: cannot be read/],
    [{ catalogTlsCert: pem, catalogTlsKey: notPem }, /--catalog-tls-key .*junk: not PEM/],
    [{ catalogBaseUrl: 'binnacle-catalogs:80' }, /--catalog-base-url "binnacle-catalogs:80": must be http:\/\/ or https:\/\//],
    [{ catalogBaseUrl: 'not a url' }, /--catalog-base-url "not a url": not a URL/],
    [{ catalogBaseUrl: 'https://x.svc/?a=1' }, /no query, fragment or credentials/],
    [{ catalogBaseUrl: 'https://user:pw@x.svc' }, /no query, fragment or credentials/],
  ];
  for (const [flags, why] of refusals) await assert.rejects(catalogServing(flags), (err: unknown) => err instanceof UsageError && why.test(err.message));
});
