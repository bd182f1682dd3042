/**
 * The one render function: its cache is bounded and keyed by everything Helm's answer depends on
 * (never shared between identities that look up), its bound on values holds whoever calls, and
 * every caller in the tree goes through it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { HelmEngine, RenderRequest, RenderResult } from '../helm-engine/engine.js';
import { RenderCache } from './cache.js';
import { render, renderingEngine, renderStats } from './index.js';

/** An engine that answers each render with a new serial number in its manifest (as a chart that generates a key would). */
function countingEngine(): HelmEngine & { renders: RenderRequest[]; templates: RenderRequest[] } {
  const renders: RenderRequest[] = [];
  const templates: RenderRequest[] = [];
  return {
    renders,
    templates,
    render: (req) => {
      renders.push(req);
      const manifest = `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  serial: "${renders.length}"\n`;
      const result: RenderResult = {
        output: manifest,
        crds: [],
        release: {
          name: req.releaseName ?? '',
          namespace: req.namespace ?? '',
          version: req.revision ?? 1,
          manifest,
          chart: { metadata: { name: 'c', version: '1.0.0' }, lock: null, templates: null, values: null, schema: null, files: null },
          config: req.values ?? {},
          info: { first_deployed: '', last_deployed: '', deleted: '', status: 'pending-install' },
          hooks: [],
        },
      };
      return Promise.resolve(result);
    },
    template: (req) => {
      templates.push(req);
      return Promise.resolve({ output: 'templated\n', crds: [] });
    },
    inspect: () => Promise.resolve([]),
    memory: () => ({ bytes: 0, recycled: 0 }),
    threads: () => 0,
    close: () => Promise.resolve(),
  };
}

const release = { name: 'r', namespace: 'ns' };

describe('RenderCache', () => {
  test('is bounded in entries: the least recently used goes first', () => {
    const c = new RenderCache<string>({ maxEntries: 2, maxBytes: 1000 });
    c.set('a', 'A', 1);
    c.set('b', 'B', 1);
    assert.equal(c.get('a'), 'A'); // a is now the most recent
    c.set('c', 'C', 1);
    assert.equal(c.get('b'), undefined);
    assert.equal(c.get('a'), 'A');
    assert.equal(c.get('c'), 'C');
    assert.deepEqual(c.stats(), { hits: 3, misses: 1, entries: 2, bytes: 2, evictions: 1 });
  });

  test('is bounded in bytes: entries go until the rest fit, and one larger than the whole cache is not kept', () => {
    const c = new RenderCache<string>({ maxEntries: 10, maxBytes: 100 });
    c.set('a', 'A', 40);
    c.set('b', 'B', 40);
    c.set('c', 'C', 40);
    assert.deepEqual([c.get('a'), c.get('b'), c.get('c')], [undefined, 'B', 'C']);
    assert.equal(c.stats().bytes, 80);
    c.set('huge', 'H', 101);
    assert.equal(c.get('huge'), undefined);
    assert.deepEqual([c.get('b'), c.get('c')], ['B', 'C'], 'a value too large for the cache evicts nothing');
    c.set('b', 'B2', 10);
    assert.equal(c.stats().bytes, 50, 'replacing an entry counts its new size only');
  });
});

describe('render()', () => {
  test('a chart release rendered twice with the same input is one engine render; the copy handed out cannot change the cached one', async () => {
    const engine = countingEngine();
    const input = { chart: '/nowhere', chartDigest: 'sha256:same-input', release, values: { a: 1 }, revision: 1, engine };
    const before = renderStats();
    const first = await render({ chart: input });
    first.content.manifest = 'changed by a caller';
    const second = await render({ chart: input });
    assert.equal(engine.renders.length, 1);
    assert.match(second.content.manifest, /serial: "1"/);
    assert.equal(second.content.chart, first.content.chart, 'the chart is one shared object, not a copy per render');
    const after = renderStats();
    assert.equal(after.calls.chart - before.calls.chart, 2);
    assert.equal(after.cache.hits - before.cache.hits, 1);
  });

  test('any change of what Helm sees (values, revision, release, chart digest) renders again', async () => {
    const engine = countingEngine();
    const base = { chart: '/nowhere', chartDigest: 'sha256:changes', release, values: { a: 1 }, revision: 1, engine };
    await render({ chart: base });
    await render({ chart: { ...base, values: { a: 2 } } });
    await render({ chart: { ...base, revision: 2 } });
    await render({ chart: { ...base, release: { name: 'r', namespace: 'other' } } });
    await render({ chart: { ...base, chartDigest: 'sha256:changes-2' } });
    assert.equal(engine.renders.length, 5);
  });

  test('a render that looks up never answers another identity from the cache; without a digest nothing is cached', async () => {
    const engine = countingEngine();
    const client = { serverVersion: () => Promise.resolve('v1.31.0'), apiVersionSet: () => Promise.resolve(['v1']), rawRequest: () => Promise.resolve({ status: 404, body: '' }), find: () => Promise.resolve(undefined) };
    const input = { chart: '/nowhere', chartDigest: 'sha256:lookup', release, values: {}, revision: 1, engine, client };
    await render({ chart: input, actingAs: 'system:serviceaccount:team-a:releaser' });
    await render({ chart: input, actingAs: 'system:serviceaccount:team-b:releaser' });
    await render({ chart: input, actingAs: 'system:serviceaccount:team-a:releaser' });
    assert.equal(engine.renders.length, 2);
    // No name for the identity: only the same client object may share an entry.
    await render({ chart: input });
    await render({ chart: { ...input, client: { ...client } } });
    assert.equal(engine.renders.length, 4);
    await render({ chart: { ...input, chartDigest: '' } });
    await render({ chart: { ...input, chartDigest: '' } });
    assert.equal(engine.renders.length, 6);
  });

  test('values nested past MAX_NESTING are refused before the engine is asked, whoever calls', async () => {
    const engine = countingEngine();
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) deep = { d: deep };
    await assert.rejects(render({ chart: { chart: '/nowhere', chartDigest: 'sha256:deep', release, values: deep, revision: 1, engine } }), { code: 'HELM_VALUES_TOO_DEEP' });
    await assert.rejects(render({ helm: { chart: '/nowhere', values: deep }, engine }), { code: 'HELM_VALUES_TOO_DEEP' });
    assert.equal(engine.renders.length, 0);
  });

  test('helm template and the engine handed to helm bundle / helm release go through it, counted', async () => {
    const engine = countingEngine();
    const before = renderStats();
    assert.equal((await render({ template: { chart: '/nowhere' }, engine })).output, 'templated\n');
    const through = renderingEngine(engine, 'sha256:bundle-chart');
    await through.render({ chart: '/nowhere', values: {} });
    await through.render({ chart: '/nowhere', values: {} });
    await through.template({ chart: '/nowhere' });
    const after = renderStats();
    assert.equal(after.calls.template - before.calls.template, 2);
    assert.equal(after.calls.helm - before.calls.helm, 2);
    assert.equal(engine.renders.length, 1, 'the second render of the same chart digest and request is a cache hit');
    assert.equal(engine.templates.length, 2);
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

describe('one way through: every caller renders with render()', () => {
  const callers: [file: string, call: RegExp][] = [
    ['cli/commands/bundle.ts', /render\(\{ bundle: /],
    ['cli/commands/helm.ts', /render\(\{ template \}\)/],
    ['cli/commands/helm-bundle.ts', /engine: renderingEngine\(\)/],
    ['cli/commands/helm-release.ts', /engine: renderingEngine\(\)/],
    ['actions/plan.ts', /render\(\{ bundle: /],
    ['controllers/bundle-deployment.ts', /render\(\{ bundle: /],
    ['controllers/helm-operator/helm-release.ts', /render\(\{ chart: input, actingAs \}\)/],
  ];
  for (const [file, call] of callers) {
    test(`${file} calls it`, () => {
      assert.match(readFileSync(join(SRC, file), 'utf8'), call);
    });
  }

  test('no module above src/helm (but chart authoring, given its engine) renders with the engine or chart-release.ts directly', () => {
    const direct = /renderChartRelease\(|helmEngine\(\)\.(render|template)\(|engine\.(render|template)\(/;
    const offenders = sources(SRC)
      .map((p) => relative(SRC, p))
      // helm-bundle and helm-release (once helm/bundle and helm/release) render with the engine their caller gives them: renderingEngine().
      .filter((p) => !['helm/', 'helm-engine/', 'render/', 'publish/helm-bundle/', 'publish/helm-release/'].some((f) => p.startsWith(f)))
      .filter((p) => direct.test(readFileSync(join(SRC, p), 'utf8')));
    assert.deepEqual(offenders, []);
  });
});
