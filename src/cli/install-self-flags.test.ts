import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
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
    const replicas = await runCli(['install-self', '--replicas', '2', '--version', '1.0.0']);
    assert.match(replicas.err, /--replicas and --version exclude each other/);
    const level = await runCli(['install-self', '--log-level', 'loud', '--kubeconfig', join(dir, 'none')]);
    assert.match(level.err, /--log-level.*loud.*Allowed choices are error, warn, info, debug, trace/s);
    for (const bad of ['0', '10', 'two', '-1']) {
      const r = await runCli(['install-self', '--replicas', bad, '--kubeconfig', join(dir, 'none')]);
      assert.notEqual(r.code, 0, bad);
      assert.match(r.err, /--replicas.*(Expected a positive whole number|Expected 1 to 9 manager Pods)/s, bad);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('cluster up --registry-mirror and --no-registry-mirror configure the real node: without --real-node, or both at once, they are refused before any cluster is touched', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mirror-cli-'));
  try {
    const on = await runCli(['cluster', 'up', '--name', 'none', '--state-dir', dir, '--registry-mirror', 'docker.io']);
    assert.notEqual(on.code, 0);
    assert.match(on.err, /--registry-mirror configures the real node's image pulls: add --real-node/);
    const off = await runCli(['cluster', 'up', '--name', 'none', '--state-dir', dir, '--no-registry-mirror']);
    assert.notEqual(off.code, 0);
    assert.match(off.err, /--no-registry-mirror configures the real node's image pulls: add --real-node/);
    // Both, in either order: refused (commander alone would keep the last, or fail on the list).
    for (const args of [['--registry-mirror', 'docker.io', '--no-registry-mirror'], ['--no-registry-mirror', '--registry-mirror', 'docker.io']]) {
      const both = await runCli(['cluster', 'up', '--name', 'none', '--state-dir', dir, '--real-node', ...args]);
      assert.notEqual(both.code, 0);
      assert.match(both.err, /--registry-mirror and --no-registry-mirror exclude each other/, args.join(' '));
    }
    assert.deepEqual(await readdir(dir), [], 'nothing made');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
