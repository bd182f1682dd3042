/**
 * Facts about the cluster that resolution checks bundles against: the API server's version,
 * and on OpenShift (a `config.openshift.io/v1` ClusterVersion named `version` exists) the
 * OpenShift version. Read from the API server and kept for a short while, since reconciles ask
 * often and these change only with a cluster upgrade.
 */
import type { Logger } from 'pino';
import type { Capabilities, ObjectReader } from '../kube/ports.js';
import type { ClusterFacts } from '../resolve/index.js';
import { errorMessage } from '../util/errors.js';

const CLUSTER_VERSION = { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', name: 'version' };

interface ClusterVersionObject {
  status?: { desired?: { version?: string }; history?: { state?: string; version?: string }[] };
}

/** The OpenShift version a ClusterVersion reports: the desired one, else the last completed. */
export function openShiftVersionOf(cv: ClusterVersionObject): string | undefined {
  const desired = cv.status?.desired?.version;
  if (desired !== undefined && desired !== '') return desired;
  return cv.status?.history?.find((h) => h.state === 'Completed' && h.version !== undefined)?.version;
}

export class ClusterFactsSource {
  private cached: { facts: ClusterFacts; at: number } | undefined;

  constructor(
    private readonly client: Pick<Capabilities, 'serverVersion'> & Pick<ObjectReader, 'find'>,
    private readonly logger: Logger,
    private readonly ttlMs = 5 * 60_000,
  ) {}

  async get(): Promise<ClusterFacts> {
    if (this.cached !== undefined && Date.now() - this.cached.at < this.ttlMs) return this.cached.facts;
    const facts: ClusterFacts = {};
    try {
      facts.kubeVersion = await this.client.serverVersion();
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'cannot read the API server version; minKubeVersion is not checked');
    }
    try {
      const cv = await this.client.find(CLUSTER_VERSION);
      if (cv !== undefined) facts.openShiftVersion = openShiftVersionOf(cv as ClusterVersionObject) ?? '';
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'cannot read the ClusterVersion; treating the cluster as not OpenShift');
    }
    this.cached = { facts, at: Date.now() };
    return facts;
  }
}
