/**
 * Files packed into ConfigMaps, as `run bundle DIR` ships a bundle and its catalog with no
 * registry (operator-sdk's package-manifest runner did the same): flat keys, each ConfigMap
 * under the API server's 1 MiB limit, text in `data` and anything else in `binaryData`.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError } from '../util/errors.js';

/** Room left for metadata under the 1 MiB an object may take in etcd. */
export const CONFIGMAP_BUDGET = 900 * 1024;

export interface PackedFile {
  key: string;
  content: Buffer;
}

export interface PackedConfigMap {
  name: string;
  /** The directory its keys land in. */
  path: string;
  object: KubeObject;
}

function isUtf8(b: Buffer): boolean {
  return Buffer.from(b.toString('utf8'), 'utf8').equals(b);
}

/** The regular files directly in `dir` (a nested directory is refused: ConfigMap keys are flat). */
export async function readFlatDir(dir: string): Promise<PackedFile[]> {
  const out: PackedFile[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const st = await stat(join(dir, name));
    if (st.isDirectory()) throw new BinnacleError('input', 'RUN_BUNDLE_NESTED', `${join(dir, name)} is a directory: a bundle shipped through ConfigMaps has flat manifests/ and metadata/; push the bundle as an image instead`);
    if (st.isFile()) out.push({ key: name, content: await readFile(join(dir, name)) });
  }
  return out;
}

/** Packs `files` into ConfigMaps `<base>-<path>[-<n>]` in `namespace`, each within the budget. */
export function packConfigMaps(files: readonly PackedFile[], o: { base: string; path: string; namespace: string; labels: Record<string, string> }): PackedConfigMap[] {
  const groups: PackedFile[][] = [];
  let current: PackedFile[] = [];
  let size = 0;
  for (const f of files) {
    const cost = isUtf8(f.content) ? f.content.length : Math.ceil(f.content.length / 3) * 4;
    if (cost > CONFIGMAP_BUDGET) {
      throw new BinnacleError('input', 'RUN_BUNDLE_FILE_TOO_LARGE', `${o.path}/${f.key} is ${f.content.length} bytes, more than a ConfigMap holds: push the bundle as an image (\`binnacle bundle build DIR --tag REF --push\`) and run \`binnacle run bundle REF\``);
    }
    if (size + cost > CONFIGMAP_BUDGET && current.length > 0) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(f);
    size += cost;
  }
  if (current.length > 0) groups.push(current);
  const stem = o.path.replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'root';
  return groups.map((g, i) => {
    const name = `${o.base}-${stem}${groups.length > 1 ? `-${i}` : ''}`;
    const data: Record<string, string> = {};
    const binaryData: Record<string, string> = {};
    for (const f of g) {
      if (isUtf8(f.content)) data[f.key] = f.content.toString('utf8');
      else binaryData[f.key] = f.content.toString('base64');
    }
    return {
      name,
      path: o.path,
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: o.namespace, labels: o.labels },
        data,
        ...(Object.keys(binaryData).length > 0 ? { binaryData } : {}),
      },
    };
  });
}

/** A short content hash of files, for names that change when the content does. */
export function contentHash(files: readonly PackedFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.key < b.key ? -1 : 1))) h.update(f.key).update('\0').update(f.content).update('\0');
  return h.digest('hex').slice(0, 8);
}

/** A DNS-1123 piece of a name. */
export function namePart(s: string, max: number): string {
  return s.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, max).replace(/-+$/, '');
}
