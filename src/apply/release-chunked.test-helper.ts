/**
 * operator-controller's chunked release records written as its storage driver writes them
 * (helm-operator-plugins `pkg/storage/chunked.go`), for tests that need them with their own
 * names and uids: the release's gzipped JSON (Helm's encoding, revisionRecordSecret's) cut into
 * `chunkSize` slices, the first in the index Secret, each other in a chunk Secret named
 * `<key>-<FNV-64a of its bytes, base32 lower-case>`. The fixture recorded from the Go driver
 * checks the names (release-chunked.test.ts).
 */
import type { KubeObject } from '../kube/types.js';
import { CHUNKED_CHUNK_TYPE, CHUNKED_INDEX_TYPE } from './release-chunked.js';
import { revisionRecordSecret, revisionRecordSecretName, type ReleaseRecordInput } from './release.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz123456';

/** helm-operator-plugins' chunk name suffix: FNV-64a, base32 with its alphabet, no padding. */
export function chunkHash(data: Buffer): string {
  let h = 0xcbf29ce484222325n;
  for (const b of data) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(h);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32.charAt((value >>> (bits - 5)) & 31);
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32.charAt((value << (5 - bits)) & 31);
  return out;
}

export interface ChunkedOptions {
  /** operator-controller's namespace. */
  namespace: string;
  /** The ClusterExtension, controller of the index Secret. */
  extension: { name: string; uid: string };
  chunkSize?: number;
}

/** The index Secret and chunk Secrets of one revision, as operator-controller leaves them. */
export function chunkedRecordSecrets(r: ReleaseRecordInput, o: ChunkedOptions): KubeObject[] {
  const helmText = Buffer.from((revisionRecordSecret(r, undefined, new Date(), 'created').data as { release: string }).release, 'base64').toString('utf8');
  const gz = Buffer.from(helmText, 'base64');
  const size = o.chunkSize ?? (1024 - 8) * 1024;
  const key = revisionRecordSecretName(r.name, r.version);
  const slices: Buffer[] = [];
  for (let i = 0; i < gz.length; i += size) slices.push(gz.subarray(i, i + size));
  const names = slices.slice(1).map((s) => `${key}-${chunkHash(s)}`);
  const index: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: CHUNKED_INDEX_TYPE,
    immutable: false,
    metadata: {
      name: key,
      namespace: o.namespace,
      labels: { name: r.name, owner: 'operator-controller', status: r.status, version: String(r.version), key, type: 'index', createdAt: String(Math.floor(Date.now() / 1000)) },
      ownerReferences: [{ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: o.extension.name, uid: o.extension.uid, controller: true, blockOwnerDeletion: true }],
    },
    data: { chunk: (slices[0] ?? Buffer.alloc(0)).toString('base64'), extraChunks: Buffer.from(JSON.stringify(names)).toString('base64') },
  };
  const chunks = slices.slice(1).map((s, i): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: CHUNKED_CHUNK_TYPE,
    immutable: true,
    metadata: { name: names[i] ?? '', namespace: o.namespace, labels: { owner: 'operator-controller', key, type: 'chunk' } },
    data: { chunk: s.toString('base64') },
  }));
  return [index, ...chunks];
}
