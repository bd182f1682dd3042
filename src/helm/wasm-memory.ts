/**
 * A ceiling on a WebAssembly module's own memory, set by rewriting the module before it is
 * compiled. Why this way: a worker's `resourceLimits` bound its JavaScript heap, not its
 * WebAssembly memory; RLIMIT_AS would bound the whole process and clashes with V8's large
 * virtual reservations; Go's wasm module defines and exports its memory (it imports none), so
 * the host cannot hand it a bounded `WebAssembly.Memory`. A maximum in the module's memory
 * section is enforced by the engine itself: `memory.grow` past it fails, Go's allocator reports
 * "out of memory" and the runtime exits, and the thread is replaced (engine-thread.ts).
 */
import { BinnacleError } from '../util/errors.js';

/** One page of WebAssembly memory. */
export const WASM_PAGE_BYTES = 64 * 1024;

const MEMORY_SECTION = 5;

/** An unsigned LEB128 number at `at`: its value and the offset after it. */
function readU32(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  for (let i = at; i < bytes.length && i < at + 5; i++) {
    const b = bytes[i] ?? 0;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
  }
  throw new BinnacleError('internal', 'HELM_ENGINE_MODULE', 'WebAssembly module: a malformed LEB128 number');
}

function writeU32(value: number): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let b = v & 0x7f;
    v = Math.floor(v / 128);
    if (v !== 0) b |= 0x80;
    out.push(b);
  } while (v !== 0);
  return out;
}

/**
 * `wasm` with its (one, own) memory limited to `maxBytes`, rounded down to whole pages; a
 * maximum the module already has is kept when it is lower. Refuses a module that imports its
 * memory or has no memory, a shared or 64-bit memory, and a ceiling under the memory the
 * module starts with.
 */
export function withMemoryMaximum(wasm: Uint8Array, maxBytes: number): Uint8Array {
  const fail = (why: string): never => {
    throw new BinnacleError('internal', 'HELM_ENGINE_MODULE', `cannot set a memory ceiling on the WebAssembly module: ${why}`);
  };
  if (wasm.length < 8 || wasm[0] !== 0 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d) fail('not a WebAssembly binary');
  const maxPages = Math.floor(maxBytes / WASM_PAGE_BYTES);
  if (!(maxPages >= 1 && maxPages <= 65536)) fail(`a ceiling of ${maxBytes} bytes is outside 64 KiB..4 GiB`);
  let at = 8;
  while (at < wasm.length) {
    const id = wasm[at] ?? 0;
    const size = readU32(wasm, at + 1);
    const body = size.next;
    const end = body + size.value;
    if (end > wasm.length) fail('a section runs past the end');
    if (id === MEMORY_SECTION) return rewriteMemorySection(wasm, at, body, end, maxPages, fail);
    at = end;
  }
  return fail('it defines no memory of its own (an imported memory is the host’s to bound)');
}

function rewriteMemorySection(wasm: Uint8Array, start: number, body: number, end: number, maxPages: number, fail: (why: string) => never): Uint8Array {
  const count = readU32(wasm, body);
  if (count.value !== 1) fail(`it defines ${count.value} memories, not one`);
  const flags = wasm[count.next] ?? 0xff;
  if (flags !== 0 && flags !== 1) fail(`its memory has limit flags ${flags} (shared or 64-bit)`);
  const min = readU32(wasm, count.next + 1);
  let next = min.next;
  let pages = maxPages;
  if (flags === 1) {
    const max = readU32(wasm, next);
    pages = Math.min(pages, max.value);
    next = max.next;
  }
  if (next !== end) fail('its memory section has bytes after the memory');
  if (min.value > pages) fail(`it starts with ${min.value} pages of memory, more than the ceiling of ${pages}`);
  const newBody = [...writeU32(1), 1, ...writeU32(min.value), ...writeU32(pages)];
  const header = [MEMORY_SECTION, ...writeU32(newBody.length)];
  const out = new Uint8Array(start + header.length + newBody.length + (wasm.length - end));
  out.set(wasm.subarray(0, start), 0);
  out.set(header, start);
  out.set(newBody, start + header.length);
  out.set(wasm.subarray(end), start + header.length + newBody.length);
  return out;
}
