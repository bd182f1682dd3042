/**
 * A ceiling on a WebAssembly module's own memory, set by rewriting the module before it is
 * compiled. Why this way: a worker's `resourceLimits` bound its JavaScript heap, not its
 * WebAssembly memory; RLIMIT_AS would bound the whole process and clashes with V8's large
 * virtual reservations; Go's wasm module defines and exports its memory (it imports none), so
 * the host cannot hand it a bounded `WebAssembly.Memory`. A maximum in the module's memory
 * section is enforced by the engine itself: `memory.grow` past it fails, Go's allocator reports
 * "out of memory" and the runtime exits, and the thread is replaced (engine-thread.ts).
 */
import { open, readFile, type FileHandle } from 'node:fs/promises';
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

/** The memory section at wasm[start, end), to be replaced by `section`. */
interface MemoryPatch {
  start: number;
  end: number;
  section: Uint8Array;
}

/**
 * Where the module's memory section is and what replaces it (the same memory limited to
 * `maxBytes`, rounded down to whole pages; a maximum the module already has is kept when it is
 * lower). `wasm` may be the head of a module of `totalLength` bytes: undefined when the memory
 * section is not in it. Refuses a module that imports its memory or has no memory, a shared or
 * 64-bit memory, and a ceiling under the memory the module starts with.
 */
function memoryPatch(wasm: Uint8Array, totalLength: number, maxBytes: number): MemoryPatch | undefined {
  const fail = (why: string): never => {
    throw new BinnacleError('internal', 'HELM_ENGINE_MODULE', `cannot set a memory ceiling on the WebAssembly module: ${why}`);
  };
  if (wasm.length < 8 || wasm[0] !== 0 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d) fail('not a WebAssembly binary');
  const maxPages = Math.floor(maxBytes / WASM_PAGE_BYTES);
  if (!(maxPages >= 1 && maxPages <= 65536)) fail(`a ceiling of ${maxBytes} bytes is outside 64 KiB..4 GiB`);
  const partial = wasm.length < totalLength;
  let at = 8;
  while (at < totalLength) {
    // A section header is at most 6 bytes; past the head, the caller reads the whole module.
    if (partial && at + 6 > wasm.length) return undefined;
    const id = wasm[at] ?? 0;
    const size = readU32(wasm, at + 1);
    const body = size.next;
    const end = body + size.value;
    if (end > totalLength) fail('a section runs past the end');
    if (id === MEMORY_SECTION) {
      if (end > wasm.length) return undefined;
      return { start: at, end, section: memorySection(wasm, body, end, maxPages, fail) };
    }
    at = end;
  }
  return fail('it defines no memory of its own (an imported memory is the host’s to bound)');
}

function memorySection(wasm: Uint8Array, body: number, end: number, maxPages: number, fail: (why: string) => never): Uint8Array {
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
  return Uint8Array.from([MEMORY_SECTION, ...writeU32(newBody.length), ...newBody]);
}

/** `wasm` with its (one, own) memory limited to `maxBytes` (see memoryPatch). */
export function withMemoryMaximum(wasm: Uint8Array, maxBytes: number): Uint8Array {
  const patch = memoryPatch(wasm, wasm.length, maxBytes);
  if (patch === undefined) throw new BinnacleError('internal', 'HELM_ENGINE_MODULE', 'cannot set a memory ceiling on the WebAssembly module: no memory section');
  const out = new Uint8Array(wasm.length - (patch.end - patch.start) + patch.section.length);
  out.set(wasm.subarray(0, patch.start), 0);
  out.set(patch.section, patch.start);
  out.set(wasm.subarray(patch.end), patch.start + patch.section.length);
  return out;
}

/** The head read first: the sections before memory (types, imports, functions) are small. */
const HEAD_BYTES = 4 * 1024 * 1024;

/** A module read from a file; `release` gives its memory back at once (after it is compiled). */
export interface ReadModule {
  bytes: Uint8Array;
  release(): void;
}

/**
 * The module in `file` with its memory limited to `maxBytes` (as withMemoryMaximum), read into
 * ONE buffer that `release` frees at once: the module is large (helm.wasm is 30 MiB) and V8
 * keeps its own copy once compiled, so a second copy in JavaScript (the file as read, then the
 * rewritten module), or the one copy waiting for a garbage collection while Go starts, raises
 * the process's peak by the module's size at every engine start. The buffer is resizable, and
 * shrinking it to nothing returns its pages to the system without a collection.
 */
export async function readWithMemoryMaximum(file: string, maxBytes: number): Promise<ReadModule> {
  const fd = await open(file, 'r');
  try {
    const { size } = await fd.stat();
    const head = new Uint8Array(Math.min(size, HEAD_BYTES));
    await readFully(fd, head, 0);
    const patch = memoryPatch(head, size, maxBytes);
    if (patch === undefined) return { bytes: withMemoryMaximum(await readFile(file), maxBytes), release: () => undefined };
    const length = size - (patch.end - patch.start) + patch.section.length;
    const buffer = new ResizableArrayBuffer(length, { maxByteLength: length });
    const out = new Uint8Array(buffer, 0, length);
    out.set(head.subarray(0, patch.start), 0);
    out.set(patch.section, patch.start);
    await readFully(fd, out.subarray(patch.start + patch.section.length), patch.end);
    return { bytes: out, release: () => buffer.resize(0) };
  } finally {
    await fd.close();
  }
}

/** ES2024's resizable ArrayBuffer (Node 20 has it; this project's TypeScript lib predates it). */
const ResizableArrayBuffer = ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => ArrayBuffer & { resize(length: number): void };

async function readFully(fd: FileHandle, into: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < into.length; ) {
    const { bytesRead } = await fd.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) throw new BinnacleError('internal', 'HELM_ENGINE_MODULE', 'the WebAssembly module changed while it was read');
    done += bytesRead;
  }
}
