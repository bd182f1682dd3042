/**
 * Installed operators as the console shows them: each ClusterExtension with its conditions,
 * installed bundle and a one-word health (see health.ts), the BundleDeployments it needs
 * (shared ones say who else needs them), its Events, and what uninstalling it would delete.
 * Built on `src/installed`'s view, read with the person's own client.
 */
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../api/types.js';
import type { ReleaseRef } from '../apply/types.js';
import { releaseOf } from '../actions/release-history.js';
import { buildInstalledState, unitsNeededBy, type InstalledState, type InstalledUnit } from '../installed/index.js';
import type { ConsoleClient } from './client.js';
import type { KubeObject } from '../kube/types.js';
import type { EventView, ExtensionDetail, ExtensionSummary, UninstallPreview } from './contract/api-types.js';
import { healthOf } from './health.js';

export function summaryOf(ce: ClusterExtension): ExtensionSummary {
  const cat = ce.spec.source.catalog;
  const b = ce.status?.install?.bundle;
  return {
    name: ce.metadata.name ?? '',
    package: cat.packageName,
    namespace: ce.spec.namespace,
    serviceAccount: ce.spec.serviceAccount.name,
    channels: cat.channels ?? [],
    version: cat.version ?? '',
    installed: b === undefined ? undefined : { name: b.name, version: b.version, package: b.package, catalog: b.catalog },
    ...healthOf(ce),
    conditions: ce.status?.conditions ?? [],
  };
}

export async function listExtensions(client: ConsoleClient): Promise<ExtensionSummary[]> {
  const list = await client.list<ClusterExtension>(API_VERSION, 'ClusterExtension');
  return list.items.map(summaryOf).sort((a, b) => a.name.localeCompare(b.name));
}

async function stateOf(client: ConsoleClient): Promise<{ state: InstalledState; extensions: ClusterExtension[] }> {
  const [bds, ces] = await Promise.all([client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'), client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')]);
  return { state: buildInstalledState(bds.items, ces.items), extensions: ces.items };
}

/** The releases of the extension's set: one per BundleDeployment it needs (after checking it exists). */
export async function extensionReleases(client: ConsoleClient, name: string): Promise<{ unit: InstalledUnit; release: ReleaseRef }[]> {
  await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  const { state } = await stateOf(client);
  return unitsNeededBy(state, name).map((unit) => ({ unit, release: releaseOf(unit) }));
}

export async function extensionDetail(client: ConsoleClient, name: string): Promise<ExtensionDetail> {
  const ce = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  const { state } = await stateOf(client);
  const units = unitsNeededBy(state, name).map((u) => ({
    bundleDeployment: u.bundleDeployment,
    package: u.package,
    version: u.version,
    namespace: u.namespace,
    state: u.state,
    role: u.needs.find((n) => n.extension === name)?.role ?? '',
    neededBy: u.needs.map((n) => n.extension),
    revision: u.object.status?.revision,
    conditions: u.object.status?.conditions ?? [],
  }));
  return { ...summaryOf(ce), units, history: ce.status?.history, pendingPlan: ce.status?.pendingPlan };
}

/** A core/v1 Event as the API server sends it. */
export type KubeEvent = KubeObject & { involvedObject?: { kind?: string; name?: string; uid?: string }; type?: string; reason?: string; message?: string; count?: number; lastTimestamp?: string; eventTime?: string };

/** An Event as the page shows it. */
export function eventView(e: KubeEvent): EventView {
  const io = e.involvedObject;
  return { type: e.type ?? '', reason: e.reason ?? '', message: e.message ?? '', object: `${io?.kind ?? ''} ${io?.name ?? ''}`, count: e.count ?? 1, last: e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? '' };
}

/** Recent Events about the extension and its BundleDeployments, newest first. */
export async function eventsOf(client: ConsoleClient, name: string): Promise<EventView[]> {
  const detail = await extensionDetail(client, name);
  const names = new Set([name, ...detail.units.map((u) => u.bundleDeployment)]);
  const events = await client.list<KubeEvent>('v1', 'Event');
  const out: EventView[] = [];
  for (const e of events.items) {
    const io = e.involvedObject;
    if (io?.name === undefined || !names.has(io.name) || (io.kind !== 'ClusterExtension' && io.kind !== 'BundleDeployment')) continue;
    out.push(eventView(e));
  }
  return out.sort((a, b) => b.last.localeCompare(a.last)).slice(0, 50);
}

export async function uninstallPreview(client: ConsoleClient, name: string): Promise<UninstallPreview> {
  await client.get({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  const { state } = await stateOf(client);
  const out: UninstallPreview = { removed: [], kept: [] };
  for (const u of unitsNeededBy(state, name)) {
    const others = u.needs.map((n) => n.extension).filter((x) => x !== name);
    if (others.length > 0) {
      out.kept.push({ bundleDeployment: u.bundleDeployment, package: u.package, neededBy: others });
      continue;
    }
    const objects = (u.object.status?.appliedObjects ?? []).map((o) => `${o.kind} ${o.namespace === undefined || o.namespace === '' ? '' : `${o.namespace}/`}${o.name}`);
    out.removed.push({ bundleDeployment: u.bundleDeployment, package: u.package, objects });
  }
  return out;
}
