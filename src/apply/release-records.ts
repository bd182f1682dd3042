/**
 * The history the release engine trusts, kept where only the engine writes: Secrets in the
 * manager's own namespace (`binnacle-system`, or `helm-operator run`'s namespace), one per
 * revision, named and labelled by the owner's UID (`binnacle.release.<uid>.v<N>`). No tenant
 * and no installer identity may write there, so a record read back is one the engine wrote.
 * Each write is mirrored into the release namespace as Helm's own record (release-store.ts), so
 * `helm list|history|get` keep working; the mirror is never read to decide anything.
 *
 * On every read the mirror is compared with the history: a revision the mirror lacks (a crash
 * between the two writes) is written again; one changed by hand (its `data.release` is not what
 * the engine wrote) or added by hand (`helm upgrade|rollback`, a planted Secret) is reported as
 * drift and put back as the history says. Nothing in the mirror is executed.
 *
 * An owner without records here but with Helm's records in its namespace (a release made before
 * this store existed) moves over once: each Helm record is decoded within its bounds and passed
 * through the caller's check (owner, scope) before it becomes history; what fails is named,
 * never applied. What passes is marked moved over: its fields were not checked, so nothing is
 * applied from it again (decide.ts renders its inputs anew instead). Keyed by UID: a CR deleted and created again starts a history of its own, and
 * the records of an owner that is gone are collected (`owners`, `removeOwner`).
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { isConflict, isContentRefused, isForbidden, isNotFound, isTransient } from '../kube/errors.js';
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { errorMessage } from '../util/errors.js';
import { RELEASE_PART_TYPE, RELEASE_PARTS_ANNOTATION, releaseSecrets, revisionFromSecretAsync } from './release.js';
import { createOrReplace, decodeAll, recordInput, wholeOf, type HistoryRead, type HistoryStore, type MirrorRecords, type RefusedRecord, type ReleaseStore } from './release-store.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, ownerLabels } from './ownership.js';
import type { Owner, ReleaseRef, ReleaseRevision, ReleaseStatus } from './types.js';

export const RECORD_TYPE = 'binnacle.dev/release.v1';
export const RECORD_OWNER_UID_LABEL = 'binnacle.dev/release-owner-uid';
export const RECORD_PART_OWNER_LABEL = 'binnacle.dev/release-part-owner-uid';
export const RECORD_RELEASE_NAME_LABEL = 'binnacle.dev/release-name';
export const RECORD_RELEASE_NAMESPACE_LABEL = 'binnacle.dev/release-namespace';
/** The sha256 (first 32 hex) of the mirror record's `data.release` as the engine wrote it. */
export const MIRROR_DIGEST_ANNOTATION = 'binnacle.dev/mirror-digest';
/** On a record moved over from Helm's records (ReleaseRevision.movedOver): "true". */
export const MOVED_OVER_ANNOTATION = 'binnacle.dev/moved-over';
/** The owner's apiVersion, so that a record whose owner is gone can be found. */
export const OWNER_API_VERSION_ANNOTATION = 'binnacle.dev/owner-api-version';

export type RecordsClient = Pick<ObjectReader, 'list'> & Pick<ObjectWriter, 'create' | 'update' | 'delete'>;

/** An owner by UID, as its records are keyed. */
export type RecordOwner = Owner & { uid: string; apiVersion: string };

/** What the engine found wrong with the mirror on a read, and put right. */
export interface MirrorDrift {
  revision: number;
  change: 'edited' | 'added';
  /** A record under a name Helm never gives (its Secret's name): removed, as an added revision is. */
  stray?: string;
}

export interface TrustedRead extends HistoryRead {
  /** Revisions of the mirror changed or added by someone else (reported; the mirror is put back). */
  mirrorDrift: MirrorDrift[];
  /**
   * Who holds Helm records of this release's name in its namespace when they are not this
   * owner's (a Helm user's release, another owner's): the release is theirs, and nothing of
   * theirs is touched. Undefined when there are none.
   */
  foreignOwner?: string;
  /** Helm records moved into the history on this read (a release made before the trusted store). */
  migrated: number[];
  /**
   * The mirror could not be listed for a while (the error): who else holds Helm records of the
   * name is unknown, so no new revision may be decided on this read (the reconcilers fail it,
   * retried); reading the history for anything else (status, an uninstall) goes on.
   */
  mirrorUnread?: Error;
}

/** Checks a Helm record before it becomes history: the problems with it (none when it may). */
export type MigrationCheck = (rev: ReleaseRevision) => Promise<string[]>;

/** Who a Helm record's labels say holds it, in words. */
function describeRecordOwner(secret: KubeObject): string {
  const l = secret.metadata.labels ?? {};
  const kind = l[OWNER_KIND_LABEL];
  const name = l[OWNER_NAME_LABEL];
  if (kind === undefined || name === undefined) return 'a Helm user (its records name no Binnacle owner)';
  const ns = l[OWNER_NAMESPACE_LABEL];
  return `${kind} ${ns === undefined ? '' : `${ns}/`}${name}`;
}

function recordName(uid: string, version: number): string {
  return `binnacle.release.${uid}.v${version}`;
}

/**
 * How long a revision `helm upgrade|rollback` added by hand is left while it is pending: Helm's
 * own lock, held until the command writes its last record (Helm's default `--timeout`). Taking it
 * away sooner fails the command at its last step ("secrets … not found") after it changed the
 * objects; they are repaired either way, and the record goes at the first read after this.
 */
export const HELM_AT_WORK_MS = 5 * 60_000;

/** Whether a Helm record is one a helm command is still writing: pending, created (by the server's clock) within HELM_AT_WORK_MS. */
function helmAtWork(secret: KubeObject, now: Date): boolean {
  if (!(secret.metadata.labels?.status ?? '').startsWith('pending-')) return false;
  const created = Date.parse(secret.metadata.creationTimestamp ?? '');
  return Number.isFinite(created) && now.getTime() - created < HELM_AT_WORK_MS;
}

function digestOf(data: string): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 32);
}

/** The mirror Secret's `data.release` (the slim head of a large release, as Helm reads it). */
function releaseData(s: KubeObject | undefined): string {
  return (s?.data as { release?: string } | undefined)?.release ?? '';
}

export interface ReleaseRecordsOptions {
  /** The manager's own client: the only identity that writes the history. */
  client: RecordsClient;
  /** The manager's namespace, where the history lives. */
  namespace: string;
  logger: Logger;
  now?: () => Date;
}

export class ReleaseRecords {
  private readonly now: () => Date;

  constructor(private readonly o: ReleaseRecordsOptions) {
    this.now = o.now ?? (() => new Date());
  }

  get namespace(): string {
    return this.o.namespace;
  }

  /**
   * One release's history, keyed by its owner's UID and mirrored by `mirror` (Helm's Secrets in
   * the release namespace, written as the release's identity). `migrate` checks Helm records when
   * the owner has none here yet; without it nothing moves over.
   */
  bind(owner: RecordOwner, release: ReleaseRef, mirror: ReleaseStore, migrate?: MigrationCheck): TrustedHistory {
    return new TrustedHistory(this.o, this.now, owner, release, mirror, migrate);
  }

  /** Every owner with records here: its UID, kind, name, namespace and apiVersion. */
  async owners(): Promise<RecordOwner[]> {
    const list = await this.o.client.list('v1', 'Secret', { namespace: this.o.namespace, labelSelector: RECORD_OWNER_UID_LABEL });
    const byUid = new Map<string, RecordOwner>();
    for (const s of list.items) {
      const l = s.metadata.labels ?? {};
      const uid = l[RECORD_OWNER_UID_LABEL];
      if (s.type !== RECORD_TYPE || uid === undefined || byUid.has(uid)) continue;
      const ns = l[OWNER_NAMESPACE_LABEL];
      byUid.set(uid, { uid, kind: l[OWNER_KIND_LABEL] ?? '', name: l[OWNER_NAME_LABEL] ?? '', ...(ns === undefined ? {} : { namespace: ns }), apiVersion: s.metadata.annotations?.[OWNER_API_VERSION_ANNOTATION] ?? '' });
    }
    return [...byUid.values()];
  }

  /** Deletes every record of the owner with this UID (its owner is gone). */
  async removeOwner(uid: string): Promise<number> {
    const mains = await this.o.client.list('v1', 'Secret', { namespace: this.o.namespace, labelSelector: `${RECORD_OWNER_UID_LABEL}=${uid}` });
    const parts = await this.o.client.list('v1', 'Secret', { namespace: this.o.namespace, labelSelector: `${RECORD_PART_OWNER_LABEL}=${uid}` });
    for (const s of [...mains.items, ...parts.items]) await this.o.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: this.o.namespace, name: s.metadata.name ?? '' });
    return mains.items.length;
  }
}

/** One release's trusted history (see the top of this file). */
export class TrustedHistory implements HistoryStore {
  readonly recordsOutsideRelease = true;
  constructor(
    private readonly o: ReleaseRecordsOptions,
    private readonly now: () => Date,
    readonly owner: RecordOwner,
    readonly release: ReleaseRef,
    private readonly mirror: ReleaseStore,
    private readonly migrate: MigrationCheck | undefined,
  ) {}

  /** The history, oldest first; the mirror compared and put right; Helm's records moved over once. */
  async read(): Promise<TrustedRead> {
    const { records, parts } = await this.list();
    let read = await decodeAll(records, (s) => this.decode(s, parts));
    let migrated: number[] = [];
    if (records.length === 0 && this.migrate !== undefined) {
      const moved = await this.migrateFromMirror(this.migrate);
      read = { revisions: moved.revisions, refused: moved.refused };
      migrated = moved.revisions.map((r) => r.revision);
    }
    // The read that moved records wrote the mirror itself; it still says who else holds records of the name.
    const synced = migrated.length > 0 ? await this.foreignOnly() : await this.syncMirror(records, read.revisions);
    return { ...read, mirrorDrift: synced.drift, migrated, ...(synced.foreignOwner === undefined ? {} : { foreignOwner: synced.foreignOwner }), ...(synced.mirrorUnread === undefined ? {} : { mirrorUnread: synced.mirrorUnread }) };
  }

  /** The history as recorded here, read only: no mirror compared, nothing moved over (a person's read: `binnacle helm rollback`). */
  async readRecorded(): Promise<HistoryRead> {
    const { records, parts } = await this.list();
    return decodeAll(records, (s) => this.decode(s, parts));
  }

  async create(rev: ReleaseRevision): Promise<void> {
    const mirrored = this.mirrorSecrets(rev, 'created');
    const [main, ...parts] = this.recordSecrets(rev, 'created', releaseData(mirrored[0]));
    for (const p of parts) await this.o.client.create(p);
    if (main !== undefined) await this.o.client.create(main);
    await this.writeMirror(mirrored);
  }

  async setStatus(rev: ReleaseRevision, status: ReleaseStatus, description?: string): Promise<ReleaseRevision> {
    const next: ReleaseRevision = { ...rev, status, description: description ?? rev.description };
    const mirrored = this.mirrorSecrets(next, 'modified');
    const [main, ...parts] = this.recordSecrets(next, 'modified', releaseData(mirrored[0]));
    for (const p of parts) await createOrReplace(this.o.client, p);
    if (main !== undefined) await this.o.client.update(main);
    await this.writeMirror(mirrored);
    return next;
  }

  async remove(revisions: readonly ReleaseRevision[], whole = false): Promise<void> {
    for (const r of revisions) {
      for (const s of this.recordSecrets(r, 'modified', '')) await this.o.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: this.o.namespace, name: s.metadata.name ?? '' });
      await this.mirror.deleteRevision(this.release, r.revision).catch((err: unknown) => this.mirrorFailed('delete', r.revision, err));
    }
    // The whole history gone (an uninstall): so is the rest of this owner's mirror, a record a
    // helm command was still writing too, since no later read will put it back. (Said by the
    // caller, not listed again: a history trim after every rollout would pay a LIST for nothing.)
    if (whole) await this.dropMirror();
  }

  private async dropMirror(): Promise<void> {
    const all = await this.mirror.records(this.release).catch((err: unknown) => {
      this.mirrorFailed('read', 0, err);
      return { byRevision: new Map<number, { secret: KubeObject }>(), strays: [] };
    });
    for (const [version, m] of all.byRevision) {
      if (this.ownsRecord(m.secret)) await this.mirror.deleteRevision(this.release, version).catch((err: unknown) => this.mirrorFailed('delete', version, err));
    }
    await this.dropStrays(all.strays);
  }

  /** Removes this owner's records stored under names Helm never gives (`helm history` would still show them); returns what it removed. */
  private async dropStrays(strays: readonly KubeObject[]): Promise<MirrorDrift[]> {
    const drift: MirrorDrift[] = [];
    for (const s of strays) {
      if (!this.ownsRecord(s)) continue;
      const version = Number(s.metadata.labels?.version);
      drift.push({ revision: Number.isSafeInteger(version) ? version : 0, change: 'added', stray: s.metadata.name ?? '' });
      await this.mirror.deleteRecord(s).catch((err: unknown) => {
        if (!isNotFound(err) && !isConflict(err)) this.mirrorFailed('delete', 0, err);
      });
    }
    return drift;
  }

  /** Every record of this owner, and the parts of those that have them. */
  private async list(): Promise<{ records: KubeObject[]; parts: Map<string, string> }> {
    const uid = this.owner.uid;
    const list = await this.o.client.list('v1', 'Secret', { namespace: this.o.namespace, labelSelector: `${RECORD_OWNER_UID_LABEL}=${uid}` });
    const records = list.items.filter((s) => s.type === RECORD_TYPE);
    const parts = new Map<string, string>();
    if (records.some((s) => s.metadata.annotations?.[RELEASE_PARTS_ANNOTATION] !== undefined)) {
      const partList = await this.o.client.list('v1', 'Secret', { namespace: this.o.namespace, labelSelector: `${RECORD_PART_OWNER_LABEL}=${uid}` });
      for (const p of partList.items) if (p.type === RELEASE_PART_TYPE) parts.set(p.metadata.name ?? '', (p.data as { part?: string } | undefined)?.part ?? '');
    }
    return { records, parts };
  }

  private async decode(s: KubeObject, parts: ReadonlyMap<string, string>): Promise<ReleaseRevision> {
    const version = Number(s.metadata.labels?.version ?? '0');
    const rev = await revisionFromSecretAsync(s, wholeOf(s, parts, (i) => `${recordName(this.owner.uid, version)}.part${i}`));
    return { ...rev, owner: rev.owner ?? this.owner, ...(s.metadata.annotations?.[MOVED_OVER_ANNOTATION] === 'true' ? { movedOver: true } : {}) };
  }

  /** The Secrets of one revision here: Helm's encoding, renamed, retyped and labelled by the owner's UID. */
  private recordSecrets(rev: ReleaseRevision, kind: 'created' | 'modified', mirrorData: string): KubeObject[] {
    const [main, ...parts] = releaseSecrets(recordInput(rev), this.owner, this.now(), kind);
    const name = recordName(this.owner.uid, rev.revision);
    const out: KubeObject[] = [];
    if (main !== undefined) {
      out.push({
        ...main,
        type: RECORD_TYPE,
        metadata: {
          name,
          namespace: this.o.namespace,
          labels: {
            ...(main.metadata.labels ?? {}),
            owner: 'binnacle',
            [RECORD_OWNER_UID_LABEL]: this.owner.uid,
            [RECORD_RELEASE_NAME_LABEL]: this.release.name,
            [RECORD_RELEASE_NAMESPACE_LABEL]: this.release.namespace,
            ...ownerLabels(this.owner),
          },
          annotations: {
            ...(main.metadata.annotations ?? {}),
            [MIRROR_DIGEST_ANNOTATION]: digestOf(mirrorData),
            [OWNER_API_VERSION_ANNOTATION]: this.owner.apiVersion,
            ...(rev.movedOver === true ? { [MOVED_OVER_ANNOTATION]: 'true' } : {}),
          },
        },
      });
    }
    parts.forEach((p, i) => {
      out.push({ ...p, metadata: { name: `${name}.part${i}`, namespace: this.o.namespace, labels: { [RECORD_PART_OWNER_LABEL]: this.owner.uid, version: String(rev.revision) } } });
    });
    return out;
  }

  private mirrorSecrets(rev: ReleaseRevision, kind: 'created' | 'modified'): KubeObject[] {
    return releaseSecrets(recordInput(rev), this.owner, this.now(), kind);
  }

  /** Writes the mirror's Secrets (parts first); a mirror that cannot be written is said, not fatal: the next read puts it right. */
  private async writeMirror(secrets: readonly KubeObject[]): Promise<void> {
    const [main, ...parts] = secrets;
    try {
      for (const s of [...parts, ...(main === undefined ? [] : [main])]) await createOrReplace(this.mirror.client, s);
    } catch (err) {
      const revision = Number(main?.metadata.labels?.version ?? '0');
      // A revision is recorded before the release creates its namespace; its next write mirrors it.
      if (isNotFound(err)) this.o.logger.debug({ release: `${this.release.namespace}/${this.release.name}`, revision }, 'the release namespace does not exist yet: the Helm record is mirrored once it does');
      else this.mirrorFailed('write', revision, err);
    }
  }

  private mirrorFailed(what: string, revision: number, err: unknown): void {
    this.o.logger.warn({ release: `${this.release.namespace}/${this.release.name}`, revision, err: errorMessage(err) }, `cannot ${what} the release's Helm record (the mirror helm reads); the next reconcile tries again`);
  }

  /**
   * Compares the mirror with the history and puts it right: a revision missing is written
   * (silently: a crash between the two writes), one changed or added by hand is reported and
   * replaced or deleted. One LIST of the release's Helm records; nothing in them is decoded.
   */
  private async syncMirror(records: readonly KubeObject[], revisions: readonly ReleaseRevision[]): Promise<{ drift: MirrorDrift[]; foreignOwner?: string; mirrorUnread?: Error }> {
    let all;
    try {
      all = await this.mirror.records(this.release);
    } catch (err) {
      this.mirrorFailed('read', 0, err);
      // Not knowing who else holds the name, a revision could be written over a Helm user's record.
      return { drift: [], ...(isTransient(err) ? { mirrorUnread: err instanceof Error ? err : new Error(String(err)) } : {}) };
    }
    // Only this owner's records are the mirror: a Helm record keeps its release's labels, so one
    // `helm upgrade` or `helm rollback` made by hand carries them; another's records are left alone.
    const mirrored = new Map([...all.byRevision].filter(([, m]) => this.ownsRecord(m.secret)));
    const foreignOwner = this.foreignOwnerOf(all);
    const drift: MirrorDrift[] = [];
    const byRevision = new Map(revisions.map((r) => [r.revision, r]));
    const expected = new Map(records.map((s) => [Number(s.metadata.labels?.version ?? '0'), s.metadata.annotations?.[MIRROR_DIGEST_ANNOTATION]]));
    for (const rev of revisions) {
      const there = mirrored.get(rev.revision);
      if (there !== undefined && digestOf(releaseData(there.secret)) === expected.get(rev.revision)) continue;
      if (there !== undefined) drift.push({ revision: rev.revision, change: 'edited' });
      await this.writeMirror(this.mirrorSecrets(rev, 'modified'));
    }
    const newest = revisions.reduce((n, r) => Math.max(n, r.revision), 0);
    for (const [version, m] of mirrored) {
      if (byRevision.has(version)) continue;
      // A hand `helm upgrade|rollback` appends the revision after the newest; let it finish.
      if (newest > 0 && version === newest + 1 && helmAtWork(m.secret, this.now())) continue;
      drift.push({ revision: version, change: 'added' });
      await this.mirror.deleteRevision(this.release, version).catch((err: unknown) => this.mirrorFailed('delete', version, err));
    }
    drift.sort((a, b) => a.revision - b.revision);
    drift.push(...(await this.dropStrays([...all.strays].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')))));
    if (drift.length > 0) this.o.logger.warn({ release: `${this.release.namespace}/${this.release.name}`, drift }, "the release's Helm records were changed by hand; put back as the history says (nothing in them is run)");
    return { drift, ...(foreignOwner === undefined ? {} : { foreignOwner }) };
  }

  /** Deletes the trusted records (and parts) of `revisions`, found or not; errors are said, not thrown (a clean-up). */
  private async removeRecords(revisions: readonly ReleaseRevision[]): Promise<void> {
    for (const r of revisions) {
      for (const s of this.recordSecrets(r, 'modified', '')) {
        await this.o.client.delete({ apiVersion: 'v1', kind: 'Secret', namespace: this.o.namespace, name: s.metadata.name ?? '' }).catch((err: unknown) => {
          if (isNotFound(err)) return;
          this.o.logger.warn({ release: `${this.release.namespace}/${this.release.name}`, revision: r.revision, err: errorMessage(err) }, 'cannot take back a record of an unfinished move');
        });
      }
    }
  }

  /** Who else holds Helm records of the release's name, if anyone (see TrustedRead.foreignOwner). */
  private foreignOwnerOf(all: MirrorRecords): string | undefined {
    const foreign = [...all.byRevision.values()].find((m) => !this.ownsRecord(m.secret));
    return foreign === undefined ? undefined : describeRecordOwner(foreign.secret);
  }

  /** The mirror's foreign owner alone (no drift: the mirror was just written). */
  private async foreignOnly(): Promise<{ drift: MirrorDrift[]; foreignOwner?: string; mirrorUnread?: Error }> {
    try {
      const foreignOwner = this.foreignOwnerOf(await this.mirror.records(this.release));
      return { drift: [], ...(foreignOwner === undefined ? {} : { foreignOwner }) };
    } catch (err) {
      this.mirrorFailed('read', 0, err);
      // Not knowing who else holds the name, a revision could be written over a Helm user's record.
      return { drift: [], ...(isTransient(err) ? { mirrorUnread: err instanceof Error ? err : new Error(String(err)) } : {}) };
    }
  }

  /** Whether a Helm record's labels name this owner (kind, name and, for a namespaced owner, namespace). */
  private ownsRecord(secret: KubeObject): boolean {
    const l = secret.metadata.labels ?? {};
    return l[OWNER_KIND_LABEL] === this.owner.kind && l[OWNER_NAME_LABEL] === this.owner.name && l[OWNER_NAMESPACE_LABEL] === this.owner.namespace;
  }

  /** Moves Helm's records into the history, each checked first; what fails is refused by name. */
  private async migrateFromMirror(check: MigrationCheck): Promise<{ revisions: ReleaseRevision[]; refused: RefusedRecord[] }> {
    let found;
    try {
      found = await this.mirror.read(this.release);
    } catch (err) {
      // An identity that may not read Secrets in its namespace wrote no Helm records there either.
      if (isForbidden(err)) return { revisions: [], refused: [] };
      throw err;
    }
    const refused = [...found.refused];
    const refuse = (rev: ReleaseRevision, reason: string): void => {
      refused.push({ secret: `${this.release.namespace}/sh.helm.release.v1.${this.release.name}.v${rev.revision}`, reason });
    };
    // Every record is checked, and encoded as it will be written, before any is written: the move
    // happens once (the first read that finds trusted records makes no other), so a check that
    // fails for a while (it throws) must leave nothing half moved, or the records after it would
    // be lost for good; and a record that cannot be written (too large to encode) is refused by
    // name here rather than failing every read.
    const ready: { rev: ReleaseRevision; mirrored: KubeObject[]; secrets: KubeObject[] }[] = [];
    for (const rev of found.revisions) {
      const problems = await check(rev);
      if (problems.length > 0) {
        refuse(rev, problems.join('; '));
        continue;
      }
      // Its objects passed the check, its fields were not compared: marked, never applied again from it
      // (decide.ts); the owner's own values it claims are whoever wrote the record's, so they are dropped.
      const { ownerValues: _unchecked, ...fields } = rev;
      const owned: ReleaseRevision = { ...fields, owner: this.owner, movedOver: true };
      try {
        const mirrored = this.mirrorSecrets(owned, 'modified');
        ready.push({ rev: owned, mirrored, secrets: this.recordSecrets(owned, 'created', releaseData(mirrored[0])) });
      } catch (err) {
        refuse(rev, errorMessage(err));
      }
    }
    const revisions: ReleaseRevision[] = [];
    for (const { rev, mirrored, secrets } of ready) {
      const [main, ...parts] = secrets;
      try {
        for (const p of parts) await createOrReplace(this.o.client, p);
        if (main !== undefined) await createOrReplace(this.o.client, main);
      } catch (err) {
        await this.removeRecords([rev]);
        if (!isContentRefused(err)) {
          // Failed for a while, or for a reason not this record's: what this move wrote is taken
          // back, so that the next read moves all of it again. Best effort: should the removal fail
          // too (the API server gone meanwhile), the next read finds a partial history, and the
          // revisions it lacks are lost from it.
          await this.removeRecords(revisions);
          throw err;
        }
        // The API server refused this record's content (too large, invalid): the same next time.
        // Refused by name, as a record that fails its check is.
        refuse(rev, errorMessage(err));
        continue;
      }
      revisions.push(rev);
      // The mirror as the engine writes it from now on, so the next read finds it as recorded.
      await this.writeMirror(mirrored);
    }
    if (revisions.length > 0 || refused.length > 0) {
      this.o.logger.info({ release: `${this.release.namespace}/${this.release.name}`, moved: revisions.map((r) => r.revision), refused: refused.length }, "moved the release's Helm records into Binnacle's history");
    }
    return { revisions, refused };
  }
}
