/**
 * controller-runtime's `filters.WithAuthenticationAndAuthorization` (operator-sdk's
 * `--metrics-require-rbac`): the caller's bearer token is authenticated by the API server with a
 * TokenReview, then the user it names must be allowed a non-resource `get` on the request path
 * by a SubjectAccessReview. No or a bad token: 401; a user without the right: 403.
 *
 * As an attacker would poke it: answers are cached (by the token's SHA-256, never the token) for
 * a short while with a cap on entries, so a flood of requests is not a flood of reviews; a
 * review already asked is shared by the requests that wait for it; at most `maxInFlight` reviews
 * run at once (more get 429); tokens longer than a real one are refused without asking.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { ObjectWriter } from './ports.js';
import type { KubeObject } from './types.js';

/** What the TokenReviews and SubjectAccessReviews are created with. */
export type ReviewClient = Pick<ObjectWriter, 'create'>;

export type AuthDecision = { status: 200; user: string } | { status: 401 | 403 | 429 | 500; message: string };

export interface MetricsAuthOptions {
  client: ReviewClient;
  logger?: Logger;
  /** How long an authenticated (or refused) token is remembered; controller-runtime's 1 minute. */
  tokenTtlMs?: number;
  /** How long an allowed decision is remembered (5 minutes) and a denied one (30 seconds), as controller-runtime's. */
  allowTtlMs?: number;
  denyTtlMs?: number;
  /** Entries each cache holds at most (the oldest go first). */
  maxEntries?: number;
  /** Reviews outstanding at once at most. */
  maxInFlight?: number;
  now?: () => number;
}

interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** Longer than any ServiceAccount or OIDC token: refused without a review. */
const MAX_TOKEN_LENGTH = 8192;

/** A size-capped map whose entries expire. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  constructor(private readonly max: number, private readonly now: () => number) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, until: this.now() + ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The verb controller-runtime's filter asks about for an HTTP method. */
function verbOf(method: string | undefined): string {
  return ({ GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[method ?? ''] ?? '*';
}

/** The bearer token of a request, or undefined. */
export function bearerToken(req: Pick<IncomingMessage, 'headers'>): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

export class MetricsAuthorizer {
  private readonly client: ReviewClient;
  private readonly logger: Logger | undefined;
  private readonly tokenTtlMs: number;
  private readonly allowTtlMs: number;
  private readonly denyTtlMs: number;
  private readonly maxInFlight: number;
  private readonly users: TtlCache<UserInfo | null>;
  private readonly decisions: TtlCache<boolean>;
  private readonly pending = new Map<string, Promise<unknown>>();
  /** TokenReviews and SubjectAccessReviews created: what tests count. */
  reviews = 0;

  constructor(o: MetricsAuthOptions) {
    const now = o.now ?? Date.now;
    this.client = o.client;
    this.logger = o.logger;
    this.tokenTtlMs = o.tokenTtlMs ?? 60_000;
    this.allowTtlMs = o.allowTtlMs ?? 5 * 60_000;
    this.denyTtlMs = o.denyTtlMs ?? 30_000;
    this.maxInFlight = o.maxInFlight ?? 64;
    this.users = new TtlCache(o.maxEntries ?? 1024, now);
    this.decisions = new TtlCache(o.maxEntries ?? 1024, now);
  }

  /** Entries cached now (tokens, decisions). */
  cached(): { users: number; decisions: number } {
    return { users: this.users.size, decisions: this.decisions.size };
  }

  /** One review at a time per key; past `maxInFlight`, undefined (the caller answers 429). */
  private once<T>(key: string, ask: () => Promise<T>): Promise<T> | undefined {
    const running = this.pending.get(key);
    if (running !== undefined) return running as Promise<T>;
    if (this.pending.size >= this.maxInFlight) return undefined;
    this.reviews++;
    const p = ask().finally(() => this.pending.delete(key));
    this.pending.set(key, p);
    return p;
  }

  private async authenticate(token: string): Promise<UserInfo | null | 'busy'> {
    const key = createHash('sha256').update(token).digest('hex');
    const known = this.users.get(key);
    if (known !== undefined) return known;
    const asked = this.once(`token:${key}`, async () => {
      const review = await this.client.create<KubeObject & { status?: { authenticated?: boolean; user?: UserInfo } }>({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token } });
      const user = review.status?.authenticated === true && typeof review.status.user?.username === 'string' ? review.status.user : null;
      this.users.set(key, user, this.tokenTtlMs);
      return user;
    });
    return asked === undefined ? 'busy' : asked;
  }

  private async authorize(user: UserInfo, verb: string, path: string): Promise<boolean | 'busy'> {
    const key = JSON.stringify([user.username, user.uid ?? '', [...(user.groups ?? [])].sort(), user.extra ?? {}, verb, path]);
    const known = this.decisions.get(key);
    if (known !== undefined) return known;
    const asked = this.once(`sar:${key}`, async () => {
      const sar = await this.client.create<KubeObject & { status?: { allowed?: boolean } }>({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: { user: user.username, ...(user.uid === undefined ? {} : { uid: user.uid }), groups: user.groups ?? [], ...(user.extra === undefined ? {} : { extra: user.extra }), nonResourceAttributes: { path, verb } },
      });
      const allowed = sar.status?.allowed === true;
      this.decisions.set(key, allowed, allowed ? this.allowTtlMs : this.denyTtlMs);
      return allowed;
    });
    return asked === undefined ? 'busy' : asked;
  }

  /** The decision for a request on `path` (its status code and why). Never throws. */
  async check(req: Pick<IncomingMessage, 'headers' | 'method'>, path: string): Promise<AuthDecision> {
    const token = bearerToken(req);
    if (token === undefined || token.length > MAX_TOKEN_LENGTH) return { status: 401, message: 'Unauthorized' };
    let user: UserInfo | null | 'busy';
    try {
      user = await this.authenticate(token);
    } catch (err) {
      // controller-runtime answers a failed TokenReview as it answers a refused token.
      this.logger?.warn({ err }, 'metrics: TokenReview failed');
      return { status: 401, message: 'Unauthorized' };
    }
    if (user === 'busy') return { status: 429, message: 'Too many requests' };
    if (user === null) return { status: 401, message: 'Unauthorized' };
    let allowed: boolean | 'busy';
    try {
      allowed = await this.authorize(user, verbOf(req.method), path);
    } catch (err) {
      this.logger?.warn({ err, user: user.username }, 'metrics: SubjectAccessReview failed');
      return { status: 500, message: `Authorization for user ${user.username} failed` };
    }
    if (allowed === 'busy') return { status: 429, message: 'Too many requests' };
    return allowed ? { status: 200, user: user.username } : { status: 403, message: `Authorization denied for user ${user.username}` };
  }
}
