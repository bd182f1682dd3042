/**
 * Live updates for the console's pages: Kubernetes watches run as the person (their own client,
 * identity.ts), relayed to the page as Server-Sent Events over GET /api/watch?kinds=K1,K2 (some
 * of Binnacle's kinds) &crds=C1,C2 (the custom resources of these CRDs, in every namespace).
 * Each change is sent as its type, kind, name (and namespace) and resourceVersion, never the
 * object: the page reads what it shows through the API as before, so it sees nothing more than
 * its person may read. Per kind: (for a CRD, get it for its group, version and kind) list for a
 * starting resourceVersion, then `ConsoleClient.watch` from it, again from the last resourceVersion
 * when the server ends a watch; a 410 Gone (the version is too old) relists and says so (events
 * may have been missed); a 403 says the person may not get the CRD or list or watch the kind and
 * stops it; other failures are reported and retried with backoff. When the browser goes away
 * every watch of the stream is aborted.
 *
 * Not an Informer (kube/informer.ts): that keeps every object in memory and retries a 403 for
 * ever, where a relay per browser tab keeps nothing and must tell the page about a 403.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../api/types.js';
import { dns1123SubdomainErrors } from '../bundle/names.js';
import type { ConsoleClient } from './client.js';
import { isForbidden, isGone, isNotFound } from '../kube/errors.js';
import { liveKindOfCrd, MAX_LIVE_CRDS, type LiveEvent, type LiveEventKind, type LiveKind } from './contract/api-types.js';
import { InputError } from './errors.js';
import { apiOf, getCrd } from './resources.js';
import { BinnacleError } from '../util/errors.js';

/** The kinds a page may follow, all in Binnacle's API group. */
export const LIVE_KINDS: readonly LiveKind[] = ['ClusterExtension', 'BundleDeployment', 'ClusterCatalog', 'HelmOperator'];

/** What one relay follows: the kind its events carry, and where the objects are listed and watched. */
export interface LiveSource {
  kind: LiveEventKind;
  /** The apiVersion and kind to list and watch; read again before every list. */
  resolve: (client: ConsoleClient) => Promise<{ apiVersion: string; kind: string }>;
}

/** One of Binnacle's own kinds. */
export const kindSource = (kind: LiveKind): LiveSource => ({ kind, resolve: () => Promise.resolve({ apiVersion: API_VERSION, kind }) });

/** The custom resources of a CRD, at the version it stores (if served; else the first served), as `apiOf` picks it. */
export const crdSource = (crd: string): LiveSource => ({
  kind: liveKindOfCrd(crd),
  resolve: async (client) => {
    const api = apiOf(await getCrd(client, crd));
    if (api.version === '') throw new BinnacleError('terminal', 'CRD_NO_VERSION', `CRD ${crd} serves no version`);
    return { apiVersion: `${api.group}/${api.version}`, kind: api.kind };
  },
});

export interface RelayOptions {
  /** First retry delay after a failure other than 403 and 410 (doubles up to 30 s). */
  retryMs?: number;
  /** How long one watch request asks the server to keep it open. */
  timeoutSeconds?: number;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Sends each change one watch request sees, from `from.rv`, which follows the events. */
async function relayWatch(client: ConsoleClient, from: { apiVersion: string; kind: string; rv: string }, kind: LiveSource['kind'], send: (ev: LiveEvent) => void | Promise<void>, signal: AbortSignal, timeoutSeconds: number): Promise<void> {
  for await (const ev of client.watch(from.apiVersion, from.kind, { resourceVersion: from.rv, signal, timeoutSeconds })) {
    const m = ev.object.metadata;
    if (m.resourceVersion !== undefined) from.rv = m.resourceVersion;
    if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
    // Awaited: while the browser reads slowly, the watch is not read further (backpressure).
    await send({ type: ev.type, kind, name: m.name ?? '', ...(m.namespace === undefined ? {} : { namespace: m.namespace }), resourceVersion: m.resourceVersion ?? '' });
  }
}

/** Relays one source's changes to `send` until `signal` aborts or the person is refused. */
export async function relay(client: ConsoleClient, source: LiveSource, send: (ev: LiveEvent) => void | Promise<void>, signal: AbortSignal, opts: RelayOptions = {}): Promise<void> {
  const { kind } = source;
  // Where the watch resumes: the resolved resource and the last resourceVersion seen.
  let from: { apiVersion: string; kind: string; rv: string } | undefined;
  let failures = 0;
  while (!signal.aborted) {
    try {
      if (from === undefined) {
        const target = await source.resolve(client);
        const list = await client.list(target.apiVersion, target.kind);
        if (signal.aborted) return;
        from = { ...target, rv: list.metadata.resourceVersion ?? '' };
        await send({ type: failures > 0 ? 'RELISTED' : 'SYNCED', kind, resourceVersion: from.rv });
      }
      await relayWatch(client, from, kind, send, signal, opts.timeoutSeconds ?? 240);
      failures = 0;
    } catch (err) {
      if (signal.aborted) return;
      if (isForbidden(err)) {
        await send({ type: 'FORBIDDEN', kind, message: errorText(err) });
        return;
      }
      if (isGone(err)) {
        // Too old to resume: list again (the next SYNCED is sent as RELISTED: the page reloads).
        from = undefined;
        failures = Math.max(failures, 1);
        continue;
      }
      // Not served (any more): its CRD may have been deleted or changed versions; find it again.
      if (isNotFound(err)) from = undefined;
      failures++;
      await send({ type: 'ERROR', kind, message: errorText(err) });
      await sleep(Math.min((opts.retryMs ?? 500) * 2 ** (failures - 1), 30_000), undefined, { signal }).catch(() => undefined);
      // A failed list is tried again; a failed watch resumes from the last resourceVersion.
    }
  }
}

/** Waits until `res` drains; cuts the stream (aborting `stop`) when it does not within `ms`. */
async function drained(res: ServerResponse, stop: AbortController, ms: number): Promise<void> {
  if (!res.writableNeedDrain) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('drain', done);
      stop.signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(() => {
      stop.abort();
      res.destroy();
      done();
    }, ms);
    res.on('drain', done);
    stop.signal.addEventListener('abort', done);
  });
}

/** A comma-separated query parameter: its distinct values, none when it is absent or blank. */
function listParam(url: URL, name: string): string[] | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  return [...new Set(raw.split(',').map((k) => k.trim()))];
}

/**
 * What `?kinds=` and `?crds=` (both comma-separated) ask to follow. Without `crds`, no `kinds`
 * means all of Binnacle's kinds (as before there were CRDs); with `crds`, only the kinds named.
 */
export function liveSourcesOf(url: URL): LiveSource[] {
  const crds = listParam(url, 'crds') ?? [];
  const kinds = listParam(url, 'kinds') ?? (crds.length === 0 ? [...LIVE_KINDS] : []);
  for (const k of kinds) if (!(LIVE_KINDS as readonly string[]).includes(k)) throw new InputError('kinds', `${JSON.stringify(k)} is not one of ${LIVE_KINDS.join(', ')}`);
  if (crds.length > MAX_LIVE_CRDS) throw new InputError('crds', `${crds.length} CRDs: one stream follows at most ${MAX_LIVE_CRDS}`);
  for (const c of crds) {
    const problems = dns1123SubdomainErrors(c);
    if (!c.includes('.')) problems.push('a CRD is named PLURAL.GROUP');
    if (problems.length > 0) throw new InputError('crds', `${JSON.stringify(c)} is not a CRD name: ${problems.join('; ')}`);
  }
  return [...(kinds as LiveKind[]).map(kindSource), ...crds.map(crdSource)];
}

const HEARTBEAT_MS = 20_000;
const DRAIN_MS = 30_000;

export interface StreamOptions extends RelayOptions {
  heartbeatMs?: number;
  /** How long a browser may leave a full socket buffer unread before its stream is cut (default 30 s). */
  drainMs?: number;
}

/**
 * GET /api/watch: the response stays open as an event stream (`event: kube`, JSON data) until
 * the browser closes it; then every watch stops. The page's fetch sends the person's token as
 * for any other request (EventSource cannot send one), to the same origin (CSP connect-src 'self').
 * A browser that stops reading is not buffered for: once the socket's buffer is full the relays
 * stop reading their watches until it drains, and a stream that does not drain within `drainMs`
 * is cut (the page reconnects and lists again).
 */
export async function streamWatch(req: IncomingMessage, res: ServerResponse, client: ConsoleClient, sources: readonly LiveSource[], opts: StreamOptions = {}): Promise<void> {
  const stop = new AbortController();
  const onClose = (): void => stop.abort();
  req.on('close', onClose);
  res.on('close', onClose);
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
  res.flushHeaders();
  const send = async (ev: LiveEvent): Promise<void> => {
    if (stop.signal.aborted || res.writableEnded) return;
    if (!res.write(`event: kube\ndata: ${JSON.stringify(ev)}\n\n`)) await drained(res, stop, opts.drainMs ?? DRAIN_MS);
  };
  // A comment now and then: proxies keep the stream open, and a dead peer is noticed.
  const beat = setInterval(() => {
    if (!res.writableEnded && !res.writableNeedDrain) res.write(': keep-alive\n\n');
  }, opts.heartbeatMs ?? HEARTBEAT_MS);
  beat.unref();
  try {
    await Promise.all(sources.map((s) => relay(client, s, send, stop.signal, opts)));
    // Every kind refused: nothing more will come.
    if (!stop.signal.aborted) res.end();
  } finally {
    clearInterval(beat);
    req.off('close', onClose);
    res.off('close', onClose);
    stop.abort();
  }
}
