/**
 * Draws a laid-out upgrade graph (positions come from the server's dagre layout) as SVG; the
 * path the next upgrade takes is drawn apart (class `on-path`) from what is merely reachable.
 */
import type { GraphLayout } from '../contract/api-types.js';

const NS = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

export function drawGraph(g: GraphLayout, channel: string): SVGSVGElement {
  const root = svg('svg', { width: g.width, height: g.height, viewBox: `0 0 ${g.width} ${g.height}`, class: 'graph', 'data-channel': channel, role: 'img' });
  const title = svg('title', {});
  title.textContent = `Upgrade graph of channel ${channel}`;
  root.appendChild(title);
  const defs = svg('defs', {});
  const marker = svg('marker', { id: `arrow-${channel}`, viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' });
  marker.appendChild(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow' }));
  defs.appendChild(marker);
  root.appendChild(defs);
  for (const e of g.edges) {
    if (e.points.length === 0) continue;
    const d = e.points.map((p, i) => `${i === 0 ? 'M' : 'L'} ${p.x} ${p.y}`).join(' ');
    const path = svg('path', { d, class: `edge edge-${e.kind}${e.onPath ? ' on-path' : ''}`, 'data-from': e.from, 'data-to': e.to, 'marker-end': `url(#arrow-${channel})` });
    const t = svg('title', {});
    t.textContent = `${e.from} → ${e.to} (${e.kind})${e.onPath ? ' — a step of the next upgrade' : ''}`;
    path.appendChild(t);
    root.appendChild(path);
  }
  for (const n of g.nodes) {
    const cls = ['node', n.head ? 'head' : '', n.installed ? 'installed' : '', n.reachable ? 'reachable' : '', n.onPath ? 'on-path' : '', n.deprecated ? 'deprecated' : ''].filter((c) => c !== '').join(' ');
    const grp = svg('g', { class: cls, 'data-bundle': n.id, transform: `translate(${n.x - n.width / 2}, ${n.y - n.height / 2})` });
    grp.appendChild(svg('rect', { width: n.width, height: n.height, rx: 6 }));
    const text = svg('text', { x: n.width / 2, y: n.height / 2 + 4, 'text-anchor': 'middle' });
    text.textContent = n.version || n.id;
    grp.appendChild(text);
    const t = svg('title', {});
    t.textContent = `${n.id}${n.head ? ' (channel head)' : ''}${n.installed ? ' (installed)' : ''}${n.onPath ? ' (the next upgrade goes here)' : n.reachable ? ' (reachable from the installed version)' : ''}${n.deprecated ? ' (deprecated)' : ''}`;
    grp.appendChild(t);
    root.appendChild(grp);
  }
  return root;
}

/** The path the next upgrade takes, in words under the graph (undefined when nothing is installed in the channel). */
export function upgradePathText(g: GraphLayout): string | undefined {
  const p = g.upgradePath;
  if (p === undefined) return undefined;
  const version = (id: string): string => g.nodes.find((n) => n.id === id)?.version ?? id;
  const steps = p.bundles.map(version).join(' → ');
  if (p.problem !== undefined) return `Next upgrade: none resolves from ${steps} (${p.problem})`;
  return p.bundles.length < 2 ? `Next upgrade: none due; ${steps} is where the resolver stays.` : `Next upgrade: ${steps}`;
}
