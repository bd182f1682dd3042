/**
 * opm's `olm.template.basic`: a list of FBC records in which an `olm.bundle` may be just
 * `{schema, image}`; each such bundle is replaced by the bundle rendered from that image.
 */
import { InputError, ValidationError, ValidationResult } from '../util/errors.js';
import { emptyDeclarativeConfig, type Bundle, type DeclarativeConfig } from '../declcfg/index.js';
import { isRecord } from '../util/object.js';
import { addDocuments, parseDocuments } from '../catalog/load.js';

export const SCHEMA_TEMPLATE_BASIC = 'olm.template.basic';

/** Renders the bundle behind an image reference (a pulled image, or a local dir in tests). */
export type ImageBundleRenderer = (image: string) => Promise<Bundle[]>;

/** Parses a template file's text into its single document; errors name the file. */
export function parseTemplateDocument(text: string, file: string): Record<string, unknown> {
  const result = new ValidationResult(`template ${file}`);
  const docs = parseDocuments(text, file, result);
  if (!result.ok) throw new ValidationError(result);
  const doc = docs[0]?.value;
  if (!isRecord(doc)) throw new InputError('TEMPLATE_INVALID', 'expected a map with a "schema" field', { file });
  return doc;
}

export async function expandBasicTemplate(text: string, file: string, renderImage: ImageBundleRenderer): Promise<DeclarativeConfig> {
  const doc = parseTemplateDocument(text, file);
  if (doc.schema !== SCHEMA_TEMPLATE_BASIC) {
    throw new InputError('TEMPLATE_SCHEMA', `template has unknown schema (${JSON.stringify(doc.schema)}), should be "${SCHEMA_TEMPLATE_BASIC}"`, { file, field: 'schema' });
  }
  if (!Array.isArray(doc.entries)) throw new InputError('TEMPLATE_INVALID', 'expected a list', { file, field: 'entries' });
  const result = new ValidationResult(`template ${file}`);
  const cfg = emptyDeclarativeConfig();
  const entries: unknown[] = doc.entries;
  // Bundle entries are checked here first: a template bundle has only schema and image.
  entries.forEach((e, i) => {
    if (isRecord(e) && e.schema === 'olm.bundle') {
      const extra = Object.keys(e).filter((k) => k !== 'schema' && k !== 'image');
      if (typeof e.image !== 'string' || e.image === '') result.error('template.bundle', 'template bundle must have an image', { file, field: `entries[${i}].image` });
      else if (extra.length > 0) result.error('template.bundle', `unexpected fields present in basic template bundle: ${extra.join(', ')}`, { file, field: `entries[${i}]` });
    }
  });
  addDocuments(
    cfg,
    entries.map((value, index) => ({ value, index, line: 0 })),
    file,
    result,
  );
  if (!result.ok) throw new ValidationError(result);
  const bundles: Bundle[] = [];
  for (const b of cfg.bundles) bundles.push(...(await renderImage(b.image)));
  cfg.bundles = bundles;
  return cfg;
}
