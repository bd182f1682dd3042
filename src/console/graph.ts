/**
 * A channel's upgrade graph, laid out for drawing. Edges point the way an upgrade goes, from
 * the version installed to the one that may replace it: `replaces`, each of `skips`, and every
 * version of the channel a `skipRange` covers. The installed version (if any) is marked with
 * every version it can reach, and the path its next upgrade takes (upgrade-path.ts) is marked
 * apart from the merely reachable; the layout is dagre's (ranked left to right), not hand-written.
 */
import { Graph, layout as dagreLayout } from '@dagrejs/dagre';
import semver from 'semver';
import type { EdgeKind, GraphEdge, GraphLayout, GraphNode } from './contract/api-types.js';

export interface GraphEntry {
  name: string;
  version: string;
  replaces?: string | undefined;
  skips?: readonly string[] | undefined;
  skipRange?: string | undefined;
}

/** Upgrade edges (from → to: "to" may replace "from"), one per pair and kind. */
export function upgradeEdges(entries: readonly GraphEntry[]): { from: string; to: string; kind: EdgeKind }[] {
  const names = new Set(entries.map((e) => e.name));
  const out: { from: string; to: string; kind: EdgeKind }[] = [];
  const seen = new Set<string>();
  const add = (from: string, to: string, kind: EdgeKind): void => {
    const key = `${from}\0${to}`;
    if (from === to || !names.has(from) || seen.has(key)) return;
    seen.add(key);
    out.push({ from, to, kind });
  };
  for (const e of entries) {
    if (e.replaces !== undefined) add(e.replaces, e.name, 'replaces');
    for (const s of e.skips ?? []) add(s, e.name, 'skips');
    if (e.skipRange !== undefined && e.skipRange !== '') {
      for (const other of entries) {
        const v = semver.valid(other.version);
        if (v !== null && semver.satisfies(v, e.skipRange, { includePrerelease: true })) add(other.name, e.name, 'skipRange');
      }
    }
  }
  return out;
}

/** Every entry reachable from `start` along upgrade edges (not `start` itself). */
export function reachableFrom(start: string, edges: readonly { from: string; to: string }[]): Set<string> {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const out = new Set<string>();
  const queue = [start];
  for (let cur = queue.shift(); cur !== undefined; cur = queue.shift()) {
    for (const n of next.get(cur) ?? []) {
      if (n === start || out.has(n)) continue;
      out.add(n);
      queue.push(n);
    }
  }
  return out;
}

/** The part of dagre's graph used here (its bundled types name a package the type checker cannot always resolve). */
interface DagreGraph {
  setGraph(label: Record<string, unknown>): void;
  setDefaultEdgeLabel(fn: () => object): void;
  setNode(id: string, label: { width: number; height: number }): void;
  setEdge(v: string, w: string, label: object, name: string): void;
  graph(): { width?: number; height?: number };
  node(id: string): { x: number; y: number; width: number; height: number };
  edge(e: { v: string; w: string; name: string }): { points?: { x: number; y: number }[] } | undefined;
}
const GraphCtor = Graph as unknown as new (opts: { multigraph: boolean }) => DagreGraph;
const layout = dagreLayout as unknown as (g: DagreGraph) => void;

const NODE_HEIGHT = 28;
/** Width from the label length: a monospace-ish estimate the page's font fits in. */
const nodeWidth = (label: string): number => Math.max(60, 8 * label.length + 20);

/** The steps of `path` (bundle names in order) as `from\0to` keys, and the names it passes, the first excluded. */
export function pathSteps(path: readonly string[]): { steps: Set<string>; nodes: Set<string> } {
  const steps = new Set<string>();
  for (let i = 1; i < path.length; i++) steps.add(`${path[i - 1]}\0${path[i]}`);
  return { steps, nodes: new Set(path.slice(1)) };
}

export function layoutUpgradeGraph(
  entries: readonly GraphEntry[],
  opts: { head?: string | undefined; installed?: string | undefined; deprecated?: ReadonlySet<string>; upgradePath?: GraphLayout['upgradePath'] } = {},
): GraphLayout {
  const edges = upgradeEdges(entries);
  const reachable = opts.installed === undefined ? new Set<string>() : reachableFrom(opts.installed, edges);
  const path = pathSteps(opts.upgradePath?.bundles ?? []);
  const g = new GraphCtor({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 16, ranksep: 48, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const e of entries) g.setNode(e.name, { width: nodeWidth(e.version || e.name), height: NODE_HEIGHT });
  for (const e of edges) g.setEdge(e.from, e.to, {}, e.kind);
  layout(g);
  const graph = g.graph();
  const nodes: GraphNode[] = entries.map((e) => {
    const n = g.node(e.name);
    return {
      id: e.name,
      version: e.version,
      x: n.x,
      y: n.y,
      width: n.width,
      height: n.height,
      head: e.name === opts.head,
      installed: e.name === opts.installed,
      reachable: reachable.has(e.name),
      onPath: path.nodes.has(e.name),
      deprecated: opts.deprecated?.has(e.name) ?? false,
    };
  });
  const laidEdges: GraphEdge[] = edges.map((e) => {
    const label = g.edge({ v: e.from, w: e.to, name: e.kind });
    return { ...e, onPath: path.steps.has(`${e.from}\0${e.to}`), points: (label?.points ?? []).map((p) => ({ x: Math.round(p.x), y: Math.round(p.y) })) };
  });
  return { width: Math.ceil(graph.width ?? 0), height: Math.ceil(graph.height ?? 0), nodes, edges: laidEdges, ...(opts.upgradePath === undefined ? {} : { upgradePath: opts.upgradePath }) };
}
