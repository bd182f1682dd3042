import assert from 'node:assert/strict';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { InputError } from '../util/errors.js';
import { withTempDir } from '../util/temp-dir.test-helper.js';
import { imageLabelDir } from './image-path.js';

const LABEL = 'operators.operatorframework.io.index.configs.v1';

/** An unpacked image `<cache>/fs/aaa…` with /configs/sub, /file and links, and a sibling image beside it. */
async function cache(dir: string): Promise<{ image: string; sibling: string; host: string }> {
  const image = join(dir, 'fs', 'a'.repeat(64));
  const sibling = join(dir, 'fs', 'b'.repeat(64));
  const host = join(dir, 'host');
  await mkdir(join(image, 'configs', 'sub'), { recursive: true });
  await mkdir(join(sibling, 'configs'), { recursive: true });
  await mkdir(host);
  await writeFile(join(image, 'file'), '{}');
  await symlink('configs/sub', join(image, 'inside'));
  await symlink(host, join(image, 'outside'));
  await symlink('loop', join(image, 'loop'));
  return { image, sibling, host };
}

async function refused(p: Promise<unknown>, code: string, text: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof InputError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, new RegExp(`^image label ${LABEL.replace(/\./g, '\\.')}=`));
    assert.match(err.message, text);
    return true;
  });
}

test('a label names a directory inside the image: absolute or relative, nested, through a link that stays inside', async () => {
  await withTempDir('image-path-', async (dir) => {
    const { image } = await cache(dir);
    const real = await realpath(image);
    assert.equal(await imageLabelDir(image, LABEL, '/configs'), join(real, 'configs'));
    assert.equal(await imageLabelDir(image, LABEL, 'configs'), join(real, 'configs'));
    assert.equal(await imageLabelDir(image, LABEL, '/configs/sub'), join(real, 'configs', 'sub'));
    assert.equal(await imageLabelDir(image, LABEL, './configs//sub/'), join(real, 'configs', 'sub'));
    assert.equal(await imageLabelDir(image, LABEL, '/inside'), join(real, 'configs', 'sub'));
    assert.equal(await imageLabelDir(image, LABEL, '/'), real);
  });
});

test('a label with ".." is refused, naming the label, its value and why, whether or not it would leave the image', async () => {
  await withTempDir('image-path-', async (dir) => {
    const { image } = await cache(dir);
    const sibling = `../${'b'.repeat(64)}/configs`;
    await refused(imageLabelDir(image, LABEL, sibling), 'OCI_UNSAFE_PATH', new RegExp(`="${sibling.replace(/\./g, '\\.')}" contains "\\.\\." and could lead out of the image`));
    await refused(imageLabelDir(image, LABEL, '../../../../../../../../dev/zero'), 'OCI_UNSAFE_PATH', /contains "\.\."/);
    await refused(imageLabelDir(image, LABEL, '/configs/../configs'), 'OCI_UNSAFE_PATH', /contains "\.\."/);
    await refused(imageLabelDir(image, LABEL, 'configs\0'), 'OCI_UNSAFE_PATH', /NUL byte/);
  });
});

test('an absolute label is read from the image root, as in a container: a host path is looked for inside the image', async () => {
  await withTempDir('image-path-', async (dir) => {
    const { image, host } = await cache(dir);
    await refused(imageLabelDir(image, LABEL, host), 'OCI_LABEL_PATH_MISSING', /which is not in the image/);
    await refused(imageLabelDir(image, LABEL, '/dev/zero'), 'OCI_LABEL_PATH_MISSING', /names "\/dev\/zero", which is not in the image/);
  });
});

test('a label through a symlink out of the image, a loop, or to a file is refused', async () => {
  await withTempDir('image-path-', async (dir) => {
    const { image } = await cache(dir);
    await refused(imageLabelDir(image, LABEL, '/outside'), 'OCI_UNSAFE_LINK', /names "\/outside", which leads, through a symlink, out of the image/);
    await refused(imageLabelDir(image, LABEL, '/loop'), 'OCI_UNSAFE_LINK', /loop of symlinks/);
    await refused(imageLabelDir(image, LABEL, '/file'), 'OCI_LABEL_PATH_NOT_DIRECTORY', /names "\/file", which is a file in the image, not a directory/);
  });
});

test('a long label is cut in the message', async () => {
  await withTempDir('image-path-', async (dir) => {
    const { image } = await cache(dir);
    await refused(imageLabelDir(image, LABEL, `${'x/'.repeat(500)}..`), 'OCI_UNSAFE_PATH', /…" contains/);
  });
});
