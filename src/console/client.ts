/**
 * What the console asks of the cluster, as one person: reads, writes and watches, which the API
 * server's RBAC decides one by one, and a client closed once its person has gone idle. The
 * console's real clients are KubeClients (identity.ts: one per bearer token, or its own identity
 * lent or impersonating a proxy's user); its tests hand it the one fake cluster's.
 */
import type { ClusterClient, Impersonating, Watcher } from '../kube/ports.js';

/** One person's client. */
export type ConsoleClient = ClusterClient & Watcher & { close(): void };

/** The console's own identity: lent to a logged-in browser, and impersonating a trusted proxy's users. */
export type ConsoleBase = ConsoleClient & Impersonating<ConsoleClient>;
