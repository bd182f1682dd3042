import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { KubeClient, WatchEvent, WatchOptions } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { MAX_LIVE_CRDS, type LiveEvent } from './contract/api-types.js';
import { widgetCrd } from './fake-cluster.test-helper.js';
import { startConsole } from './server.js';
import { crdSource, kindSource, liveSourcesOf, relay, type LiveSource } from './watch.js';

const FORBIDDEN = 'clusterextensions.olm.binnacle.dev is forbidden: User "bob" cannot watch resource "clusterextensions" in API group "olm.binnacle.dev" at the cluster scope';

const ev = (type: WatchEvent['type'], name: string, rv: string, namespace?: string): WatchEvent => ({ type, object: { apiVersion: 'v', kind: 'K', metadata: { name, resourceVersion: rv, ...(namespace === undefined ? {} : { namespace }) }, spec: { big: 'x'.repeat(100) } } });
const untilAborted = (signal: AbortSignal | undefined): Promise<void> => new Promise((resolve) => (signal?.aborted === true ? resolve() : signal?.addEventListener('abort', () => resolve(), { once: true })));

interface Script {
  /** The list's resourceVersion, or the error it fails with (n counts lists from 1). */
  list: (kind: string, n: number) => string | Error;
  /** The n-th watch (from 1): its events, then an error to throw or 'block' (until aborted) or 'end'. */
  watch: (kind: string, n: number) => { events: WatchEvent[]; then: Error | 'block' | 'end' };
  /** The CRD of that name, or the error getting it fails with (n counts gets from 1); none: 404. */
  crd?: (name: string, n: number) => KubeObject | Error;
}

/** A client whose get (of CRDs), list and watch follow the script; it counts the watches open right now and records what each list and watch was of. */
function fakeClient(script: Script): { client: KubeClient; watches: WatchOptions[]; active: () => number; lists: () => number; gets: () => number; targets: string[] } {
  const watches: WatchOptions[] = [];
  const targets: string[] = [];
  let active = 0;
  let lists = 0;
  let gets = 0;
  const client = {
    get: (ref: { kind: string; name: string }) => {
      const r = ref.kind === 'CustomResourceDefinition' ? script.crd?.(ref.name, ++gets) : undefined;
      return r === undefined || r instanceof Error ? Promise.reject(r ?? new KubeApiError(404, 'NotFound', `${ref.kind} ${ref.name} not found`)) : Promise.resolve(r);
    },
    list: (apiVersion: string, kind: string) => {
      targets.push(`list ${apiVersion} ${kind}`);
      const r = script.list(kind, ++lists);
      return r instanceof Error ? Promise.reject(r) : Promise.resolve({ apiVersion: 'v', kind: 'List', metadata: { resourceVersion: r }, items: [] });
    },
    async *watch(apiVersion: string, kind: string, opts: WatchOptions = {}): AsyncGenerator<WatchEvent> {
      targets.push(`watch ${apiVersion} ${kind}`);
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
  return { client, watches, active: () => active, lists: () => lists, gets: () => gets, targets };
}

/** Runs the relay until `done(events)` holds, then aborts it; answers the events sent. */
async function relayUntil(client: KubeClient, source: LiveSource, done: (evs: LiveEvent[]) => boolean): Promise<LiveEvent[]> {
  const events: LiveEvent[] = [];
  const stop = new AbortController();
  const run = relay(client, source, (e) => {
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
    const events = await relayUntil(f.client, kindSource('ClusterExtension'), (e) => e.length === 4);
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
    assert.deepEqual(await relayUntil(noList.client, kindSource('HelmOperator'), () => false), [{ type: 'FORBIDDEN', kind: 'HelmOperator', message: FORBIDDEN }]);
    assert.equal(noList.watches.length, 0);
    const noWatch = fakeClient({ list: () => '5', watch: () => ({ events: [], then: new KubeApiError(403, 'Forbidden', FORBIDDEN) }) });
    assert.deepEqual(await relayUntil(noWatch.client, kindSource('ClusterExtension'), () => false), [
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
    const events = await relayUntil(f.client, kindSource('BundleDeployment'), (e) => e.length === 4);
    assert.deepEqual(events.map((e) => `${e.type}:${'resourceVersion' in e ? e.resourceVersion : ''}`), ['SYNCED:10', 'MODIFIED:11', 'RELISTED:50', 'MODIFIED:51']);
    assert.deepEqual(f.watches.map((w) => w.resourceVersion), ['10', '50']);
    assert.equal(f.lists(), 2);
  });

  it('reports other failures and retries the watch from where it was', async () => {
    const f = fakeClient({ list: () => '10', watch: (_k, n) => (n === 1 ? { events: [ev('ADDED', 'a', '11')], then: new Error('connection reset') } : { events: [ev('ADDED', 'b', '12')], then: 'block' }) });
    const events = await relayUntil(f.client, kindSource('ClusterCatalog'), (e) => e.length === 4);
    assert.deepEqual(events.map((e) => e.type), ['SYNCED', 'ADDED', 'ERROR', 'ADDED']);
    assert.deepEqual(f.watches.map((w) => w.resourceVersion), ['10', '11']);
  });

  it('takes the kinds from ?kinds= and refuses others', () => {
    const kindsOf = (q: string): string[] => liveSourcesOf(new URL(`http://x/api/watch${q}`)).map((s) => s.kind);
    assert.deepEqual(kindsOf('?kinds=ClusterExtension,BundleDeployment'), ['ClusterExtension', 'BundleDeployment']);
    assert.deepEqual(kindsOf(''), ['ClusterExtension', 'BundleDeployment', 'ClusterCatalog', 'HelmOperator']);
    assert.throws(() => kindsOf('?kinds=Secret'), /kinds: "Secret" is not one of/);
  });
});

const v = (name: string, served: boolean, storage: boolean): { name: string; served: boolean; storage: boolean } => ({ name, served, storage });
function widgetsAt(...versions: ReturnType<typeof v>[]): KubeObject {
  const crd = structuredClone(widgetCrd) as KubeObject & { spec: { versions: unknown[] } };
  crd.spec.versions = versions;
  return crd;
}
const CRD_FORBIDDEN = 'customresourcedefinitions.apiextensions.k8s.io "widgets.example.com" is forbidden: User "bob" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope';

describe("live updates: a CRD's custom resources", () => {
  it('gets the CRD as the person, lists and watches its kind at the version it stores in every namespace, and names the CRD as the kind of each event', async () => {
    const f = fakeClient({ crd: () => widgetCrd, list: () => '20', watch: () => ({ events: [ev('ADDED', 'w1', '21', 'team-a'), ev('MODIFIED', 'w2', '22', 'team-b')], then: 'block' }) });
    const events = await relayUntil(f.client, crdSource('widgets.example.com'), (e) => e.length === 3);
    assert.deepEqual(events, [
      { type: 'SYNCED', kind: 'crd/widgets.example.com', resourceVersion: '20' },
      { type: 'ADDED', kind: 'crd/widgets.example.com', name: 'w1', namespace: 'team-a', resourceVersion: '21' },
      { type: 'MODIFIED', kind: 'crd/widgets.example.com', name: 'w2', namespace: 'team-b', resourceVersion: '22' },
    ]);
    assert.deepEqual(f.targets, ['list example.com/v1 Widget', 'watch example.com/v1 Widget']);
    assert.equal(f.watches[0]?.namespace, undefined, 'across namespaces');
    assert.equal(f.active(), 0);
  });

  it('follows the stored version when served, else the first served one', async () => {
    for (const [versions, expected] of [
      [[v('v1beta1', true, false), v('v1', true, true)], 'example.com/v1'],
      [[v('v1alpha1', false, true), v('v1beta1', true, false), v('v1', true, false)], 'example.com/v1beta1'],
    ] as const) {
      const f = fakeClient({ crd: () => widgetsAt(...versions), list: () => '1', watch: () => ({ events: [], then: 'block' }) });
      await relayUntil(f.client, crdSource('widgets.example.com'), (e) => e.length === 1);
      assert.deepEqual(f.targets, [`list ${expected} Widget`, `watch ${expected} Widget`]);
    }
  });

  it('says FORBIDDEN for the CRD and lists nothing when the person may not get it', async () => {
    const f = fakeClient({ crd: () => new KubeApiError(403, 'Forbidden', CRD_FORBIDDEN), list: () => '1', watch: () => ({ events: [], then: 'block' }) });
    assert.deepEqual(await relayUntil(f.client, crdSource('widgets.example.com'), () => false), [{ type: 'FORBIDDEN', kind: 'crd/widgets.example.com', message: CRD_FORBIDDEN }]);
    assert.equal(f.gets(), 1, 'no retry after a 403');
    assert.deepEqual(f.targets, []);
  });

  it('says FORBIDDEN for the CRD when the person may get it but not list or watch its resources', async () => {
    const denied = 'widgets.example.com is forbidden: User "bob" cannot list resource "widgets" in API group "example.com" at the cluster scope';
    const noList = fakeClient({ crd: () => widgetCrd, list: () => new KubeApiError(403, 'Forbidden', denied), watch: () => ({ events: [], then: 'block' }) });
    assert.deepEqual(await relayUntil(noList.client, crdSource('widgets.example.com'), () => false), [{ type: 'FORBIDDEN', kind: 'crd/widgets.example.com', message: denied }]);
    assert.equal(noList.watches.length, 0);
    const noWatch = fakeClient({ crd: () => widgetCrd, list: () => '3', watch: () => ({ events: [], then: new KubeApiError(403, 'Forbidden', denied) }) });
    assert.deepEqual((await relayUntil(noWatch.client, crdSource('widgets.example.com'), () => false)).map((e) => e.type), ['SYNCED', 'FORBIDDEN']);
    assert.equal(noWatch.watches.length, 1, 'no retry after a 403');
  });

  it('retries a CRD not there yet, and finds it again (relisting) when its resources stop being served', async () => {
    const f = fakeClient({
      crd: (_n, n) => (n === 1 ? new KubeApiError(404, 'NotFound', 'customresourcedefinitions.apiextensions.k8s.io "widgets.example.com" not found') : n === 2 ? widgetCrd : widgetsAt(v('v2', true, true))),
      list: (_k, n) => String(n * 10),
      watch: (_k, n) => (n === 1 ? { events: [], then: new KubeApiError(404, 'NotFound', 'the server could not find the requested resource') } : { events: [ev('ADDED', 'w', '31', 'ns')], then: 'block' }),
    });
    const events = await relayUntil(f.client, crdSource('widgets.example.com'), (e) => e.length === 5);
    assert.deepEqual(events.map((e) => `${e.type}:${'resourceVersion' in e ? e.resourceVersion : ''}`), ['ERROR:', 'RELISTED:10', 'ERROR:', 'RELISTED:20', 'ADDED:31']);
    assert.deepEqual(f.targets, ['list example.com/v1 Widget', 'watch example.com/v1 Widget', 'list example.com/v2 Widget', 'watch example.com/v2 Widget']);
  });

  it('takes CRD names from ?crds= (with only the kinds named beside them), refuses names that are no CRD name, and more than the cap', () => {
    const kindsOf = (q: string): string[] => liveSourcesOf(new URL(`http://x/api/watch${q}`)).map((s) => s.kind);
    assert.deepEqual(kindsOf('?crds=widgets.example.com,pelorus.example.com,widgets.example.com'), ['crd/widgets.example.com', 'crd/pelorus.example.com']);
    assert.deepEqual(kindsOf('?kinds=HelmOperator&crds=widgets.example.com'), ['HelmOperator', 'crd/widgets.example.com']);
    assert.equal(kindsOf('?crds=').length, 4, 'a blank crds= is none: every kind, as before');
    for (const bad of ['Widgets.example.com', 'widgets', 'widgets..example.com', 'widgets.example.com/status', '-w.example.com', 'a,,b.c', `${'w'.repeat(250)}.example.com`]) {
      assert.throws(() => kindsOf(`?crds=${encodeURIComponent(bad).replaceAll('%2C', ',')}`), (err: Error & { field?: string }) => err.field === 'crds' && /is not a CRD name/.test(err.message), bad);
    }
    const many = Array.from({ length: MAX_LIVE_CRDS + 1 }, (_, i) => `r${i}.example.com`);
    assert.equal(kindsOf(`?crds=${many.slice(0, MAX_LIVE_CRDS).join(',')}`).length, MAX_LIVE_CRDS);
    assert.throws(() => kindsOf(`?crds=${many.join(',')}`), { message: `crds: ${MAX_LIVE_CRDS + 1} CRDs: one stream follows at most ${MAX_LIVE_CRDS}` });
  });
});

describe('live updates: GET /api/watch', () => {
  let dir: string | undefined;
  after(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('streams the events of kinds and CRDs as the person, stops every watch when the browser disconnects, and answers bad input with 400 naming the parameter', async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-watch-'));
    await writeFile(join(dir, 'app.js'), 'export {};\n');
    await writeFile(join(dir, 'app.css'), 'body{}\n');
    const f = fakeClient({ crd: () => widgetCrd, list: () => '7', watch: (kind) => ({ events: kind === 'ClusterExtension' ? [ev('MODIFIED', 'ext', '8')] : kind === 'Widget' ? [ev('DELETED', 'w', '9', 'ns')] : [], then: 'block' }) });
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
      const res = await fetch(`${web.url}/api/watch?kinds=ClusterExtension,BundleDeployment&crds=widgets.example.com`, { headers: { Authorization: 'Bearer tok' }, signal: stop.signal });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      assert.ok(res.body !== null);
      const reader = (res.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
      let text = '';
      while (!text.includes('"MODIFIED"') || !text.includes('"DELETED"') || (text.match(/"SYNCED"/g) ?? []).length < 3) {
        const chunk = await reader.next();
        if (chunk.done) break;
        text += Buffer.from(chunk.value).toString('utf8');
      }
      assert.deepEqual(tokens, ['tok'], 'the watches run with the person\'s token');
      const data = text.split('\n\n').filter((b) => b.startsWith('event: kube\n')).map((b) => JSON.parse(b.slice('event: kube\ndata: '.length)) as LiveEvent);
      assert.deepEqual(data.find((e) => e.type === 'MODIFIED'), { type: 'MODIFIED', kind: 'ClusterExtension', name: 'ext', resourceVersion: '8' });
      assert.deepEqual(data.find((e) => e.type === 'DELETED'), { type: 'DELETED', kind: 'crd/widgets.example.com', name: 'w', namespace: 'ns', resourceVersion: '9' });
      assert.equal(f.active(), 3, 'one watch per kind and CRD while the page listens');
      stop.abort();
      for (let i = 0; i < 200 && f.active() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(f.active(), 0, 'no watch is left running after the browser goes away');
      const bad = await fetch(`${web.url}/api/watch?crds=Widgets`, { headers: { Authorization: 'Bearer tok' } });
      assert.equal(bad.status, 400);
      assert.deepEqual(await bad.json(), { error: 'crds: "Widgets" is not a CRD name: must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character; a CRD is named PLURAL.GROUP', field: 'crds' });
      assert.equal(f.active(), 0, 'nothing watched for a refused request');
    } finally {
      await web.stop();
    }
  });
});
