/**
 * The caching engine: its cache is bounded (entries, bytes), keyed by everything Helm's answer
 * depends on (never shared between identities that look up), uncached without a chart digest,
 * and its bound on values holds for every render and template.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CachingEngine, RenderCache } from './engine-cache.js';
import { countingEngine } from './engine-cache.test-helper.js';

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

describe('CachingEngine', () => {
  const req = { chart: '/nowhere', releaseName: 'r', namespace: 'ns', values: { a: 1 }, revision: 1 };

  test('the same request under the same chart digest is one engine render; the copy handed out cannot change the cached one; the chart path is not part of the key', async () => {
    const base = countingEngine();
    const engine = new CachingEngine(base);
    const first = await engine.render(req, { chartDigest: 'sha256:a' });
    first.release.manifest = 'changed by a caller';
    const second = await engine.render({ ...req, chart: '/elsewhere' }, { chartDigest: 'sha256:a' });
    assert.equal(base.renders.length, 1);
    assert.match(second.release.manifest, /serial: "1"/);
    assert.equal(second.release.chart, first.release.chart, 'the chart is one shared object, not a copy per render');
    assert.deepEqual(engine.stats(), { renders: 2, templates: 0, cache: { hits: 1, misses: 1, entries: 1, bytes: engine.stats().cache.bytes, evictions: 0 } });
  });

  test('without a key or a chart digest nothing is cached; two engines share nothing', async () => {
    const base = countingEngine();
    const engine = new CachingEngine(base);
    await engine.render(req);
    await engine.render(req);
    await engine.render(req, { chartDigest: '' });
    await new CachingEngine(base).render(req, { chartDigest: 'sha256:a' });
    await new CachingEngine(base).render(req, { chartDigest: 'sha256:a' });
    assert.equal(base.renders.length, 5);
  });

  test('a render that looks up is cached per identity: by name, else per client object', async () => {
    const base = countingEngine();
    const engine = new CachingEngine(base);
    const lookup = { ...req, lookup: () => Promise.resolve({ status: 404, body: '' }) };
    await engine.render(lookup, { chartDigest: 'sha256:l', lookupAs: 'alice' });
    await engine.render(lookup, { chartDigest: 'sha256:l', lookupAs: 'bob' });
    await engine.render(lookup, { chartDigest: 'sha256:l', lookupAs: 'alice' });
    assert.equal(base.renders.length, 2);
    const client = {};
    await engine.render(lookup, { chartDigest: 'sha256:l', lookupClient: client });
    await engine.render(lookup, { chartDigest: 'sha256:l', lookupClient: client });
    await engine.render(lookup, { chartDigest: 'sha256:l', lookupClient: {} });
    assert.equal(base.renders.length, 4);
  });

  test('values nested past MAX_NESTING are refused before the engine is asked, render or template', async () => {
    const base = countingEngine();
    const engine = new CachingEngine(base);
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) deep = { d: deep };
    await assert.rejects(engine.render({ ...req, values: deep }, { chartDigest: 'sha256:deep' }), { code: 'HELM_VALUES_TOO_DEEP' });
    await assert.rejects(engine.template({ ...req, values: deep }), { code: 'HELM_VALUES_TOO_DEEP' });
    assert.equal(base.renders.length + base.templates.length, 0);
  });

  test('its keyed view renders through its cache and templates through the engine; the engine is loaded once, on first use', async () => {
    const base = countingEngine();
    let loads = 0;
    const engine = new CachingEngine(() => {
      loads++;
      return Promise.resolve(base);
    });
    assert.equal(engine.threads(), 0, 'nothing loaded yet');
    const view = engine.keyed({ chartDigest: 'sha256:v' });
    await view.render(req);
    await view.render(req);
    await view.template(req);
    await view.template(req);
    assert.deepEqual([base.renders.length, base.templates.length, loads], [1, 2, 1]);
    assert.deepEqual(engine.stats().cache.hits, 1);
  });
});
