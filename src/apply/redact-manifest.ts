/**
 * A release manifest fit to show: every Secret's `data` and `stringData` values replaced by
 * `***`, everything else as Helm rendered it. Status (`deployedRelease.manifest`) and the
 * console show manifests to whoever may read a custom resource, which is not whoever may read
 * the Secrets of its namespace (helm-operator leaks them there).
 */
import { REDACTED } from '../util/redact.js';
import { yamlPackage } from '../util/yaml.js';

const SECRET_FIELDS = ['data', 'stringData'] as const;

/** `manifest` (YAML documents separated by `---` lines) with Secret values redacted. */
export function redactSecrets(manifest: string): string {
  return manifest
    .split(/^(?=---[ \t]*$)/m)
    .map(redactDocument)
    .join('');
}

function redactDocument(part: string): string {
  // Cheap test first: most documents are not Secrets and are kept byte for byte.
  if (!part.includes('Secret')) return part;
  const marker = /^---[ \t]*\n?/.exec(part)?.[0] ?? '';
  const y = yamlPackage();
  const doc = y.parseDocument(part.slice(marker.length));
  // A Secret that does not parse cleanly is not shown at all: better nothing than its data.
  if (doc.errors.length > 0) return `${marker}# a Secret that could not be read: not shown\n`;
  if (doc.get('kind') !== 'Secret') return part;
  for (const field of SECRET_FIELDS) {
    const values = doc.get(field);
    if (y.isMap(values)) for (const item of values.items) item.value = doc.createNode(REDACTED);
    else if (values !== undefined && values !== null) doc.set(field, REDACTED);
  }
  return `${marker}${doc.toString({ lineWidth: 0 })}`;
}
