/**
 * One object per distinct chart in the release records in memory. A chart release's record
 * carries Helm's whole chart object (every template and file, base64'd): most of a record by
 * size and the same in every revision of every CR of a kind. Each reconcile decodes the history
 * and renders a new revision, so without sharing a Helm operator held a copy of the chart per
 * revision per reconcile in flight (80 copies of a 100-template chart at 10 CRs). Charts here
 * are looked up by the digest of their JSON text, so a record's chart is parsed once, and its
 * text, kept beside it, is spliced into the records written rather than encoded again.
 *
 * Shared objects are never changed: a caller that needs another chart builds a new object.
 */
import { createHash } from 'node:crypto';

type Chart = Record<string, unknown>;

/** The charts of records still held anywhere, by digest; they go when nothing holds them. */
const byDigest = new Map<string, WeakRef<Chart>>();
const jsonOf = new WeakMap<object, string>();
const gone = new FinalizationRegistry<string>((digest) => {
  if (byDigest.get(digest)?.deref() === undefined) byDigest.delete(digest);
});
/** The last few charts stay held, so a reconcile between bursts finds its chart parsed. */
const RECENT = 2;
const recent: Chart[] = [];

function digestOf(json: string): string {
  return createHash('sha256').update(json).digest('hex');
}

function found(digest: string): Chart | undefined {
  const chart = byDigest.get(digest)?.deref();
  if (chart !== undefined) hold(chart);
  return chart;
}

function remember(digest: string, chart: Chart, json: string): Chart {
  byDigest.set(digest, new WeakRef(chart));
  gone.register(chart, digest);
  jsonOf.set(chart, json);
  hold(chart);
  return chart;
}

function hold(chart: Chart): void {
  const at = recent.indexOf(chart);
  if (at >= 0) recent.splice(at, 1);
  recent.unshift(chart);
  recent.length = Math.min(recent.length, RECENT);
}

/** The chart whose JSON text this is, parsed only when no record in memory has it. Throws as JSON.parse does. */
export function chartFromJson(json: string): Chart {
  const digest = digestOf(json);
  const known = found(digest);
  if (known !== undefined) return known;
  const chart = JSON.parse(json) as unknown;
  if (typeof chart !== 'object' || chart === null || Array.isArray(chart)) throw new SyntaxError('the chart is not a JSON object');
  // A copy: `json` may be a slice of a whole record, which would stay in memory with it.
  return remember(digest, chart as Chart, Buffer.from(json, 'utf8').toString('utf8'));
}

/** The shared object equal to this chart (this one when it is the first such). */
export function sharedChart(chart: Chart): Chart {
  if (jsonOf.has(chart)) return chart;
  const json = JSON.stringify(chart);
  const digest = digestOf(json);
  return found(digest) ?? remember(digest, chart, json);
}

/** The chart's JSON text: kept for a shared chart, encoded for any other. */
export function chartJson(chart: object): string {
  return jsonOf.get(chart) ?? JSON.stringify(chart);
}
