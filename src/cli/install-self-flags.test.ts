import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './in-process.test-helper.js';

test('install-self --registries-conf: a file Binnacle cannot read as the manager will is refused before anything is installed, naming the file and the field', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'regconf-cli-'));
  try {
    const bad = join(dir, 'registries.conf');
    await writeFile(bad, '[[registry]]\nprefix = "quay.io"\nblocked = "yes"\n');
    // No cluster is reached: the kubeconfig names nothing that answers.
    const r = await runCli(['install-self', '--registries-conf', bad, '--kubeconfig', join(dir, 'none')]);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /registries\.conf: registry\[0\]\.blocked: must be true or false, not "yes"/);
    const missing = await runCli(['install-self', '--registries-conf', join(dir, 'absent.conf'), '--kubeconfig', join(dir, 'none')]);
    assert.match(missing.err, /absent\.conf: --registries-conf: cannot be read/);
    const both = await runCli(['install-self', '--registries-conf', bad, '--version', '1.0.0']);
    assert.match(both.err, /--registries-conf and --version exclude each other/);
    const objectSets = await runCli(['install-self', '--olmv1-object-sets', '--version', '1.0.0']);
    assert.match(objectSets.err, /--olmv1-object-sets and --version exclude each other/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
