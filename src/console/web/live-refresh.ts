/**
 * Keeps a page current: it is read again on each watch event that concerns it (live.ts) — of
 * Binnacle's kinds and of the custom resources of CRDs — and polled while the stream is down,
 * the person may not watch, or the page follows nothing that has a stream. Reads never overlap:
 * an event during a read asks for one more read after it. A status line says which of these is
 * happening; its `data-live` (connecting | watch | polling | forbidden), `data-polls` (reads
 * made by polling) and `data-follows` (the kinds and `crd/NAME`s followed) are what the browser
 * tests read.
 */
import { liveKindOfCrd, MAX_LIVE_CRDS, type LiveEvent, type LiveKind } from '../contract/api-types.js';
import { append, clear, h } from './dom.js';
import { follow, type LiveState } from './live.js';
import { errorText, showError } from './status.js';

export interface LiveRefreshOptions {
  /** The kinds whose watch events may concern the page; none and no CRDs: polling only. */
  kinds: readonly LiveKind[];
  /** The CRDs whose custom resources' watch events may concern the page (more: `followCrds`). */
  crds?: readonly string[];
  /** Whether a change event concerns the page (a relist always does). */
  concerns: (ev: Extract<LiveEvent, { type: 'ADDED' | 'MODIFIED' | 'DELETED' }>) => boolean;
  /** Reads and draws the page. */
  refresh: () => Promise<void>;
  pollMs: number;
  /** Poll this often even while live when more CRDs are to be followed than one stream carries. */
  pollUnfollowedMs?: number;
}

export interface LiveRefresh {
  /** The status line, to put on the page. */
  status: HTMLElement;
  /** Reads again now (or right after the read under way). */
  refreshSoon: () => Promise<void>;
  /** Follows these CRDs from now on (the stream is opened again only when they changed). */
  followCrds: (crds: readonly string[]) => void;
  stop: () => void;
}

/** Starts following and polling at once; the first read is the first poll's. */
export function liveRefresh(opts: LiveRefreshOptions): LiveRefresh {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let live = false;
  let running: Promise<void> | undefined;
  let again = false;
  const refreshSoon = (): Promise<void> => {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = opts.refresh().finally(() => {
      running = undefined;
      if (again && !stopped) {
        again = false;
        void refreshSoon();
      }
    });
    return running;
  };
  const pollText = (why: string): string => `Live updates unavailable (${why}); reading again every ${opts.pollMs / 1000} s.`;
  const status = h('p', { id: 'live-status', class: 'muted' });
  let crds: readonly string[] = [];
  // CRDs past the cap have no watch: while there are some, the page polls even when live.
  let unfollowed = 0;
  let stopLive = (): void => undefined;
  const onEvent = (ev: LiveEvent): void => {
    if (ev.type === 'RELISTED') void refreshSoon();
    else if ((ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') && opts.concerns(ev)) void refreshSoon();
  };
  /** Says on the status line what the stream's state means for the page. */
  const show = (state: LiveState): void => {
    live = state.mode === 'live';
    const forbidden = state.mode === 'fallback' && state.forbidden;
    status.setAttribute('data-live', live ? 'watch' : forbidden ? 'forbidden' : 'polling');
    status.className = forbidden ? 'warn-box' : 'muted';
    const over = unfollowed === 0 ? '' : ` ${unfollowed} CRD(s) more than one stream follows: reading again every ${(opts.pollUnfollowedMs ?? opts.pollMs) / 1000} s too.`;
    status.textContent = state.mode === 'live' ? `Live: updated as the cluster changes (Kubernetes watches).${over}` : pollText(state.why);
  };
  let lastState: LiveState | undefined;
  const start = (): void => {
    stopLive();
    lastState = undefined;
    live = false;
    status.setAttribute('data-follows', [...opts.kinds, ...crds.map(liveKindOfCrd)].join(' '));
    if (opts.kinds.length === 0 && crds.length === 0) {
      stopLive = () => undefined;
      show({ mode: 'fallback', why: 'nothing to watch', forbidden: false });
      return;
    }
    status.setAttribute('data-live', 'connecting');
    status.className = 'muted';
    status.textContent = 'Connecting to live updates…';
    stopLive = follow({ kinds: opts.kinds, crds }, onEvent, (state) => {
      lastState = state;
      show(state);
      // Whatever changed while the stream was being set up.
      if (live) void refreshSoon();
    });
  };
  /** Takes the CRDs to follow (sorted, the first of them up to the cap); answers whether they changed. */
  const setCrds = (next: readonly string[]): boolean => {
    const wanted = [...new Set(next)].sort();
    unfollowed = Math.max(0, wanted.length - MAX_LIVE_CRDS);
    const capped = wanted.slice(0, MAX_LIVE_CRDS);
    const changed = capped.join(',') !== crds.join(',');
    crds = capped;
    return changed;
  };
  setCrds(opts.crds ?? []);
  start();
  let polls = 0;
  const loop = (): void => {
    const poll = !live || unfollowed > 0;
    if (poll) status.setAttribute('data-polls', String(++polls));
    void (poll ? refreshSoon() : Promise.resolve()).finally(() => {
      if (!stopped) timer = setTimeout(loop, live && unfollowed > 0 ? (opts.pollUnfollowedMs ?? opts.pollMs) : opts.pollMs);
    });
  };
  loop();
  return {
    status,
    refreshSoon,
    followCrds: (next) => {
      const before = unfollowed;
      if (setCrds(next) && !stopped) start();
      else if (unfollowed !== before && lastState !== undefined) show(lastState);
    },
    stop: () => {
      stopped = true;
      stopLive();
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/**
 * A refresh for `liveRefresh`: draws into a fresh element (a failure, a 403 too, drawn as its
 * error) and puts it into `out` only when it differs from what `out` shows, so a page read again
 * on every event neither flickers nor loses a selection for nothing.
 */
export function redrawWhenChanged(out: HTMLElement, draw: (into: HTMLElement) => Promise<void>): () => Promise<void> {
  return async () => {
    const fresh = h('div', {});
    try {
      await draw(fresh);
    } catch (err) {
      showError(fresh, errorText(err));
    }
    if (fresh.innerHTML === out.innerHTML) return;
    clear(out);
    append(out, ...Array.from(fresh.childNodes));
  };
}
