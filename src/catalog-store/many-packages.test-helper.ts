/** Catalogs for the store's and server's tests: many packages, each a separate range of bytes. */
import { randomBytes } from 'node:crypto';
import { readdir, readlink } from 'node:fs/promises';
import type { DeclarativeConfig } from '../declcfg/index.js';

/** A catalog of many packages, each with a channel and a bundle: its olm.package records are as many separate ranges. `incompressible`: random bundle data, so gzip does not shrink an answer into the socket's buffers. */
export function manyPackages(n: number, opts: { incompressible?: boolean } = {}): DeclarativeConfig {
  const dc: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  for (let i = 0; i < n; i++) {
    const name = `pkg-${String(i).padStart(4, '0')}`;
    dc.packages.push({ schema: 'olm.package', name, defaultChannel: 'stable', description: 'x'.repeat(i % 300) });
    dc.channels.push({ schema: 'olm.channel', package: name, name: 'stable', entries: [{ name: `${name}.v1.0.0` }] });
    dc.bundles.push({ schema: 'olm.bundle', package: name, name: `${name}.v1.0.0`, image: `example.com/${name}:v1.0.0`, properties: [{ type: 'olm.package', value: { packageName: name, version: '1.0.0' } }, { type: 'olm.bundle.object', value: { data: opts.incompressible === true ? randomBytes(52_500).toString('base64') : 'y'.repeat(70_000 + i) } }] });
  }
  return dc;
}

/** This process's open descriptors on `file` (Linux). */
export async function openHandles(file: string): Promise<string[]> {
  const fds = await readdir('/proc/self/fd');
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return links.filter((l) => l === file);
}

