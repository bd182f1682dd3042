/**
 * Keeps a page current: it is read again on each watch event that concerns it (live.ts), and
 * polled while the stream is down, the person may not watch, or the page follows nothing that
 * has a stream; a page that shows more than the watched kinds (custom resources' health) is
 * also polled, less often, while live. Reads never overlap: an event during a read asks for one more read after
 * it. A status line says which of these is happening; its `data-live` (connecting | watch |
 * polling | forbidden) and `data-polls` (reads made by polling) are what the browser tests read.
 */
import type { LiveEvent, LiveKind } from '../api-types.js';
import { append, clear, h } from './dom.js';
import { follow } from './live.js';
import { errorText, showError } from './status.js';

export interface LiveRefreshOptions {
  /** The kinds whose watch events may concern the page; none: polling only. */
  kinds: readonly LiveKind[];
  /** Whether a change event concerns the page (a relist always does). */
  concerns: (ev: Extract<LiveEvent, { type: 'ADDED' | 'MODIFIED' | 'DELETED' }>) => boolean;
  /** Reads and draws the page. */
  refresh: () => Promise<void>;
  pollMs: number;
  /** Poll this often even while live, for what the watched kinds do not cover. */
  pollWhileLiveMs?: number;
  /** Why there is no stream, when `kinds` is empty. */
  noStream?: string;
}

export interface LiveRefresh {
  /** The status line, to put on the page. */
  status: HTMLElement;
  /** Reads again now (or right after the read under way). */
  refreshSoon: () => Promise<void>;
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
  const status = h('p', { id: 'live-status', class: 'muted', 'data-live': opts.kinds.length === 0 ? 'polling' : 'connecting' }, opts.kinds.length === 0 ? pollText(opts.noStream ?? 'nothing to watch') : 'Connecting to live updates…');
  const stopLive =
    opts.kinds.length === 0
      ? () => undefined
      : follow(
          opts.kinds,
          (ev) => {
            if (ev.type === 'RELISTED') void refreshSoon();
            else if ((ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') && opts.concerns(ev)) void refreshSoon();
          },
          (state) => {
            live = state.mode === 'live';
            const forbidden = state.mode === 'fallback' && state.forbidden;
            status.setAttribute('data-live', live ? 'watch' : forbidden ? 'forbidden' : 'polling');
            status.className = forbidden ? 'warn-box' : 'muted';
            status.textContent = state.mode === 'live' ? 'Live: updated as the cluster changes (Kubernetes watches).' : pollText(state.why);
            // Whatever changed while the stream was being set up.
            if (live) void refreshSoon();
          },
        );
  let polls = 0;
  const loop = (): void => {
    const poll = !live || opts.pollWhileLiveMs !== undefined;
    if (poll) status.setAttribute('data-polls', String(++polls));
    void (poll ? refreshSoon() : Promise.resolve()).finally(() => {
      if (!stopped) timer = setTimeout(loop, live ? (opts.pollWhileLiveMs ?? opts.pollMs) : opts.pollMs);
    });
  };
  loop();
  return {
    status,
    refreshSoon,
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
