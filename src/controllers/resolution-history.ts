/**
 * A ClusterExtension's resolution history (`status.history`): its last N resolutions, newest
 * last, each with when, why (its spec changed, catalog content changed, or what is installed in
 * the cluster changed its outcome), the catalog digests it read, the bundles it chose and the
 * outcome. A resolution that differs in none of these from the last one is not a new entry, so a
 * level-triggered controller can record on every reconcile.
 */
import type { ResolutionRecord, ResolutionTrigger } from '../api/types.js';

export const DEFAULT_HISTORY_LIMIT = 10;
/** Explanations can be long; the condition and `status.resolution` keep them whole. */
const MAX_MESSAGE = 2_000;

/** One resolution as the controller saw it. */
export interface ResolutionAttempt {
  generation: number;
  catalogs: { name: string; digest: string }[];
  bundles: { package: string; version: string; name: string }[];
  outcome: ResolutionRecord['outcome'];
  message?: string;
}

function sameCatalogs(a: ResolutionAttempt['catalogs'], b: ResolutionAttempt['catalogs']): boolean {
  const key = (l: ResolutionAttempt['catalogs']): string => JSON.stringify([...l].sort((x, y) => x.name.localeCompare(y.name)).map((c) => [c.name, c.digest]));
  return key(a) === key(b);
}

function trimmed(message: string | undefined): string | undefined {
  if (message === undefined) return undefined;
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
}

/** Why `next` differs from `last`; undefined when it does not. */
export function triggerOf(last: ResolutionRecord | undefined, next: ResolutionAttempt): ResolutionTrigger | undefined {
  if (last === undefined) return 'Initial';
  if (last.generation !== next.generation) return 'SpecChanged';
  if (!sameCatalogs(last.catalogs, next.catalogs)) return 'CatalogChanged';
  const sameBundles = JSON.stringify(last.bundles.map((b) => [b.package, b.version])) === JSON.stringify(next.bundles.map((b) => [b.package, b.version]));
  if (sameBundles && last.outcome === next.outcome && last.message === trimmed(next.message)) return undefined;
  // Same spec, same catalogs, another outcome: what is installed around it changed.
  return 'DependencyChanged';
}

/** The history with `attempt` recorded (the same array when nothing new happened). */
export function recordResolution(history: readonly ResolutionRecord[] | undefined, attempt: ResolutionAttempt, limit = DEFAULT_HISTORY_LIMIT, now = new Date()): ResolutionRecord[] {
  const list = [...(history ?? [])];
  const reason = triggerOf(list[list.length - 1], attempt);
  if (reason === undefined) return list;
  const entry: ResolutionRecord = {
    time: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    reason,
    generation: attempt.generation,
    catalogs: attempt.catalogs,
    bundles: attempt.bundles,
    outcome: attempt.outcome,
  };
  const message = trimmed(attempt.message);
  if (message !== undefined) entry.message = message;
  list.push(entry);
  return list.slice(Math.max(0, list.length - Math.max(0, limit)));
}
