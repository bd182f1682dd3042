/** An existing ci.yaml is read as Go reads YAML: many aliases are fine, an alias bomb is refused by name. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BILLION_LAUGHS, bombMessage } from '../util/yaml.test-helper.js';
import { prepareCommunityLayout } from './community-layout.js';

async function withCi(text: string, fn: (repo: string, ciYaml: string) => Promise<void>): Promise<void> {
  const repo = await mkdtemp(join(tmpdir(), 'community-'));
  try {
    await mkdir(join(repo, 'operators', 'p'), { recursive: true });
    const ciYaml = join(repo, 'operators', 'p', 'ci.yaml');
    await writeFile(ciYaml, text);
    await fn(repo, ciYaml);
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
}

test('a ci.yaml with more than 100 aliases is read', async () => {
  await withCi(`updateGraph: &g semver-mode\nreviewers: &r [alice]\nothers: [${Array.from({ length: 200 }, () => '*r').join(', ')}]\n`, async (repo, ciYaml) => {
    const layout = await prepareCommunityLayout({ repoRoot: repo, packageName: 'p', version: '1.0.0', updateGraph: 'semver-mode', reviewers: ['alice', 'bob'] });
    assert.deepEqual(layout.notes, [`${ciYaml} does not list reviewer(s) bob: add them in a pull request of its own`]);
  });
});

test('an alias bomb in ci.yaml is an input error naming the file', async () => {
  await withCi(`updateGraph: semver-mode\n${BILLION_LAUGHS}`, async (repo, ciYaml) => {
    await assert.rejects(prepareCommunityLayout({ repoRoot: repo, packageName: 'p', version: '1.0.0' }), { name: 'YamlAliasError', message: bombMessage(ciYaml) });
  });
});
