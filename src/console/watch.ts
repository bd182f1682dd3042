/**
 * Live updates for the console's pages: Kubernetes watches run as the person (their own client,
 * identity.ts), relayed to the page as Server-Sent Events over GET /api/watch?kinds=K1,K2. Each
 * change is sent as its type, kind, name (and namespace) and resourceVersion, never the object:
 * the page reads what it shows through the API as before, so it sees nothing more than its
 * person may read. Per kind: list for a starting resourceVersion, then `KubeClient.watch` from
 * it, again from the last resourceVersion when the server ends a watch; a 410 Gone (the version
 * is too old) relists and says so (events may have been missed); a 403 says the person may not
 * list or watch that kind and stops it; other failures are reported and retried with backoff.
 * When the browser goes away every watch of the stream is aborted.
 *
 * Not an Informer (kube/informer.ts): that keeps every object in memory and retries a 403 for
 * ever, where a relay per browser tab keeps nothing and must tell the page about a 403.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../api/types.js';
import type { KubeClient } from '../kube/client.js';
import { isForbidden, isGone } from '../kube/errors.js';
import type { LiveEvent, LiveKind } from './api-types.js';
import { InputError } from './errors.js';

/** The kinds a page may follow, all in Binnacle's API group. */
export const LIVE_KINDS: readonly LiveKind[] = ['ClusterExtension', 'BundleDeployment', 'ClusterCatalog', 'HelmOperator'];

export interface RelayOptions {
  /** First retry delay after a failure other than 403 and 410 (doubles up to 30 s). */
  retryMs?: number;
  /** How long one watch request asks the server to keep it open. */
  timeoutSeconds?: number;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Relays one kind's changes to `send` until `signal` aborts or the person is refused. */
export async function relayKind(client: KubeClient, kind: LiveKind, send: (ev: LiveEvent) => void, signal: AbortSignal, opts: RelayOptions = {}): Promise<void> {
  let rv: string | undefined;
  let failures = 0;
  while (!signal.aborted) {
    try {
      if (rv === undefined) {
        const list = await client.list(API_VERSION, kind);
        if (signal.aborted) return;
        rv = list.metadata.resourceVersion ?? '';
        send({ type: failures > 0 ? 'RELISTED' : 'SYNCED', kind, resourceVersion: rv });
      }
      for await (const ev of client.watch(API_VERSION, kind, { resourceVersion: rv, signal, timeoutSeconds: opts.timeoutSeconds ?? 240 })) {
        const m = ev.object.metadata;
        if (m.resourceVersion !== undefined) rv = m.resourceVersion;
        if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
        send({ type: ev.type, kind, name: m.name ?? '', ...(m.namespace === undefined ? {} : { namespace: m.namespace }), resourceVersion: m.resourceVersion ?? '' });
      }
      failures = 0;
    } catch (err) {
      if (signal.aborted) return;
      if (isForbidden(err)) {
        send({ type: 'FORBIDDEN', kind, message: errorText(err) });
        return;
      }
      if (isGone(err)) {
        // Too old to resume: list again (the next SYNCED is sent as RELISTED: the page reloads).
        rv = undefined;
        failures = Math.max(failures, 1);
        continue;
      }
      failures++;
      send({ type: 'ERROR', kind, message: errorText(err) });
      await sleep(Math.min((opts.retryMs ?? 500) * 2 ** (failures - 1), 30_000), undefined, { signal }).catch(() => undefined);
      // A failed list leaves rv undefined and is tried again; a failed watch resumes from rv.
    }
  }
}

/** The kinds of `?kinds=` (comma-separated); all of them when not given. */
export function liveKindsOf(url: URL): LiveKind[] {
  const raw = url.searchParams.get('kinds');
  if (raw === null || raw.trim() === '') return [...LIVE_KINDS];
  const kinds = [...new Set(raw.split(',').map((k) => k.trim()))];
  for (const k of kinds) if (!(LIVE_KINDS as readonly string[]).includes(k)) throw new InputError('kinds', `${JSON.stringify(k)} is not one of ${LIVE_KINDS.join(', ')}`);
  return kinds as LiveKind[];
}

const HEARTBEAT_MS = 20_000;

/**
 * GET /api/watch: the response stays open as an event stream (`event: kube`, JSON data) until
 * the browser closes it; then every watch stops. The page's fetch sends the person's token as
 * for any other request (EventSource cannot send one), to the same origin (CSP connect-src 'self').
 */
export async function streamWatch(req: IncomingMessage, res: ServerResponse, client: KubeClient, kinds: readonly LiveKind[], opts: RelayOptions & { heartbeatMs?: number } = {}): Promise<void> {
  const stop = new AbortController();
  const onClose = (): void => stop.abort();
  req.on('close', onClose);
  res.on('close', onClose);
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
  res.flushHeaders();
  const send = (ev: LiveEvent): void => {
    if (!stop.signal.aborted && !res.writableEnded) res.write(`event: kube\ndata: ${JSON.stringify(ev)}\n\n`);
  };
  // A comment now and then: proxies keep the stream open, and a dead peer is noticed.
  const beat = setInterval(() => {
    if (!res.writableEnded) res.write(': keep-alive\n\n');
  }, opts.heartbeatMs ?? HEARTBEAT_MS);
  beat.unref();
  try {
    await Promise.all(kinds.map((k) => relayKind(client, k, send, stop.signal, opts)));
    // Every kind refused: nothing more will come.
    if (!stop.signal.aborted) res.end();
  } finally {
    clearInterval(beat);
    req.off('close', onClose);
    res.off('close', onClose);
    stop.abort();
  }
}
