import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runProcess } from './run-process.test-helper.js';

const HEAP_MODULE = fileURLToPath(new URL('./heap.ts', import.meta.url));

/**
 * One fresh process (V8's flags are process-wide): optionally applies the settings, then keeps a
 * window of recent objects alive while it allocates, so scavenges see many survivors and what
 * leaves the window dies in the old generation. Prints the young generation's start and largest
 * size and the largest committed heap.
 */
const SCRIPT = `
import v8 from 'node:v8';
import { collectLikeGo, keepYoungGenerationSmall } from ${JSON.stringify(HEAP_MODULE)};
const [young, go] = process.argv.slice(1);
if (young === '1') keepYoungGenerationSmall();
if (go === '1') collectLikeGo();
const space = (n) => v8.getHeapSpaceStatistics().find((s) => s.space_name === n).space_size;
const startNew = space('new_space');
let maxNew = 0, maxHeap = 0;
const ring = new Array(150000);
for (let i = 0; i < 3000000; i++) {
  ring[i % ring.length] = { i, s: 'item-' + i, a: [i, i + 1] };
  if (i % 10000 === 0) { maxNew = Math.max(maxNew, space('new_space')); maxHeap = Math.max(maxHeap, v8.getHeapStatistics().total_heap_size); }
}
console.log(JSON.stringify({ startNew, maxNew, maxHeap }));
`;

async function heapOf(young: boolean, go: boolean, nodeFlags: readonly string[] = []): Promise<{ startNew: number; maxNew: number; maxHeap: number }> {
  const r = await runProcess(process.execPath, [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', SCRIPT, young ? '1' : '0', go ? '1' : '0'], { cwd: process.cwd() });
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as { startNew: number; maxNew: number; maxHeap: number };
}

test('the heap settings take effect when set in a running process', async () => {
  const plain = await heapOf(false, false);
  const young = await heapOf(true, false);
  const both = await heapOf(true, true);
  // Without the setting V8 widens the young generation under many survivors (4 -> 32 MB on
  // Node 20's V8, 4 -> 128 MB on Node 24's)...
  assert.ok(plain.maxNew > 4 * plain.startNew, `control: young generation ${plain.startNew} -> ${plain.maxNew}`);
  // ...with it, it stays a small part of that: on Node 20 it does not grow at all; Node 24's V8
  // still grows it by pages (4 -> 5.5 to 13 MB over runs), so the bound is against the control.
  assert.ok(young.maxNew * 4 <= plain.maxNew, `young generation ${young.startNew} -> ${young.maxNew} with the setting, ${plain.maxNew} without`);
  // Collecting at twice the live size holds far less garbage than V8's own growth (56 against 106 MB here).
  assert.ok(both.maxHeap < 0.75 * young.maxHeap, `largest heap ${both.maxHeap} with collectLikeGo, ${young.maxHeap} without`);
});

test('with --optimize-for-size, collectLikeGo leaves V8 its tighter growth', async () => {
  // V8's conservative mode grows the old generation by at most 1.3 times; --heap-growing-percent=100
  // would replace that with 2 (what collectLikeGo set before, in helm-operator run too).
  const own = await heapOf(true, true, ['--optimize-for-size']);
  const doubled = await heapOf(true, false, ['--optimize-for-size', '--heap-growing-percent=100']);
  assert.ok(own.maxHeap < 0.9 * doubled.maxHeap, `largest heap ${own.maxHeap} with collectLikeGo under --optimize-for-size, ${doubled.maxHeap} when growing to twice`);
});

/**
 * One fresh process: optionally applies collectDeadBuffersSooner, then makes 1,000 buffers of
 * 64 KiB, each dropped at once (what a socket or file read gives a stream that hashes or unzips
 * it and moves on), and prints the most memory held by array buffers at once.
 */
const BUFFERS_SCRIPT = `
import { collectDeadBuffersSooner } from ${JSON.stringify(HEAP_MODULE)};
if (process.argv[1] === '1') collectDeadBuffersSooner();
let most = 0;
for (let i = 0; i < 1000; i++) {
  const read = Buffer.allocUnsafeSlow(64 * 1024);
  read[0] = i;
  most = Math.max(most, process.memoryUsage().arrayBuffers);
}
console.log(JSON.stringify({ most }));
`;

async function buffersHeld(apply: boolean, nodeFlags: readonly string[] = []): Promise<number> {
  const r = await runProcess(process.execPath, [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', BUFFERS_SCRIPT, apply ? '1' : '0'], { cwd: process.cwd() });
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { most: number }).most;
}

test('collectDeadBuffersSooner: under --optimize-for-size a stream holds a few MB of dead buffers, not tens; a launch flag of its own wins; a plain process is left alone', async () => {
  const MiB = 1024 * 1024;
  // The tests run on the pinned Node 24 (hack/lib.sh use_pinned_node); Node 20's V8 has no such flag.
  assert.ok(Number(process.versions.v8.split('.')[0]) >= 13, `V8 ${process.versions.v8}: the flag needs V8 13 (Node 24)`);
  const asImage = ['--optimize-for-size'];
  const without = await buffersHeld(false, asImage);
  const withIt = await buffersHeld(true, asImage);
  const launched = await buffersHeld(true, [...asImage, '--scavenger-max-new-space-capacity-mb=32']);
  const plain = await buffersHeld(true);
  // Node 24's V8 scavenges for the buffers' sake only at 64 MB of them.
  assert.ok(without > 40 * MiB, `control: ${without} bytes of array buffers at most without the setting`);
  assert.ok(withIt < 12 * MiB, `${withIt} bytes of array buffers at most with the setting, ${without} without`);
  assert.ok(launched > 40 * MiB, `the launch flag's 32 MB capacity was overridden: ${launched} bytes at most`);
  assert.ok(plain > 40 * MiB, `a process without --optimize-for-size was changed: ${plain} bytes at most`);
});
