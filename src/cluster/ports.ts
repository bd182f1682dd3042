/** Free loopback ports, chosen by the kernel. */
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export async function freePorts<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const out = {} as Record<K, number>;
  const used = new Set<number>();
  for (const n of names) {
    let p = await freePort();
    while (used.has(p)) p = await freePort();
    used.add(p);
    out[n] = p;
  }
  return out;
}
