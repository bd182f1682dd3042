/**
 * Free loopback ports for processes Binnacle starts (control plane, registry, real node, benches).
 *
 * A port the kernel hands out for `listen(0)` comes from its ephemeral range, the same range it
 * draws source ports from for outgoing connections: between our check and the child's bind, any
 * connection on the machine (a watch, a pull) can take it, and a long-lived one keeps it. Ports
 * below that range are never handed out implicitly, so they are picked there, at random, and
 * checked by binding the wildcard address (which fails if anything holds the port on any address).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Lowest port picked: above the registered services most machines run (kubelet's 10250, 10255, …). */
const LOWEST = 20000;
const ATTEMPTS = 200;

/** The kernel's ephemeral range, or undefined where it cannot be read (not Linux). */
export function ephemeralRange(file = '/proc/sys/net/ipv4/ip_local_port_range'): [number, number] | undefined {
  try {
    const [lo, hi] = readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);
    return lo !== undefined && hi !== undefined && Number.isInteger(lo) && Number.isInteger(hi) ? [lo, hi] : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a port can be bound on every address right now (held by nothing). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '0.0.0.0', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A port the kernel chooses (its ephemeral range): the fallback where no range lies below it. */
function kernelPort(): Promise<number> {
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

/** The ports picked from: [LOWEST, start of the ephemeral range), or undefined when that is too narrow. */
export function pickRange(range: [number, number] | undefined): [number, number] | undefined {
  if (range === undefined) return undefined;
  const top = range[0] - 1;
  return top - LOWEST >= 1000 ? [LOWEST, top] : undefined;
}

/** `random` is Math.random's shape; tests pass their own to land on a port they hold. */
export async function freePort(random: () => number = Math.random): Promise<number> {
  const span = pickRange(ephemeralRange());
  if (span === undefined) return kernelPort();
  for (let i = 0; i < ATTEMPTS; i++) {
    const port = span[0] + Math.floor(random() * (span[1] - span[0] + 1));
    if (await bindable(port)) return port;
  }
  return kernelPort();
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
