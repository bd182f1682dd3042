/**
 * What is stuck when an install does not settle: the first object along the chain
 * (ClusterCatalog → ClusterExtension → BundleDeployment → Deployment → ReplicaSet/Pods) that is
 * not where it should be, its condition, and the last Events of the operator's workloads.
 */
import { neededByLabel } from '../installed/index.js';
import type { KubeClient } from '../kube/client.js';
import { findCondition, type Condition, type KubeObject } from '../kube/types.js';
import { API_VERSION, type BundleDeployment, type ClusterCatalog, type ClusterExtension } from '../api/types.js';

interface WorkloadStatus {
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  phase?: string;
}

interface EventObject extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  involvedObject?: { kind?: string; name?: string; uid?: string };
}

function statusOf(o: KubeObject): WorkloadStatus {
  return ((o as { status?: WorkloadStatus }).status ?? {});
}

function cond(c: { type: string; status: string; reason?: string; message?: string }): string {
  return `${c.type}=${c.status}${c.reason === undefined || c.reason === '' ? '' : ` (${c.reason})`}${c.message === undefined || c.message === '' ? '' : `: ${c.message}`}`;
}

function notGood(conds: readonly Condition[] | undefined, good: Record<string, string>): Condition[] {
  return (conds ?? []).filter((c) => good[c.type] !== undefined && c.status !== good[c.type]);
}

/** The last `n` Events about any of `objects` (these very objects: by uid) in `namespace`, oldest first, one line each. */
async function lastEvents(client: KubeClient, namespace: string, objects: readonly KubeObject[], n: number): Promise<string[]> {
  const uids = new Set(objects.map((o) => o.metadata.uid ?? '').filter((u) => u !== ''));
  const events = (await client.list<EventObject>('v1', 'Event', { namespace })).items.filter((e) => uids.has(e.involvedObject?.uid ?? ''));
  const when = (e: EventObject): string => e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? '';
  events.sort((a, b) => (when(a) < when(b) ? -1 : when(a) > when(b) ? 1 : 0));
  return events.slice(-n).map((e) => `${e.involvedObject?.kind ?? ''} ${e.involvedObject?.name ?? ''}: ${e.type ?? ''} ${e.reason ?? ''}: ${e.message ?? ''}${(e.count ?? 1) > 1 ? ` (x${e.count ?? 1})` : ''}`);
}

/** What is wrong with the catalog: missing, not serving, or (no status at all) no manager running. */
async function diagnoseCatalog(client: KubeClient, name: string): Promise<{ lines: string[]; noManager: boolean }> {
  const cat = await client.find<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name });
  if (cat === undefined) return { lines: [`ClusterCatalog ${name} does not exist`], noManager: false };
  if (cat.status?.conditions === undefined) {
    return { lines: [`ClusterCatalog ${name} has no status: no Binnacle manager is reconciling this cluster; start one with \`binnacle manager\` (or install it with \`binnacle install-self\`)`], noManager: true };
  }
  return { lines: notGood(cat.status.conditions, { Serving: 'True' }).map((c) => `ClusterCatalog ${name}: ${cond(c)}`), noManager: false };
}

/** Lines saying what is stuck for extension `name` installing from catalog `catalogName`. */
export async function diagnoseExtension(client: KubeClient, o: { extension: string; catalog?: string; version?: string }): Promise<string[]> {
  const lines: string[] = [];
  if (o.catalog !== undefined) {
    const catalog = await diagnoseCatalog(client, o.catalog);
    lines.push(...catalog.lines);
    // Without a manager nothing else moves: that is the one thing to say.
    if (catalog.noManager) return lines;
  }
  const ce = await client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: o.extension });
  if (ce === undefined) {
    lines.push(`ClusterExtension ${o.extension} does not exist`);
    return lines;
  }
  if (ce.status?.conditions === undefined) lines.push(`ClusterExtension ${o.extension} has no status: no Binnacle manager is reconciling it; start one with \`binnacle manager\``);
  for (const c of notGood(ce.status?.conditions, { Installed: 'True', Progressing: 'False' })) lines.push(`ClusterExtension ${o.extension}: ${cond(c)}`);
  if (o.version !== undefined && ce.status?.install !== undefined && ce.status.install.bundle.version !== o.version) {
    lines.push(`ClusterExtension ${o.extension}: installed version is ${ce.status.install.bundle.version}, not ${o.version} yet`);
  }
  const bds = (await client.list<BundleDeployment>(API_VERSION, 'BundleDeployment', { labelSelector: neededByLabel(o.extension) })).items;
  for (const bd of bds) {
    for (const c of notGood(bd.status?.conditions, { Unpacked: 'True', Installed: 'True', Healthy: 'True' })) lines.push(`BundleDeployment ${bd.metadata.name ?? ''}: ${cond(c)}`);
    lines.push(...(await diagnoseWorkloads(client, bd.spec.installNamespace, (bd.status?.appliedObjects ?? []).filter((r) => r.kind === 'Deployment').map((r) => r.name))));
  }
  return lines;
}

/**
 * Each Deployment of `names` (all in `namespace` when none are known) that is not available:
 * its conditions, its Pods' state, and the last Events of it, its ReplicaSets and Pods.
 */
export async function diagnoseWorkloads(client: KubeClient, namespace: string, names: readonly string[]): Promise<string[]> {
  const lines: string[] = [];
  const all = (await client.list('apps/v1', 'Deployment', { namespace })).items;
  const deployments = names.length === 0 ? all : all.filter((d) => names.includes(d.metadata.name ?? ''));
  const replicaSets = (await client.list('apps/v1', 'ReplicaSet', { namespace })).items;
  const pods = (await client.list('v1', 'Pod', { namespace })).items;
  for (const d of deployments) {
    const name = d.metadata.name ?? '';
    const st = statusOf(d);
    const available = st.conditions?.find((c) => c.type === 'Available');
    if (available?.status === 'True') continue;
    const conds = (st.conditions ?? []).map(cond);
    lines.push(`Deployment ${namespace}/${name} is not available (${st.readyReplicas ?? 0}/${st.replicas ?? 0} ready)${conds.length === 0 ? ': no conditions yet' : `: ${conds.join('; ')}`}`);
    const mineRs = replicaSets.filter((r) => r.metadata.ownerReferences?.some((x) => x.kind === 'Deployment' && x.uid === d.metadata.uid) === true);
    const rsNames = mineRs.map((r) => r.metadata.name ?? '');
    const mine = pods.filter((p) => p.metadata.ownerReferences?.some((x) => x.kind === 'ReplicaSet' && rsNames.includes(x.name)) === true);
    if (mine.length === 0) lines.push(`  no Pods were created for it`);
    for (const p of mine) {
      const ps = statusOf(p);
      const bad = (ps.conditions ?? []).filter((c) => c.status !== 'True').map(cond);
      lines.push(`  Pod ${p.metadata.name ?? ''}: ${ps.phase ?? 'Unknown'}${bad.length === 0 ? '' : `; ${bad.join('; ')}`}`);
    }
    const events = await lastEvents(client, namespace, [d, ...mineRs, ...mine], 8);
    if (events.length > 0) lines.push('  last events:', ...events.map((e) => `    ${e}`));
  }
  return lines;
}

/** True when the extension is settled at `version` (Installed, not Progressing, current generation). */
export function settledAt(ce: ClusterExtension | undefined, version: string): boolean {
  return (
    ce !== undefined &&
    ce.status?.observedGeneration === ce.metadata.generation &&
    findCondition(ce.status?.conditions, 'Installed')?.status === 'True' &&
    findCondition(ce.status?.conditions, 'Progressing')?.status === 'False' &&
    ce.status?.install?.bundle.version === version
  );
}
