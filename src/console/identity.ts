/**
 * The client a console request runs as, for the person access.ts found. A browser that sends
 * `Authorization: Bearer TOKEN` is that token's identity: a client with the cluster's server and
 * CA and only that token, so the API server's RBAC decides every request. A user named by a
 * trusted proxy is impersonated. Only a lent person (access.ts decides when) runs as the identity
 * the console was started with (its kubeconfig user, impersonating `--as` when given). The
 * console never adds rights of its own.
 */
import { createHash } from 'node:crypto';
import { KubeConfig } from '../kube/kube-config.js';
import { KubeClient, type Impersonation } from '../kube/client.js';
import type { ConsoleBase, ConsoleClient } from './client.js';
import type { Person } from './access.js';
import { BinnacleError } from '../util/errors.js';

/** A client for one bearer token: the cluster of `kc`, no other credential. */
export async function clientForToken(kc: KubeConfig, token: string): Promise<KubeClient> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new BinnacleError('input', 'KUBECONFIG_NO_CLUSTER', 'no current cluster in the kubeconfig');
  const one = new KubeConfig();
  one.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'console-bearer', token }],
    contexts: [{ name: 'console', cluster: cluster.name, user: 'console-bearer' }],
    currentContext: 'console',
  });
  return KubeClient.fromKubeConfig(one);
}

const MAX_CACHED = 32;
const IDLE_MS = 10 * 60_000;

export interface IdentityOptions {
  /** The identity lent to logged-in browsers (access.ts), and that impersonates a trusted proxy's users. */
  base: ConsoleBase;
  /** Builds a client for a token (`clientForToken`; tests pass the fake cluster's). */
  forToken: (token: string) => Promise<ConsoleClient>;
  impersonate?: Impersonation | undefined;
}

/** Clients per identity; a token's client is kept a while so discovery is not repeated per request. */
export class ConsoleIdentity {
  private readonly cache = new Map<string, { client: Promise<ConsoleClient>; used: number }>();
  private readonly base: ConsoleClient;

  constructor(private readonly opts: IdentityOptions) {
    this.base = opts.impersonate === undefined ? opts.base : opts.base.impersonate(opts.impersonate);
  }

  /** The client of a person access.ts found. */
  async clientOf(person: Person): Promise<ConsoleClient> {
    if (person.kind === 'lent') return this.base;
    if (person.kind === 'proxy') return this.opts.base.impersonate({ user: person.user, groups: person.groups });
    return this.forToken(person.token);
  }

  private forToken(token: string): Promise<ConsoleClient> {
    // Keyed by a hash: the token itself is kept only inside its client.
    const key = createHash('sha256').update(token).digest('hex');
    const now = Date.now();
    this.evict(now);
    let entry = this.cache.get(key);
    if (entry === undefined) {
      entry = { client: this.opts.forToken(token), used: now };
      this.cache.set(key, entry);
      entry.client.catch(() => this.cache.delete(key));
    }
    entry.used = now;
    return entry.client;
  }

  private evict(now: number): void {
    for (const [k, e] of this.cache) {
      if (now - e.used > IDLE_MS || this.cache.size > MAX_CACHED) {
        this.cache.delete(k);
        void e.client.then((c) => c.close(), () => undefined);
      }
    }
  }

  close(): void {
    for (const e of this.cache.values()) void e.client.then((c) => c.close(), () => undefined);
    this.cache.clear();
  }
}

/** A request whose identity cannot be used (a malformed Authorization header): 401. */
export class IdentityError extends Error {}
