import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { KubeClient, WatchEvent, WatchOptions } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import type { LiveEvent, LiveKind } from './api-types.js';
import { startConsole } from './server.js';
import { liveKindsOf, relayKind } from './watch.js';

const FORBIDDEN = 'clusterextensions.olm.binnacle.dev is forbidden: User "bob" cannot watch resource "clusterextensions" in API group "olm.binnacle.dev" at the cluster scope';

const ev = (type: WatchEvent['type'], name: string, rv: string): WatchEvent => ({ type, object: { apiVersion: 'v', kind: 'K', metadata: { name, resourceVersion: rv }, spec: { big: 'x'.repeat(100) } } });
const untilAborted = (signal: AbortSignal | undefined): Promise<void> => new Promise((resolve) => (signal?.aborted === true ? resolve() : signal?.addEventListener('abort', () => resolve(), { once: true })));

interface Script {
  /** The list's resourceVersion, or the error it fails with (n counts lists from 1). */
  list: (kind: string, n: number) => string | Error;
  /** The n-th watch (from 1): its events, then an error to throw or 'block' (until aborted) or 'end'. */
  watch: (kind: string, n: number) => { events: WatchEvent[]; then: Error | 'block' | 'end' };
}

/** A client whose list and watch follow the script; it counts the watches open right now. */
function fakeClient(script: Script): { client: KubeClient; watches: WatchOptions[]; active: () => number; lists: () => number } {
  const watches: WatchOptions[] = [];
  let active = 0;
  let lists = 0;
  const client = {
    list: (_apiVersion: string, kind: string) => {
      const r = script.list(kind, ++lists);
      return r instanceof Error ? Promise.reject(r) : Promise.resolve({ apiVersion: 'v', kind: 'List', metadata: { resourceVersion: r }, items: [] });
    },
    async *watch(_apiVersion: string, kind: string, opts: WatchOptions = {}): AsyncGenerator<WatchEvent> {
      watches.push(opts);
      active++;
      try {
        const s = script.watch(kind, watches.length);
        for (const e of s.events) yield e;
        if (s.then === 'block') await untilAborted(opts.signal);
        else if (s.then instanceof Error) throw s.then;
      } finally {
        active--;
      }
    },
    close: () => undefined,
  } as unknown as KubeClient;
  return { client, watches, active: () => active, lists: () => lists };
}

/** Runs the relay until `done(events)` holds, then aborts it; answers the events sent. */
async function relayUntil(client: KubeClient, kind: LiveKind, done: (evs: LiveEvent[]) => boolean): Promise<LiveEvent[]> {
  const events: LiveEvent[] = [];
  const stop = new AbortController();
  const run = relayKind(client, kind, (e) => {
    events.push(e);
    if (done(events)) stop.abort();
  }, stop.signal, { retryMs: 1, timeoutSeconds: 5 });
  const timer = setTimeout(() => stop.abort(), 5000);
  await run;
  clearTimeout(timer);
  return events;
}

describe('live updates: the watch relay', () => {
  it('relays each change as type, kind, name and resourceVersion (no object, no bookmarks) and resumes from the last version', async () => {
    const f = fakeClient({
      list: () => '10',
      watch: (_k, n) => (n === 1 ? { events: [ev('ADDED', 'a', '11'), ev('BOOKMARK', '', '12'), ev('MODIFIED', 'a', '13')], then: 'end' } : { events: [ev('DELETED', 'a', '14')], then: 'block' }),
    });
    const events = await relayUntil(f.client, 'ClusterExtension', (e) => e.length === 4);
    assert.deepEqual(events, [
      { type: 'SYNCED', kind: 'ClusterExtension', resourceVersion: '10' },
      { type: 'ADDED', kind: 'ClusterExtension', name: 'a', resourceVersion: '11' },
      { type: 'MODIFIED', kind: 'ClusterExtension', name: 'a', resourceVersion: '13' },
      { type: 'DELETED', kind: 'ClusterExtension', name: 'a', resourceVersion: '14' },
    ]);
    assert.deepEqual(f.watches.map((w) => w.resourceVersion), ['10', '13']);
    assert.equal(f.lists(), 1);
    assert.equal(f.active(), 0, 'the watch is stopped when the relay is');
  });

  it('says FORBIDDEN and stops when the person may not list the kind, or may list but not watch it', async () => {
    const noList = fakeClient({ list: () => new KubeApiError(403, 'Forbidden', FORBIDDEN), watch: () => ({ events: [], then: 'block' }) });
    assert.deepEqual(await relayUntil(noList.client, 'HelmOperator', () => false), [{ type: 'FORBIDDEN', kind: 'HelmOperator', message: FORBIDDEN }]);
    assert.equal(noList.watches.length, 0);
    const noWatch = fakeClient({ list: () => '5', watch: () => ({ events: [], then: new KubeApiError(403, 'Forbidden', FORBIDDEN) }) });
    assert.deepEqual(await relayUntil(noWatch.client, 'ClusterExtension', () => false), [
      { type: 'SYNCED', kind: 'ClusterExtension', resourceVersion: '5' },
      { type: 'FORBIDDEN', kind: 'ClusterExtension', message: FORBIDDEN },
    ]);
    assert.equal(noWatch.watches.length, 1, 'no retry after a 403');
  });

  it('relists after 410 Gone, says RELISTED (changes may have been missed) and watches on from the new list', async () => {
    const f = fakeClient({
      list: (_k, n) => (n === 1 ? '10' : '50'),
      watch: (_k, n) => (n === 1 ? { events: [ev('MODIFIED', 'a', '11')], then: new KubeApiError(410, 'Expired', 'too old resource version: 11 (40)') } : { events: [ev('MODIFIED', 'b', '51')], then: 'block' }),
    });
    const events = await relayUntil(f.client, 'BundleDeployment', (e) => e.length === 4);
    assert.deepEqual(events.map((e) => `${e.type}:${'resourceVersion' in e ? e.resourceVersion : ''}`), ['SYNCED:10', 'MODIFIED:11', 'RELISTED:50', 'MODIFIED:51']);
    assert.deepEqual(f.watches.map((w) => w.resourceVersion), ['10', '50']);
    assert.equal(f.lists(), 2);
  });

  it('reports other failures and retries the watch from where it was', async () => {
    const f = fakeClient({ list: () => '10', watch: (_k, n) => (n === 1 ? { events: [ev('ADDED', 'a', '11')], then: new Error('connection reset') } : { events: [ev('ADDED', 'b', '12')], then: 'block' }) });
    const events = await relayUntil(f.client, 'ClusterCatalog', (e) => e.length === 4);
    assert.deepEqual(events.map((e) => e.type), ['SYNCED', 'ADDED', 'ERROR', 'ADDED']);
    assert.deepEqual(f.watches.map((w) => w.resourceVersion), ['10', '11']);
  });

  it('takes the kinds from ?kinds= and refuses others', () => {
    assert.deepEqual(liveKindsOf(new URL('http://x/api/watch?kinds=ClusterExtension,BundleDeployment')), ['ClusterExtension', 'BundleDeployment']);
    assert.equal(liveKindsOf(new URL('http://x/api/watch')).length, 4);
    assert.throws(() => liveKindsOf(new URL('http://x/api/watch?kinds=Secret')), /kinds: "Secret" is not one of/);
  });
});

describe('live updates: GET /api/watch', () => {
  let dir: string | undefined;
  after(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('streams the events as the person, and stops every watch when the browser disconnects', async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-watch-'));
    await writeFile(join(dir, 'app.js'), 'export {};\n');
    await writeFile(join(dir, 'app.css'), 'body{}\n');
    const f = fakeClient({ list: () => '7', watch: (kind) => ({ events: kind === 'ClusterExtension' ? [ev('MODIFIED', 'ext', '8')] : [], then: 'block' }) });
    const tokens: string[] = [];
    const web = await startConsole({
      host: '127.0.0.1',
      port: 0,
      base: fakeClient({ list: () => new Error('not the person'), watch: () => ({ events: [], then: 'block' }) }).client,
      forToken: (t) => {
        tokens.push(t);
        return Promise.resolve(f.client);
      },
      logger: pino({ level: 'silent' }),
      cacheDir: dir,
      assetsDir: dir,
    });
    try {
      const stop = new AbortController();
      const res = await fetch(`${web.url}/api/watch?kinds=ClusterExtension,BundleDeployment`, { headers: { Authorization: 'Bearer tok' }, signal: stop.signal });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      assert.ok(res.body !== null);
      const reader = (res.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
      let text = '';
      while (!text.includes('"MODIFIED"') || (text.match(/"SYNCED"/g) ?? []).length < 2) {
        const chunk = await reader.next();
        if (chunk.done) break;
        text += Buffer.from(chunk.value).toString('utf8');
      }
      assert.deepEqual(tokens, ['tok'], 'the watches run with the person\'s token');
      const data = text.split('\n\n').filter((b) => b.startsWith('event: kube\n')).map((b) => JSON.parse(b.slice('event: kube\ndata: '.length)) as LiveEvent);
      assert.deepEqual(data.find((e) => e.type === 'MODIFIED'), { type: 'MODIFIED', kind: 'ClusterExtension', name: 'ext', resourceVersion: '8' });
      assert.equal(f.active(), 2, 'one watch per kind while the page listens');
      stop.abort();
      for (let i = 0; i < 200 && f.active() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(f.active(), 0, 'no watch is left running after the browser goes away');
    } finally {
      await web.stop();
    }
  });
});
