/**
 * The health of a PlatformOperator's packages, read from their ClusterExtensions and
 * BundleDeployments, and the conditions that sum them up for the cluster: `Available` (every
 * package installed and healthy — the one condition health reporting reads), `Progressing`,
 * `Degraded` and `Upgradeable`, as OpenShift's ClusterOperators report them. Pure functions.
 */
import type { BundleDeployment, ClusterExtension, PlatformPackageReason, PlatformPackageStatus } from '../api/types.js';
import { findCondition } from '../kube/types.js';

/** Where a package stands, from its extension and the BundleDeployments of that extension. */
export function packageHealth(name: string, extension: string, ce: ClusterExtension | undefined, deployments: readonly BundleDeployment[]): PlatformPackageStatus {
  const base = { name, extension };
  if (ce === undefined) return { ...base, installed: false, healthy: false, reason: 'Installing', message: `creating ClusterExtension ${extension}` };
  if (ce.metadata.deletionTimestamp !== undefined) {
    return { ...base, installed: false, healthy: false, reason: 'Installing', message: `ClusterExtension ${extension} is being deleted; it will be created again` };
  }
  const installedCond = findCondition(ce.status?.conditions, 'Installed');
  const progressing = findCondition(ce.status?.conditions, 'Progressing');
  const version = ce.status?.install?.bundle.version;
  const withVersion = version === undefined ? base : { ...base, version };
  if (installedCond?.status !== 'True') return { ...withVersion, installed: false, healthy: false, ...notInstalled(ce, extension) };
  const sick = unhealthyDeployments(deployments);
  if (sick.length > 0) return { ...withVersion, installed: true, healthy: false, reason: 'Unhealthy', message: sick.join('; ') };
  const healthy = { ...withVersion, installed: true, healthy: true };
  if (progressing?.status === 'True') return { ...healthy, reason: changeReason(progressing.reason), message: progressing.message };
  return { ...healthy, reason: 'Healthy', message: installedCond.message };
}

/** Why an extension is not installed yet: it failed (for its current generation), or it is still installing. */
function notInstalled(ce: ClusterExtension, extension: string): { reason: PlatformPackageReason; message: string } {
  const installed = findCondition(ce.status?.conditions, 'Installed');
  const progressing = findCondition(ce.status?.conditions, 'Progressing');
  const current = ce.status?.observedGeneration === ce.metadata.generation;
  const failed = current && (installed?.reason === 'Failed' || progressing?.reason === 'InvalidSpec' || progressing?.reason === 'Blocked');
  const message = progressing?.message ?? installed?.message ?? `waiting for ClusterExtension ${extension}`;
  return { reason: failed ? 'Failed' : 'Installing', message };
}

/** `name: message` of each BundleDeployment that says it is not Healthy. */
function unhealthyDeployments(deployments: readonly BundleDeployment[]): string[] {
  return deployments.flatMap((bd) => {
    const h = findCondition(bd.status?.conditions, 'Healthy');
    return h?.status === 'False' ? [`${bd.metadata.name ?? ''}: ${h.message}`] : [];
  });
}

/** An installed package whose extension is still progressing: held back, failing to change, or changing. */
function changeReason(progressing: string): PlatformPackageReason {
  if (progressing === 'UpgradeBlocked') return 'UpgradeBlocked';
  return progressing === 'Retrying' ? 'Failed' : 'Upgrading';
}

export interface AggregateCondition {
  type: 'Available' | 'Progressing' | 'Degraded' | 'Upgradeable';
  status: boolean;
  reason: string;
  message: string;
}

const PROGRESSING: ReadonlySet<PlatformPackageReason> = new Set(['Installing', 'Upgrading', 'Removing']);
const DEGRADED: ReadonlySet<PlatformPackageReason> = new Set(['Failed', 'Unhealthy']);

function listed(packages: readonly PlatformPackageStatus[]): string {
  return packages.map((p) => `${p.name}: ${p.reason}${p.message !== undefined && p.message !== '' ? `: ${p.message}` : ''}`).join('; ');
}

/** The four conditions that sum up `packages` (removed packages count only while being removed). */
export function aggregateConditions(packages: readonly PlatformPackageStatus[]): AggregateCondition[] {
  const live = packages.filter((p) => p.reason !== 'Removing' && p.reason !== 'Removed');
  const down = live.filter((p) => !p.installed || !p.healthy);
  const moving = packages.filter((p) => PROGRESSING.has(p.reason));
  const broken = packages.filter((p) => DEGRADED.has(p.reason));
  const held = packages.filter((p) => p.reason === 'UpgradeBlocked');
  return [
    down.length === 0
      ? { type: 'Available', status: true, reason: 'AllHealthy', message: `${live.length} package${live.length === 1 ? '' : 's'} installed and healthy` }
      : { type: 'Available', status: false, reason: broken.length > 0 ? 'PackagesDegraded' : 'PackagesInstalling', message: listed(down) },
    moving.length > 0
      ? { type: 'Progressing', status: true, reason: 'PackagesChanging', message: listed(moving) }
      : { type: 'Progressing', status: false, reason: 'Settled', message: 'every package is as the spec asks' },
    broken.length > 0
      ? { type: 'Degraded', status: true, reason: 'PackagesFailing', message: listed(broken) }
      : { type: 'Degraded', status: false, reason: 'AsExpected', message: 'no package is failing' },
    held.length > 0
      ? { type: 'Upgradeable', status: false, reason: 'UpgradeBlocked', message: listed(held) }
      : { type: 'Upgradeable', status: true, reason: 'AsExpected', message: 'no package holds back its upgrade' },
  ];
}
