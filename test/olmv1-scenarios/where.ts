/**
 * Where a scenario runs, when not on kwok with the manager in the runner's process, and which
 * run nowhere (EXCLUDED.md): read by the hooks (which skip these, saying why or where they run),
 * by real-node.sh (which runs them) and by steps-table.test.ts (which checks each names a
 * Scenario line of the vendored features).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Features whose steps reach the manager's Pods (port-forward, a Deployment rollout, the leader
 * Pod's logs and its force-deletion): they run only with the manager in-cluster on a real node
 * (real-node.sh, OLMV1_SCENARIOS_IN_CLUSTER).
 */
export const IN_CLUSTER_FEATURES: ReadonlySet<string> = new Set(['metrics', 'tls', 'ha']);

/**
 * Scenarios (`feature:line`) whose workloads must run, which kwok's Pods do not: a Deployment
 * that never becomes Available (an image that cannot be pulled), one whose readiness probe passes
 * only after 65 s, an operator that serves webhooks. They run with the manager in-cluster on a
 * real node too.
 */
export const REAL_NODE_SCENARIOS: ReadonlySet<string> = new Set(['revision.feature:582', 'revision.feature:648', 'install.feature:222']);

/** What real-node.sh runs by default: the in-cluster features whole and the real-node scenarios. */
export function realNodeFeatureArgs(featuresDir: string): string[] {
  return [...[...IN_CLUSTER_FEATURES].map((f) => `${featuresDir}/${f}.feature`), ...[...REAL_NODE_SCENARIOS].map((s) => `${featuresDir}/${s}`)];
}

/** EXCLUDED.md's table: `feature:line` of each excluded scenario → its reason. */
export function excludedScenarios(file = join(HERE, 'EXCLUDED.md')): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\|\s*`?([a-z-]+\.feature:\d+)`?\s*\|[^|]*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[1], m[2]);
  }
  return out;
}
