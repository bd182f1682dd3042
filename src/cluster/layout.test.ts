import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterLayout, realPath } from './layout.js';

test('a state dir reached through a symlink is named by its real path (as the kernel names its mounts), its missing part kept as given', () => {
  const base = realPath(mkdtempSync(join(tmpdir(), 'layout-')));
  try {
    mkdirSync(join(base, 'real', 'clusters'), { recursive: true });
    symlinkSync(join(base, 'real'), join(base, 'link'));
    assert.equal(realPath(join(base, 'link', 'clusters')), join(base, 'real', 'clusters'));
    assert.equal(realPath(join(base, 'link', 'clusters', 'rn', 'node')), join(base, 'real', 'clusters', 'rn', 'node'), 'not made yet: the existing part resolved');
    assert.equal(clusterLayout('rn', join(base, 'link', 'clusters', 'rn')).root, join(base, 'real', 'clusters', 'rn'));
    assert.equal(realPath('/no/such/dir'), '/no/such/dir');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
