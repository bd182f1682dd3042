/**
 * The release history on the cluster: one Helm release Secret per revision in the release
 * namespace, read and written the way helm's Secrets driver does (create a new revision,
 * replace an existing one to change its status, list by `owner=helm,name=<release>`).
 */
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError } from '../util/errors.js';
import { RELEASE_PART_OF_LABEL, RELEASE_PART_TYPE, RELEASE_PARTS_ANNOTATION, releasePartName, releaseSecretName, releaseSecrets, revisionFromSecret, type ReleaseRecordInput } from './release.js';
import type { Owner, ReleaseRef, ReleaseRevision, ReleaseStatus } from './types.js';

export type StoreClient = Pick<KubeClient, 'list' | 'create' | 'update' | 'delete'>;

export function recordInput(rev: ReleaseRevision): ReleaseRecordInput {
  const { revision, owner: _owner, ...fields } = rev;
  return { ...fields, version: revision };
}

export class ReleaseStore {
  private readonly client: StoreClient;
  private readonly now: () => Date;

  constructor(client: StoreClient, now: () => Date = () => new Date()) {
    this.client = client;
    this.now = now;
  }

  /** Every revision, oldest first (a large release read whole from its parts). */
  async history(release: ReleaseRef): Promise<ReleaseRevision[]> {
    const list = await this.client.list('v1', 'Secret', { namespace: release.namespace, labelSelector: `owner=helm,name=${release.name}` });
    const records = list.items.filter((s) => s.type === 'helm.sh/release.v1');
    const parts = records.some((s) => s.metadata.annotations?.[RELEASE_PARTS_ANNOTATION] !== undefined) ? await this.parts(release) : new Map<string, string>();
    return records.map((s) => revisionFromSecret(s, wholeOf(s, parts))).sort((a, b) => a.revision - b.revision);
  }

  private async parts(release: ReleaseRef): Promise<Map<string, string>> {
    const list = await this.client.list('v1', 'Secret', { namespace: release.namespace, labelSelector: `${RELEASE_PART_OF_LABEL}=${release.name}` });
    const byName = new Map<string, string>();
    // Each part is a slice (at a 4-character boundary) of the record's `data.release`, as sent.
    for (const p of list.items) if (p.type === RELEASE_PART_TYPE) byName.set(p.metadata.name ?? '', (p.data as { part?: string } | undefined)?.part ?? '');
    return byName;
  }

  async create(input: ReleaseRecordInput, owner: Owner | undefined): Promise<void> {
    const [main, ...parts] = releaseSecrets(input, owner, this.now(), 'created');
    // Parts first: a Helm record that announces parts always finds them.
    for (const p of parts) await this.client.create(p);
    if (main !== undefined) await this.client.create(main);
  }

  /** Rewrites a revision with a new status (and description), as helm's driver Update does. */
  async setStatus(rev: ReleaseRevision, status: ReleaseStatus, description?: string): Promise<ReleaseRevision> {
    const next: ReleaseRevision = { ...rev, status, description: description ?? rev.description };
    const [main, ...parts] = releaseSecrets(recordInput(next), rev.owner, this.now(), 'modified');
    for (const p of parts) {
      try {
        await this.client.update(p);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await this.client.create(p);
      }
    }
    if (main !== undefined) await this.client.update(main);
    return next;
  }

  async deleteAll(release: ReleaseRef, revisions: readonly ReleaseRevision[]): Promise<void> {
    const parts = (await this.client.list('v1', 'Secret', { namespace: release.namespace, labelSelector: `${RELEASE_PART_OF_LABEL}=${release.name}` })).items;
    for (const r of revisions) {
      await this.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: release.namespace, name: releaseSecretName(release.name, r.revision) });
      for (const p of parts.filter((x) => x.metadata.labels?.version === String(r.revision))) {
        await this.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: release.namespace, name: p.metadata.name ?? '' });
      }
    }
  }
}

/** The whole encoded release of a record with parts, joined in order; undefined for a plain record. */
function wholeOf(secret: KubeObject, parts: ReadonlyMap<string, string>): string | undefined {
  const count = Number(secret.metadata.annotations?.[RELEASE_PARTS_ANNOTATION] ?? '0');
  if (!(count > 0)) return undefined;
  const labels = secret.metadata.labels ?? {};
  const name = labels.name ?? '';
  const version = Number(labels.version ?? '0');
  const chunks: string[] = [];
  for (let i = 0; i < count; i++) {
    const chunk = parts.get(releasePartName(name, version, i));
    if (chunk === undefined) throw new BinnacleError('terminal', 'RELEASE_PART_MISSING', `Secret ${secret.metadata.namespace ?? ''}/${secret.metadata.name ?? ''} announces ${count} parts but part ${i} (${releasePartName(name, version, i)}) is missing`);
    chunks.push(chunk);
  }
  return chunks.join('');
}
