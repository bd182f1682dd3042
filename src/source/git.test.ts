import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { unpackSource } from './unpack.js';
import type { GitSource } from './types.js';

const logger = pino({ level: 'silent' });
let base = '';
let url = '';
const commits: Record<string, string> = {};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  }).trim();
}

async function commitFile(repo: string, path: string, content: string, message: string): Promise<string> {
  await mkdir(join(repo, path, '..'), { recursive: true });
  await writeFile(join(repo, path), content);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', message);
  return git(repo, 'rev-parse', 'HEAD');
}

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'source-git-'));
  const repo = join(base, 'origin');
  await mkdir(repo);
  git(repo, 'init', '-q');
  commits.zero = await commitFile(repo, 'bundle/manifests/csv.yaml', 'version: 0.0.1\n', 'zero');
  commits.one = await commitFile(repo, 'bundle/manifests/csv.yaml', 'version: 0.1.0\n', 'one');
  git(repo, 'branch', 'release-0.1');
  git(repo, 'tag', 'v0.1.0');
  commits.two = await commitFile(repo, 'bundle/manifests/csv.yaml', 'version: 0.2.0\n', 'two');
  git(repo, 'tag', '-a', '-m', 'annotated', 'v0.2.0');
  // A branch with links that lead out of a tree.
  git(repo, 'checkout', '-q', '-b', 'evil');
  await mkdir(join(repo, 'evil'));
  await symlink('../../../../etc/passwd', join(repo, 'evil', 'passwd'));
  await symlink(base, join(repo, 'linked'));
  await commitFile(repo, 'evil/README', 'evil\n', 'evil');
  git(repo, 'checkout', '-q', 'main');
  // Hooks anywhere (the origin, this machine's global config, a template dir) must never run.
  const hook = `#!/bin/sh\ntouch ${join(base, 'HOOK-RAN')}\n`;
  await writeFile(join(repo, '.git', 'hooks', 'post-checkout'), hook, { mode: 0o755 });
  await mkdir(join(base, 'evil-hooks', 'hooks'), { recursive: true });
  for (const name of ['post-checkout', 'reference-transaction', 'post-index-change']) await writeFile(join(base, 'evil-hooks', 'hooks', name), hook, { mode: 0o755 });
  await writeFile(join(base, 'evil-gitconfig'), `[core]\n\thooksPath = ${join(base, 'evil-hooks', 'hooks')}\n`);
  saved = { global: process.env.GIT_CONFIG_GLOBAL, template: process.env.GIT_TEMPLATE_DIR };
  process.env.GIT_CONFIG_GLOBAL = join(base, 'evil-gitconfig');
  process.env.GIT_TEMPLATE_DIR = join(base, 'evil-hooks');
  url = `file://${repo}`;
});

let saved: { global: string | undefined; template: string | undefined } = { global: undefined, template: undefined };

after(async () => {
  if (saved.global === undefined) delete process.env.GIT_CONFIG_GLOBAL;
  else process.env.GIT_CONFIG_GLOBAL = saved.global;
  if (saved.template === undefined) delete process.env.GIT_TEMPLATE_DIR;
  else process.env.GIT_TEMPLATE_DIR = saved.template;
  await rm(base, { recursive: true, force: true });
});

function src(ref: GitSource['ref'], directory?: string, repository = url): GitSource {
  return { type: 'git', repository, ref, ...(directory === undefined ? {} : { directory }) };
}

test('branch: the tip of the branch, its commit recorded, no .git in the tree', async () => {
  const cacheDir = join(base, 'cache-branch');
  const main = await unpackSource(src({ branch: 'main' }), { cacheDir, logger, allowHostPaths: true });
  assert.deepEqual(main.resolved, { type: 'git', git: { repository: url, commit: commits.two } });
  assert.equal(await readFile(join(main.dir, 'bundle', 'manifests', 'csv.yaml'), 'utf8'), 'version: 0.2.0\n');
  assert.ok(!(await readdir(main.dir)).includes('.git'));
  const rel = await unpackSource(src({ branch: 'release-0.1' }), { cacheDir, logger, allowHostPaths: true });
  assert.equal(rel.resolved.git?.commit, commits.one);
  assert.equal(await readFile(join(rel.dir, 'bundle', 'manifests', 'csv.yaml'), 'utf8'), 'version: 0.1.0\n');
  await assert.rejects(stat(join(base, 'HOOK-RAN')), 'no hook ran');
});

test('tags, lightweight and annotated, resolve to their commits', async () => {
  const cacheDir = join(base, 'cache-tag');
  const light = await unpackSource(src({ tag: 'v0.1.0' }), { cacheDir, logger, allowHostPaths: true });
  assert.equal(light.resolved.git?.commit, commits.one);
  const annotated = await unpackSource(src({ tag: 'v0.2.0' }), { cacheDir, logger, allowHostPaths: true });
  assert.equal(annotated.resolved.git?.commit, commits.two);
});

test('commit: the tip and an older, unadvertised commit; pinned commits come from the cache', async () => {
  const cacheDir = join(base, 'cache-commit');
  const zero = await unpackSource(src({ commit: commits.zero ?? '' }, 'bundle'), { cacheDir, logger, allowHostPaths: true });
  assert.equal(zero.resolved.git?.commit, commits.zero);
  assert.equal(await readFile(join(zero.dir, 'manifests', 'csv.yaml'), 'utf8'), 'version: 0.0.1\n');
  const two = await unpackSource(src({ commit: commits.two ?? '' }, 'bundle'), { cacheDir, logger, allowHostPaths: true });
  assert.equal(await readFile(join(two.dir, 'manifests', 'csv.yaml'), 'utf8'), 'version: 0.2.0\n');
  // Same commit again, even with the repository gone: answered from the cache.
  await rename(join(base, 'origin'), join(base, 'moved'));
  try {
    const again = await unpackSource(src({ commit: commits.zero ?? '' }, 'bundle', url), { cacheDir, logger, allowHostPaths: true });
    assert.equal(again.digest, zero.digest);
    await assert.rejects(unpackSource(src({ branch: 'main' }, 'bundle', url), { cacheDir, logger, allowHostPaths: true }), { code: 'SOURCE_GIT_REPOSITORY' });
  } finally {
    await rename(join(base, 'moved'), join(base, 'origin'));
  }
});

test('subdirectory: only that directory, same digest as the same files elsewhere', async () => {
  const cacheDir = join(base, 'cache-dir');
  const sub = await unpackSource(src({ branch: 'main' }, 'bundle/manifests'), { cacheDir, logger, allowHostPaths: true });
  assert.deepEqual(await readdir(sub.dir), ['csv.yaml']);
  const dotted = await unpackSource(src({ branch: 'main' }, './bundle/manifests/'), { cacheDir, logger, allowHostPaths: true });
  assert.equal(dotted.digest, sub.digest);
});

test('unknown branch, tag, commit, repository and directory give clear errors', async () => {
  const cacheDir = join(base, 'cache-err');
  const opts = { cacheDir, logger, allowHostPaths: true };
  await assert.rejects(unpackSource(src({ branch: 'nope' }), opts), (err: unknown) => {
    assert.equal((err as { code?: string }).code, 'SOURCE_GIT_UNKNOWN_REF');
    assert.match((err as Error).message, /has no branch "nope"/);
    return true;
  });
  await assert.rejects(unpackSource(src({ tag: 'v9' }), opts), { code: 'SOURCE_GIT_UNKNOWN_REF', message: /has no tag "v9"/ });
  await assert.rejects(unpackSource(src({ commit: 'f'.repeat(40) }), opts), { code: 'SOURCE_GIT_UNKNOWN_REF', message: /has no commit f{40}/ });
  await assert.rejects(unpackSource(src({ branch: 'main' }, undefined, `file://${join(base, 'missing')}`), opts), {
    code: 'SOURCE_GIT_REPOSITORY',
    message: /missing cannot be read/,
  });
  await assert.rejects(unpackSource(src({ branch: 'main' }, 'no/such/dir'), opts), { code: 'SOURCE_GIT_DIRECTORY', message: /no\/such\/dir.*does not exist/ });
  await assert.rejects(unpackSource(src({ branch: 'main' }, 'bundle/manifests/csv.yaml'), opts), { code: 'SOURCE_GIT_DIRECTORY', message: /is not a directory/ });
});

test('links out of the chosen tree are refused', async () => {
  const opts = { cacheDir: join(base, 'cache-links'), logger, allowHostPaths: true };
  await assert.rejects(unpackSource(src({ branch: 'evil' }, 'evil'), opts), { code: 'SOURCE_UNSAFE_LINK', message: /entry "passwd"/ });
  await assert.rejects(unpackSource(src({ branch: 'evil' }), opts), { code: 'SOURCE_UNSAFE_LINK', message: /entry "evil\/passwd"/ });
  // A directory reached through a symlink in the repository.
  await assert.rejects(unpackSource(src({ branch: 'evil' }, 'linked/origin/bundle'), opts), { code: 'SOURCE_UNSAFE_LINK', message: /outside the repository/ });
  // The inner link itself is fine when the whole of a safe branch is taken.
  assert.ok((await unpackSource(src({ branch: 'main' }), opts)).digest.startsWith('sha256:'));
});

test('a remote that never answers fails at the deadline naming the host; credentials in the URL are shown nowhere', async () => {
  const { createServer } = await import('node:net');
  const held: import('node:net').Socket[] = [];
  const silent = createServer((s) => void held.push(s)); // accepts, never answers
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as import('node:net').AddressInfo).port;
  const cacheDir = await mkdtemp(join(tmpdir(), 'source-git-deadline-'));
  try {
    const source: GitSource = { type: 'git', repository: `http://127.0.0.1:${port}/repo.git`, ref: { branch: 'main' } };
    await assert.rejects(unpackSource(source, { cacheDir, logger, timeoutMs: 1000 }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'SOURCE_GIT_REPOSITORY');
      assert.match(err.message, new RegExp(`^git repository http://127\\.0\\.0\\.1:${port}/repo\\.git cannot be read: no answer from 127\\.0\\.0\\.1:${port} within 1 s`));
      assert.doesNotMatch(err.message, /s3cr3t/);
      return true;
    });
    const refused: GitSource = { type: 'git', repository: 'https://user:s3cr3t@127.0.0.1:1/repo.git', ref: { branch: 'main' } };
    await assert.rejects(unpackSource(refused, { cacheDir, logger }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'INVALID', 'refused before git runs');
      assert.doesNotMatch(err.message, /s3cr3t/);
      assert.match(err.message, /https:\/\/\*\*\*@127\.0\.0\.1:1\/repo\.git\): put them in a kubernetes\.io\/basic-auth Secret .* named in source\.git\.secret/);
      return true;
    });
  } finally {
    for (const s of held) s.destroy();
    silent.close();
    await rm(cacheDir, { recursive: true, force: true });
  }
});

test("a git source's Secret goes to the remote as Basic auth through git's environment, never in its arguments or messages", async () => {
  const { createServer } = await import('node:http');
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(403).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  const cacheDir = await mkdtemp(join(tmpdir(), 'source-git-secret-'));
  const b64 = (v: string): string => Buffer.from(v).toString('base64');
  try {
    const secrets = {
      identity: 'service account team-a/installer',
      get: () => Promise.resolve({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c' }, data: { username: b64('reader'), password: b64('s3cr3t') } }),
    };
    const source: GitSource = { type: 'git', repository: `http://127.0.0.1:${port}/repo.git`, ref: { branch: 'main' }, secret: { namespace: 'team-a', name: 'c' } };
    await assert.rejects(unpackSource(source, { cacheDir, logger, secrets, timeoutMs: 10_000 }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'SOURCE_GIT_REPOSITORY');
      assert.doesNotMatch(err.message, /s3cr3t|cmVhZGVy/);
      return true;
    });
    assert.ok(seen.includes(`Basic ${b64('reader:s3cr3t')}`), `the remote got the credentials (saw ${JSON.stringify(seen)})`);
  } finally {
    server.close();
    await rm(cacheDir, { recursive: true, force: true });
  }
});
