/**
 * withMemoryMaximum (and readWithMemoryMaximum, from a file): the rewritten module compiles, keeps its starting memory, and its memory
 * cannot grow past the ceiling, which is what bounds Go's heap in the engine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWithMemoryMaximum, WASM_PAGE_BYTES, withMemoryMaximum } from './wasm-memory.js';

/** Node's WebAssembly global, as far as these tests use it (the compiler's libs here do not declare it). */
declare const WebAssembly: { Module: new (b: Uint8Array) => object; Instance: new (m: object) => { exports: Record<string, { buffer: ArrayBuffer; grow(pages: number): number }> } };
const wasmApi = WebAssembly;

/** A module with a custom section first, one own memory of `min` pages (max `max` when given), exported as `mem`. */
function moduleWith(min: number, max?: number): Uint8Array {
  const custom = [0x00, 0x05, 0x04, ...Buffer.from('note')];
  const memBody = max === undefined ? [0x01, 0x00, min] : [0x01, 0x01, min, max];
  const memory = [0x05, memBody.length, ...memBody];
  const exports = [0x07, 0x07, 0x01, 0x03, ...Buffer.from('mem'), 0x02, 0x00];
  return Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...custom, ...memory, ...exports]);
}

function memoryOf(bytes: Uint8Array): { buffer: ArrayBuffer; grow(pages: number): number } {
  const mem = new wasmApi.Instance(new wasmApi.Module(bytes)).exports.mem;
  assert.ok(mem !== undefined);
  return mem;
}

test('a module without a maximum grows freely; rewritten, it grows up to the ceiling and no further', () => {
  const original = moduleWith(2);
  assert.equal(memoryOf(original).grow(10), 2, 'unbounded before');
  const mem = memoryOf(withMemoryMaximum(original, 5 * WASM_PAGE_BYTES + 100));
  assert.equal(mem.buffer.byteLength, 2 * WASM_PAGE_BYTES, 'it starts as before');
  assert.equal(mem.grow(3), 2);
  assert.throws(() => mem.grow(1), RangeError);
  assert.equal(mem.buffer.byteLength, 5 * WASM_PAGE_BYTES);
});

test('a lower maximum the module has is kept; a higher one is lowered', () => {
  const keeps = memoryOf(withMemoryMaximum(moduleWith(1, 3), 10 * WASM_PAGE_BYTES));
  assert.equal(keeps.grow(2), 1);
  assert.throws(() => keeps.grow(1), RangeError);
  const lowers = memoryOf(withMemoryMaximum(moduleWith(1, 100), 4 * WASM_PAGE_BYTES));
  assert.equal(lowers.grow(3), 1);
  assert.throws(() => lowers.grow(1), RangeError);
});

test('a ceiling under the starting memory, a module without memory, and a non-module are refused by name', () => {
  assert.throws(() => withMemoryMaximum(moduleWith(8), 4 * WASM_PAGE_BYTES), { code: 'HELM_ENGINE_MODULE', message: /starts with 8 pages of memory, more than the ceiling of 4/ });
  assert.throws(() => withMemoryMaximum(Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]), WASM_PAGE_BYTES), { code: 'HELM_ENGINE_MODULE', message: /defines no memory/ });
  assert.throws(() => withMemoryMaximum(Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]), WASM_PAGE_BYTES), { code: 'HELM_ENGINE_MODULE', message: /not a WebAssembly binary/ });
});

test('a multi-byte LEB128 section size and page count are read and written', () => {
  // 300 pages needs two LEB128 bytes.
  const bytes = withMemoryMaximum(moduleWith(2), 300 * WASM_PAGE_BYTES);
  const mem = memoryOf(bytes);
  assert.equal(mem.grow(298), 2);
  assert.throws(() => mem.grow(1), RangeError);
});

test('readWithMemoryMaximum reads the same rewritten module from a file, whether the memory section is in its head or far past it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'wasm-memory-'));
  try {
    const small = join(dir, 'small.wasm');
    await writeFile(small, moduleWith(2));
    const readSmall = await readWithMemoryMaximum(small, 5 * WASM_PAGE_BYTES);
    assert.deepEqual(readSmall.bytes, withMemoryMaximum(moduleWith(2), 5 * WASM_PAGE_BYTES));
    readSmall.release();
    assert.equal(readSmall.bytes.length, 0, 'released: the buffer is given back');
    // A 5 MiB custom section before the memory: past the head read first.
    const payload = 5 * 1024 * 1024;
    const sizeLeb = [0x80 | (payload & 0x7f), 0x80 | ((payload >> 7) & 0x7f), 0x80 | ((payload >> 14) & 0x7f), payload >> 21];
    const big = Uint8Array.from([...moduleWith(2, 9).subarray(0, 8), 0x00, ...sizeLeb, 0x03, ...Buffer.from('pad'), ...new Uint8Array(payload - 4), ...moduleWith(2, 9).subarray(8)]);
    const bigFile = join(dir, 'big.wasm');
    await writeFile(bigFile, big);
    const read = (await readWithMemoryMaximum(bigFile, 5 * WASM_PAGE_BYTES)).bytes;
    assert.ok(Buffer.from(read).equals(Buffer.from(withMemoryMaximum(big, 5 * WASM_PAGE_BYTES))));
    const mem = memoryOf(read);
    assert.equal(mem.grow(3), 2);
    assert.throws(() => mem.grow(1), RangeError);
    await writeFile(join(dir, 'none.wasm'), Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
    await assert.rejects(readWithMemoryMaximum(join(dir, 'none.wasm'), WASM_PAGE_BYTES), { code: 'HELM_ENGINE_MODULE', message: /defines no memory/ });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
