import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ALL_CRDS } from '../api/crds.js';
import { API_VERSION } from '../api/types.js';
import { FakeCluster, forbiddenMessage, type FakeClient, type FakeRequest } from '../kube/fake-cluster.test-helper.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { MAX_LIVE_CRDS, type LiveEvent } from './contract/api-types.js';
import { widgetCrd } from './fake-cluster.test-helper.js';
import { startConsole } from './server.js';
import { crdSource, kindSource, liveSourcesOf, relay, type LiveSource } from './watch.js';

/** Whom the relays run as. */
const PERSON = 'bob';

/** The one fake cluster serving Binnacle's kinds, with `objects`. */
function world(objects: KubeObject[] = []): { cluster: FakeCluster; client: FakeClient } {
  const cluster = new FakeCluster({ objects: [...ALL_CRDS, ...objects] });
  return { cluster, client: cluster.client({ user: PERSON }) };
}

const ce = (name: string, generation = 1): KubeObject => ({ apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name }, spec: { generation } });
const widget = (name: string, namespace: string, version = 'v1', size = 1): KubeObject => ({ apiVersion: `example.com/${version}`, kind: 'Widget', metadata: { name, namespace }, spec: { size } });
const rvOf = (o: KubeObject): string => o.metadata.resourceVersion ?? '';

/** What the person asked, as `verb apiVersion Kind`, of the verbs named. */
const asked = (cluster: FakeCluster, ...verbs: string[]): string[] => cluster.log.filter((r) => verbs.includes(r.verb)).map((r) => `${r.verb} ${r.apiVersion} ${r.kind}`);
const watchesFrom = (cluster: FakeCluster): (string | undefined)[] => cluster.log.filter((r) => r.verb === 'watch').map((r) => r.resourceVersion);
/** The API server's refusal of `verb` on `kind` for the person. */
const refusal = (cluster: FakeCluster, verb: FakeRequest['verb'], kind: string): string => {
  const r = cluster.log.find((x) => x.verb === verb && x.kind === kind);
  assert.ok(r !== undefined, `${verb} ${kind} was asked`);
  return forbiddenMessage(r);
};

/**
 * Runs the relay until `done(events)` holds, then aborts it; answers the events sent. `on` is
 * told of each event as it is sent (and may change the cluster: what the relay sees next).
 */
async function relayUntil(client: FakeClient, source: LiveSource, done: (evs: LiveEvent[]) => boolean, on: (ev: LiveEvent, evs: LiveEvent[]) => void = () => undefined): Promise<LiveEvent[]> {
  const events: LiveEvent[] = [];
  const stop = new AbortController();
  const run = relay(client, source, (e) => {
    events.push(e);
    on(e, events);
    if (done(events)) stop.abort();
  }, stop.signal, { retryMs: 1, timeoutSeconds: 5 });
  const timer = setTimeout(() => stop.abort(), 5000);
  await run;
  clearTimeout(timer);
  return events;
}

const at = (e: LiveEvent): string => `${e.type}:${'resourceVersion' in e ? e.resourceVersion : ''}`;

describe('live updates: the watch relay', () => {
  it('relays each change as type, kind, name and resourceVersion (no object, no bookmarks) and resumes from the last version', async () => {
    const { cluster, client } = world();
    const listed = String(cluster.resourceVersion);
    const rv: Record<string, string> = {};
    const events = await relayUntil(client, kindSource('ClusterExtension'), (e) => e.length === 4, (e) => {
      if (e.type === 'SYNCED') rv.added = rvOf(cluster.put(ce('a')));
      if (e.type === 'ADDED') {
        // Another kind's change moves the resourceVersion a bookmark then carries; then a's change, and the server ends the watch (its timeout).
        cluster.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'elsewhere', namespace: 'ns' } });
        cluster.bookmark();
        rv.modified = rvOf(cluster.put(ce('a', 2)));
        cluster.endWatches();
        rv.deleted = String(cluster.resourceVersion + 1);
        cluster.remove({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'a' });
      }
    });
    assert.deepEqual(events, [
      { type: 'SYNCED', kind: 'ClusterExtension', resourceVersion: listed },
      { type: 'ADDED', kind: 'ClusterExtension', name: 'a', resourceVersion: rv.added },
      { type: 'MODIFIED', kind: 'ClusterExtension', name: 'a', resourceVersion: rv.modified },
      { type: 'DELETED', kind: 'ClusterExtension', name: 'a', resourceVersion: rv.deleted },
    ]);
    assert.deepEqual(watchesFrom(cluster), [listed, rv.modified], 'resumed from the last version seen, past the bookmark');
    assert.deepEqual(asked(cluster, 'list'), [`list ${API_VERSION} ClusterExtension`]);
    assert.equal(cluster.watching, 0, 'the watch is stopped when the relay is');
  });

  it('says FORBIDDEN and stops when the person may not list the kind, or may list but not watch it', async () => {
    const noList = world();
    noList.cluster.authorize = (r) => !(r.verb === 'list' && r.kind === 'HelmOperator');
    assert.deepEqual(await relayUntil(noList.client, kindSource('HelmOperator'), () => false), [{ type: 'FORBIDDEN', kind: 'HelmOperator', message: refusal(noList.cluster, 'list', 'HelmOperator') }]);
    assert.deepEqual(asked(noList.cluster, 'watch'), []);
    const noWatch = world();
    noWatch.cluster.authorize = (r) => !(r.verb === 'watch' && r.kind === 'ClusterExtension');
    const listed = String(noWatch.cluster.resourceVersion);
    assert.deepEqual(await relayUntil(noWatch.client, kindSource('ClusterExtension'), () => false), [
      { type: 'SYNCED', kind: 'ClusterExtension', resourceVersion: listed },
      { type: 'FORBIDDEN', kind: 'ClusterExtension', message: refusal(noWatch.cluster, 'watch', 'ClusterExtension') },
    ]);
    assert.match(refusal(noWatch.cluster, 'watch', 'ClusterExtension'), /^clusterextensions\.binnacle\.dev is forbidden: User "bob" cannot watch resource "clusterextensions"/);
    assert.equal(asked(noWatch.cluster, 'watch').length, 1, 'no retry after a 403');
  });

  it('relists after 410 Gone, says RELISTED (changes may have been missed) and watches on from the new list', async () => {
    const { cluster, client } = world([{ apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name: 'a' }, spec: { n: 1 } }, { apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name: 'b' }, spec: { n: 1 } }]);
    const listed = String(cluster.resourceVersion);
    const bd = (name: string): KubeObject => ({ apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name }, spec: { n: 2 } });
    const events = await relayUntil(client, kindSource('BundleDeployment'), (e) => e.length === 4, (e) => {
      if (e.type === 'SYNCED') cluster.put(bd('a'));
      // What it watched from was compacted away.
      if (e.type === 'MODIFIED' && e.name === 'a') cluster.endWatches({ error: new KubeApiError(410, 'Expired', 'too old resource version') });
      if (e.type === 'RELISTED') cluster.put(bd('b'));
    });
    const relisted = events[2]?.type === 'RELISTED' ? events[2].resourceVersion : '';
    assert.deepEqual(events.map(at), [`SYNCED:${listed}`, `MODIFIED:${Number(listed) + 1}`, `RELISTED:${relisted}`, `MODIFIED:${Number(relisted) + 1}`]);
    assert.equal(relisted, String(Number(listed) + 1), 'the new list saw the change');
    assert.deepEqual(watchesFrom(cluster), [listed, relisted]);
    assert.equal(asked(cluster, 'list').length, 2);
  });

  it('reports other failures and retries the watch from where it was', async () => {
    const { cluster, client } = world();
    const listed = String(cluster.resourceVersion);
    let added = '';
    const events = await relayUntil(client, kindSource('ClusterCatalog'), (e) => e.length === 4, (e) => {
      const catalog = (name: string): KubeObject => ({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name }, spec: {} });
      if (e.type === 'SYNCED') added = rvOf(cluster.put(catalog('a')));
      if (e.type === 'ADDED' && e.name === 'a') cluster.endWatches({ error: new Error('connection reset') });
      if (e.type === 'ERROR') cluster.put(catalog('b'));
    });
    assert.deepEqual(events.map((e) => e.type), ['SYNCED', 'ADDED', 'ERROR', 'ADDED']);
    assert.deepEqual(watchesFrom(cluster), [listed, added]);
    assert.equal(asked(cluster, 'list').length, 1, 'no relist');
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
describe("live updates: a CRD's custom resources", () => {
  it('gets the CRD as the person, lists and watches its kind at the version it stores in every namespace, and names the CRD as the kind of each event', async () => {
    const { cluster, client } = world([widgetCrd, widget('w2', 'team-b')]);
    const listed = String(cluster.resourceVersion);
    const rv: string[] = [];
    const events = await relayUntil(client, crdSource('widgets.example.com'), (e) => e.length === 3, (e) => {
      if (e.type !== 'SYNCED') return;
      rv.push(rvOf(cluster.put(widget('w1', 'team-a'))));
      rv.push(rvOf(cluster.put(widget('w2', 'team-b', 'v1', 2))));
    });
    assert.deepEqual(events, [
      { type: 'SYNCED', kind: 'crd/widgets.example.com', resourceVersion: listed },
      { type: 'ADDED', kind: 'crd/widgets.example.com', name: 'w1', namespace: 'team-a', resourceVersion: rv[0] },
      { type: 'MODIFIED', kind: 'crd/widgets.example.com', name: 'w2', namespace: 'team-b', resourceVersion: rv[1] },
    ]);
    assert.deepEqual(cluster.log.map((r) => `${r.verb} ${r.apiVersion} ${r.kind} ${r.identity}`), [`get apiextensions.k8s.io/v1 CustomResourceDefinition ${PERSON}`, `list example.com/v1 Widget ${PERSON}`, `watch example.com/v1 Widget ${PERSON}`]);
    assert.equal(cluster.log.find((r) => r.verb === 'watch')?.namespace, '', 'across namespaces');
    assert.equal(cluster.watching, 0);
  });

  it('follows the stored version when served, else the first served one', async () => {
    for (const [versions, expected] of [
      [[v('v1beta1', true, false), v('v1', true, true)], 'example.com/v1'],
      [[v('v1alpha1', false, true), v('v1beta1', true, false), v('v1', true, false)], 'example.com/v1beta1'],
    ] as const) {
      const { cluster, client } = world([widgetsAt(...versions)]);
      await relayUntil(client, crdSource('widgets.example.com'), (e) => e.length === 1);
      assert.deepEqual(asked(cluster, 'list', 'watch'), [`list ${expected} Widget`, `watch ${expected} Widget`]);
    }
  });

  it('says FORBIDDEN for the CRD and lists nothing when the person may not get it', async () => {
    const { cluster, client } = world([widgetCrd]);
    cluster.authorize = (r) => r.kind !== 'CustomResourceDefinition';
    assert.deepEqual(await relayUntil(client, crdSource('widgets.example.com'), () => false), [{ type: 'FORBIDDEN', kind: 'crd/widgets.example.com', message: refusal(cluster, 'get', 'CustomResourceDefinition') }]);
    assert.match(refusal(cluster, 'get', 'CustomResourceDefinition'), /^customresourcedefinitions\.apiextensions\.k8s\.io "widgets\.example\.com" is forbidden: User "bob" cannot get resource "customresourcedefinitions"/);
    assert.equal(asked(cluster, 'get').length, 1, 'no retry after a 403');
    assert.deepEqual(asked(cluster, 'list', 'watch'), []);
  });

  it('says FORBIDDEN for the CRD when the person may get it but not list or watch its resources', async () => {
    const noList = world([widgetCrd]);
    noList.cluster.authorize = (r) => !(r.verb === 'list' && r.kind === 'Widget');
    assert.deepEqual(await relayUntil(noList.client, crdSource('widgets.example.com'), () => false), [{ type: 'FORBIDDEN', kind: 'crd/widgets.example.com', message: refusal(noList.cluster, 'list', 'Widget') }]);
    assert.deepEqual(asked(noList.cluster, 'watch'), []);
    const noWatch = world([widgetCrd]);
    noWatch.cluster.authorize = (r) => !(r.verb === 'watch' && r.kind === 'Widget');
    assert.deepEqual((await relayUntil(noWatch.client, crdSource('widgets.example.com'), () => false)).map((e) => e.type), ['SYNCED', 'FORBIDDEN']);
    assert.equal(asked(noWatch.cluster, 'watch').length, 1, 'no retry after a 403');
  });

  it('retries a CRD not there yet, and finds it again (relisting) when its resources stop being served', async () => {
    const { cluster, client } = world();
    const rv: string[] = [];
    const events = await relayUntil(client, crdSource('widgets.example.com'), (e) => e.length === 5, (e, evs) => {
      const relisted = evs.filter((x) => x.type === 'RELISTED').length;
      // The CRD comes; then it serves v2 only, and its v1 resources stop being served.
      if (e.type === 'ERROR' && relisted === 0) cluster.put(widgetCrd);
      if (e.type === 'RELISTED' && relisted === 1) cluster.put(widgetsAt(v('v2', true, true)));
      if (e.type === 'RELISTED') rv.push(e.resourceVersion);
      if (e.type === 'RELISTED' && relisted === 2) rv.push(rvOf(cluster.put(widget('w', 'ns', 'v2'))));
    });
    assert.deepEqual(events.map(at), ['ERROR:', `RELISTED:${rv[0] ?? ''}`, 'ERROR:', `RELISTED:${rv[1] ?? ''}`, `ADDED:${rv[2] ?? ''}`]);
    assert.deepEqual(asked(cluster, 'list', 'watch'), ['list example.com/v1 Widget', 'watch example.com/v1 Widget', 'list example.com/v2 Widget', 'watch example.com/v2 Widget']);
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
    const { cluster, client } = world([widgetCrd, ce('ext'), widget('w', 'ns')]);
    // The console's own identity may read nothing: what streams was read as the person.
    cluster.authorize = (r) => r.identity !== 'console';
    const tokens: string[] = [];
    const web = await startConsole({
      host: '127.0.0.1',
      port: 0,
      base: cluster.client({ user: 'console' }),
      forToken: (t) => {
        tokens.push(t);
        return Promise.resolve(client);
      },
      logger: pino({ level: 'silent' }),
      cacheDir: dir,
      assetsDir: dir,
    });
    const until = async (what: () => boolean): Promise<void> => {
      for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    try {
      const stop = new AbortController();
      const res = await fetch(`${web.url}/api/watch?kinds=ClusterExtension,BundleDeployment&crds=widgets.example.com`, { headers: { Authorization: 'Bearer tok' }, signal: stop.signal });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      assert.ok(res.body !== null);
      const reader = res.body.getReader();
      let text = '';
      let changed: { ext: string; w: string } | undefined;
      while (!text.includes('"MODIFIED"') || !text.includes('"DELETED"')) {
        // Once every source has listed, the extension changes and the Widget goes.
        if (changed === undefined && (text.match(/"SYNCED"/g) ?? []).length === 3) {
          const ext = rvOf(cluster.put(ce('ext', 2)));
          changed = { ext, w: String(cluster.resourceVersion + 1) };
          cluster.remove({ apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'ns', name: 'w' });
        }
        const chunk = await reader.read();
        if (chunk.done) break;
        text += Buffer.from(chunk.value).toString('utf8');
      }
      assert.deepEqual(tokens, ['tok'], "the watches run with the person's token");
      assert.ok(!cluster.log.some((r) => r.identity === 'console'), "nothing was read as the console's identity");
      const data = text.split('\n\n').filter((b) => b.startsWith('event: kube\n')).map((b) => JSON.parse(b.slice('event: kube\ndata: '.length)) as LiveEvent);
      assert.deepEqual(data.find((e) => e.type === 'MODIFIED'), { type: 'MODIFIED', kind: 'ClusterExtension', name: 'ext', resourceVersion: changed?.ext });
      assert.deepEqual(data.find((e) => e.type === 'DELETED'), { type: 'DELETED', kind: 'crd/widgets.example.com', name: 'w', namespace: 'ns', resourceVersion: changed?.w });
      await until(() => cluster.watching === 3);
      assert.equal(cluster.watching, 3, 'one watch per kind and CRD while the page listens');
      stop.abort();
      await until(() => cluster.watching === 0);
      assert.equal(cluster.watching, 0, 'no watch is left running after the browser goes away');
      const bad = await fetch(`${web.url}/api/watch?crds=Widgets`, { headers: { Authorization: 'Bearer tok' } });
      assert.equal(bad.status, 400);
      assert.deepEqual(await bad.json(), { error: 'crds: "Widgets" is not a CRD name: must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character; a CRD is named PLURAL.GROUP', field: 'crds' });
      assert.equal(cluster.watching, 0, 'nothing watched for a refused request');
    } finally {
      await web.stop();
    }
  });
});
