import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../main.js';
import { captureContext } from '../in-process.test-helper.js';

test('source unpack --local and --git print the tree as data; source gc removes it', async () => {
  const base = await mkdtemp(join(tmpdir(), 'source-cli-'));
  try {
    const dir = join(base, 'bundle');
    await mkdir(join(dir, 'manifests'), { recursive: true });
    await writeFile(join(dir, 'manifests', 'csv.yaml'), 'kind: ClusterServiceVersion\n');
    const cache = join(base, 'cache');
    const c = captureContext();
    assert.equal(await run(['source', 'unpack', '--local', dir, '--cache', cache, '-o', 'json'], c.ctx), 0, c.err());
    const value = JSON.parse(c.out()) as { digest: string; dir: string; source: unknown; resolved: unknown };
    assert.match(value.digest, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(value.source, { type: 'local', local: { path: dir } });
    assert.equal(await readFile(join(value.dir, 'manifests', 'csv.yaml'), 'utf8'), 'kind: ClusterServiceVersion\n');

    const env = { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: base };
    const g = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: dir, env, encoding: 'utf8' });
    g('init', '-q', '-b', 'main');
    g('add', '-A');
    g('commit', '-q', '-m', 'x');
    const gc = captureContext();
    assert.equal(await run(['source', 'unpack', '--git', `file://${dir}`, '--branch', 'main', '--directory', 'manifests', '--cache', cache, '-o', 'yaml'], gc.ctx), 0, gc.err());
    assert.match(gc.out(), /commit: [0-9a-f]{40}/);

    const t = captureContext();
    assert.equal(await run(['source', 'gc', '--cache', cache, '--keep', value.digest, '-o', 'json'], t.ctx), 0, t.err());
    assert.equal((JSON.parse(t.out()) as { removedTrees: number }).removedTrees, 1);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('usage errors exit 2 and say what is wrong; failures exit 1 naming the input', async () => {
  const cases: { argv: string[]; code: number; message: RegExp }[] = [
    { argv: ['source', 'unpack'], code: 2, message: /exactly one of --image, --git, --http, --local, --configmap/ },
    { argv: ['source', 'unpack', '--local', '/x', '--http', 'http://h/x.tar'], code: 2, message: /got --http, --local/ },
    { argv: ['source', 'unpack', '--local', '/x', '--branch', 'main'], code: 2, message: /--branch only goes with --git/ },
    { argv: ['source', 'unpack', '--git', 'https://h/r', '--branch', 'a', '--tag', 'b'], code: 2, message: /source\.git\.ref: exactly one of branch, tag, commit/ },
    { argv: ['source', 'unpack', '--http', 'https://h/x.tgz', '--sha256', 'zz'], code: 2, message: /source\.http\.sha256/ },
    { argv: ['source', 'unpack', '--configmap', 'bad'], code: 2, message: /expected NAMESPACE\/NAME/ },
    { argv: ['source', 'gc', '--keep', 'nope'], code: 2, message: /--keep nope/ },
    { argv: ['source', 'unpack', '--local', '/definitely/not/here', '--cache', join(tmpdir(), 'source-cli-none')], code: 1, message: /\/definitely\/not\/here: does not exist/ },
  ];
  for (const c of cases) {
    const cap = captureContext();
    assert.equal(await run(c.argv, cap.ctx), c.code, `${c.argv.join(' ')}: ${cap.err()}`);
    assert.match(cap.err(), c.message, c.argv.join(' '));
  }
  await rm(join(tmpdir(), 'source-cli-none'), { recursive: true, force: true });
});
