/** Test fixtures: packaged charts built in memory, chart directories on disk, a loopback HTTP server with counted routes, and the checks the fetch tests share. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { TAR_END, filePadding, ustarHeader } from '../../oci/tar-writer.js';
import { BinnacleError } from '../../util/errors.js';
import { withTempDir } from '../../util/temp-dir.test-helper.js';

/** A `.tgz` laid out as `helm package` lays it out: `<name>/Chart.yaml` first, then the rest. */
export function chartArchive(name: string, version: string, files: Record<string, string> = {}, chartYamlVersion = version): Buffer {
  const entries: [string, string][] = [
    [`${name}/Chart.yaml`, `apiVersion: v2\nname: ${name}\nversion: ${chartYamlVersion}\nappVersion: "1.6"\n`],
    [`${name}/values.yaml`, 'replicas: 1\n'],
    [`${name}/templates/cm.yaml`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n'],
    ...Object.entries(files).map(([p, c]): [string, string] => [p.startsWith('/') || p.startsWith('..') ? p : `${name}/${p}`, c]),
  ];
  const parts: Buffer[] = [];
  for (const [path, content] of entries) {
    const body = Buffer.from(content);
    parts.push(ustarHeader(path, '0', 0o644, body.length, '', 0), body, filePadding(body.length));
  }
  parts.push(TAR_END);
  return gzipSync(Buffer.concat(parts));
}

/** A chart directory written in dir: Chart.yaml (name, version 1.0.0) and the templates given. */
export async function writeChartDir(dir: string, name: string, templates: Record<string, string>): Promise<void> {
  await mkdir(join(dir, 'templates'));
  await writeFile(join(dir, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: 1.0.0\n`);
  for (const [file, text] of Object.entries(templates)) await writeFile(join(dir, 'templates', file), text);
}

/** A chart directory (writeChartDir) in a fresh scratch directory, removed afterwards; fn gets the directory. */
export function withChartDir(prefix: string, name: string, templates: Record<string, string>, fn: (dir: string) => Promise<void>): Promise<void> {
  return withTempDir(prefix, async (dir) => {
    await writeChartDir(dir, name, templates);
    await fn(dir);
  });
}

export function sha256Hex(b: Buffer | string): string {
  return createHash('sha256').update(b).digest('hex');
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface TestServer {
  url: string;
  /** Requests per path. */
  hits: Map<string, number>;
  /** Authorization headers seen, per path. */
  auth: Map<string, string | undefined>;
  routes: Map<string, Handler>;
  close(): Promise<void>;
}

export function send(body: Buffer | string, status = 200, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, headers).end(body);
  };
}

export async function startServer(routes: Map<string, Handler> = new Map()): Promise<TestServer> {
  const hits = new Map<string, number>();
  const auth = new Map<string, string | undefined>();
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    auth.set(path, req.headers.authorization);
    const handler = routes.get(path);
    if (handler === undefined) res.writeHead(404).end('not found\n');
    else handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  assert.ok(addr !== null && typeof addr === 'object');
  return {
    url: `http://127.0.0.1:${addr.port}`,
    hits,
    auth,
    routes,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A new, empty chart cache below parent, so each test starts cold. */
export function freshCacheIn(parent: string): Promise<string> {
  return mkdtemp(join(parent, 'cache-'));
}

/** For assert.rejects: the error is a BinnacleError with this code (and, if given, a message matching pattern). */
export function isCode(code: string, pattern?: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof BinnacleError, `expected a BinnacleError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (pattern !== undefined) assert.match(err.message, pattern);
    return true;
  };
}
