/**
 * Live updates: reads the console's GET /api/watch event stream (the server relays Kubernetes
 * watches run as the person, watch.ts) with fetch, so the person's bearer token goes along as
 * on every other request (EventSource cannot send one). The page says whether it is live; when
 * the stream fails or the person may not watch, the page falls back to polling, and the stream
 * is tried again a while later.
 */
import { bearer } from './api.js';
import type { LiveEvent, LiveEventKind, LiveKind } from '../contract/api-types.js';

/** live: following watches; fallback: the page must poll (with why). */
export type LiveState = { mode: 'live' } | { mode: 'fallback'; why: string; forbidden: boolean };

const RETRY_MS = 15_000;

/** Parses the `event: kube` blocks of a text/event-stream chunk sequence. */
export function sseParser(onEvent: (ev: LiveEvent) => void): (text: string) => void {
  let buf = '';
  return (text) => {
    buf += text;
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (name === 'kube' && data.length > 0) onEvent(JSON.parse(data.join('\n')) as LiveEvent);
    }
  };
}

/** What a page follows: some of Binnacle's kinds, and the custom resources of some CRDs (by name). */
export interface Followed {
  kinds: readonly LiveKind[];
  crds: readonly string[];
}

/** The GET /api/watch URL of `f` (no kinds= beside crds= means none of Binnacle's kinds). */
export function watchUrl(f: Followed): string {
  const q = [...(f.kinds.length === 0 ? [] : [`kinds=${f.kinds.map(encodeURIComponent).join(',')}`]), ...(f.crds.length === 0 ? [] : [`crds=${f.crds.map(encodeURIComponent).join(',')}`])];
  return `/api/watch?${q.join('&')}`;
}

/**
 * Follows `followed` until the answered function is called. `onEvent` gets every event;
 * `onState` each change between live and fallback. A kind or CRD the person may not watch puts
 * the page in fallback (forbidden) for good: polling reads what their RBAC allows and says what
 * it does not.
 */
export function follow(followed: Followed, onEvent: (ev: LiveEvent) => void, onState: (s: LiveState) => void): () => void {
  const streams = followed.kinds.length + followed.crds.length;
  const stop = new AbortController();
  let retry: ReturnType<typeof setTimeout> | undefined;
  let forbidden: string | undefined;
  const fallback = (why: string): void => {
    if (stop.signal.aborted) return;
    onState({ mode: 'fallback', why, forbidden: forbidden !== undefined });
  };
  const connect = async (): Promise<void> => {
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    const token = bearer();
    if (token !== '') headers.Authorization = `Bearer ${token}`;
    const res = await fetch(watchUrl(followed), { headers, credentials: 'same-origin', signal: stop.signal });
    if (!res.ok || res.body === null) throw new Error(`live updates: HTTP ${res.status}`);
    const synced = new Set<LiveEventKind>();
    const parse = sseParser((ev) => {
      if (ev.type === 'FORBIDDEN') {
        forbidden = ev.message;
        fallback(`forbidden: ${ev.message}`);
      } else if (ev.type === 'ERROR') {
        synced.delete(ev.kind);
        fallback(`watch of ${ev.kind} failed: ${ev.message}`);
      } else if (ev.type === 'SYNCED' || ev.type === 'RELISTED') {
        synced.add(ev.kind);
        if (forbidden === undefined && synced.size === streams) onState({ mode: 'live' });
      }
      onEvent(ev);
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      parse(chunk.value);
    }
  };
  const run = (): void => {
    connect().then(
      () => fallback(forbidden === undefined ? 'the live stream ended' : `forbidden: ${forbidden}`),
      (err: unknown) => fallback(err instanceof Error ? err.message : String(err)),
    ).finally(() => {
      if (!stop.signal.aborted && forbidden === undefined) retry = setTimeout(run, RETRY_MS);
    });
  };
  run();
  return () => {
    stop.abort();
    if (retry !== undefined) clearTimeout(retry);
  };
}
