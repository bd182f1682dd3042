/**
 * How deep a document Binnacle reads may nest. Go's decoders stop at 10,000 levels (encoding/json,
 * yaml.v3); Node cannot follow them: its recursive walkers (the `yaml` package's composer, key
 * sorting, canonical JSON, validation) run out of stack near a thousand levels, and a
 * RangeError is not the worst of it. Once the stack is nearly gone, V8 may have to compile a regular
 * expression and then aborts the whole process ("RegExpCompiler Allocation failed"), which no
 * try/catch can stop. So every document from outside (a catalog, a manifest, a chart's YAML, a
 * request body) is refused past this depth before anything walks it. No real manifest comes near:
 * a CRD's schema, the deepest, nests a few dozen levels.
 */
export const MAX_NESTING = 256;

/**
 * How deep a whole object read from the API server may nest. The API server keeps free-form
 * fields (`x-kubernetes-preserve-unknown-fields`) up to 10,000 levels deep, and a copy of such an
 * object fails wherever it is made (structuredClone near 2,000 levels, the `yaml` package's
 * stringify near 1,000, either far sooner deep in a call stack). The ClusterExtension controller,
 * working from its caches, copies every BundleDeployment, so one deep BundleDeployment would fail
 * every extension's reconcile. So the client refuses an object past this depth (kube/client.ts:
 * `get` fails, a list or watch leaves it out and names it). It is twice MAX_NESTING so that a
 * field nested a little past its own limit still reaches its controller, which names the field
 * in a condition.
 */
export const MAX_OBJECT_NESTING = 2 * MAX_NESTING;

/**
 * Whether `value` nests arrays and objects more than `max` levels deep; walked without recursion.
 * For trees, what JSON.parse makes; YAML, whose aliases can share a node many times over, is
 * checked on its text instead (util/yaml.ts).
 */
export function nestsDeeperThan(value: unknown, max: number = MAX_NESTING): boolean {
  return treeShape(value, max).deeper;
}

/**
 * Whether `value` nests more than `max` levels deep (as `nestsDeeperThan`), and its size in
 * items: one per object or array, one per member of an object and one per item of an array (what
 * the catalog loader bounds, catalog/parse-budget.ts). One walk for both, without recursion; for
 * trees (what JSON.parse makes), not for values whose nodes are shared.
 */
export function treeShape(value: unknown, max: number = MAX_NESTING): { deeper: boolean; items: number } {
  if (typeof value !== 'object' || value === null) return { deeper: false, items: 0 };
  // Two parallel stacks and indexed or for-in loops: no array per node (Object.values) or pair per
  // entry, which made this walk a visible share of a large catalog's load and of its GC. for-in
  // also visits inherited enumerable keys; a tree from JSON.parse has none.
  const nodes: object[] = [value];
  const depths: number[] = [1];
  let items = 0;
  for (let node = nodes.pop(); node !== undefined; node = nodes.pop()) {
    const depth = depths.pop() ?? 0;
    if (depth > max) return { deeper: true, items };
    items++;
    if (Array.isArray(node)) {
      items += node.length;
      for (let k = 0; k < node.length; k++) {
        const child: unknown = node[k];
        if (typeof child === 'object' && child !== null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in node) {
        items++;
        const child = (node as Record<string, unknown>)[key];
        if (typeof child === 'object' && child !== null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return { deeper: false, items };
}
