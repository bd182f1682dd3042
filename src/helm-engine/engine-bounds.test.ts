/**
 * Every render is bounded, and one bad render hurts nobody else: a values bomb through `tpl`
 * fails with the memory limit named and gives its memory back; a template that does not end
 * fails with the time limit named; an oversized answer fails with the output limit named; in
 * each case a render waiting beside it and the renders after it succeed. Both engines (WebAssembly
 * threads and native processes), with the same error codes and messages.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createHelmEngine, HelmError, type HelmEngine, type HelmEngineKind } from './index.js';
import { HelmLimitError } from './errors.js';
import { countDocuments } from '../apply/limits.js';
import { treeRss } from './engine-children.test-helper.js';

const DATA = join(import.meta.dirname, 'testdata');
const MiB = 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let root = '';
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'helm-bounds-'));
});
after(() => rm(root, { recursive: true, force: true }));

/** A chart whose one template runs `tpl` over the value `x` (as charts do with user values). */
async function tplChart(name: string, x: string, template = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: {{ tpl .Values.x . | quote }}\n'): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, 'templates'), { recursive: true });
  await writeFile(join(dir, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`);
  await writeFile(join(dir, 'values.yaml'), `x: ${JSON.stringify(x)}\n`);
  await writeFile(join(dir, 'templates', 'cm.yaml'), template);
  return dir;
}

const good = (engine: HelmEngine, releaseName = 'ok'): Promise<string> => engine.template({ chart: join(DATA, 'schema'), releaseName }).then((r) => r.output);

function isLimit(code: string, phase: string, message: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof HelmError, `a HelmError, not ${String(err)}`);
    assert.equal(err.code, code);
    assert.equal(err.phase, phase);
    assert.match(err.message, message);
    return true;
  };
}

/** This process's resident memory and its native engine processes'. */
function rss(): number {
  for (let i = 0; i < 3; i++) gc();
  return treeRss();
}

const KINDS: HelmEngineKind[] = ['wasm', 'native'];

for (const kind of KINDS) describe(`bounds on a render (${kind})`, () => {
  test('a values bomb through tpl fails with the memory limit named; the render beside it and the next one succeed; the memory comes back', { timeout: 120_000 }, async (t) => {
    const ceiling = 128 * MiB;
    const engine = createHelmEngine(undefined, { engine: kind, memoryLimitBytes: ceiling });
    try {
      // The incident's shape: one huge string. And a string that doubles until it no longer fits,
      // which fills the engine's memory up to the ceiling on the way.
      const repeat = await tplChart('repeat-bomb', '{{ len (repeat 40000000 "xxxxxxxxxx") }}');
      const doubling = await tplChart('doubling-bomb', '{{ $s := "xxxxxxxxxxxxxxxx" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ len $s }}');
      assert.match(await good(engine), /replicas: "1"/);
      const before = rss();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, treeRss())), 5);
      for (const chart of [repeat, doubling]) {
        const [bomb, beside] = await Promise.allSettled([engine.template({ chart, releaseName: 'bomb', values: {} }), good(engine, 'beside')]);
        assert.equal(bomb.status, 'rejected');
        isLimit('HELM_MEMORY_LIMIT', 'memory', /^render exceeded the memory limit of 128 MiB/)(bomb.reason);
        assert.equal(beside.status, 'fulfilled', `the render beside the bomb: ${beside.status === 'rejected' ? String(beside.reason) : ''}`);
        assert.match(beside.value, /replicas: "1"/);
        assert.match(await good(engine, 'after'), /replicas: "1"/);
      }
      clearInterval(sampler);
      const afterBombs = rss();
      t.diagnostic(`RSS before the bombs ${Math.round(before / MiB)} MiB, highest seen ${Math.round(peak / MiB)} MiB, after ${Math.round(afterBombs / MiB)} MiB`);
      assert.ok(afterBombs - before < ceiling / 2, `RSS ${Math.round(before / MiB)} MiB before the bombs, ${Math.round(afterBombs / MiB)} MiB after: the bombs' memory was given back`);
    } finally {
      await engine.close();
    }
  });

  test('a template that does not end fails with the time limit named; the renders queued beside it are not failed', { timeout: 120_000 }, async () => {
    const engine = createHelmEngine(undefined, { engine: kind, callTimeoutMs: 6000 });
    try {
      // 10^10 steps in small lists (`until` builds its list, so one long list would hit the memory limit first).
      const endless = await tplChart('endless', '{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}');
      assert.match(await good(engine), /replicas: "1"/); // the worker is up, so the bound is the render's alone
      const [stuck, ...beside] = await Promise.allSettled([engine.template({ chart: endless, releaseName: 'x' }), good(engine, 'b1'), good(engine, 'b2')]);
      assert.equal(stuck.status, 'rejected');
      isLimit('HELM_TIMEOUT', 'timeout', /^render exceeded the time limit of 6 s/)(stuck.reason);
      for (const b of beside) {
        assert.equal(b.status, 'fulfilled', b.status === 'rejected' ? String(b.reason) : '');
        assert.match(b.value, /replicas: "1"/);
      }
      assert.match(await good(engine, 'after'), /replicas: "1"/);
    } finally {
      await engine.close();
    }
  });

  test('on two threads, a bomb on one fails alone while the other renders', { timeout: 120_000 }, async () => {
    const engine = createHelmEngine(undefined, { engine: kind, threads: 2, memoryLimitBytes: 128 * MiB });
    try {
      const bomb = await tplChart('two-thread-bomb', '{{ len (repeat 40000000 "xxxxxxxxxx") }}');
      const outs = await Promise.allSettled([engine.template({ chart: bomb, releaseName: 'bomb' }), good(engine, 'g1'), good(engine, 'g2'), good(engine, 'g3')]);
      const bombed = outs[0];
      assert.ok(bombed?.status === 'rejected');
      isLimit('HELM_MEMORY_LIMIT', 'memory', /memory limit of 128 MiB/)(bombed.reason);
      for (const o of outs.slice(1)) assert.equal(o.status, 'fulfilled', o.status === 'rejected' ? String(o.reason) : '');
      assert.equal(engine.threads(), 2);
    } finally {
      await engine.close();
    }
  });

  test('an answer over the output limit fails with the limit named, and is never handed to the caller', { timeout: 120_000 }, async () => {
    const engine = createHelmEngine(undefined, { engine: kind, maxOutputBytes: MiB });
    try {
      const big = await tplChart('big-output', '{{ repeat 300000 "xxxxxxx" }}');
      await assert.rejects(engine.template({ chart: big, releaseName: 'big' }), isLimit('HELM_OUTPUT_LIMIT', 'output', /^render exceeded the output limit of 1 MiB: the rendered manifest and release are 2\.\d MiB$/));
      assert.match(await good(engine, 'after'), /replicas: "1"/);
    } finally {
      await engine.close();
    }
  });

  test("a render past the release's limits is refused where it is rendered, counted as the host counts", { timeout: 120_000 }, async () => {
    const engine = createHelmEngine(undefined, { engine: kind });
    try {
      // Documents as charts write them: a leading comment, a marker with a comment, an empty
      // document, `---` inside a block scalar, a hook (hooks count too), and 50 from a range.
      const dir = await tplChart('counted', '', '# a comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: |\n    ---\n    not a marker\n--- # the next one\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\n---\n{{- range $i := until 50 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r{{ $i }}\n{{- end }}\n');
      await writeFile(join(dir, 'templates', 'hook.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\n  annotations:\n    helm.sh/hook: pre-install\n');
      const unbounded = await engine.render({ chart: dir, releaseName: 'counted' });
      const texts = [unbounded.release.manifest ?? '', ...(unbounded.release.hooks ?? []).map((h) => h.manifest ?? '')];
      const objects = texts.reduce((n, t) => n + countDocuments(t), 0);
      const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
      assert.ok(objects >= 53, `the host counts ${objects} documents`);
      // At the host's own count the engine renders; one below, it refuses, naming the limit.
      const huge = 1 << 30;
      await engine.render({ chart: dir, releaseName: 'counted', limits: { maxObjects: objects, maxManifestBytes: bytes } });
      await assert.rejects(engine.render({ chart: dir, releaseName: 'counted', limits: { maxObjects: objects - 1, maxManifestBytes: huge } }), (err: unknown) => {
        assert.ok(err instanceof HelmLimitError, String(err));
        assert.equal(err.code, 'HELM_RELEASE_LIMIT');
        assert.deepEqual([err.limit, err.size], ['maxObjects', objects]);
        return true;
      });
      await assert.rejects(engine.render({ chart: dir, releaseName: 'counted', limits: { maxObjects: huge, maxManifestBytes: bytes - 1 } }), (err: unknown) => {
        assert.ok(err instanceof HelmLimitError, String(err));
        assert.deepEqual([err.limit, err.size], ['maxManifestBytes', bytes]);
        return true;
      });
      // `helm template` has no release limits: the same chart renders whole.
      assert.match((await engine.template({ chart: dir, releaseName: 'counted' })).output, /name: r49/);
    } finally {
      await engine.close();
    }
  });

  test('an instance whose memory grew past the recycle bound is dropped after its call, and the next call runs on a fresh one', { timeout: 120_000 }, async () => {
    // A string of 32 MiB grows the instance's memory well past 48 MiB; the small render does not.
    const grow = await tplChart('grow', '{{ len (repeat 3355443 "xxxxxxxxxx") }}');
    const engine = createHelmEngine(undefined, { engine: kind, recycleAboveBytes: 48 * MiB });
    try {
      assert.match(await good(engine, 'small'), /replicas: "1"/);
      const small = engine.memory();
      assert.ok(small.bytes > 0 && small.bytes <= 48 * MiB, `a small render leaves ${small.bytes} bytes, under the bound`);
      assert.equal(small.recycled, 0);
      assert.match((await engine.template({ chart: grow, releaseName: 'grow' })).output, /x: "33554430"/);
      const grown = engine.memory();
      assert.ok(grown.bytes > 48 * MiB, `the large render grew the instance to ${grown.bytes} bytes`);
      assert.equal(grown.recycled, 1, 'the grown instance was dropped');
      // The next call starts a fresh instance: it renders, and its memory is small again.
      assert.match(await good(engine, 'after'), /replicas: "1"/);
      const fresh = engine.memory();
      assert.ok(fresh.bytes <= 48 * MiB, `a fresh instance after the drop holds ${fresh.bytes} bytes`);
      assert.equal(fresh.recycled, 1);
      assert.equal(engine.threads(), 1);
    } finally {
      await engine.close();
    }
    // Without a bound in reach, the same renders keep their one instance.
    const keep = createHelmEngine(undefined, { engine: kind, recycleAboveBytes: 1024 * MiB });
    try {
      await keep.template({ chart: grow, releaseName: 'grow' });
      assert.match(await good(keep, 'after'), /replicas: "1"/);
      assert.equal(keep.memory().recycled, 0);
    } finally {
      await keep.close();
    }
  });

  test('options out of range are refused by name', () => {
    assert.throws(() => createHelmEngine(undefined, { engine: kind, memoryLimitBytes: 8 * MiB }), { code: 'HELM_ENGINE_OPTIONS', message: /memoryLimitBytes must be at least 67108864/ });
    assert.throws(() => createHelmEngine(undefined, { engine: kind, callTimeoutMs: 0 }), { code: 'HELM_ENGINE_OPTIONS', message: /callTimeoutMs/ });
    assert.throws(() => createHelmEngine(undefined, { engine: kind, maxOutputBytes: Number.NaN }), { code: 'HELM_ENGINE_OPTIONS', message: /maxOutputBytes/ });
    assert.throws(() => createHelmEngine(undefined, { engine: kind, recycleAboveBytes: 0 }), { code: 'HELM_ENGINE_OPTIONS', message: /recycleAboveBytes/ });
    assert.throws(() => createHelmEngine(undefined, { engine: kind, idleExitMs: -1 }), { code: 'HELM_ENGINE_OPTIONS', message: /idleExitMs/ });
  });
});
