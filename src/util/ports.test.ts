import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ephemeralRange, freePort, freePorts, pickRange } from './ports.js';

test('the kernel ephemeral range is read from its file, and nothing comes of an unreadable one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ports-'));
  writeFileSync(join(dir, 'range'), '32768\t60999\n');
  assert.deepEqual(ephemeralRange(join(dir, 'range')), [32768, 60999]);
  writeFileSync(join(dir, 'bad'), 'not numbers\n');
  assert.equal(ephemeralRange(join(dir, 'bad')), undefined);
  assert.equal(ephemeralRange(join(dir, 'absent')), undefined);
});

test('ports are picked below the ephemeral range, where outgoing connections never take them', () => {
  assert.deepEqual(pickRange([32768, 60999]), [20000, 32767]);
  // A range that leaves too little room below it: the kernel chooses instead.
  assert.equal(pickRange([20500, 60999]), undefined);
  assert.equal(pickRange(undefined), undefined);
});

test('freePort returns a port below the ephemeral range that can be bound, and freePorts distinct ones', async () => {
  const range = ephemeralRange();
  assert.ok(range !== undefined && pickRange(range) !== undefined, 'this machine has room below its ephemeral range (Linux default 32768)');
  const port = await freePort();
  assert.ok(port >= 20000 && port < range[0], `port ${port} is below ${range[0]}`);
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', resolve);
  });
  srv.close();
  const ports = await freePorts(['a', 'b', 'c', 'd']);
  assert.equal(new Set(Object.values(ports)).size, 4);
});

test('a port held by a listener is passed over for the next pick', async () => {
  const span = pickRange(ephemeralRange());
  assert.ok(span !== undefined, 'this machine has room below its ephemeral range (Linux default 32768)');
  const held = createServer();
  const heldPort = await freePort();
  await new Promise<void>((resolve) => held.listen(heldPort, '127.0.0.1', resolve));
  try {
    // The first pick lands on the held port, the second just above it (or just below at the top).
    const width = span[1] - span[0] + 1;
    const next = heldPort < span[1] ? heldPort + 1 : heldPort - 1;
    const picks = [heldPort, next].map((p) => (p - span[0] + 0.5) / width);
    const got = await freePort(() => picks.shift() ?? Math.random());
    assert.notEqual(got, heldPort);
    assert.equal(picks.length, 0, 'both picks were drawn: the held one was refused');
  } finally {
    held.close();
  }
});
