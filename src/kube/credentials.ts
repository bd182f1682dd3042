/**
 * The bearer credentials of a kubeconfig user, read again while the process runs, as client-go
 * reads them: a projected ServiceAccount token is rotated by the kubelet, an `exec` plugin's or
 * auth provider's token expires. A static token is read once; a refreshable one is read again
 * when it is older than `maxAgeMs` (client-go re-reads a token file every minute) and at once
 * after the API server answered 401, after which the request is sent again once.
 *
 * Only headers are refreshed: a client certificate is fixed for the life of the connection pool.
 */
import type * as https from 'node:https';
import { readFile } from 'node:fs/promises';
import type { KubeConfig } from './kube-config.js';

/** How long a refreshable credential is used before it is read again. */
export const CREDENTIAL_MAX_AGE_MS = 60_000;

export class Credentials {
  private headers: Record<string, string>;
  private readAt: number;
  private reading: Promise<Record<string, string>> | undefined;

  private constructor(
    private readonly kc: KubeConfig | undefined,
    headers: Record<string, string>,
    /** The user's credentials can change: a token file, an exec plugin or an auth provider. */
    readonly refreshable: boolean,
    private readonly maxAgeMs: number,
    private readonly now: () => number,
  ) {
    this.headers = headers;
    this.readAt = now();
  }

  /** Fixed headers: nothing to read again. */
  static fixed(headers: Record<string, string>): Credentials {
    return new Credentials(undefined, headers, false, Infinity, Date.now);
  }

  /** The current user's credentials, read now; `opts` are the HTTPS options the first read produced. */
  static fromKubeConfig(kc: KubeConfig, opts: https.RequestOptions, tuning: { maxAgeMs?: number; now?: () => number } = {}): Credentials {
    const user = kc.getCurrentUser();
    const refreshable = user !== null && (user.exec !== undefined || user.authProvider !== undefined || tokenFileOf(kc) !== undefined);
    return new Credentials(kc, headersOf(opts), refreshable, tuning.maxAgeMs ?? CREDENTIAL_MAX_AGE_MS, tuning.now ?? Date.now);
  }

  /** The headers to send now (read again first if they are stale). */
  async current(): Promise<Record<string, string>> {
    if (!this.refreshable || this.now() - this.readAt < this.maxAgeMs) return this.headers;
    return this.read();
  }

  /** After a 401: the next request reads the credentials again. Returns whether that can help. */
  invalidate(): boolean {
    if (!this.refreshable) return false;
    this.readAt = -Infinity;
    return true;
  }

  private read(): Promise<Record<string, string>> {
    // One read at a time: a burst of requests runs an exec plugin once, not once per request.
    this.reading ??= (async () => {
      try {
        const file = this.kc === undefined ? undefined : tokenFileOf(this.kc);
        if (file !== undefined) {
          // Read the file itself: client-node keeps its copy for a minute, even after a 401.
          this.headers = { ...this.headers, Authorization: `Bearer ${(await readFile(file, 'utf8')).trim()}` };
        } else {
          const opts: https.RequestOptions = {};
          await this.kc?.applyToHTTPSOptions(opts);
          this.headers = headersOf(opts);
        }
        this.readAt = this.now();
        return this.headers;
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}

/** The token file the current user names (`tokenFile`, or the `tokenFile` auth provider in-cluster configs use). */
function tokenFileOf(kc: KubeConfig): string | undefined {
  // client-node's User type has no `tokenFile`, though kubeconfigs (and client-go) have it.
  const user: { authProvider?: unknown; tokenFile?: unknown } | null = kc.getCurrentUser();
  const fromProvider = (user?.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config?.tokenFile;
  const file = fromProvider ?? user?.tokenFile;
  return typeof file === 'string' && file !== '' ? file : undefined;
}

function headersOf(opts: https.RequestOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}
