/**
 * Reading a chart's values.yaml as Helm does. Helm parses values with sigs.k8s.io/yaml, i.e.
 * YAML 1.1 (`yes`/`on` are booleans, `012` is octal) but timestamps stay strings and there
 * are no sexagesimal numbers; this parser matches that, so the types inferred here and the
 * values a CR is built from agree with what Helm would see.
 */
import { type Document, type DocumentOptions, LineCounter, type ParseOptions, type SchemaOptions, type YAMLError } from 'yaml';
import { InputError } from '../../util/errors.js';
import { YamlAliasError, yamlPackage, yamlValue } from '../../util/yaml.js';
import { isRecord } from '../../util/object.js';

export interface ParsedValues {
  /** The values as plain JSON-compatible data; `{}` for an empty file. */
  values: Record<string, unknown>;
  document: Document;
  lineCounter: LineCounter;
}

const HELM_YAML_OPTIONS = {
  version: '1.1' as const,
  customTags: (tags: unknown[]): unknown[] =>
    tags.filter((t) => {
      const tag = t as { tag?: string; format?: string };
      if (tag.tag === 'tag:yaml.org,2002:timestamp') return false;
      return !((tag.tag === 'tag:yaml.org,2002:int' || tag.tag === 'tag:yaml.org,2002:float') && tag.format === 'TIME');
    }),
};

/** Parses values.yaml text; `file` names it in errors (e.g. `mychart/values.yaml`). */
export function parseValuesYaml(text: string, file: string): ParsedValues {
  const lineCounter = new LineCounter();
  const document = yamlPackage().parseDocument(text, { ...HELM_YAML_OPTIONS, lineCounter, prettyErrors: false, uniqueKeys: true } as DocumentOptions & ParseOptions & SchemaOptions);
  const first = document.errors[0];
  if (first !== undefined) throw yamlError(first, lineCounter, file);
  let values: unknown;
  try {
    values = yamlValue(document, file);
  } catch (err) {
    if (err instanceof YamlAliasError) throw new InputError('VALUES_YAML', `cannot read values: ${err.reason}`, { file, cause: err });
    throw err;
  }
  if (values === null || values === undefined) return { values: {}, document, lineCounter };
  if (!isRecord(values)) {
    throw new InputError('VALUES_NOT_A_MAP', `values must be a map of keys to values, found ${Array.isArray(values) ? 'a list' : typeof values}`, { file, field: 'line 1' });
  }
  return { values, document, lineCounter };
}

function yamlError(err: YAMLError, lc: LineCounter, file: string): InputError {
  const pos = err.linePos?.[0] ?? lc.linePos(err.pos[0]);
  const message = err.message.split('\n')[0] ?? err.message;
  return new InputError('VALUES_YAML', message, { file, field: `line ${pos.line}, column ${pos.col}`, cause: err });
}
