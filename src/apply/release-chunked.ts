/**
 * Reading the release records operator-controller (OLM v1) keeps: helm-operator-plugins' chunked
 * storage driver (`pkg/storage/chunked.go`). Each revision is an index Secret of type
 * `operatorframework.io/index.v1` named as Helm's record (`sh.helm.release.v1.<name>.v<N>`),
 * labelled `owner=operator-controller`, `type=index`, `name`, `version`, `status`, whose
 * `data.chunk` is the first slice of the gzipped release JSON and `data.extraChunks` a JSON list of
 * the names of `operatorframework.io/chunk.v1` Secrets holding the rest, in order. Read only to
 * bring a release's history over (actions/olmv1-history.ts), within Helm records' own bounds.
 */
import type { KubeObject } from '../kube/types.js';
import { inputDigestOf } from '../util/canonical-json.js';
import { BinnacleError } from '../util/errors.js';
import { RECORD_BOUNDS, revisionFromEncodedAsync } from './release.js';
import type { ReleaseRevision } from './types.js';

export const CHUNKED_INDEX_TYPE = 'operatorframework.io/index.v1';
export const CHUNKED_CHUNK_TYPE = 'operatorframework.io/chunk.v1';
/** operator-controller's own read limit (MaxReadChunks): the index's chunk and ten more. */
export const CHUNKED_MAX_CHUNKS = 11;

function refused(secret: string, field: string, why: string): BinnacleError {
  return new BinnacleError('terminal', 'RELEASE_DECODE', `${secret}: field ${field}: ${why}`);
}

function secretName(s: KubeObject): string {
  return `Secret ${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`;
}

function dataField(s: KubeObject, key: string): string | undefined {
  const v = (s.data as Record<string, unknown> | undefined)?.[key];
  return typeof v === 'string' ? v : undefined;
}

/** The index's `data.extraChunks`: the other chunks' Secret names, in order, no more than operator-controller reads. */
function extraChunkNames(index: KubeObject, where: string): string[] {
  const extra = dataField(index, 'extraChunks');
  if (extra === undefined) return [];
  if (extra.length > 64 * 1024) throw refused(where, 'data.extraChunks', 'longer than a list of chunk names can be');
  let names: unknown;
  try {
    names = JSON.parse(Buffer.from(extra, 'base64').toString('utf8')) as unknown;
  } catch {
    throw refused(where, 'data.extraChunks', 'not a JSON list of Secret names');
  }
  if (!Array.isArray(names) || !names.every((n): n is string => typeof n === 'string')) throw refused(where, 'data.extraChunks', 'not a JSON list of Secret names');
  if (names.length + 1 > CHUNKED_MAX_CHUNKS) throw refused(where, 'data.extraChunks', `${names.length + 1} chunks, above the ${CHUNKED_MAX_CHUNKS} operator-controller reads`);
  return names;
}

/**
 * One revision of the chunked store: `index` and the chunk Secrets it names (found by name in
 * `chunks`). Refused, naming the Secret and field, when a chunk is missing, of another type or
 * another record's, when there are more chunks than operator-controller reads, or past the bounds
 * of a Helm record.
 */
export async function revisionFromChunked(index: KubeObject, chunks: ReadonlyMap<string, KubeObject>): Promise<ReleaseRevision> {
  const where = secretName(index);
  if (index.type !== CHUNKED_INDEX_TYPE) throw refused(where, 'type', `${String(index.type)} is not ${CHUNKED_INDEX_TYPE}`);
  const first = dataField(index, 'chunk');
  if (first === undefined) throw refused(where, 'data.chunk', 'missing: not a chunked release record');
  const names = extraChunkNames(index, where);
  const key = index.metadata.name ?? '';
  const parts = [Buffer.from(first, 'base64')];
  let size = parts[0]?.length ?? 0;
  for (const [i, name] of names.entries()) {
    const chunk = chunks.get(name);
    const field = `data.extraChunks[${i}]`;
    if (chunk === undefined) throw refused(where, field, `chunk Secret ${name} is missing`);
    if (chunk.type !== CHUNKED_CHUNK_TYPE || chunk.metadata.labels?.key !== key) throw refused(where, field, `Secret ${name} is not a chunk of this record (type ${String(chunk.type)}, key ${String(chunk.metadata.labels?.key)})`);
    const data = dataField(chunk, 'chunk');
    if (data === undefined) throw refused(secretName(chunk), 'data.chunk', 'missing');
    const bytes = Buffer.from(data, 'base64');
    size += bytes.length;
    // The gzip stream as Helm's record text would carry it (base64): the same bound.
    if (Math.ceil(size / 3) * 4 > RECORD_BOUNDS.encodedBytes) throw refused(where, 'data.extraChunks', `the chunks hold more than a release record may (${RECORD_BOUNDS.encodedBytes} bytes of base64)`);
    parts.push(bytes);
  }
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(index.metadata.labels ?? {})) if (k === 'status' || k === 'version') labels[k] = v;
  return revisionFromEncodedAsync(Buffer.concat(parts).toString('base64'), where, `${where}: fields data.chunk and data.extraChunks`, labels);
}

/**
 * What a revision says, as a digest: every field of it (its release, number, status, chart and
 * chart content, values, manifest, hooks, notes, description, times, owner, and the input digest
 * and generation that steer the next decision). `binnacle olmv1 import-history` pins the
 * revisions it brings over by it, and the migration of a BundleDeployment's records checks a
 * record against the pin: a record changed in any field since is not the one pinned.
 */
export function revisionDigest(r: ReleaseRevision): string {
  return inputDigestOf(r);
}
