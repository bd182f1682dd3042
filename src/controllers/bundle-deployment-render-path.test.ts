/**
 * The BundleDeployment render path goes down only (issue 44 §2), as `layers.test.ts` holds the
 * layers: a reader following the call from the BundleDeployment reconciler to Helm's engine never
 * climbs back up. Held two ways:
 *
 * - by the call itself: a BundleDeployment of a Helm chart reconciled over the one fake cluster
 *   with the real render port and renderer, whose engine looks at the stack it is called on
 *   (async frames included): from the reconciler's render step down to the engine, each frame is
 *   in the same folder as the one that called it or a lower one (controllers → render → helm),
 *   never back up; and the context the reconciler hands down is data and the install client, no
 *   callback of the reconciler's;
 * - by the source: render/ imports nothing above it, nothing below it imports render/, and
 *   render/ builds no engine of its own (the closure that climbed back into render() is gone) and
 *   keeps no module-global state.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import { pino } from 'pino';
import { ReleaseRecords } from '../apply/index.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { writeChartDir } from '../helm/chart-source/fixtures.test-helper.js';
import { API_VERSION, FINALIZER_CLEANUP } from '../api/types.js';
import { countingEngine } from '../helm-engine/engine-cache.test-helper.js';
import type { HelmEngine } from '../helm-engine/engine.js';
import { FakeClient, FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { createRenderer, type RenderContext, type Renderer } from '../render/index.js';
import { BundleDeploymentReconciler, specProblems } from './bundle-deployment.js';

const logger = pino({ level: 'silent' });
const SRC = join(import.meta.dirname, '..');
/** The folders of the path, highest first: a call may stay in its folder or go right, never left. */
const PATH_FOLDERS = ['controllers', 'render', 'helm', 'helm-engine'] as const;

interface Frame {
  fn: string;
  module: string;
}

/** The src/ frames of a stack, outermost first (test files and helpers left out). */
function framesOf(stack: string): Frame[] {
  const frames: Frame[] = [];
  for (const line of stack.split('\n').slice(1)) {
    const m = /at (?:async )?(?:(\S+) \()?(?:file:\/\/)?([^():]+\.ts):\d+:\d+\)?$/.exec(line.trim());
    if (m === null) continue;
    const module = relative(SRC, m[2] ?? '');
    if (module.startsWith('..') || /\.test(-helper)?\.ts$/.test(module)) continue;
    frames.push({ fn: m[1] ?? '<anonymous>', module });
  }
  return frames.reverse();
}

/** An engine that keeps the stack of every render it is asked for. */
function stackKeepingEngine(): { engine: HelmEngine; stacks: string[] } {
  const base = countingEngine();
  const stacks: string[] = [];
  const engine: HelmEngine = {
    ...base,
    render: (req) => {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 100;
      stacks.push(new Error('engine.render').stack ?? '');
      Error.stackTraceLimit = limit;
      return base.render(req);
    },
  };
  return { engine, stacks };
}

/** Every function reachable in `value` by its own fields, by path, except under `client` (the install client, a port going down). */
function functionsIn(value: unknown, path = 'ctx', seen = new Set<unknown>()): string[] {
  if (typeof value === 'function') return [path];
  if (typeof value !== 'object' || value === null || seen.has(value)) return [];
  seen.add(value);
  return Object.entries(value).flatMap(([k, v]) => (k === 'client' ? [] : functionsIn(v, `${path}.${k}`, seen)));
}

async function chartDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bd-render-path-'));
  await writeChartDir(dir, 'op', { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n' });
  return dir;
}

/** A fake cluster holding BundleDeployment `op` (format helm, its content `dir`) and the reconciler over the real render port and `renderer`. */
function bdWorld(dir: string, renderer: Renderer, spec: Record<string, unknown> = {}): { cluster: FakeCluster; reconcile: () => Promise<unknown> } {
  const cluster = new FakeCluster();
  for (const ns of ['team-a', 'binnacle-system']) cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  cluster.put(crdOf({ group: 'binnacle.dev', kind: 'BundleDeployment', plural: 'bundledeployments' }, {}, { scope: 'Cluster', version: 'v1alpha1' }));
  cluster.put({
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name: 'op', uid: 'u1', finalizers: [FINALIZER_CLEANUP] },
    spec: { source: { type: 'configMaps', configMaps: [{ namespace: 'team-a', name: 'op-bundle' }] }, format: 'helm', installNamespace: 'team-a', ...spec },
  });
  const client = cluster.client({ user: 'manager' });
  const reconciler = new BundleDeploymentReconciler({
    client,
    engine: { records: new ReleaseRecords({ client, namespace: 'binnacle-system', logger }), pollIntervalMs: 10, renderer },
    cacheDir: '/cache',
    healthTimeoutMs: 200,
    // The render port and the certificate port are the real ones; only what reaches outside the cluster is answered here.
    ports: { unpack: () => Promise.resolve({ dir, digest: `sha256:${'b'.repeat(64)}`, resolved: { type: 'configMaps' } }), recordEvent: () => Promise.resolve() },
  });
  return { cluster, reconcile: () => reconciler.reconcile({ key: 'op', name: 'op' }, { logger, signal: new AbortController().signal }) };
}

describe('the BundleDeployment render path goes down only', () => {
  test('reconciled with the real render port and renderer: from the render step to the engine every call goes down (controllers → render → helm), and what is handed down is data and the install client', async (t) => {
    const dir = await chartDir();
    t.after(() => rm(dir, { recursive: true, force: true }));
    const { engine, stacks } = stackKeepingEngine();
    const inner = createRenderer({ engine });
    const handed: RenderContext[] = [];
    const renderer: Renderer = {
      ...inner,
      engine: inner.engine,
      bundle: (ctx) => {
        handed.push(ctx);
        return inner.bundle(ctx);
      },
    };
    const { cluster, reconcile } = bdWorld(dir, renderer);
    await reconcile();
    assert.notEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'c' }), undefined, 'the chart was rendered and applied');

    assert.equal(stacks.length, 1, 'the engine rendered once');
    const frames = framesOf(stacks[0] ?? '');
    const start = frames.findIndex((f) => f.module === 'controllers/bundle-deployment.ts' && /render$/.test(f.fn));
    assert.ok(start >= 0, `the reconciler's render step is on the stack:\n${frames.map((f) => `${f.fn} (${f.module})`).join('\n')}`);
    const path = frames.slice(start);
    console.log(`the BundleDeployment render path, reconciler to engine:\n${path.map((f) => `  ${f.fn} (${f.module})`).join('\n')}`);
    const climbs: string[] = [];
    for (let i = 1; i < path.length; i++) {
      const [from, to] = [path[i - 1], path[i]];
      const rank = (f: Frame | undefined): number => PATH_FOLDERS.findIndex((p) => f?.module.startsWith(`${p}/`) === true);
      if (rank(to) < 0 || rank(to) < rank(from)) climbs.push(`${from?.fn ?? ''} (${from?.module ?? ''}) → ${to?.fn ?? ''} (${to?.module ?? ''})`);
    }
    assert.deepEqual(climbs, [], 'calls on the path that climb back up (or leave controllers/, render/, helm/ and helm-engine/)');
    assert.equal(path.at(-1)?.module, 'helm-engine/engine-cache.ts', 'the last frame before the engine is the caching engine');
    assert.equal(new Set(path.map((f) => `${f.module} ${f.fn}`)).size, path.length, 'no function is entered twice on the way down');

    assert.equal(handed.length, 1);
    assert.deepEqual(functionsIn(handed[0]), [], 'the render context holds no callback');
    assert.ok(handed[0]?.client instanceof FakeClient, "the only object with methods handed down is the cluster's client");
  });
});

describe("a helm BundleDeployment's postRenderers", () => {
  test('patch its render before anything is applied; a patch that selects nothing fails it (InvalidBundle), naming the patch; a format other than helm refuses them', async (t) => {
    const dir = await chartDir();
    t.after(() => rm(dir, { recursive: true, force: true }));
    const run = async (patch: string): Promise<FakeCluster> => {
      const w = bdWorld(dir, createRenderer(), { postRenderers: [{ kustomize: { patches: [{ patch }] } }] });
      await w.reconcile();
      return w.cluster;
    };
    const patched = await run('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    post-rendered: "yes"\n');
    assert.equal(patched.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'c' })?.metadata.labels?.['post-rendered'], 'yes');
    const refused = await run('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nothing-by-this-name\n');
    assert.equal(refused.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'c' }), undefined, 'nothing applied');
    const conditions = JSON.stringify((refused.get({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: 'op' })?.status as { conditions?: unknown } | undefined)?.conditions);
    assert.match(conditions, /"reason":"InvalidBundle"/);
    assert.match(conditions, /spec\.postRenderers\[0\]\.kustomize\.patches\[0\]: selects none of the 1 rendered objects/);
    assert.deepEqual(specProblems({ source: { type: 'local', local: { path: '/b' } }, format: 'plain', installNamespace: 'ns', postRenderers: [] }), ["spec.postRenderers: only for format helm (patches of a Helm render, as Flux's postRenderers)"]);
  });
});

const ABOVE_RENDER = ['controllers', 'actions', 'devloop', 'console', 'self', 'cli'];
const BELOW_RENDER = ['helm', 'bundle', 'apply', 'kube', 'util', 'api', 'source', 'oci'];
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

function modules(folder: string): string[] {
  return readdirSync(join(SRC, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !/\.test(-helper)?\.ts$/.test(f) && !f.split('/').includes('testdata'))
    .map((f) => join(folder, f));
}

function importsOf(module: string): string[] {
  const text = readFileSync(join(SRC, module), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(module), m[1] ?? m[2] ?? '')));
}

describe('the render path in the source', () => {
  test('render/ imports nothing from above it, and nothing below it imports render/', () => {
    const up = modules('render').flatMap((m) => importsOf(m).filter((to) => ABOVE_RENDER.includes(to.split('/')[0] ?? '')).map((to) => `${m} → ${to}`));
    assert.deepEqual(up, []);
    const back = BELOW_RENDER.flatMap(modules).flatMap((m) => importsOf(m).filter((to) => to.startsWith('render/')).map((to) => `${m} → ${to}`));
    assert.deepEqual(back, []);
  });

  test('render/ builds no engine of its own and keeps no module-global state; nothing anywhere calls back into a render function through an engine', () => {
    const found: string[] = [];
    for (const m of modules('render')) {
      const text = readFileSync(join(SRC, m), 'utf8');
      if (/HelmEngine\s*=\s*\{|:\s*HelmEngine\s*=>\s*\(?\{/.test(text)) found.push(`${m}: builds a HelmEngine`);
      for (const line of text.split('\n')) {
        if (/^(export )?(let|var) /.test(line) || /^(export )?const \w+ = (new \w+|\{)/.test(line)) found.push(`${m}: module-global state: ${line.trim()}`);
      }
    }
    for (const folder of ['render', 'helm', 'controllers', 'actions', 'cli']) {
      for (const m of modules(folder)) if (/renderingEngine/.test(readFileSync(join(SRC, m), 'utf8'))) found.push(`${m}: renderingEngine`);
    }
    assert.deepEqual(found, []);
  });
});
