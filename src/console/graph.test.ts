import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { layoutUpgradeGraph, reachableFrom, upgradeEdges } from './graph.js';

const entries = [
  { name: 'op.v1.0.0', version: '1.0.0' },
  { name: 'op.v1.1.0', version: '1.1.0', replaces: 'op.v1.0.0' },
  { name: 'op.v1.2.0', version: '1.2.0', replaces: 'op.v1.1.0', skips: ['op.v1.0.0'] },
  { name: 'op.v2.0.0', version: '2.0.0', replaces: 'op.v1.2.0', skipRange: '>=1.0.0 <1.2.0' },
  { name: 'other.v0.1.0', version: '0.1.0' },
];

describe('upgrade graph', () => {
  it('has an edge per replaces, skips and skipRange, pointing the way an upgrade goes', () => {
    const edges = upgradeEdges(entries).map((e) => `${e.from}->${e.to}:${e.kind}`).sort();
    assert.deepEqual(edges, [
      'op.v1.0.0->op.v1.1.0:replaces',
      'op.v1.0.0->op.v1.2.0:skips',
      'op.v1.0.0->op.v2.0.0:skipRange',
      'op.v1.1.0->op.v1.2.0:replaces',
      'op.v1.1.0->op.v2.0.0:skipRange',
      'op.v1.2.0->op.v2.0.0:replaces',
    ]);
  });

  it('ignores edges to names the channel does not have', () => {
    assert.deepEqual(upgradeEdges([{ name: 'a', version: '1.0.0', replaces: 'gone', skips: ['also-gone'] }]), []);
  });

  it('what the installed version can reach', () => {
    const edges = upgradeEdges(entries);
    assert.deepEqual([...reachableFrom('op.v1.1.0', edges)].sort(), ['op.v1.2.0', 'op.v2.0.0']);
    assert.deepEqual([...reachableFrom('op.v2.0.0', edges)], []);
  });

  it('lays every node out without overlaps, marks head, installed and reachable, and routes every edge', () => {
    const g = layoutUpgradeGraph(entries, { head: 'op.v2.0.0', installed: 'op.v1.1.0', deprecated: new Set(['op.v1.0.0']) });
    assert.equal(g.nodes.length, entries.length);
    assert.ok(g.width > 0 && g.height > 0);
    for (const a of g.nodes) {
      assert.ok(a.x - a.width / 2 >= 0 && a.x + a.width / 2 <= g.width + 1, `${a.id} inside`);
      for (const b of g.nodes) {
        if (a === b) continue;
        const apart = Math.abs(a.x - b.x) >= (a.width + b.width) / 2 || Math.abs(a.y - b.y) >= (a.height + b.height) / 2;
        assert.ok(apart, `${a.id} and ${b.id} overlap`);
      }
    }
    const byId = new Map(g.nodes.map((n) => [n.id, n]));
    assert.equal(byId.get('op.v2.0.0')?.head, true);
    assert.equal(byId.get('op.v1.1.0')?.installed, true);
    assert.equal(byId.get('op.v1.2.0')?.reachable, true);
    assert.equal(byId.get('op.v1.0.0')?.reachable, false);
    assert.equal(byId.get('op.v1.0.0')?.deprecated, true);
    assert.equal(g.edges.length, 6);
    for (const e of g.edges) assert.ok(e.points.length >= 2, `${e.from}->${e.to} routed`);
    // Left to right: an upgrade's target is drawn right of its source.
    for (const e of g.edges) assert.ok((byId.get(e.to)?.x ?? 0) > (byId.get(e.from)?.x ?? 0), `${e.from}->${e.to} goes right`);
  });
});
