/**
 * Plain bundles (`plain+v0`): a directory of Kubernetes manifests (under `manifests/`, or the
 * directory itself) installed as they are. No CSV, no conversion: only parsing with errors that
 * name the file and document.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Decoder, typeName } from './decode.js';
import { isRecord } from '../util/object.js';
import { BundleLoadError } from './load.js';
import type { ManifestObject } from './types.js';
import { parseYamlDocuments } from './yaml-docs.js';
import type { Problem } from '../util/errors.js';

export interface PlainBundle {
  dir: string;
  objects: ManifestObject[];
}

export async function loadPlainBundleDir(dir: string): Promise<PlainBundle> {
  const hasManifests = (await stat(join(dir, 'manifests')).catch(() => undefined))?.isDirectory() ?? false;
  const root = hasManifests ? join(dir, 'manifests') : dir;
  const prefix = hasManifests ? 'manifests/' : '';
  const problems: Problem[] = [];
  const objects: ManifestObject[] = [];
  const walk = async (d: string, rel: string): Promise<void> => {
    const entries = (await readdir(d, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) await walk(join(d, e.name), `${rel}${e.name}/`);
      else if (e.isFile() && /\.(ya?ml|json)$/i.test(e.name)) {
        const file = `${rel}${e.name}`;
        const parsed = parseYamlDocuments(await readFile(join(d, e.name), 'utf8'), file);
        problems.push(...parsed.problems);
        for (const doc of parsed.documents) {
          const field = doc.index > 0 ? `[document ${doc.index}]` : '';
          if (!isRecord(doc.value)) {
            problems.push({ severity: 'error', rule: 'manifest.object', message: `must be a Kubernetes object, got ${typeName(doc.value)}`, file });
            continue;
          }
          const dec = new Decoder(file);
          const kind = dec.str(doc.value, 'kind', field, true);
          const apiVersion = dec.str(doc.value, 'apiVersion', field, true);
          const meta = dec.record(doc.value, 'metadata', field, true);
          const name = meta === undefined ? undefined : dec.str(meta, 'name', field === '' ? 'metadata' : `${field}.metadata`, true);
          problems.push(...dec.problems);
          if (kind === undefined || apiVersion === undefined || name === undefined) continue;
          const ns = meta !== undefined && typeof meta.namespace === 'string' ? meta.namespace : undefined;
          objects.push({ file, index: doc.index, apiVersion, kind, name, ...(ns === undefined ? {} : { namespace: ns }), object: doc.value });
        }
      }
    }
  };
  await walk(root, prefix);
  if (objects.length === 0 && !problems.some((p) => p.severity === 'error')) {
    problems.push({ severity: 'error', rule: 'bundle.empty', message: 'no Kubernetes manifests found', file: dir });
  }
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) throw new BundleLoadError(dir, errors);
  return { dir, objects };
}
