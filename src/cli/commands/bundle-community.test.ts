/**
 * `binnacle bundle generate --community`: the community-operators layout, through the CLI —
 * operators/<package>/<version>/ with a ci.yaml beside it, held to the community suite; an
 * existing ci.yaml is kept (their pipeline takes its changes only in a pull request of its own).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runCli as cli, type CliResult } from '../in-process.test-helper.js';
import { loadBundleDir } from '../../bundle/load.js';

const INPUT = join(import.meta.dirname, '..', '..', 'bundle', 'testdata', 'generate-input');

const generate = (repo: string, version: string, ...extra: string[]): Promise<CliResult> =>
  cli(['bundle', 'generate', '--input', INPUT, '--output-dir', repo, '--package', 'cache-operator', '--version', version, '--channels', 'stable', '--community', ...extra]);

test('a new package gets operators/<package>/<version>/ and a ci.yaml with the update graph and reviewers', async () => {
  const repo = await mkdtemp(join(tmpdir(), 'binnacle-community-'));
  try {
    const r = await generate(repo, '0.1.0', '--update-graph', 'semver-mode', '--reviewer', 'alice', '--reviewer', 'bob-2');
    assert.equal(r.code, 0, r.err);
    const bundleDir = join(repo, 'operators', 'cache-operator', '0.1.0');
    const b = await loadBundleDir(bundleDir);
    assert.equal(b.csv.name, 'cache-operator.v0.1.0');
    const ci = parse(await readFile(join(repo, 'operators', 'cache-operator', 'ci.yaml'), 'utf8')) as unknown;
    assert.deepEqual(ci, { updateGraph: 'semver-mode', reviewers: ['alice', 'bob-2'] });
    assert.match(r.out, /wrote .*operators\/cache-operator\/ci\.yaml/);
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});

test('an existing ci.yaml is kept, and a different wish is reported, not written', async () => {
  const repo = await mkdtemp(join(tmpdir(), 'binnacle-community-'));
  try {
    await mkdir(join(repo, 'operators', 'cache-operator'), { recursive: true });
    const ciFile = join(repo, 'operators', 'cache-operator', 'ci.yaml');
    await writeFile(ciFile, '---\nupdateGraph: replaces-mode\nreviewers:\n  - alice\n');
    const r = await generate(repo, '0.2.0', '--update-graph', 'semver-mode', '--reviewer', 'carol');
    assert.equal(r.code, 0, r.err);
    assert.equal(await readFile(ciFile, 'utf8'), '---\nupdateGraph: replaces-mode\nreviewers:\n  - alice\n');
    assert.match(r.err, /updateGraph "replaces-mode", not semver-mode: change it in a pull request of its own/);
    assert.match(r.err, /does not list reviewer\(s\) carol/);
    assert.ok(existsSync(join(repo, 'operators', 'cache-operator', '0.2.0', 'manifests')));
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});

test('bad flags get one line naming the flag: a mode, a reviewer, a "v" version, a version already published, --reviewer without --community', async () => {
  const repo = await mkdtemp(join(tmpdir(), 'binnacle-community-'));
  try {
    const mode = await generate(repo, '0.1.0', '--update-graph', 'latest');
    assert.equal(mode.code, 2);
    assert.match(mode.err, /--update-graph "latest": expected replaces-mode or semver-mode/);
    const reviewer = await generate(repo, '0.1.0', '--reviewer', 'not a user');
    assert.match(reviewer.err, /--reviewer "not a user": not a GitHub user name/);
    const v = await generate(repo, 'v0.1.0');
    assert.match(v.err, /--version v0\.1\.0: the community layout names version folders without a "v" \(0\.1\.0\)/);
    assert.equal((await generate(repo, '0.1.0')).code, 0);
    const again = await generate(repo, '0.1.0');
    assert.match(again.err, /--version 0\.1\.0 already exists in \S+: a published version is never rewritten; bump it/);
    const plain = await cli(['bundle', 'generate', '--input', INPUT, '--output-dir', join(repo, 'x'), '--package', 'p', '--version', '0.1.0', '--channels', 'stable', '--reviewer', 'alice']);
    assert.match(plain.err, /--update-graph and --reviewer go with --community/);
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});

test('a generation that fails leaves no ci.yaml behind', async () => {
  const repo = await mkdtemp(join(tmpdir(), 'binnacle-community-'));
  try {
    const r = await cli(['bundle', 'generate', '--input', join(repo, 'no-such-input'), '--output-dir', repo, '--package', 'cache-operator', '--version', '0.1.0', '--channels', 'stable', '--community']);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /no-such-input/);
    assert.equal(existsSync(join(repo, 'operators', 'cache-operator', 'ci.yaml')), false);
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});
