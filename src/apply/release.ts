/**
 * Helm v3 release records, byte-compatible with helm's Secrets storage driver
 * (pkg/storage/driver/secrets.go, util.go): the release object as JSON, gzipped, base64'd,
 * stored as `data.release` of a Secret `sh.helm.release.v1.<name>.v<N>` of type
 * `helm.sh/release.v1`, labelled name/owner=helm/status/version. Extra labels on the Secret
 * are the release's own labels in Helm ≥ 3.13; Binnacle keeps its owner there.
 */
import { promisify } from 'node:util';
import { gunzip, gunzipSync, gzipSync, constants as zlibConstants } from 'node:zlib';
import { stringify, type Document as YamlDocument } from 'yaml';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { jsonMemberSpan } from '../util/json-member.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { YamlAliasError, yamlPackage, yamlValue } from '../util/yaml.js';
import { isKubeObject, type KubeObject } from '../kube/types.js';
import { chartFromJson, chartJson } from './chart-intern.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, ownerLabels } from './ownership.js';
import type { ChartInfo, Owner, ReleaseContent, ReleaseHook, ReleaseRevision, ReleaseStatus } from './types.js';

export const RELEASE_SECRET_TYPE = 'helm.sh/release.v1';
/** A DNS-1123 name, as release names and namespaces are. */
const KUBE_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** The digest of what a revision was made from (a release label, as Helm ≥ 3.13 keeps them). */
export const INPUT_DIGEST_LABEL = 'binnacle.dev/input-digest';
/** The owner's metadata.generation a revision was made at. */
export const OWNER_GENERATION_LABEL = 'binnacle.dev/owner-generation';
/** Labels Helm's driver sets itself; any other Secret label is a release label. */
const SYSTEM_LABELS = new Set(['name', 'owner', 'status', 'version', 'createdAt', 'modifiedAt']);
const STATUSES: readonly ReleaseStatus[] = ['unknown', 'deployed', 'uninstalled', 'superseded', 'failed', 'uninstalling', 'pending-install', 'pending-upgrade', 'pending-rollback'];

/** The chart Binnacle records for a bundle release: metadata only, as Helm's JSON shapes it. */
interface BundleChartJson {
  metadata: { name: string; version: string; description?: string; apiVersion: 'v2'; appVersion?: string };
  lock: null;
  templates: unknown[];
  values: Record<string, unknown>;
  schema: null;
  files: null;
}

/** The JSON shape of helm's `release.Release`, with the fields Binnacle writes. */
export interface RevisionRecordJson {
  name: string;
  info: {
    first_deployed: string;
    last_deployed: string;
    deleted: string;
    description: string;
    status: ReleaseStatus;
    notes?: string;
  };
  /** Binnacle's bundle chart, or a chart release's own chart object. */
  chart: BundleChartJson | Record<string, unknown>;
  config: Record<string, unknown>;
  manifest: string;
  hooks?: ReleaseHook[];
  version: number;
  namespace: string;
  /**
   * How the revision was applied, as Helm 4 records it: Binnacle always applies server-side, so
   * `ssa`, and a `helm upgrade` by hand (Helm 4) applies server-side too instead of fighting
   * Binnacle's field ownership. Records without it (Binnacle's before Helm 4, Helm 3's) read as
   * client-side applied, as Helm 4 reads them.
   */
  apply_method?: 'ssa' | 'csa';
  /**
   * Binnacle's own: the owner's values apart from its operator's layers (ReleaseRevision.ownerValues),
   * after Helm's fields; Helm's decoder ignores a member it does not know.
   */
  binnacle_owner_values?: Record<string, unknown>;
}

export function revisionRecordSecretName(release: string, version: number): string {
  return `sh.helm.release.v1.${release}.v${version}`;
}

/** JSON → gzip → base64, exactly as helm's encodeRelease. */
export function encodeRevisionRecord(rel: RevisionRecordJson): string {
  return gzipSync(Buffer.from(releaseText(rel), 'utf8'), { level: zlibConstants.Z_BEST_COMPRESSION }).toString('base64');
}

/** The release as JSON, members in Helm's order; a shared chart's kept text is spliced in, not encoded again. */
function releaseText(rel: RevisionRecordJson): string {
  const { name, info, chart, ...rest } = rel;
  return `{"name":${JSON.stringify(name)},"info":${JSON.stringify(info)},"chart":${chartJson(chart)},${JSON.stringify(rest).slice(1)}`;
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b, 0x08]);

/**
 * The bounds every release record is decoded within, wherever it comes from (Binnacle's own
 * records, the Helm mirror a tenant can write, `helm adopt`): a record past one is refused by
 * name, never decoded whole. A Secret holds 1 MiB, so a gzipped record can expand a thousandfold
 * (a planted 1 MB "bomb" grew the manager by 1.5 GiB); the output is capped while it is inflated.
 */
export const RECORD_BOUNDS = {
  /** The base64 text of one record, its parts joined (a large release is split over Secrets). */
  encodedBytes: 48 * 1024 * 1024,
  /** The release's JSON once inflated. */
  jsonBytes: 32 * 1024 * 1024,
  /** How deep its JSON may nest (util/nesting.ts). */
  nesting: MAX_NESTING,
  /** Helm's revision numbers are positive 32-bit integers (Go's int in its JSON, and `.vN` in the name). */
  maxRevision: 2 ** 31 - 1,
} as const;

/** A record refused by its bounds or its shape: RELEASE_DECODE, naming where it was read. */
function refused(where: string, why: string, cause?: unknown): BinnacleError {
  return new BinnacleError('terminal', 'RELEASE_DECODE', `${where}: ${why}`, cause === undefined ? undefined : { cause });
}

const gunzipAsync = promisify(gunzip);

/**
 * base64 → (gunzip when gzipped, as helm accepts both) → JSON, still unknown, within
 * RECORD_BOUNDS. A chart object is the shared one of its content (chart-intern), parsed only
 * when no record in memory has it.
 */
export function decodeRevisionRecord(encoded: string, where = 'release'): unknown {
  let bytes = recordBytes(encoded, where);
  if (isGzip(bytes)) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: RECORD_BOUNDS.jsonBytes });
    } catch (err) {
      throw inflateRefused(where, err);
    }
  }
  return parseRecordJson(bytes, where);
}

/**
 * decodeRevisionRecord with the inflating on libuv's thread pool: a record of megabytes (or a planted
 * bomb inflating to the bound) does not hold the event loop while it inflates. The readers of
 * release histories use it; the bounds and errors are decodeRevisionRecord's.
 */
export async function decodeReleaseAsync(encoded: string, where = 'release'): Promise<unknown> {
  let bytes = recordBytes(encoded, where);
  if (isGzip(bytes)) {
    try {
      bytes = await gunzipAsync(bytes, { maxOutputLength: RECORD_BOUNDS.jsonBytes });
    } catch (err) {
      throw inflateRefused(where, err);
    }
  }
  return parseRecordJson(bytes, where);
}

/** The record's bytes, its base64 bounded before anything is decoded. */
function recordBytes(encoded: string, where: string): Buffer {
  if (encoded.length > RECORD_BOUNDS.encodedBytes) throw refused(where, `the record is ${encoded.length} bytes of base64, above the ${RECORD_BOUNDS.encodedBytes} a release record may have`);
  return Buffer.from(encoded, 'base64');
}

function isGzip(bytes: Buffer): boolean {
  return bytes.subarray(0, 3).equals(GZIP_MAGIC);
}

function inflateRefused(where: string, err: unknown): BinnacleError {
  if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') return refused(where, `the record inflates to more than ${RECORD_BOUNDS.jsonBytes} bytes (a release record is far smaller): refused unread`, err);
  return refused(where, `not a Helm release record: ${errorMessage(err)}`, err);
}

/** The inflated record's JSON, bounded in size and nesting; its chart interned (chart-intern). */
function parseRecordJson(bytes: Buffer, where: string): unknown {
  if (bytes.length > RECORD_BOUNDS.jsonBytes) throw refused(where, `the record is ${bytes.length} bytes, above the ${RECORD_BOUNDS.jsonBytes} a release record may have`);
  let rel: unknown;
  try {
    const json = bytes.toString('utf8');
    const span = jsonMemberSpan(json, 'chart');
    if (span === undefined || json.charCodeAt(span[0]) !== 0x7b) rel = JSON.parse(json) as unknown;
    else {
      const parsed = JSON.parse(`${json.slice(0, span[0])}null${json.slice(span[1])}`) as Record<string, unknown>;
      // A record naming `chart` twice keeps the last, as JSON.parse and Go's decoder do.
      if (parsed.chart === null) parsed.chart = chartFromJson(json.slice(span[0], span[1]));
      rel = parsed;
    }
  } catch (err) {
    throw refused(where, `not a Helm release record: ${errorMessage(err)}`, err);
  }
  if (nestsDeeperThan(rel, RECORD_BOUNDS.nesting)) throw refused(where, `the record nests deeper than ${RECORD_BOUNDS.nesting} levels`);
  return rel;
}

/** Helm's timestamp format (RFC 3339; Go accepts the millisecond fraction). */
export function helmTime(d: Date): string {
  return d.toISOString();
}

/** What a revision record (its Secret) holds: a revision as ReleaseRevision reads it, numbered as Helm's JSON numbers it (`version`); the owner is given apart. */
export type ReleaseRecordInput = Omit<ReleaseRevision, 'revision' | 'owner'> & { version: number };

export function releaseJson(r: ReleaseRecordInput): RevisionRecordJson {
  if (r.content !== undefined) {
    // A chart release: Helm's own chart object and hooks, so the record is Helm's.
    const info: RevisionRecordJson['info'] = { first_deployed: r.firstDeployed, last_deployed: r.lastDeployed, deleted: '', description: r.description, status: r.status };
    if (r.content.notes !== undefined && r.content.notes !== '') info.notes = r.content.notes;
    return { name: r.name, info, chart: r.content.chart, config: r.config, manifest: r.content.manifest, hooks: r.content.hooks, version: r.version, namespace: r.namespace, apply_method: 'ssa', ...(r.ownerValues === undefined ? {} : { binnacle_owner_values: r.ownerValues }) };
  }
  const metadata: BundleChartJson['metadata'] = { name: r.chart.name, version: r.chart.version, apiVersion: 'v2' };
  if (r.chart.description !== undefined) metadata.description = r.chart.description;
  if (r.chart.appVersion !== undefined) metadata.appVersion = r.chart.appVersion;
  return {
    name: r.name,
    info: { first_deployed: r.firstDeployed, last_deployed: r.lastDeployed, deleted: '', description: r.description, status: r.status },
    chart: { metadata, lock: null, templates: [], values: {}, schema: null, files: null },
    config: r.config,
    manifest: r.manifest,
    version: r.version,
    namespace: r.namespace,
    apply_method: 'ssa',
    ...(r.ownerValues === undefined ? {} : { binnacle_owner_values: r.ownerValues }),
  };
}

/**
 * A Secret holds at most 1 MiB. A release above this (a chart with large templates or files)
 * is stored whole in part Secrets that Helm does not list, and its Helm Secret keeps a copy
 * without the chart's templates and files: `helm list|history|get|rollback` read that copy
 * (none of them needs the templates), Binnacle reads the whole from the parts.
 */
export const MAX_RELEASE_SECRET_BYTES = 900 * 1024;
export const RELEASE_PARTS_ANNOTATION = 'binnacle.dev/release-parts';
export const RELEASE_PART_OF_LABEL = 'binnacle.dev/release-part-of';
export const RELEASE_PART_TYPE = 'binnacle.dev/release.part';

export function releasePartName(release: string, version: number, part: number): string {
  return `${revisionRecordSecretName(release, version)}.part${part}`;
}

/** The Secrets that store one revision: Helm's own, and the parts of a large release. */
export function releaseSecrets(r: ReleaseRecordInput, owner: Owner | undefined, now: Date, kind: 'created' | 'modified', limit = MAX_RELEASE_SECRET_BYTES): KubeObject[] {
  const main = revisionRecordSecret(r, owner, now, kind);
  const full = (main.data as { release: string }).release;
  if (full.length <= limit || r.content === undefined) return [main];
  const slim: ReleaseRecordInput = { ...r, content: { ...r.content, chart: { ...r.content.chart, templates: [], files: [] } } };
  const head = revisionRecordSecret(slim, owner, now, kind);
  const slimData = (head.data as { release: string }).release;
  if (slimData.length > limit) {
    throw new BinnacleError('input', 'RELEASE_TOO_LARGE', `release ${r.namespace}/${r.name} revision ${r.version}: even without the chart's templates and files the record is ${slimData.length} bytes, above ${limit}: the manifest itself is too large for a Secret`);
  }
  const parts: KubeObject[] = [];
  for (let i = 0; i * limit < full.length; i++) {
    parts.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: releasePartName(r.name, r.version, i), namespace: r.namespace, labels: { [RELEASE_PART_OF_LABEL]: r.name, version: String(r.version) } },
      type: RELEASE_PART_TYPE,
      data: { part: full.slice(i * limit, (i + 1) * limit) },
    });
  }
  head.metadata.annotations = { [RELEASE_PARTS_ANNOTATION]: String(parts.length) };
  return [head, ...parts];
}

/** The Secret that stores one revision, as helm's newSecretsObject builds it. */
export function revisionRecordSecret(r: ReleaseRecordInput, owner: Owner | undefined, now: Date, kind: 'created' | 'modified'): KubeObject {
  const labels: Record<string, string> = {};
  if (owner !== undefined) Object.assign(labels, ownerLabels(owner));
  if (r.inputDigest !== undefined) labels[INPUT_DIGEST_LABEL] = r.inputDigest;
  if (r.ownerGeneration !== undefined) labels[OWNER_GENERATION_LABEL] = String(r.ownerGeneration);
  Object.assign(labels, { name: r.name, owner: 'helm', status: r.status, version: String(r.version) });
  labels[kind === 'created' ? 'createdAt' : 'modifiedAt'] = String(Math.floor(now.getTime() / 1000));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: revisionRecordSecretName(r.name, r.version), namespace: r.namespace, labels },
    type: RELEASE_SECRET_TYPE,
    // Secret data is base64 on the wire, so the release is base64'd twice, as in Helm.
    data: { release: Buffer.from(encodeRevisionRecord(releaseJson(r)), 'utf8').toString('base64') },
  };
}

function rec(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** A record's revision number is Helm's (a positive 32-bit integer) and its name and namespace Kubernetes names; RELEASE_DECODE otherwise. */
function checkIdentity(rel: Record<string, unknown>, where: string): void {
  if (typeof rel.version !== 'number' || !Number.isInteger(rel.version) || rel.version < 1 || rel.version > RECORD_BOUNDS.maxRevision) {
    throw refused(where, `version ${String(rel.version)} is not a revision number (a positive 32-bit integer, as Helm's)`);
  }
  for (const [field, value, limit] of [['name', rel.name, 53], ['namespace', rel.namespace, 63]] as const) {
    if (typeof value !== 'string' || value.length > limit || !KUBE_NAME.test(value)) {
      throw refused(where, `${field} ${JSON.stringify(value)} is not a Kubernetes name of at most ${limit} characters`);
    }
  }
}

/**
 * Decodes a revision record Secret (as JSON from the API server) into a revision; names the Secret on
 * error. `whole` is the joined `data.part` of a large release's part Secrets, when it has them.
 */
export function revisionFromSecret(secret: unknown, whole?: string): ReleaseRevision {
  const r = recordOfSecret(secret, whole);
  return revisionOfRecord(rec(decodeRevisionRecord(r.encoded, r.where)), r);
}

/** revisionFromSecret, inflating off the event loop (decodeReleaseAsync). */
export async function revisionFromSecretAsync(secret: unknown, whole?: string): Promise<ReleaseRevision> {
  const r = recordOfSecret(secret, whole);
  return revisionOfRecord(rec(await decodeReleaseAsync(r.encoded, r.where)), r);
}

/**
 * A revision from Helm's record text (base64, gzipped or not) read from somewhere other than a
 * Helm record Secret (another driver's storage): `where` names the field, `labels` stand for the
 * Secret's (its status label preferred, as Helm's). Same bounds and checks as revisionFromSecret.
 */
export async function revisionFromEncodedAsync(encoded: string, secretName: string, where: string, labels: Record<string, string>): Promise<ReleaseRevision> {
  return revisionOfRecord(rec(await decodeReleaseAsync(encoded, where)), { secretName, where, meta: { labels }, encoded });
}

interface SecretRecord {
  secretName: string;
  where: string;
  meta: Record<string, unknown> | undefined;
  encoded: string;
}

function recordOfSecret(secret: unknown, whole: string | undefined): SecretRecord {
  const s = rec(secret);
  const meta = rec(s?.metadata);
  const secretName = `Secret ${str(meta?.namespace)}/${str(meta?.name)}`;
  const data = rec(s?.data);
  if (s === undefined || typeof data?.release !== 'string') {
    throw new BinnacleError('terminal', 'RELEASE_DECODE', `${secretName}: field data.release is missing: not a Helm release record`);
  }
  return { secretName, where: `${secretName}: field data.release`, meta, encoded: Buffer.from(whole ?? data.release, 'base64').toString('utf8') };
}

function revisionOfRecord(rel: Record<string, unknown> | undefined, { secretName, meta }: SecretRecord): ReleaseRevision {
  const info = rec(rel?.info);
  const chartMeta = rec(rec(rel?.chart)?.metadata);
  if (rel === undefined || info === undefined || typeof rel.version !== 'number') {
    throw new BinnacleError('terminal', 'RELEASE_DECODE', `${secretName}: field data.release: the release has no info or version`);
  }
  const version = rel.version;
  checkIdentity(rel, `${secretName}: field data.release`);
  const status = STATUSES.find((x) => x === info.status) ?? 'unknown';
  const chart = chartInfo(chartMeta);
  const labels = rec(meta?.labels) ?? {};
  const content = chartContent(rel);
  return {
    ...labelFacts(labels),
    ...(content === undefined ? {} : { content }),
    name: str(rel.name),
    namespace: str(rel.namespace),
    revision: version,
    // The Secret's status label is the one Helm updates; prefer it as Helm does on list.
    status: STATUSES.find((x) => x === labels.status) ?? status,
    description: str(info.description),
    firstDeployed: str(info.first_deployed),
    lastDeployed: str(info.last_deployed),
    chart,
    config: rec(rel.config) ?? {},
    manifest: str(rel.manifest),
    ...(rec(rel.binnacle_owner_values) === undefined ? {} : { ownerValues: rec(rel.binnacle_owner_values) }),
  };
}

/** What Binnacle's labels on a record say: its owner, the inputs' digest, the owner's generation. */
function labelFacts(labels: Record<string, unknown>): Pick<ReleaseRevision, 'owner' | 'inputDigest' | 'ownerGeneration'> {
  const { [OWNER_KIND_LABEL]: kind, [OWNER_NAME_LABEL]: name, [OWNER_NAMESPACE_LABEL]: namespace, [INPUT_DIGEST_LABEL]: digest, [OWNER_GENERATION_LABEL]: gen } = labels;
  const generation = typeof gen === 'string' ? Number(gen) : NaN;
  return {
    owner: typeof kind === 'string' && typeof name === 'string' ? { kind, name, ...(typeof namespace === 'string' ? { namespace } : {}) } : undefined,
    ...(typeof digest === 'string' ? { inputDigest: digest } : {}),
    ...(Number.isSafeInteger(generation) && generation > 0 ? { ownerGeneration: generation } : {}),
  };
}

/**
 * The chart content of a release that carries a real chart (templates or hooks): one Helm
 * made, or a Binnacle chart release. Binnacle's own bundle releases have neither.
 */
function chartContent(rel: Record<string, unknown>): ReleaseContent | undefined {
  const chart = rec(rel.chart);
  const templates = chart?.templates;
  const hooks = Array.isArray(rel.hooks) ? rel.hooks.filter((h): h is ReleaseHook => rec(h) !== undefined && typeof rec(h)?.manifest === 'string') : [];
  if (chart === undefined || ((!Array.isArray(templates) || templates.length === 0) && hooks.length === 0)) return undefined;
  const notes = rec(rel.info)?.notes;
  return { chart, manifest: str(rel.manifest), hooks, ...(typeof notes === 'string' && notes !== '' ? { notes } : {}) };
}

function chartInfo(meta: Record<string, unknown> | undefined): ChartInfo {
  const chart: ChartInfo = { name: str(meta?.name), version: str(meta?.version) };
  if (typeof meta?.appVersion === 'string') chart.appVersion = meta.appVersion;
  if (typeof meta?.description === 'string') chart.description = meta.description;
  return chart;
}

/** Release labels a Secret carries beyond Helm's own. */
export function releaseLabels(secret: KubeObject): Record<string, string> {
  return Object.fromEntries(Object.entries(secret.metadata.labels ?? {}).filter(([k]) => !SYSTEM_LABELS.has(k)));
}

/** The manifest as Helm writes it: a YAML stream, each document headed by its source. */
export function toManifest(objects: readonly KubeObject[]): string {
  return objects
    .map((o) => {
      const ns = o.metadata.namespace !== undefined ? `${o.metadata.namespace}/` : '';
      return `---\n# Source: binnacle/${o.kind.toLowerCase()}/${ns}${o.metadata.name ?? ''}.yaml\n${stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })}`;
    })
    .join('');
}

/** One document of a manifest as a Kubernetes object (or nothing, for an empty one); `n` numbers it for messages. */
function manifestObject(doc: YamlDocument, where: string, n: number): KubeObject | undefined {
  if (doc.errors.length > 0) {
    throw new BinnacleError('terminal', 'RELEASE_MANIFEST', `${where}: manifest document ${n}: ${doc.errors.map((e) => e.message).join('; ')}`);
  }
  let value: unknown;
  try {
    value = yamlValue(doc, `${where}: manifest document ${n}`);
  } catch (err) {
    if (err instanceof YamlAliasError) throw new BinnacleError('terminal', 'RELEASE_MANIFEST', err.message, { cause: err });
    throw err;
  }
  if (value === null || value === undefined) return undefined;
  if (!isKubeObject(value)) {
    throw new BinnacleError('terminal', 'RELEASE_MANIFEST', `${where}: manifest document ${n} is not a Kubernetes object (needs apiVersion, kind, metadata)`);
  }
  return value;
}

/** Objects of a stored manifest; anything that is not an object is an error naming the revision. */
export function parseManifest(manifest: string, where: string): KubeObject[] {
  const out: KubeObject[] = [];
  yamlPackage().parseAllDocuments(manifest).forEach((doc, i) => {
    const o = manifestObject(doc, where, i + 1);
    if (o !== undefined) out.push(o);
  });
  return out;
}

/** A line that starts a YAML document (`---` at column 0): nothing of a document can start so, so a manifest splits there. */
const DOCUMENT_START = /^---(?=[ \t]*(?:#.*)?$)/gm;

/** The manifest's documents as text, split at their `---` lines (never inside one). */
export function manifestDocuments(manifest: string): string[] {
  const starts: number[] = [];
  for (const m of manifest.matchAll(DOCUMENT_START)) starts.push(m.index);
  if (starts[0] !== 0) starts.unshift(0);
  return starts.map((at, i) => manifest.slice(at, starts[i + 1] ?? manifest.length)).filter((d) => d.trim() !== '' && d.trim() !== '---');
}

/** How long parsing may hold the event loop before it lets other work run. */
const PARSE_SLICE_MS = 8;

/**
 * parseManifest without holding the event loop: document by document, letting other work run
 * (the Lease's renewal, other reconciles, the probes) every few milliseconds. A manifest is
 * bounded (apply/limits.ts), but a bounded one of thousands of objects still takes seconds to
 * read, which is longer than a leader may go without renewing its Lease.
 */
export async function parseManifestAsync(manifest: string, where: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  const yaml = yamlPackage();
  let n = 0;
  let slice = performance.now();
  for (const text of manifestDocuments(manifest)) {
    for (const doc of yaml.parseAllDocuments(text)) {
      const o = manifestObject(doc, where, ++n);
      if (o !== undefined) out.push(o);
    }
    if (performance.now() - slice > PARSE_SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
  }
  return out;
}
