import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { InputError } from '../../util/errors.js';
import { globToRegExp, parseHelmignore } from './helmignore.js';
import { chartFiles, packageChartDir } from './package-chart.js';

describe('.helmignore', () => {
  test("Go's filepath.Match: * and ? stop at /, classes with ranges and negation, escapes", () => {
    const m = (p: string, s: string): boolean => {
      const re = globToRegExp(p);
      assert.ok(re instanceof RegExp, p);
      return re.test(s);
    };
    assert.ok(m('*.txt', 'a.txt'));
    assert.ok(!m('*.txt', 'dir/a.txt'));
    assert.ok(m('a?c', 'abc'));
    assert.ok(!m('a?c', 'a/c'));
    assert.ok(m('[a-c]x', 'bx'));
    assert.ok(!m('[^a-c]x', 'bx'));
    assert.ok(m('[^a-c]x', 'dx'));
    assert.ok(m('\\*', '*'));
    assert.ok(!m('\\*', 'a'));
    for (const bad of ['[', '[]', 'a\\', '[a-]', '[-a]']) assert.equal(typeof globToRegExp(bad), 'string', bad);
  });

  test('names without a slash match the last path element; with one, the whole path; a trailing / only directories', () => {
    const r = parseHelmignore(['# comment', '', '*.tmp', 'docs/*.md', '/top.txt', 'build/'].join('\n'));
    assert.ok(r.ignores('a.tmp', false));
    assert.ok(r.ignores('templates/deep/a.tmp', false));
    assert.ok(r.ignores('docs/a.md', false));
    assert.ok(!r.ignores('x/docs/a.md', false));
    assert.ok(r.ignores('top.txt', false));
    assert.ok(!r.ignores('sub/top.txt', false));
    assert.ok(r.ignores('build', true));
    assert.ok(!r.ignores('build', false));
    assert.ok(!r.ignores('values.yaml', false));
  });

  test("Helm's defaults and quirks: dot files under templates/ go; a negated rule ignores what it does not match", () => {
    const plain = parseHelmignore('');
    assert.ok(plain.ignores('templates/.hidden.yaml', false));
    assert.ok(!plain.ignores('.helmignore', false));
    const negated = parseHelmignore('!keep.yaml');
    assert.ok(!negated.ignores('keep.yaml', false));
    assert.ok(negated.ignores('other.yaml', false));
  });

  test('a ** pattern or a malformed one is an error naming the file and line', () => {
    assert.throws(() => parseHelmignore('ok\n**/x', 'chart/.helmignore'), (e: unknown) => e instanceof InputError && e.file === 'chart/.helmignore' && e.field === 'line 2' && /double-star/.test(e.message));
    assert.throws(() => parseHelmignore('[a', 'chart/.helmignore'), (e: unknown) => e instanceof InputError && e.field === 'line 1');
  });
});

describe('packageChartDir', () => {
  test('packs the files Helm loads, under the chart name, reproducibly, following symlinks', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'binnacle-pack-'));
    try {
      await mkdir(join(dir, 'templates'));
      await mkdir(join(dir, 'ci'));
      await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: demo\nversion: 1.0.0\n');
      await writeFile(join(dir, 'values.yaml'), 'a: 1\n');
      await writeFile(join(dir, 'templates', 'cm.yaml'), 'kind: ConfigMap\n');
      await writeFile(join(dir, 'templates', '.swp'), 'x');
      await writeFile(join(dir, 'ci', 'test-values.yaml'), 'a: 2\n');
      await writeFile(join(dir, '.helmignore'), 'ci/\n*.orig\n');
      await writeFile(join(dir, 'values.yaml.orig'), 'old');
      await symlink(join(dir, 'values.yaml'), join(dir, 'templates', 'linked.txt'));
      assert.deepEqual(await chartFiles(dir), ['.helmignore', 'Chart.yaml', 'templates/cm.yaml', 'templates/linked.txt', 'values.yaml']);
      const a = await packageChartDir(dir, 'demo');
      const b = await packageChartDir(dir, 'demo');
      assert.ok(a.equals(b), 'same bytes for the same chart');
      const tar = gunzipSync(a);
      const names: string[] = [];
      for (let off = 0; off + 512 <= tar.length; ) {
        const name = tar.subarray(off, off + 100).toString('utf8').replace(/\0.*$/s, '');
        if (name === '') break;
        const size = parseInt(tar.subarray(off + 124, off + 136).toString('ascii').replace(/\0.*$/s, '').trim(), 8);
        names.push(name);
        off += 512 + Math.ceil(size / 512) * 512;
      }
      assert.deepEqual(names, ['demo/.helmignore', 'demo/Chart.yaml', 'demo/templates/cm.yaml', 'demo/templates/linked.txt', 'demo/values.yaml']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
