/**
 * Fuzzing the tar unpacker that every image layer, git and HTTP tarball goes through
 * (src/oci/unpack.ts unpackTarSafely, then src/source/tree.ts digestTree as the source cache
 * commits a tree): entries with `..`, absolute paths, symlinks and hard links out of the root,
 * devices and FIFOs, PAX and GNU long names, whiteouts, size bombs (declared sizes, a gzip of
 * zeros), count bombs, truncated and corrupted archives, two layers sharing one budget. Each
 * archive unpacks or is refused with an InputError, within the time bound, and nothing outside
 * the destination changes; every link left in the tree stays inside it.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { unpackTarSafely } from '../../src/oci/unpack.js';
import { digestTree } from '../../src/source/index.js';
import { Sandbox, fc, fuzz } from './harness.js';

const BLOCK = 512;

interface RawEntry {
  name: string;
  type: string;
  linkname: string;
  mode: number;
  /** What the header says. */
  declared: number;
  /** What follows the header. */
  body: Buffer;
  /** Write the name in a PAX header, a GNU long-name entry, or the ustar prefix field. */
  nameVia: 'ustar' | 'pax' | 'gnu' | 'prefix';
  /** Size in base-256, as GNU tar writes sizes over 8 GiB. */
  base256: boolean;
}

function octal(buf: Buffer, value: number, offset: number, length: number): void {
  buf.write(value.toString(8).padStart(length - 1, '0').slice(-(length - 1)), offset, length - 1, 'ascii');
}

function header(e: { name: string; type: string; linkname: string; mode: number; size: number; base256?: boolean; prefix?: string }): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(e.name, 0, Math.min(Buffer.byteLength(e.name), 100), 'utf8');
  octal(h, e.mode & 0o7777, 100, 8);
  octal(h, 0, 108, 8);
  octal(h, 0, 116, 8);
  if (e.base256 === true) {
    h[124] = 0x80;
    let v = BigInt(e.size);
    for (let i = 135; i > 124; i--) {
      h[i] = Number(v & 0xffn);
      v >>= 8n;
    }
  } else octal(h, Math.min(e.size, 0o77777777777), 124, 12);
  octal(h, 0, 136, 12);
  h.write(e.type.slice(0, 1) || '0', 156, 1, 'latin1');
  h.write(e.linkname, 157, Math.min(Buffer.byteLength(e.linkname), 100), 'utf8');
  h.write('ustar\u000000', 257, 8, 'latin1');
  if (e.prefix !== undefined) h.write(e.prefix, 345, Math.min(Buffer.byteLength(e.prefix), 155), 'utf8');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  octal(h, sum, 148, 7);
  h[155] = 0x20;
  return h;
}

function pad(n: number): Buffer {
  return Buffer.alloc((BLOCK - (n % BLOCK)) % BLOCK);
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (`${len}${body}`.length !== len) len = Buffer.byteLength(`${len}${body}`);
  return `${len}${body}`;
}

function entryBytes(e: RawEntry): Buffer[] {
  const out: Buffer[] = [];
  let name = e.name;
  let prefix: string | undefined;
  if (e.nameVia === 'pax') {
    const rec = Buffer.from(paxRecord('path', e.name) + (e.linkname === '' ? '' : paxRecord('linkpath', e.linkname)));
    out.push(header({ name: 'PaxHeader', type: 'x', linkname: '', mode: 0o644, size: rec.length }), rec, pad(rec.length));
    name = e.name.slice(0, 100);
  } else if (e.nameVia === 'gnu') {
    const rec = Buffer.from(`${e.name}\0`);
    out.push(header({ name: '././@LongLink', type: 'L', linkname: '', mode: 0o644, size: rec.length }), rec, pad(rec.length));
    name = e.name.slice(0, 100);
  } else if (e.nameVia === 'prefix') {
    const cut = e.name.lastIndexOf('/');
    if (cut > 0) {
      prefix = e.name.slice(0, cut);
      name = e.name.slice(cut + 1);
    }
  }
  out.push(header({ name, type: e.type, linkname: e.linkname, mode: e.mode, size: e.declared, base256: e.base256, ...(prefix === undefined ? {} : { prefix }) }));
  out.push(e.body, pad(e.body.length));
  return out;
}

/** The sandbox is made before the arbitraries so inputs can aim at its real outside paths. */
const sandbox = await Sandbox.create('tar');
after(() => sandbox.dispose());

const component = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom('a', 'b', 'manifests', 'metadata', 'x.yaml', 'dir', 'link', 'hl', '.', '') },
  { weight: 3, arbitrary: fc.constantFrom('.wh.a', '.wh.b', '.wh..wh..opq', '.wh.link', '.wh.dir') },
  { weight: 2, arbitrary: fc.constantFrom('..', '.wh.', '.wh..', 'C:', '\\..\\x', 'a\0b') },
);
const relPath = fc.array(component, { minLength: 1, maxLength: 5 }).map((p) => p.join('/'));
const pathArb = fc.oneof(
  { weight: 24, arbitrary: relPath },
  { weight: 1, arbitrary: relPath.map((p) => `/${p}`) },
  { weight: 1, arbitrary: fc.constantFrom(...sandbox.targets) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 6 }).map((n) => `${'../'.repeat(n)}outside/secret`) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(120), `${'d/'.repeat(60)}f`, `${'a'.repeat(99)}/b`, 'C:\\Windows\\x', './', '/', '//a') },
);

const typeArb = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom('0', '0', '0', '5', '5', '2', '2', '1', '1') },
  { weight: 1, arbitrary: fc.constantFrom('3', '4', '6', '7', '\0', 'x', 'g', 'L', 'K', 'S', 'V', 'D', 'M', 'Z') },
);

const entryArb: fc.Arbitrary<RawEntry> = fc
  .record({
    name: pathArb,
    type: typeArb,
    linkname: fc.oneof({ weight: 10, arbitrary: pathArb }, { weight: 1, arbitrary: fc.constant('') }),
    linkOnFile: fc.nat({ max: 20 }),
    mode: fc.oneof(fc.constantFrom(0o644, 0o755, 0o000, 0o4777, 0o7777, 0o200), fc.nat({ max: 0o7777 })),
    body: fc.oneof({ weight: 4, arbitrary: fc.uint8Array({ maxLength: 64 }) }, { weight: 1, arbitrary: fc.constant(new Uint8Array(0)) }),
    sizeLie: fc.oneof(
      { weight: 40, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: -64, max: 600 }) },
      { weight: 1, arbitrary: fc.constantFrom(0o77777777777, 2 ** 40, 2 ** 53 - 1) },
    ),
    nameVia: fc.constantFrom('ustar', 'ustar', 'ustar', 'pax', 'gnu', 'prefix'),
    base256: fc.boolean(),
  })
  .map((r) => {
    // Only files carry content (a body on anything else is rare damage: readers differ on it).
    const body = r.type === '0' || r.linkOnFile === 1 ? Buffer.from(r.body) : Buffer.alloc(0);
    const declared = Math.max(0, body.length + r.sizeLie);
    // A link name only on links (and rarely elsewhere, which tar readers ignore or refuse).
    const linkname = r.type === '1' || r.type === '2' || r.linkOnFile === 0 ? r.linkname : '';
    return { name: r.name, type: r.type, linkname, mode: r.mode, declared, body, nameVia: r.nameVia, base256: r.base256 && r.sizeLie > 1000 };
  });

let zeroBomb: Buffer | undefined;
/** A gzip of a tar holding one 64 MiB file of zeros: about 64 KiB on the wire. */
function gzipBomb(): Buffer {
  zeroBomb ??= gzipSync(Buffer.concat([header({ name: 'zeros', type: '0', linkname: '', mode: 0o644, size: 64 * 1024 * 1024 }), Buffer.alloc(64 * 1024 * 1024), Buffer.alloc(BLOCK * 2)]), {
    level: 1,
  });
  return zeroBomb;
}

/** A count bomb: many small entries, over the entry limit given to the unpacker. */
function countBomb(n: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < n; i++) parts.push(header({ name: `d${i % 50}/f${i}`, type: i % 3 === 0 ? '5' : '0', linkname: '', mode: 0o644, size: 0 }));
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

interface Layer {
  bytes: Buffer;
  chunk: number;
  /** The cases of issue 15 this layer exercises (tallied in the figures; each must appear). */
  cases: string[];
}

/** The cases every run must exercise, from the issue: each is counted per input in the figures. */
const CASES = [
  'dotdot-path',
  'absolute-path',
  'symlink-out',
  'hardlink-out',
  'write-through-symlink-out',
  'write-through-hardlink-out',
  'hardlink-to-symlink',
  'whiteout-through-symlink-out',
  'device',
  'fifo',
  'size-bomb-declared',
  'size-bomb-gzip',
  'size-bomb-two-layers',
  'count-bomb',
  'count-bomb-two-layers',
] as const;
type Case = (typeof CASES)[number];

const escapes = (p: string): boolean => p.startsWith('/') || p.split('/').includes('..') || /^[A-Za-z]:/.test(p) || p.startsWith('\\');

/** The cases a list of entries exercises, read off the entries themselves. */
function casesOf(entries: readonly RawEntry[]): Case[] {
  const out = new Set<Case>();
  for (const e of entries) {
    if (e.name.split('/').includes('..')) out.add('dotdot-path');
    if (e.name.startsWith('/')) out.add('absolute-path');
    if (e.type === '2' && escapes(e.linkname)) out.add('symlink-out');
    if (e.type === '1' && escapes(e.linkname)) out.add('hardlink-out');
    if (e.type === '3' || e.type === '4') out.add('device');
    if (e.type === '6') out.add('fifo');
    if (e.declared > 1024 * 1024) out.add('size-bomb-declared');
  }
  return [...out];
}

const raw = (name: string, type: string, linkname = '', body = ''): RawEntry => {
  const b = Buffer.from(body);
  return { name, type, linkname, mode: type === '5' ? 0o755 : 0o644, declared: b.length, body: b, nameVia: 'ustar', base256: false };
};

/**
 * Attacks made on purpose, as a random mix of entries rarely lines them up: a link out of the root
 * and then a write, a whiteout or a directory through it (in the same layer or the next one), a
 * hardlink to a symlink (link(2) copies the link to a shallower directory), devices aimed at the
 * outside files, and bombs that fit one layer but not two. Each is one or two layers.
 */
const outsideDir = (depth: number): fc.Arbitrary<string> =>
  fc.constantFrom(join(sandbox.root, 'outside', 'dir'), join(sandbox.root, 'outside'), `${'../'.repeat(depth + 5)}outside/dir`, '../'.repeat(depth + 1), '/', '..');
const scenarioArb: fc.Arbitrary<Layer[]> = fc
  .record({
    kind: fc.nat({ max: 9 }),
    depth: fc.nat({ max: 2 }),
    split: fc.boolean(),
    pick: fc.nat(),
    gzip: fc.boolean(),
  })
  .chain(({ kind, depth, split, pick, gzip }) => {
    const pre = 'a/b/c/'.slice(0, depth * 2);
    const dirs = depth === 0 ? [] : [raw(pre.slice(0, -1), '5')];
    const layers = (first: RawEntry[], second: RawEntry[], extra: Case[]): Layer[] => {
      const pack = (entries: RawEntry[]): Buffer => {
        const tar = Buffer.concat([...entries.flatMap(entryBytes), Buffer.alloc(BLOCK * 2)]);
        return gzip ? gzipSync(tar) : tar;
      };
      const cases = [...new Set([...casesOf([...first, ...second]), ...extra])];
      if (split) return [{ bytes: pack(first), chunk: 512, cases }, { bytes: pack(second), chunk: 512, cases: [] }];
      return [{ bytes: pack([...first, ...second]), chunk: 512, cases }];
    };
    switch (kind) {
      case 0: // a symlinked directory out of the root, then a file written through it
        return outsideDir(depth).map((out) => layers([...dirs, raw(`${pre}d`, '2', out)], [raw(`${pre}d/${pick % 2 === 0 ? 'secret' : 'victim'}`, '0', '', 'pwned'), raw(`${pre}d/new/x`, '0', '', 'pwned')], ['write-through-symlink-out']));
      case 1: // a hardlink to an outside file, then a file entry of the same name (which must not write through it)
        return fc
          .constantFrom(join(sandbox.root, 'outside', 'secret'), `${'../'.repeat(depth + 5)}outside/secret`, '/etc/hostname')
          .map((out) => layers([...dirs, raw(`${pre}h`, '1', out)], [raw(`${pre}h`, '0', '', 'pwned')], ['write-through-hardlink-out']));
      case 2: // a hardlink to a symlink whose relative target is inside only from its own, deeper directory
        return fc.constantFrom('../a', '..', '../../outside', '../outside/secret').map((target) =>
          layers([raw('dir', '5'), raw('dir/l', '2', target)], [raw('hl', '1', 'dir/l'), raw('hl/x', '0', '', 'pwned'), raw('hl', '0', '', 'pwned')], ['hardlink-to-symlink']),
        );
      case 3: // whiteouts of outside files through a symlinked directory
        return outsideDir(depth).map((out) => layers([...dirs, raw(`${pre}d`, '2', out)], [raw(`${pre}d/.wh.victim`, '0'), raw(`${pre}d/.wh.secret`, '0'), raw(`${pre}d/.wh..wh..opq`, '0')], ['whiteout-through-symlink-out']));
      case 4: // devices and FIFOs, some named to land on the outside files
        return fc
          .constantFrom('3', '4', '6')
          .chain((type) => fc.constantFrom('dev/null', `${pre}secret`, '../../outside/secret', join(sandbox.root, 'outside', 'dev')).map((name) => layers([...dirs], [raw(name, type)], [])));
      case 5: // `..` and absolute names, with links named the same way
        return fc
          .constantFrom(`${pre}../../../outside/secret`, '../outside/secret', `${'../'.repeat(6)}outside/secret`, join(sandbox.root, 'outside', 'secret'), `/${pre}x`, '//x')
          .map((name) => layers([...dirs, raw(name, '0', '', 'pwned')], [raw(name, '2', '.'), raw(`${pre}ok`, '1', name)], []));
      case 6: // declared sizes far beyond the budget, in octal and base-256
        return fc.constantFrom(2 ** 33, 2 ** 40, 0o77777777777).map((size) => {
          const e = raw(`${pre}big`, '0', '', 'x');
          return layers([...dirs, { ...e, declared: size, base256: size > 0o77777777777 }], [], []);
        });
      case 7: // two layers that each fit the 1 MiB budget but not together
        return fc.constant(null).map(() => {
          const big = (name: string): RawEntry => ({ ...raw(name, '0'), body: Buffer.alloc(600 * 1024, 0x61), declared: 600 * 1024 });
          return [
            { bytes: Buffer.concat([...entryBytes(big('one')), Buffer.alloc(BLOCK * 2)]), chunk: 65536, cases: ['size-bomb-two-layers'] },
            { bytes: gzipSync(Buffer.concat([...entryBytes(big('two')), Buffer.alloc(BLOCK * 2)])), chunk: 65536, cases: [] },
          ];
        });
      case 8: // two layers of entries that each fit the entry limit but not together
        return fc.integer({ min: 140, max: 250 }).map((n) => [
          { bytes: countBomb(n), chunk: 65536, cases: ['count-bomb-two-layers'] },
          { bytes: countBomb(n), chunk: 65536, cases: [] },
        ]);
      default: // the gzip bomb, alone or after a small layer
        return fc.constant(null).map(() => [...(split ? layers([raw('a', '0', '', 'x')], [], []) : []), { bytes: gzipBomb(), chunk: 65536, cases: ['size-bomb-gzip'] }]);
    }
  });

const damageArb = fc.record({
  op: fc.constantFrom('none', 'none', 'none', 'none', 'none', 'none', 'truncate', 'flip', 'noEnd'),
  at: fc.nat(),
  byte: fc.integer({ min: 0, max: 255 }),
});

const layerArb: fc.Arbitrary<Layer> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({ entries: fc.array(entryArb, { minLength: 0, maxLength: 8 }), damage: damageArb, gzip: fc.boolean(), chunk: fc.constantFrom(1, 7, 512, 4096, 1 << 20) }).map(({ entries, damage, gzip, chunk }) => {
      let tar = Buffer.concat([...entries.flatMap(entryBytes), damage.op === 'noEnd' ? Buffer.alloc(0) : Buffer.alloc(BLOCK * 2)]);
      if (gzip) tar = gzipSync(tar);
      if (damage.op === 'truncate') tar = tar.subarray(0, damage.at % (tar.length + 1));
      if (damage.op === 'flip' && tar.length > 0) {
        tar = Buffer.from(tar);
        tar[damage.at % tar.length] = damage.byte;
      }
      return { bytes: tar, chunk, cases: casesOf(entries) };
    }),
  },
  { weight: 1, arbitrary: fc.constant(null).map((): Layer => ({ bytes: gzipBomb(), chunk: 65536, cases: ['size-bomb-gzip'] })) },
  { weight: 1, arbitrary: fc.integer({ min: 300, max: 1500 }).map((n): Layer => ({ bytes: countBomb(n), chunk: 65536, cases: ['count-bomb'] })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((b): Layer => ({ bytes: Buffer.from(b), chunk: 512, cases: [] })) },
);

function chunks(b: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < b.length; i += size) out.push(b.subarray(i, i + size));
  return out;
}

/** Every symlink under `root` points, as written, at a place inside `root`. */
async function linksInside(root: string, dir = root): Promise<string | undefined> {
  for (const name of await readdir(dir)) {
    const abs = join(dir, name);
    const st = await lstat(abs);
    if (st.isSymbolicLink()) {
      const target = await readlink(abs);
      const lands = resolve(dirname(abs), target);
      if (isAbsolute(target) || (lands !== root && !lands.startsWith(root + sep))) return `symlink ${relative(root, abs)} -> ${target} points outside the tree`;
    } else if (st.isDirectory()) {
      const why = await linksInside(root, abs);
      if (why !== undefined) return why;
    }
  }
  return undefined;
}

let n = 0;
test('fuzz: tar layers (unpackTarSafely, then the source tree digest)', { timeout: 30 * 60_000 }, async () => {
  const figures = await fuzz(
    'tar-layers',
    fc.oneof({ weight: 3, arbitrary: fc.array(layerArb, { minLength: 1, maxLength: 2 }) }, { weight: 1, arbitrary: scenarioArb }),
    async (layers) => {
      const dest = join(sandbox.work, `layer-${n++}`);
      const budget = { bytes: 0, entries: 0 };
      let unpacked = 0;
      for (const [i, layer] of layers.entries()) {
        const r = await unpackTarSafely(Readable.from(chunks(layer.bytes, layer.chunk)), dest, { maxBytes: 1024 * 1024, maxEntries: 256, budget, source: `layer ${i}` });
        unpacked += r.entries;
      }
      const why = await linksInside(dest);
      if (why !== undefined) throw new Error(why);
      const d = await digestTree(dest, { maxBytes: 1024 * 1024, what: 'fuzz tree' });
      return { unpacked, digest: d.digest };
    },
    { ciRuns: 250, sandbox, cases: (layers) => [...new Set(layers.flatMap((l) => l.cases))], requireCases: CASES },
  );
  // Every refusal names its class (OCI_BAD_ARCHIVE, OCI_UNSAFE_*, OCI_TOO_LARGE): OCI_UNPACK is left
  // for the source stream's own failures, which these in-memory inputs never have.
  assert.equal(figures.codes.OCI_UNPACK ?? 0, 0, `generic OCI_UNPACK errors, e.g. ${figures.samples.OCI_UNPACK ?? ''}`);
});
