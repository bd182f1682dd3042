/**
 * A faulty registry for the fault tests: an HTTP proxy (node:http) in front of the real local
 * registry that, when told to, serves chosen blobs truncated (half the bytes, and a
 * Content-Length that agrees) or with one byte changed (same length, wrong digest). Everything
 * else, pushes included, passes through untouched.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type BlobFault = 'none' | 'truncate' | 'corrupt';

export interface RegistryProxy {
  /** `127.0.0.1:port`: use it as the registry host of published images. */
  host: string;
  /** The fault applied to GETs of the blobs in `faultyBlobs`. */
  fault: BlobFault;
  faultyBlobs: Set<string>;
  /** How many blob responses were tampered with so far. */
  readonly tampered: number;
  close(): Promise<void>;
}

export async function startRegistryProxy(upstream: string): Promise<RegistryProxy> {
  const [upHost, upPort] = upstream.split(':');
  const state = { fault: 'none' as BlobFault, faultyBlobs: new Set<string>(), tampered: 0 };
  const server: Server = createServer((req, res) => {
    const digest = /\/blobs\/(sha256:[0-9a-f]{64})$/.exec(req.url ?? '')?.[1];
    const tamper = req.method === 'GET' && digest !== undefined && state.fault !== 'none' && state.faultyBlobs.has(digest);
    const up = request({ host: upHost, port: Number(upPort), method: req.method, path: req.url, headers: req.headers }, (upRes) => {
      if (!tamper || upRes.statusCode !== 200) {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', () => {
        let body = Buffer.concat(chunks);
        if (state.fault === 'truncate') body = body.subarray(0, Math.floor(body.length / 2));
        else {
          body = Buffer.from(body);
          const i = Math.floor(body.length / 2);
          body[i] = (body[i] ?? 0) ^ 0xff;
        }
        state.tampered++;
        res.writeHead(200, { ...upRes.headers, 'content-length': String(body.length) });
        res.end(body);
      });
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    host: `127.0.0.1:${port}`,
    get fault() {
      return state.fault;
    },
    set fault(f: BlobFault) {
      state.fault = f;
    },
    faultyBlobs: state.faultyBlobs,
    get tampered() {
      return state.tampered;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
