/**
 * The renderer: a chart release rendered twice is one engine render (its caching engine, keyed by
 * everything Helm's answer depends on and never shared between identities that look up), the
 * bound on values holds whoever calls, renderers share no state, and every caller in the tree
 * renders with a renderer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { countingEngine } from '../helm-engine/engine-cache.test-helper.js';
import { createRenderer } from './index.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { HelmEngine, RenderResult, TemplateRequest } from '../helm-engine/engine.js';

const release = { name: 'r', namespace: 'ns' };

describe('Renderer', () => {
  test('a chart release rendered twice with the same input is one engine render; the copy handed out cannot change the cached one', async () => {
    const engine = countingEngine();
    const renderer = createRenderer({ engine });
    const input = { chart: '/nowhere', chartDigest: 'sha256:same-input', release, values: { a: 1 }, revision: 1 };
    const first = await renderer.chart(input);
    first.content.manifest = 'changed by a caller';
    const second = await renderer.chart(input);
    assert.equal(engine.renders.length, 1);
    assert.match(second.content.manifest, /serial: "1"/);
    assert.equal(second.content.chart, first.content.chart, 'the chart is one shared object, not a copy per render');
    assert.equal(renderer.stats().calls.chart, 2);
    assert.equal(renderer.stats().cache.hits, 1);
  });

  test('any change of what Helm sees (values, revision, release, chart digest) renders again', async () => {
    const engine = countingEngine();
    const renderer = createRenderer({ engine });
    const base = { chart: '/nowhere', chartDigest: 'sha256:changes', release, values: { a: 1 }, revision: 1 };
    await renderer.chart(base);
    await renderer.chart({ ...base, values: { a: 2 } });
    await renderer.chart({ ...base, revision: 2 });
    await renderer.chart({ ...base, release: { name: 'r', namespace: 'other' } });
    await renderer.chart({ ...base, chartDigest: 'sha256:changes-2' });
    assert.equal(engine.renders.length, 5);
  });

  test('a render that looks up never answers another identity from the cache; without a digest nothing is cached', async () => {
    const engine = countingEngine();
    const renderer = createRenderer({ engine });
    const client = { serverVersion: () => Promise.resolve('v1.31.0'), apiVersionSet: () => Promise.resolve(['v1']), rawRequest: () => Promise.resolve({ status: 404, body: '' }), find: () => Promise.resolve(undefined) };
    const input = { chart: '/nowhere', chartDigest: 'sha256:lookup', release, values: {}, revision: 1, client };
    await renderer.chart(input, 'system:serviceaccount:team-a:releaser');
    await renderer.chart(input, 'system:serviceaccount:team-b:releaser');
    await renderer.chart(input, 'system:serviceaccount:team-a:releaser');
    assert.equal(engine.renders.length, 2);
    // No name for the identity: only the same client object may share an entry.
    await renderer.chart(input);
    await renderer.chart({ ...input, client: { ...client } });
    assert.equal(engine.renders.length, 4);
    await renderer.chart({ ...input, chartDigest: '' });
    await renderer.chart({ ...input, chartDigest: '' });
    assert.equal(engine.renders.length, 6);
  });

  test('two renderers share no cache: the state is the renderer\'s, not the module\'s', async () => {
    const engine = countingEngine();
    const input = { chart: '/nowhere', chartDigest: 'sha256:two', release, values: {}, revision: 1 };
    await createRenderer({ engine }).chart(input);
    await createRenderer({ engine }).chart(input);
    assert.equal(engine.renders.length, 2);
  });

  test('values nested past MAX_NESTING are refused before the engine is asked, whoever calls', async () => {
    const engine = countingEngine();
    const renderer = createRenderer({ engine });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) deep = { d: deep };
    await assert.rejects(renderer.chart({ chart: '/nowhere', chartDigest: 'sha256:deep', release, values: deep, revision: 1 }), { code: 'HELM_VALUES_TOO_DEEP' });
    await assert.rejects(renderer.engine.render({ chart: '/nowhere', values: deep }), { code: 'HELM_VALUES_TOO_DEEP' });
    await assert.rejects(renderer.template({ chart: '/nowhere', values: deep }), { code: 'HELM_VALUES_TOO_DEEP' });
    assert.equal(engine.renders.length + engine.templates.length, 0);
  });

  test('helm template and the engine handed to helm bundle / helm release go through its caching engine, counted', async () => {
    const engine = countingEngine();
    const renderer = createRenderer({ engine });
    assert.equal((await renderer.template({ chart: '/nowhere' })).output, 'templated\n');
    await renderer.engine.render({ chart: '/nowhere', values: {} });
    await renderer.engine.template({ chart: '/nowhere' });
    const stats = renderer.engine.stats();
    assert.deepEqual([renderer.stats().calls.template, stats.templates, stats.renders], [1, 2, 1]);
    assert.deepEqual([engine.renders.length, engine.templates.length], [1, 2]);
  });
});

const SRC = join(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'testdata' ? [] : sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.includes('test-helper') ? [p] : [];
  });
}

describe('one way through: every caller renders with a renderer', () => {
  const callers: [file: string, call: RegExp][] = [
    ['cli/commands/bundle.ts', /createRenderer\(\)\.bundle\(/],
    ['cli/commands/helm.ts', /createRenderer\(\)\.template\(/],
    ['cli/commands/helm-bundle.ts', /engine: createRenderer\(\)\.engine/],
    ['cli/commands/helm-release.ts', /engine: createRenderer\(\)\.engine/],
    ['actions/plan.ts', /renderer\.bundle\(/],
    ['controllers/bundle-deployment.ts', /renderer\.bundle\(/],
    ['controllers/helm-operator/helm-release.ts', /createRenderer\(\)\)\.chart\(input, actingAs\)/],
  ];
  for (const [file, call] of callers) {
    test(`${file} calls it`, () => {
      assert.match(readFileSync(join(SRC, file), 'utf8'), call);
    });
  }

  test('no module above src/helm (but chart authoring, given its engine) renders with the engine or chart-render.ts directly', () => {
    const direct = /\brenderChart\(|helmEngine\(\)\.(render|template)\(|engine\.(render|template)\(/;
    const offenders = sources(SRC)
      .map((p) => relative(SRC, p))
      // publish/helm-bundle and publish/helm-release render with the engine their caller gives them: the renderer's caching engine.
      .filter((p) => !['helm/', 'helm-engine/', 'render/', 'publish/helm-bundle/', 'publish/helm-release/'].some((f) => p.startsWith(f)))
      .filter((p) => direct.test(readFileSync(join(SRC, p), 'utf8')));
    assert.deepEqual(offenders, []);
  });
});

test('a render whose lookup is confined is never answered from an unconfined render cached for the same identity', async () => {
  // Helm's engine standing in: its template copies what `lookup "v1" "Secret" "team-b" "db"` read into a ConfigMap.
  const engine: HelmEngine = {
    ...countingEngine(),
    async render(req: TemplateRequest): Promise<RenderResult> {
      const res = req.lookup === undefined ? { status: 404, body: '' } : await req.lookup('GET', '/api/v1/namespaces/team-b/secrets/db', '');
      if (res.status !== 200) throw new Error(`lookup refused: ${res.body}`);
      const password = (JSON.parse(res.body) as { data?: { password?: string } }).data?.password ?? 'none';
      const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: peek\ndata:\n  stolen: "${password}"\n`;
      const chart = { metadata: { name: 'peek', version: '0.1.0' }, lock: null, templates: null, values: null, schema: null, files: null };
      return { output: manifest, crds: [], release: { name: req.releaseName ?? '', namespace: req.namespace ?? '', version: 1, manifest, chart, config: {}, info: { first_deployed: '', last_deployed: '', deleted: '', status: 'pending-install' }, hooks: [] } };
    },
  };
  const cluster = new FakeCluster({ objects: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'team-b' }, data: { password: 'c2VjcmV0' } }] });
  const renderer = createRenderer({ engine });
  const input = { chart: '/nonexistent', chartDigest: `sha256:${'c'.repeat(64)}`, release: { name: 'r', namespace: 'team-a' }, values: {}, revision: 1, client: cluster.client() };
  const as = 'system:serviceaccount:platform:helm';
  const open = await renderer.chart(input, as);
  assert.equal((open.objects[0] as { data?: { stolen?: string } }).data?.stolen, 'c2VjcmV0', 'unconfined: read');
  await assert.rejects(renderer.chart({ ...input, lookupNamespaces: ['team-a'] }, as), /lookup refused.*reads namespaced resources in team-a only/);
});
