/**
 * The API server's published OpenAPI v3 schemas (`/openapi/v3`): one document per
 * group-version, holding the schema of every kind it serves, built-in kinds and custom ones
 * (a CRD's schema is published shortly after the CRD is Established).
 *
 * The index names each group-version's document by a URL that carries a hash of its content,
 * so documents are cached by that URL: a changed CRD (a new discovery generation) gets a new
 * URL and is read again, an unchanged group-version never is. The small index is cached too, as
 * discovery is (KubeClient): read again when it is older than `indexMaxAgeMs` (served meanwhile,
 * util/refreshing-value.ts), when it is invalidated (the applier does after installing CRDs, as
 * it invalidates discovery; the next snapshot waits), and when a snapshot is asked for a
 * group-version the index does not name (a CRD created since; that snapshot waits). Without
 * that, every reconcile of every custom resource read it again (~4 requests per CR).
 *
 * Everything read here is unknown JSON until checked: malformed documents are errors, a server
 * that publishes no OpenAPI v3 answers "no schema" for every kind.
 */
import { BinnacleError, errorMessage } from '../util/errors.js';
import { RefreshingValue } from '../util/refreshing-value.js';
import type { KubeClient } from './client.js';
import { isNotFound } from './errors.js';
import type { GroupVersionKind } from './types.js';
import { isRecord } from '../util/object.js';

/** One OpenAPI v3 schema node, unchecked below its top level. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** The component every kind's `metadata` refers to. */
export const OBJECT_META_SCHEMA = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** A kind's schema, with the document it lives in so that its `$ref`s resolve. */
export interface KindSchema {
  gvk: GroupVersionKind;
  root: JsonSchema;
  /** Resolves `#/components/schemas/<name>` within the kind's document. */
  resolve: (ref: string) => JsonSchema | undefined;
  /** Where the schema came from, for messages: `/openapi/v3 apis/apps/v1`, `CRD widgets.example.com`. */
  origin: string;
}

/** The schemas the server serves at one moment. */
export interface SchemaSnapshot {
  /** The kind's published schema, or undefined when the server publishes none for it. */
  kind(gvk: GroupVersionKind): Promise<KindSchema | undefined>;
  /** ObjectMeta's schema (every document has it), for `metadata` of schemas that leave it open. */
  objectMeta(): Promise<KindSchema | undefined>;
}

export interface SchemaSource {
  snapshot(): Promise<SchemaSnapshot>;
  /** Forgets what the server served (CRDs were installed or changed); optional for fixed sources. */
  invalidate?(): void;
}

/** A checked OpenAPI v3 document: its component schemas, indexed by the kinds they describe. */
export class OpenApiDocument {
  private readonly schemas: ReadonlyMap<string, JsonSchema>;
  private readonly byKind: ReadonlyMap<string, string>;

  private constructor(
    readonly path: string,
    schemas: Map<string, JsonSchema>,
    byKind: Map<string, string>,
  ) {
    this.schemas = schemas;
    this.byKind = byKind;
  }

  /** Checks a document at the boundary; `path` (e.g. `apis/apps/v1`) names it in errors. */
  static parse(path: string, doc: unknown): OpenApiDocument {
    const components = isRecord(doc) ? doc.components : undefined;
    const raw = isRecord(components) ? components.schemas : undefined;
    if (raw !== undefined && !isRecord(raw)) throw new BinnacleError('terminal', 'OPENAPI_INVALID', `/openapi/v3/${path}: components.schemas is not an object`);
    const schemas = new Map<string, JsonSchema>();
    const byKind = new Map<string, string>();
    for (const [name, schema] of Object.entries(raw ?? {})) {
      if (!isRecord(schema)) continue;
      schemas.set(name, schema);
      const gvks = schema['x-kubernetes-group-version-kind'];
      if (!Array.isArray(gvks)) continue;
      for (const g of gvks) {
        if (!isRecord(g)) continue;
        const { group, version, kind } = g;
        if (typeof group === 'string' && typeof version === 'string' && typeof kind === 'string') byKind.set(gvkKey({ group, version, kind }), name);
      }
    }
    return new OpenApiDocument(path, schemas, byKind);
  }

  schema(name: string): JsonSchema | undefined {
    return this.schemas.get(name);
  }

  resolve = (ref: string): JsonSchema | undefined => {
    const prefix = '#/components/schemas/';
    return ref.startsWith(prefix) ? this.schemas.get(ref.slice(prefix.length)) : undefined;
  };

  kind(gvk: GroupVersionKind): KindSchema | undefined {
    const name = this.byKind.get(gvkKey(gvk));
    const root = name === undefined ? undefined : this.schemas.get(name);
    return root === undefined ? undefined : { gvk, root, resolve: this.resolve, origin: `/openapi/v3 ${this.path}` };
  }

  named(name: string, gvk: GroupVersionKind): KindSchema | undefined {
    const root = this.schemas.get(name);
    return root === undefined ? undefined : { gvk, root, resolve: this.resolve, origin: `/openapi/v3 ${this.path}` };
  }
}

export interface OpenApiSchemasOptions {
  /** Documents kept in memory, least recently read dropped first; default 256. */
  maxDocuments?: number;
  /** How long the index is used before it is read again; default 30 s. */
  indexMaxAgeMs?: number;
  /** Milliseconds, monotonic (performance.now); a test's own clock. */
  now?: () => number;
}

/** The index's group-version URLs, or none: the server publishes no OpenAPI v3. */
type IndexUrls = Map<string, string> | undefined;

/** A group-version the index does not name is looked for again at most this often (a CRD just created). */
const MISS_REFRESH_MS = 1000;

const sharedSchemas = new WeakMap<object, OpenApiSchemas>();

/** Reads and caches `/openapi/v3`; share one per API server (`OpenApiSchemas.shared`). */
export class OpenApiSchemas implements SchemaSource {
  private readonly documents = new Map<string, Promise<OpenApiDocument>>();
  private readonly maxDocuments: number;
  private readonly indexMaxAgeMs: number;
  private readonly now: () => number;
  private readonly index: RefreshingValue<IndexUrls>;
  /** When the index was last read for a group-version it did not name. */
  private missReadAt = -Infinity;

  constructor(
    private readonly client: Pick<KubeClient, 'requestJson'>,
    opts: OpenApiSchemasOptions = {},
  ) {
    this.maxDocuments = opts.maxDocuments ?? 256;
    this.indexMaxAgeMs = opts.indexMaxAgeMs ?? 30_000;
    this.now = opts.now ?? (() => performance.now());
    // Past its age the index is served while it is read again, up to three times its age (room
    // for one read to take the client's whole deadline): every reconcile's apply shares it, and
    // one slow read must not hold them all; past that, an index that cannot be read fails the
    // reconcile as before, rather than prune with a schema minutes old.
    this.index = new RefreshingValue({ ttlMs: this.indexMaxAgeMs, staleMs: 3 * this.indexMaxAgeMs, now: () => this.now() });
  }

  /** The one instance for `client` (and so for the API server it talks to): every kind and reconciler of a process shares its cache. */
  static shared(client: Pick<KubeClient, 'requestJson'>): OpenApiSchemas {
    let schemas = sharedSchemas.get(client);
    if (schemas === undefined) {
      schemas = new OpenApiSchemas(client);
      sharedSchemas.set(client, schemas);
    }
    return schemas;
  }

  invalidate(): void {
    this.index.forget();
  }

  async snapshot(): Promise<SchemaSnapshot> {
    let urls = await this.urls(false);
    if (urls === undefined) return EMPTY_SNAPSHOT;
    const document = async (path: string): Promise<OpenApiDocument | undefined> => {
      // Looked for again at most every MISS_REFRESH_MS after the index served (or the last such look) was read.
      if (!urls?.has(path) && this.now() - Math.max(this.missReadAt, this.index.readAt ?? -Infinity) >= MISS_REFRESH_MS) {
        this.missReadAt = this.now();
        urls = (await this.urls(true)) ?? urls;
      }
      const url = urls?.get(path);
      return url === undefined ? undefined : this.document(path, url);
    };
    return {
      kind: async (gvk) => (await document(groupVersionPath(gvk)))?.kind(gvk),
      objectMeta: async () => {
        const meta = { group: 'meta.k8s.io', version: 'v1', kind: 'ObjectMeta' };
        return (await document('api/v1'))?.named(OBJECT_META_SCHEMA, meta);
      },
    };
  }

  /** The index's group-version URLs, read again when `fresh`, old or invalidated (see RefreshingValue); undefined when the server publishes none. */
  private urls(fresh: boolean): Promise<IndexUrls> {
    const read = (): Promise<IndexUrls> => this.readIndex();
    return fresh ? this.index.refresh(read) : this.index.get(read);
  }

  private async readIndex(): Promise<Map<string, string> | undefined> {
    let index: unknown;
    try {
      index = await this.client.requestJson('GET', '/openapi/v3', { what: 'read the OpenAPI v3 index' });
    } catch (err) {
      // A server that does not publish OpenAPI v3: nothing is known, nothing is pruned.
      if (isNotFound(err)) return undefined;
      throw new BinnacleError('transient', 'OPENAPI_UNAVAILABLE', `cannot read the API server's OpenAPI v3 schemas: ${errorMessage(err)}`, { cause: err });
    }
    return parseIndex(index);
  }

  private document(path: string, url: string): Promise<OpenApiDocument> {
    let entry = this.documents.get(url);
    if (entry !== undefined) {
      // Most recently read last: the first entry is the one to drop.
      this.documents.delete(url);
      this.documents.set(url, entry);
      return entry;
    }
    // The URL carries its query (`?hash=…`); the client takes the two apart.
    const parsed = new URL(url, 'https://api-server.invalid');
    entry = this.client
      .requestJson('GET', parsed.pathname, { query: Object.fromEntries(parsed.searchParams), what: `read the OpenAPI v3 document of ${path}` })
      .then((doc) => OpenApiDocument.parse(path, doc));
    this.documents.set(url, entry);
    // A failed read is not cached: the next snapshot tries again.
    entry.catch(() => this.documents.delete(url));
    while (this.documents.size > this.maxDocuments) {
      const oldest = this.documents.keys().next();
      if (oldest.done === true) break;
      this.documents.delete(oldest.value);
    }
    return entry;
  }
}

/** Schemas from documents already in hand (tests, or a saved `/openapi/v3` response). */
export class StaticSchemas implements SchemaSource {
  constructor(private readonly docs: readonly OpenApiDocument[]) {}

  snapshot(): Promise<SchemaSnapshot> {
    return Promise.resolve({
      kind: (gvk) => Promise.resolve(this.docs.find((d) => d.path === groupVersionPath(gvk))?.kind(gvk)),
      objectMeta: () => {
        const meta = { group: 'meta.k8s.io', version: 'v1', kind: 'ObjectMeta' };
        return Promise.resolve(this.docs.map((d) => d.named(OBJECT_META_SCHEMA, meta)).find((s) => s !== undefined));
      },
    });
  }
}

const EMPTY_SNAPSHOT: SchemaSnapshot = { kind: () => Promise.resolve(undefined), objectMeta: () => Promise.resolve(undefined) };

/** The index's key for a group-version: `api/v1`, `apis/apps/v1`. */
export function groupVersionPath(gv: { group: string; version: string }): string {
  return gv.group === '' ? `api/${gv.version}` : `apis/${gv.group}/${gv.version}`;
}

function parseIndex(index: unknown): Map<string, string> {
  const paths = isRecord(index) ? index.paths : undefined;
  if (!isRecord(paths)) throw new BinnacleError('terminal', 'OPENAPI_INVALID', '/openapi/v3: the index has no paths');
  const urls = new Map<string, string>();
  for (const [path, entry] of Object.entries(paths)) {
    if (isRecord(entry) && typeof entry.serverRelativeURL === 'string') urls.set(path, entry.serverRelativeURL);
  }
  return urls;
}

function gvkKey(g: { group: string; version: string; kind: string }): string {
  return `${g.group}/${g.version}/${g.kind}`;
}

