/**
 * The house drawn from the imports (issue 27): every folder of src/ sits on a layer, and a
 * module imports only from its own folder or from folders on lower layers — no arrow back up —
 * and no module imports itself round a circle. The command line and the console reach the
 * controllers only where the manager and `helm-operator run` are started, and there only through
 * an entry (the manager, the Helm operator runtime's index), never a reconciler's own file; what
 * a person asks for directly (plan, history, rollback) is in src/actions.
 *
 * Prints the house, a line per layer with the folders it draws on, so a change shows up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const SRC = import.meta.dirname;

/** Lowest first. */
const LAYERS: readonly (readonly string[])[] = [
  ['util'],
  ['kube', 'oci'],
  ['api', 'source', 'declcfg', 'cluster'],
  ['catalog', 'bundle', 'apply'],
  ['catalog-render', 'catalog-store', 'helm-engine'],
  ['resolve'],
  ['installed', 'helm'],
  ['publish'],
  ['render'],
  ['actions', 'devloop'],
  ['controllers'],
  ['console'],
  ['self'],
  ['cli'],
];

/** The only modules of cli/ and console/ that may import a controller. */
const STARTS_CONTROLLERS = new Set(['cli/commands/manager.ts', 'cli/commands/helm-operator.ts']);

/** What those modules may import from controllers/: the entries that start them, not reconciler files. */
const CONTROLLER_ENTRIES = new Set(['controllers/manager.ts', 'controllers/helm-operator/index.ts']);

/**
 * Contracts any module of cli/ may read without starting a controller: operator-sdk's
 * watches.yaml (its reader and defaults, which `helm-operator run`'s flags show). No reconciler
 * in it.
 */
const CONTROLLER_CONTRACTS = new Set(['controllers/helm-operator/watches.ts']);

function layerOf(folder: string): number {
  const i = LAYERS.findIndex((l) => l.includes(folder));
  assert.ok(i >= 0, `src/${folder} is on no layer: add it to LAYERS in src/layers.test.ts`);
  return i;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'testdata' || name === 'node_modules' || name === 'web' ? [] : sources(p);
    return /\.ts$/.test(name) && !/\.test(-helper)?\.ts$/.test(name) && !name.endsWith('.d.ts') ? [p] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/** Each module (path under src/) with the modules it imports (type-only imports too: they tie the layers as much). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const from = relative(SRC, file);
    const text = readFileSync(file, 'utf8');
    const to: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? '';
      to.push(normalize(join(dirname(from), spec)).replace(/\.js$/, '.ts'));
    }
    graph.set(from, to);
  }
  return graph;
}

const folderOf = (module: string): string => module.split('/')[0] ?? '';

test('every import goes down the layers or stays in its folder, and the CLI and console start controllers only from the manager and helm-operator commands, through their entries', () => {
  const graph = importGraph();
  assert.ok(graph.size > 200, `${graph.size} modules read`);
  const up: string[] = [];
  const intoControllers: string[] = [];
  const drawn = new Map<string, Set<string>>();
  for (const [from, tos] of graph) {
    for (const to of tos) {
      const a = folderOf(from);
      const b = folderOf(to);
      if (a === b || b.endsWith('.ts')) continue;
      (drawn.get(a) ?? drawn.set(a, new Set()).get(a))?.add(b);
      if (layerOf(b) >= layerOf(a)) up.push(`${from} → ${to}`);
      const starts = STARTS_CONTROLLERS.has(from) && CONTROLLER_ENTRIES.has(to);
      if ((a === 'cli' || a === 'console') && b === 'controllers' && !starts && !CONTROLLER_CONTRACTS.has(to)) intoControllers.push(`${from} → ${to}`);
    }
  }
  const house = LAYERS.map((l, i) => `${String(i).padStart(2)}  ${l.map((f) => `${f}${drawn.has(f) ? ` (→ ${[...(drawn.get(f) ?? [])].sort().join(' ')})` : ''}`).join('   ')}`).reverse();
  console.log(`the house, top layer first:\n${house.join('\n')}`);
  assert.deepEqual(up, [], 'imports that go up a layer, or sideways into another folder of the same layer');
  assert.deepEqual(intoControllers, [], 'cli/ and console/ modules that import a controller, or a controller module that is not an entry');
  for (const folder of readdirSync(SRC).filter((f) => statSync(join(SRC, f)).isDirectory())) layerOf(folder);
});

test("the local cluster's paths (cluster/layout.ts) reach only the command line: the rest is given its paths", () => {
  const readers = [...importGraph()].filter(([from, tos]) => tos.includes('cluster/layout.ts') && !['cli', 'cluster'].includes(folderOf(from))).map(([from]) => from);
  assert.deepEqual(readers, []);
});

test('no module imports itself round a circle', () => {
  const graph = importGraph();
  // Tarjan's strongly connected components: a component of more than one module is a circle.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, idx.get(w) ?? 0));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w !== undefined) {
          onStack.delete(w);
          component.push(w);
        }
      } while (w !== undefined && w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  assert.deepEqual(circles, [], 'modules that import each other, directly or round a circle');
});
