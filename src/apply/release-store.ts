/**
 * The release history on the cluster: one Helm release Secret per revision in the release
 * namespace, read and written the way helm's Secrets driver does (create a new revision,
 * replace an existing one to change its status, list by `owner=helm,name=<release>`).
 */
import type { KubeClient } from '../kube/client.js';
import { releaseSecret, releaseSecretName, revisionFromSecret, type ReleaseRecordInput } from './release.js';
import type { Owner, ReleaseRef, ReleaseRevision, ReleaseStatus } from './types.js';

export type StoreClient = Pick<KubeClient, 'list' | 'create' | 'update' | 'delete'>;

export function recordInput(rev: ReleaseRevision): ReleaseRecordInput {
  return {
    name: rev.name,
    namespace: rev.namespace,
    version: rev.revision,
    status: rev.status,
    description: rev.description,
    firstDeployed: rev.firstDeployed,
    lastDeployed: rev.lastDeployed,
    chart: rev.chart,
    config: rev.config,
    manifest: rev.manifest,
    ...(rev.inputDigest === undefined ? {} : { inputDigest: rev.inputDigest }),
    ...(rev.content === undefined ? {} : { content: rev.content }),
  };
}

export class ReleaseStore {
  private readonly client: StoreClient;
  private readonly now: () => Date;

  constructor(client: StoreClient, now: () => Date = () => new Date()) {
    this.client = client;
    this.now = now;
  }

  /** Every revision, oldest first. */
  async history(release: ReleaseRef): Promise<ReleaseRevision[]> {
    const list = await this.client.list('v1', 'Secret', { namespace: release.namespace, labelSelector: `owner=helm,name=${release.name}` });
    return list.items
      .filter((s) => s.type === 'helm.sh/release.v1')
      .map((s) => revisionFromSecret(s))
      .sort((a, b) => a.revision - b.revision);
  }

  async create(input: ReleaseRecordInput, owner: Owner | undefined): Promise<void> {
    await this.client.create(releaseSecret(input, owner, this.now(), 'created'));
  }

  /** Rewrites a revision with a new status (and description), as helm's driver Update does. */
  async setStatus(rev: ReleaseRevision, status: ReleaseStatus, description?: string): Promise<ReleaseRevision> {
    const next: ReleaseRevision = { ...rev, status, description: description ?? rev.description };
    await this.client.update(releaseSecret(recordInput(next), rev.owner, this.now(), 'modified'));
    return next;
  }

  async deleteAll(release: ReleaseRef, revisions: readonly ReleaseRevision[]): Promise<void> {
    for (const r of revisions) {
      await this.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: release.namespace, name: releaseSecretName(release.name, r.revision) });
    }
  }
}
