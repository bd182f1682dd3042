/**
 * The `configMaps` source (rukpak's): each ConfigMap's `data` and `binaryData` keys become files
 * in its `path` directory of the tree. Read through the KubeClient.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectReader } from '../kube/ports.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, InputError } from '../util/errors.js';
import type { ConfigMapsSource } from './types.js';
import { isRecord } from '../util/object.js';

const KEY = /^[-._a-zA-Z0-9]+$/;

export async function fetchConfigMaps(source: ConfigMapsSource, dest: string, opts: { client: Pick<ObjectReader, 'get'> | undefined; maxBytes: number }): Promise<{ tree: string }> {
  const client = opts.client;
  if (client === undefined) throw new BinnacleError('input', 'SOURCE_NO_CLIENT', 'a configMaps source needs a connection to the cluster');
  await mkdir(dest, { recursive: true });
  const owner = new Map<string, string>();
  let bytes = 0;
  for (const ref of source.configMaps) {
    const name = `ConfigMap ${ref.namespace}/${ref.name}`;
    let cm: KubeObject;
    try {
      cm = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ref.namespace, name: ref.name });
    } catch (err) {
      if (isNotFound(err)) throw new BinnacleError('transient', 'SOURCE_CONFIGMAP_NOT_FOUND', `${name} does not exist`, { cause: err });
      throw err;
    }
    const raw: Record<string, unknown> = cm;
    const files: { key: string; content: Buffer }[] = [];
    for (const [field, encoding] of [
      ['data', 'utf8'],
      ['binaryData', 'base64'],
    ] as const) {
      const map = raw[field];
      if (map === undefined) continue;
      if (!isRecord(map)) throw new InputError('SOURCE_CONFIGMAP_INVALID', 'expected a map of keys to strings', { file: name, field });
      for (const [key, value] of Object.entries(map)) {
        if (typeof value !== 'string') throw new InputError('SOURCE_CONFIGMAP_INVALID', 'expected a string', { file: name, field: `${field}.${key}` });
        if (!KEY.test(key) || key === '.' || key === '..') throw new InputError('SOURCE_UNSAFE_PATH', `"${key}" cannot be a file name`, { file: name, field: `${field}.${key}` });
        files.push({ key, content: Buffer.from(value, encoding) });
      }
    }
    const dir = ref.path === undefined ? '' : ref.path.split('/').filter((p) => p !== '' && p !== '.').join('/');
    try {
      await mkdir(join(dest, dir), { recursive: true });
    } catch (err) {
      throw new InputError('SOURCE_CONFIGMAP_CONFLICT', `directory ${dir} clashes with a file another ConfigMap gave`, { file: name, field: 'path', cause: err });
    }
    for (const f of files) {
      const rel = dir === '' ? f.key : `${dir}/${f.key}`;
      const first = owner.get(rel);
      if (first !== undefined) throw new InputError('SOURCE_CONFIGMAP_CONFLICT', `file ${rel} is also given by ${first}`, { file: name, field: f.key });
      owner.set(rel, name);
      bytes += f.content.length;
      if (bytes > opts.maxBytes) throw new InputError('SOURCE_TOO_LARGE', `the tree exceeds the limit of ${opts.maxBytes} bytes at this key`, { file: name, field: f.key });
      try {
        await writeFile(join(dest, rel), f.content, { flag: 'wx', mode: 0o644 });
      } catch (err) {
        // 'wx' fails when a directory of another ConfigMap's path is already there.
        throw new InputError('SOURCE_CONFIGMAP_CONFLICT', `file ${rel} clashes with a directory another ConfigMap's path made`, { file: name, field: f.key, cause: err });
      }
    }
  }
  return { tree: dest };
}
