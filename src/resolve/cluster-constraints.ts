/**
 * What a bundle asks of the cluster itself, checked against facts about the cluster it would
 * be installed on:
 *
 * - `minKubeVersion` (the CSV's `spec.minKubeVersion`, in a catalog as a field of the
 *   `olm.csv.metadata` property, or an `olm.minKubeVersion` property): the API server must be at
 *   least that version;
 * - `olm.maxOpenShiftVersion`: on OpenShift, the cluster's major.minor must not be newer. Other
 *   clusters do not enforce it; the resolution says so instead;
 * - an `olm.constraint` whose CEL rule reads only `cluster` (not `properties`), e.g.
 *   `semver_compare(cluster.kubeVersion, "1.25.0") >= 0`: the rule must hold.
 *
 * A bundle that fails one cannot be chosen, and the fact says which rule and what the cluster
 * runs. Without cluster facts (resolving offline) nothing is enforced and the notices say so.
 */
import semver from 'semver';
import { PROP_CONSTRAINT, PROP_CSV_METADATA, PROP_MAX_OPENSHIFT_VERSION, decodeConstraintProperty } from '../declcfg/index.js';
import { bundleLabel, type BundleEntity } from './catalog-index.js';
import { CelError, compileCel } from './cel.js';
import type { Fact } from './facts.js';
import { isRecord } from '../util/object.js';

/** A bundle property some catalogs use for the CSV's minKubeVersion. */
export const PROP_MIN_KUBE_VERSION = 'olm.minKubeVersion';

export interface ClusterFacts {
  /** The API server's version (`/version` gitVersion, e.g. `v1.31.2`). */
  kubeVersion?: string;
  /** Set on OpenShift: the ClusterVersion's desired version (e.g. `4.14.3`). */
  openShiftVersion?: string;
}

export interface ClusterCheck {
  /** Rules the cluster breaks: the bundle cannot be installed here. */
  violations: Fact[];
  /** Rules reported but not enforced (e.g. maxOpenShiftVersion off OpenShift). */
  notices: string[];
}

/** A Kubernetes-style version as plain semver: `v1.31.2+k3s1` → 1.31.2, `4.8` → 4.8.0. */
export function clusterVersion(text: string | undefined): semver.SemVer | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  return semver.coerce(text.trim()) ?? undefined;
}

/** What CEL rules see as `cluster`. */
export function celCluster(cluster: ClusterFacts): Record<string, unknown> {
  const out: Record<string, unknown> = { platform: cluster.openShiftVersion === undefined ? 'Kubernetes' : 'OpenShift' };
  const kube = clusterVersion(cluster.kubeVersion);
  if (kube !== undefined) out.kubeVersion = kube.version;
  const ocp = clusterVersion(cluster.openShiftVersion);
  if (ocp !== undefined) out.openShiftVersion = ocp.version;
  return out;
}

function describeCluster(cluster: ClusterFacts): string {
  const kube = clusterVersion(cluster.kubeVersion);
  const parts = [kube === undefined ? 'an unknown Kubernetes version' : `Kubernetes ${kube.version}`];
  if (cluster.openShiftVersion !== undefined) parts.push(`OpenShift ${cluster.openShiftVersion}`);
  return `runs ${parts.join(' (')}${parts.length > 1 ? ')' : ''}`;
}

function minKubeVersionOf(e: BundleEntity): string | undefined {
  for (const p of e.properties) {
    if (p.type === PROP_MIN_KUBE_VERSION && typeof p.value === 'string' && p.value.trim() !== '') return p.value.trim();
    if (p.type === PROP_CSV_METADATA && isRecord(p.value) && typeof p.value.minKubeVersion === 'string' && p.value.minKubeVersion.trim() !== '') return p.value.minKubeVersion.trim();
  }
  return undefined;
}

function maxOpenShiftVersionOf(e: BundleEntity): string | undefined {
  const p = e.properties.find((x) => x.type === PROP_MAX_OPENSHIFT_VERSION);
  if (p === undefined) return undefined;
  if (typeof p.value === 'number') return String(p.value);
  // Bundles write it as a string, sometimes JSON-quoted once more ("\"4.8\"").
  return typeof p.value === 'string' ? p.value.replace(/^"(.*)"$/, '$1').trim() : undefined;
}

/** The `olm.constraint` CEL rules of `e` that read the cluster and not the candidate's properties. */
function clusterRulesOf(e: BundleEntity): { rule: string; failureMessage: string | undefined }[] {
  const out: { rule: string; failureMessage: string | undefined }[] = [];
  for (const p of e.properties) {
    if (p.type !== PROP_CONSTRAINT) continue;
    const c = decodeConstraintProperty(p.value);
    if (c?.cel === undefined || !isClusterRule(c.cel.rule)) continue;
    out.push({ rule: c.cel.rule, failureMessage: c.failureMessage });
  }
  return out;
}

/** True when a CEL rule reads `cluster` but not `properties`: a constraint on the bundle itself. */
export function isClusterRule(rule: string): boolean {
  try {
    const refs = compileCel(rule).references;
    return refs.has('cluster') && !refs.has('properties');
  } catch (err) {
    if (err instanceof CelError) return false; // reported as an unusable constraint by dependencies.ts
    throw err;
  }
}

/** Checks one bundle against the cluster. `cluster` undefined: nothing is enforced. */
export function checkCluster(e: BundleEntity, cluster: ClusterFacts | undefined): ClusterCheck {
  const who = bundleLabel(e);
  const violations: Fact[] = [];
  const notices: string[] = [];
  const minKube = minKubeVersionOf(e);
  const maxOcp = maxOpenShiftVersionOf(e);
  const rules = clusterRulesOf(e);
  if (cluster === undefined) {
    const what = [minKube === undefined ? '' : `minKubeVersion ${minKube}`, maxOcp === undefined ? '' : `olm.maxOpenShiftVersion ${maxOcp}`, ...rules.map((r) => `the rule ${r.rule}`)].filter(
      (x) => x !== '',
    );
    if (what.length > 0) notices.push(`${who} asks the cluster for ${what.join(', ')}; not checked (no cluster to check against)`);
    return { violations, notices };
  }
  const where = describeCluster(cluster);
  const kube = clusterVersion(cluster.kubeVersion);
  if (minKube !== undefined) {
    const min = clusterVersion(minKube);
    if (min === undefined) notices.push(`${who} has minKubeVersion "${minKube}", which is not a version; not enforced`);
    else if (kube === undefined) notices.push(`${who} needs Kubernetes ${minKube} or newer; not checked (the API server's version is unknown)`);
    else if (semver.lt(kube, min)) violations.push({ kind: 'cluster-constraint', bundle: who, requirement: `Kubernetes ${minKube} or newer`, source: 'minKubeVersion', cluster: where, failureMessage: undefined });
  }
  if (maxOcp !== undefined) {
    const max = clusterVersion(maxOcp);
    const ocp = clusterVersion(cluster.openShiftVersion);
    if (max === undefined) notices.push(`${who} has olm.maxOpenShiftVersion "${maxOcp}", which is not a version; not enforced`);
    else if (cluster.openShiftVersion === undefined) notices.push(`${who} supports OpenShift up to ${maxOcp} (olm.maxOpenShiftVersion); not enforced, the cluster is not OpenShift`);
    else if (ocp !== undefined && (ocp.major > max.major || (ocp.major === max.major && ocp.minor > max.minor))) {
      violations.push({ kind: 'cluster-constraint', bundle: who, requirement: `OpenShift ${maxOcp} or older`, source: 'olm.maxOpenShiftVersion', cluster: where, failureMessage: undefined });
    }
  }
  const env = celCluster(cluster);
  for (const r of rules) {
    if (kube === undefined) {
      notices.push(`${who} asks the cluster for the rule ${r.rule}; not checked (the API server's version is unknown)`);
      continue;
    }
    if (!compileCel(r.rule).test({ cluster: env })) {
      violations.push({ kind: 'cluster-constraint', bundle: who, requirement: `a cluster matching the rule ${r.rule}`, source: 'olm.constraint', cluster: where, failureMessage: r.failureMessage });
    }
  }
  return { violations, notices };
}
