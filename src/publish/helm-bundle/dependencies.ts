/**
 * The APIs a chart needs someone else to provide: every custom kind it creates with its
 * default values and Helm's default capabilities (see render.ts) that it does not define
 * itself. Each becomes an `olm.gvk` dependency in `metadata/dependencies.yaml`, which the
 * resolver turns into `olm.gvk.required` and satisfies from the catalog. Left out, each with
 * the reason: Kubernetes' own APIs, APIs of the platform (platform-apis.ts), kinds the applier
 * skips when their API is missing (apply/optional-kinds.ts), the chart's own CRDs and the
 * operator's own kinds.
 */
import { optionalApi } from '../../apply/optional-kinds.js';
import { gvkOf, type GroupVersionKind } from '../../kube/types.js';
import { platformApi } from './platform-apis.js';
import type { RenderedObject } from './render.js';
import { BUILTIN_GROUPS, type CrdKind } from './resources.js';

export interface NotRequired extends GroupVersionKind {
  reason: string;
}

export interface RequiredApis {
  /** Sorted by group, version, kind. */
  required: GroupVersionKind[];
  /** Custom kinds the chart creates that are not dependencies, and why. */
  notRequired: NotRequired[];
}

const gvkKey = (g: GroupVersionKind): string => `${g.group}/${g.version}/${g.kind}`;

export function requiredApis(objects: readonly RenderedObject[], chartCrds: readonly CrdKind[], own: readonly GroupVersionKind[]): RequiredApis {
  const defined = new Set([...chartCrds.map((c) => `${c.group}/${c.kind}`), ...own.map((o) => `${o.group}/${o.kind}`)]);
  const required = new Map<string, GroupVersionKind>();
  const notRequired = new Map<string, NotRequired>();
  for (const { object } of objects) {
    const gvk = gvkOf(object);
    if (BUILTIN_GROUPS.has(gvk.group) || defined.has(`${gvk.group}/${gvk.kind}`)) continue;
    const platform = platformApi(gvk.group);
    const optional = optionalApi(object.apiVersion, object.kind);
    if (platform !== undefined) notRequired.set(gvkKey(gvk), { ...gvk, reason: platform.reason });
    else if (optional !== undefined) notRequired.set(gvkKey(gvk), { ...gvk, reason: `optional: skipped where the cluster does not serve it (${optional.reason})` });
    else required.set(gvkKey(gvk), gvk);
  }
  const sorted = <T extends GroupVersionKind>(m: Map<string, T>): T[] => [...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => v);
  return { required: sorted(required), notRequired: sorted(notRequired) };
}

/** `metadata/dependencies.yaml` content for the required APIs. */
export function dependenciesFile(required: readonly GroupVersionKind[]): { dependencies: { type: 'olm.gvk'; value: GroupVersionKind }[] } {
  return { dependencies: required.map((g) => ({ type: 'olm.gvk', value: { group: g.group, kind: g.kind, version: g.version } })) };
}
