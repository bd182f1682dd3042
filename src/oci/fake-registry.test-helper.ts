/**
 * An in-memory OCI registry on loopback, for unit tests (not part of the public API). It speaks
 * enough of the distribution API for RegistryClient: blob uploads (POST, then one PUT), blobs and
 * manifests by GET and HEAD, manifests by tag and by digest, and tag lists, paged when asked.
 * No auth. Blobs are kept by digest for every repository at once. A test makes the registry
 * misbehave with `intercept`, which sees each request before the store does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { sha256Digest } from './digest.js';

export interface FakeRegistryOptions {
  /** Tags in one page of a tag list (default: all); a page before the last links to the next. */
  tagPageSize?: number;
  /**
   * Sees each request first, its body not yet read: returns true when it has dealt with it
   * (answered it, or chosen to leave it unanswered), false to let the store answer.
   */
  intercept?: (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;
  /** The address it listens on and references name (default 127.0.0.1). */
  address?: string;
}

export interface FakeRegistry {
  /** `127.0.0.1:PORT`, the registry part of an image reference. */
  readonly host: string;
  /** Stores a manifest under its digest and a tag of the repository; returns its digest. */
  putManifest(repository: string, tag: string, bytes: Buffer, mediaType: string): string;
  /** Stops the server, cutting open connections. */
  close(): Promise<void>;
}

interface Repository {
  manifests: Map<string, { bytes: Buffer; type: string }>; // by digest
  tags: Map<string, string>; // tag -> digest, in the order first pushed
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void =>
  void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const registryError = (res: ServerResponse, status: number, code: string, message: string): void => json(res, status, { errors: [{ code, message }] });

export async function startFakeRegistry(opts: FakeRegistryOptions = {}): Promise<FakeRegistry> {
  const blobs = new Map<string, Buffer>();
  const repositories = new Map<string, Repository>();
  const repository = (name: string): Repository => {
    let r = repositories.get(name);
    if (r === undefined) repositories.set(name, (r = { manifests: new Map(), tags: new Map() }));
    return r;
  };
  const putManifest = (name: string, tag: string | undefined, bytes: Buffer, type: string): string => {
    const r = repository(name);
    const digest = sha256Digest(bytes);
    r.manifests.set(digest, { bytes, type });
    if (tag !== undefined) r.tags.set(tag, digest);
    return digest;
  };

  const nameUnknown = (res: ServerResponse): void => registryError(res, 404, 'NAME_UNKNOWN', 'repository name not known to registry');
  const answerBlob = (req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): boolean => {
    let m: RegExpExecArray | null;
    if ((m = /^\/v2\/(.+)\/blobs\/uploads\/$/.exec(path)) !== null && req.method === 'POST') {
      repository(m[1] ?? '');
      res.writeHead(202, { location: `/v2/${m[1] ?? ''}/blobs/uploads/u1` }).end();
    } else if (/^\/v2\/.+\/blobs\/uploads\/u1$/.test(path) && req.method === 'PUT') {
      const digest = sha256Digest(body);
      blobs.set(digest, body);
      res.writeHead(201, { 'docker-content-digest': digest }).end();
    } else if ((m = /^\/v2\/.+\/blobs\/(sha256:[0-9a-f]{64})$/.exec(path)) !== null) {
      const b = blobs.get(m[1] ?? '');
      if (b === undefined) registryError(res, 404, 'BLOB_UNKNOWN', 'blob unknown to registry');
      else res.writeHead(200, { 'content-length': String(b.length) }).end(req.method === 'HEAD' ? undefined : b);
    } else return false;
    return true;
  };
  const answerManifest = (req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): boolean => {
    const m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(path);
    if (m === null) return false;
    const [name, ref] = [m[1] ?? '', m[2] ?? ''];
    if (req.method === 'PUT') {
      const digest = putManifest(name, ref.startsWith('sha256:') ? undefined : ref, body, req.headers['content-type'] ?? '');
      res.writeHead(201, { 'docker-content-digest': digest }).end();
      return true;
    }
    const r = repositories.get(name);
    const e = r?.manifests.get(r.tags.get(ref) ?? ref);
    if (r === undefined) nameUnknown(res);
    else if (e === undefined) registryError(res, 404, 'MANIFEST_UNKNOWN', 'manifest unknown');
    else {
      const headers = { 'content-type': e.type, 'docker-content-digest': sha256Digest(e.bytes), 'content-length': String(e.bytes.length) };
      res.writeHead(200, headers).end(req.method === 'HEAD' ? undefined : e.bytes);
    }
    return true;
  };
  const answerTags = (res: ServerResponse, url: URL): boolean => {
    const m = /^\/v2\/(.+)\/tags\/list$/.exec(url.pathname);
    if (m === null) return false;
    const name = m[1] ?? '';
    const tags = [...(repositories.get(name)?.tags.keys() ?? [])];
    if (tags.length === 0) {
      nameUnknown(res);
      return true;
    }
    const last = url.searchParams.get('last');
    const start = last === null ? 0 : tags.indexOf(last) + 1;
    const page = tags.slice(start, start + (opts.tagPageSize ?? tags.length));
    const next = start + page.length < tags.length ? { link: `</v2/${name}/tags/list?n=${page.length}&last=${page[page.length - 1] ?? ''}>; rel="next"` } : undefined;
    json(res, 200, { name, tags: page }, next);
    return true;
  };
  const answer = (req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer): void => {
    if (answerBlob(req, res, url.pathname, body) || answerManifest(req, res, url.pathname, body) || answerTags(res, url)) return;
    registryError(res, 404, 'UNSUPPORTED', `the fake registry does not answer ${req.method ?? ''} ${url.pathname}`);
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (opts.intercept?.(req, res, url) === true) return;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(req, res, url, Buffer.concat(chunks)));
  });
  const address = opts.address ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const addr = server.address();
  if (addr === null || typeof addr !== 'object') throw new Error('the fake registry has no TCP address');
  return {
    host: `${address}:${addr.port}`,
    putManifest,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
