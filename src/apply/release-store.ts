/**
 * Release records as Helm's Secrets storage driver keeps them: one Secret per revision in the
 * release namespace (`sh.helm.release.v1.<name>.v<N>`, labelled `owner=helm,name=<release>`),
 * created for a new revision, replaced to change its status. `helm list`, `helm history` and
 * `helm get` read these. For a release a reconciler owns they are a mirror the engine writes and
 * never trusts (release-records.ts keeps the history it acts on); `binnacle release` on its own,
 * like `helm`, keeps its history here.
 *
 * Every record is decoded within RECORD_BOUNDS (release.ts); one that is not is refused by name
 * (`read` lists it), and the rest of the history is read without it.
 */
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { RECORD_BOUNDS, RELEASE_PART_OF_LABEL, RELEASE_PART_TYPE, RELEASE_PARTS_ANNOTATION, RELEASE_SECRET_TYPE, releasePartName, revisionRecordSecretName, releaseSecrets, revisionFromSecretAsync, type ReleaseRecordInput } from './release.js';
import type { Owner, ReleaseRef, ReleaseRevision, ReleaseStatus } from './types.js';

export type StoreClient = Pick<ObjectReader, 'list'> & Pick<ObjectWriter, 'create' | 'update' | 'delete'>;

export function recordInput(rev: ReleaseRevision): ReleaseRecordInput {
  const { revision, owner: _owner, movedOver: _movedOver, ...fields } = rev;
  return { ...fields, version: revision };
}

/** A record that could not be read: its Secret and why. */
export interface RefusedRecord {
  secret: string;
  reason: string;
}

/** A release's revisions, oldest first, and the records refused on the way. */
export interface HistoryRead {
  revisions: ReleaseRevision[];
  refused: RefusedRecord[];
}

/** Where one release's history is kept: read it, add a revision, change one's status, remove some. */
export interface HistoryStore {
  read(): Promise<HistoryRead>;
  create(rev: ReleaseRevision): Promise<void>;
  setStatus(rev: ReleaseRevision, status: ReleaseStatus, description?: string): Promise<ReleaseRevision>;
  /** `whole`: these are all the release's revisions (an uninstall), so the store may drop what else it keeps for it. */
  remove(revisions: readonly ReleaseRevision[], whole?: boolean): Promise<void>;
  /**
   * Whether its records live outside the release namespace (the trusted history's, in the
   * system namespace): a revision is then recorded before anything is applied, so that nothing
   * a run creates (a Namespace of the release first of all) is left without a record naming it.
   * Helm's own records live in the release namespace, which the release may create first.
   */
  readonly recordsOutsideRelease?: boolean;
}

export class ReleaseStore {
  readonly client: StoreClient;
  private readonly now: () => Date;

  constructor(client: StoreClient, now: () => Date = () => new Date()) {
    this.client = client;
    this.now = now;
  }

  /** The store bound to one release, as a HistoryStore (`binnacle release`, or a mirror). */
  bind(release: ReleaseRef): HistoryStore {
    return {
      read: () => this.read(release),
      create: (rev) => this.create(recordInput(rev), rev.owner),
      setStatus: (rev, status, description) => this.setStatus(rev, status, description),
      remove: (revisions) => this.deleteAll(release, revisions),
    };
  }

  /** Every revision that could be read, oldest first (a large release read whole from its parts). */
  async history(release: ReleaseRef): Promise<ReleaseRevision[]> {
    return (await this.read(release)).revisions;
  }

  /** Every revision, oldest first, and the records refused by their bounds or shape. */
  async read(release: ReleaseRef): Promise<HistoryRead> {
    const list = await this.client.list('v1', 'Secret', { namespace: release.namespace, labelSelector: `owner=helm,name=${release.name}` });
    const records = list.items.filter((s) => s.type === RELEASE_SECRET_TYPE);
    const parts = records.some((s) => s.metadata.annotations?.[RELEASE_PARTS_ANNOTATION] !== undefined) ? await this.parts(release) : new Map<string, string>();
    return decodeAll(records, async (s) => {
      // Helm's key for a record is its name: one under another name, or whose name, version label
      // and body disagree, is not taken as that revision (the mirror removes such records).
      const named = revisionOfName(release.name, s.metadata.name ?? '');
      const where = `Secret ${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`;
      if (named === undefined) throw new BinnacleError('terminal', 'RELEASE_DECODE', `${where}: its name is not Helm's name for a revision of release ${release.name} (sh.helm.release.v1.${release.name}.v<N>)`);
      if (s.metadata.labels?.version !== String(named)) throw new BinnacleError('terminal', 'RELEASE_DECODE', `${where}: field metadata.labels.version: ${JSON.stringify(s.metadata.labels?.version)} is not the revision its name says (${named})`);
      const rev = await revisionFromSecretAsync(s, wholeOf(s, parts));
      if (rev.revision !== named) throw new BinnacleError('terminal', 'RELEASE_DECODE', `${where}: field data.release: the record is revision ${rev.revision}, its name says ${named}`);
      return rev;
    });
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

  /** Writes a revision whether or not it is there (a mirror brought back in line with the history). */
  async put(rev: ReleaseRevision): Promise<void> {
    const [main, ...parts] = releaseSecrets(recordInput(rev), rev.owner, this.now(), 'modified');
    for (const s of [...parts, ...(main === undefined ? [] : [main])]) await createOrReplace(this.client, s);
  }

  /** Rewrites a revision with a new status (and description), as helm's driver Update does. */
  async setStatus(rev: ReleaseRevision, status: ReleaseStatus, description?: string): Promise<ReleaseRevision> {
    const next: ReleaseRevision = { ...rev, status, description: description ?? rev.description };
    const [main, ...parts] = releaseSecrets(recordInput(next), rev.owner, this.now(), 'modified');
    for (const p of parts) await createOrReplace(this.client, p);
    if (main !== undefined) await this.client.update(main);
    return next;
  }

  async deleteAll(release: ReleaseRef, revisions: readonly ReleaseRevision[]): Promise<void> {
    const parts = (await this.client.list('v1', 'Secret', { namespace: release.namespace, labelSelector: `${RELEASE_PART_OF_LABEL}=${release.name}` })).items;
    for (const r of revisions) await this.deleteRevision(release, r.revision, parts);
  }

  /** Deletes revision `version`'s Secret and parts, found or not (a record that could not be read too). */
  async deleteRevision(release: ReleaseRef, version: number, parts?: readonly KubeObject[]): Promise<void> {
    const all = parts ?? (await this.client.list('v1', 'Secret', { namespace: release.namespace, labelSelector: `${RELEASE_PART_OF_LABEL}=${release.name}` })).items;
    await this.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: release.namespace, name: revisionRecordSecretName(release.name, version) });
    for (const p of all.filter((x) => x.metadata.labels?.version === String(version))) {
      await this.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: release.namespace, name: p.metadata.name ?? '' });
    }
  }

  /**
   * What the mirror holds of `release`, by revision: the status label of each record, read without
   * decoding. The revision is the one the Secret's name carries (Helm's key for a record, and what
   * deleteRevision deletes by): a planted record whose `version` label says otherwise (1e21, which
   * no name can carry) is still found by its name, and an uninstall still removes it. `strays` are
   * records under a name Helm never gives (helm's own commands still list them by their labels).
   */
  async records(release: ReleaseRef): Promise<MirrorRecords> {
    const list = await this.client.list('v1', 'Secret', { namespace: release.namespace, labelSelector: `owner=helm,name=${release.name}` });
    const byRevision = new Map<number, MirrorRecord>();
    const strays: KubeObject[] = [];
    for (const s of list.items) {
      if (s.type !== RELEASE_SECRET_TYPE) continue;
      const version = revisionOfName(release.name, s.metadata.name ?? '');
      if (version !== undefined) byRevision.set(version, { status: s.metadata.labels?.status ?? '', digest: s.metadata.labels?.['binnacle.dev/input-digest'], secret: s });
      else strays.push(s);
    }
    return { byRevision, strays };
  }

  /** Deletes one record as it was read (a stray: no revision's name, so no parts of ours); one made or changed since under its name stays. */
  async deleteRecord(secret: KubeObject): Promise<void> {
    const { uid, resourceVersion } = secret.metadata;
    // Exactly the record read: not one made since under its name, nor one relabelled since.
    const preconditions = { ...(uid === undefined ? {} : { uid }), ...(resourceVersion === undefined ? {} : { resourceVersion }) };
    await this.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: secret.metadata.namespace ?? '', name: secret.metadata.name ?? '' }, { preconditions });
  }
}

export interface MirrorRecord {
  status: string;
  digest: string | undefined;
  secret: KubeObject;
}

export interface MirrorRecords {
  byRevision: Map<number, MirrorRecord>;
  strays: KubeObject[];
}

/** The revision a Helm record's Secret name carries (`sh.helm.release.v1.<release>.v<N>`, N as Helm's revisions), if it is one. */
export function revisionOfName(release: string, name: string): number | undefined {
  const prefix = revisionRecordSecretName(release, 0).slice(0, -1);
  const digits = name.startsWith(prefix) ? name.slice(prefix.length) : '';
  const version = /^[1-9][0-9]{0,9}$/.test(digits) ? Number(digits) : NaN;
  return version <= RECORD_BOUNDS.maxRevision ? version : undefined;
}

/** Creates `s`, or replaces it when it exists (a mirror's record brought back in line). */
export async function createOrReplace(client: StoreClient, s: KubeObject): Promise<void> {
  try {
    await client.update(s);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await client.create(s);
  }
}

/** Decodes each record; one that fails is refused by name, not fatal to the rest. */
/** Each record decoded in turn (the loop is free between them while each inflates: revisionFromSecretAsync). */
export async function decodeAll(records: readonly KubeObject[], decode: (s: KubeObject) => Promise<ReleaseRevision>): Promise<HistoryRead> {
  const revisions: ReleaseRevision[] = [];
  const refused: RefusedRecord[] = [];
  for (const s of records) {
    try {
      revisions.push(await decode(s));
    } catch (err) {
      if (!(err instanceof BinnacleError)) throw err;
      refused.push({ secret: `${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`, reason: errorMessage(err) });
    }
  }
  return { revisions: revisions.sort((a, b) => a.revision - b.revision), refused };
}

/** The whole encoded release of a record with parts, joined in order; undefined for a plain record. */
export function wholeOf(secret: KubeObject, parts: ReadonlyMap<string, string>, partName: (i: number) => string = (i) => releasePartName(secret.metadata.labels?.name ?? '', Number(secret.metadata.labels?.version ?? '0'), i)): string | undefined {
  const count = Number(secret.metadata.annotations?.[RELEASE_PARTS_ANNOTATION] ?? '0');
  if (!(count > 0)) return undefined;
  // A record cannot announce more parts than its bounds allow (release.ts RECORD_BOUNDS): refused before anything is joined.
  if (!Number.isInteger(count) || count > 64) {
    throw new BinnacleError('terminal', 'RELEASE_DECODE', `Secret ${secret.metadata.namespace ?? ''}/${secret.metadata.name ?? ''} announces ${String(count)} parts; a release record has at most 64`);
  }
  const chunks: string[] = [];
  for (let i = 0; i < count; i++) {
    const chunk = parts.get(partName(i));
    if (chunk === undefined) throw new BinnacleError('terminal', 'RELEASE_PART_MISSING', `Secret ${secret.metadata.namespace ?? ''}/${secret.metadata.name ?? ''} announces ${count} parts but part ${i} (${partName(i)}) is missing`);
    chunks.push(chunk);
  }
  return chunks.join('');
}
