/**
 * A chart's own word on what it is: `name` and `version` from its `Chart.yaml`, read from a chart
 * directory or from the top directory of a packaged chart without unpacking the rest. Helm's
 * loader does the full reading when the chart is rendered; this is only enough to name the chart
 * and to check that a repository or registry delivered the version it announced.
 */
import { createReadStream } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Parser, type ReadEntry } from 'tar';
import { InputError } from '../../util/errors.js';
import { readYaml } from '../../util/yaml.js';
import { ChartSourceError } from './errors.js';
import { parseChartVersion } from './version.js';
import { isRecord } from '../../util/object.js';

export interface ChartMetadata {
  name: string;
  version: string;
  appVersion: string | undefined;
}

const MAX_CHART_YAML = 1024 * 1024;

/** Decode Chart.yaml text; `ref` and `file` name the chart and the file for errors. */
export function parseChartYaml(text: string, ref: string, file: string): ChartMetadata {
  let doc: unknown;
  try {
    doc = readYaml(text, file, { schema: 'failsafe' });
  } catch (err) {
    // `file: not valid YAML (line, column): …`, or `file: ` and why its aliases cannot be read.
    if (err instanceof InputError) throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref, err.message, { cause: err });
    throw err;
  }
  if (!isRecord(doc)) throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref, `${file}: expected a map`);
  const { name, version, appVersion } = doc;
  if (typeof name !== 'string' || name.trim() === '') throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref, `${file}: name: is missing`);
  if (typeof version !== 'string' || parseChartVersion(version) === undefined) {
    throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref, `${file}: version: ${typeof version === 'string' ? `"${version}" is not a semantic version` : 'is missing'}`);
  }
  return { name, version, appVersion: typeof appVersion === 'string' && appVersion !== '' ? appVersion : undefined };
}

/** Chart.yaml of a chart directory. */
export async function readDirChartMetadata(dir: string, ref: string): Promise<ChartMetadata> {
  const file = join(dir, 'Chart.yaml');
  const st = await lstat(file).catch(() => undefined);
  if (st === undefined || !st.isFile()) throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref, 'the directory has no Chart.yaml file');
  if (st.size > MAX_CHART_YAML) throw new ChartSourceError('HELM_CHART_TOO_LARGE', ref, `Chart.yaml is ${st.size} bytes, over ${MAX_CHART_YAML}`);
  return parseChartYaml(await readFile(file, 'utf8'), ref, 'Chart.yaml');
}

/**
 * Chart.yaml of a packaged chart: `<top>/Chart.yaml`, the way Helm's loader finds it. Reading
 * stops as soon as it is found (`helm package` writes it first); the declared sizes of what comes
 * before it may not exceed `maxBytes`.
 */
export async function readArchiveChartMetadata(path: string, ref: string, maxBytes: number): Promise<ChartMetadata> {
  const parser = new Parser({ strict: true });
  let found: { top: string; text: string } | undefined;
  let failure: ChartSourceError | undefined;
  let seen = 0;
  parser.on('entry', (e: ReadEntry) => {
    const parts = e.path.split('/').filter((p) => p !== '' && p !== '.');
    seen += e.size;
    if (failure === undefined && seen > maxBytes) {
      failure = new ChartSourceError('HELM_CHART_TOO_LARGE', ref, `the archive holds more than ${maxBytes} bytes before its Chart.yaml`);
    }
    const isChartYaml = parts.length === 2 && parts[1] === 'Chart.yaml' && (e.type === 'File' || e.type === 'OldFile');
    if (found !== undefined || failure !== undefined || !isChartYaml) {
      e.resume();
      return;
    }
    if (e.size > MAX_CHART_YAML) {
      failure = new ChartSourceError('HELM_CHART_TOO_LARGE', ref, `${e.path} is ${e.size} bytes, over ${MAX_CHART_YAML}`);
      e.resume();
      return;
    }
    const chunks: Buffer[] = [];
    e.on('data', (c: Buffer) => chunks.push(c));
    e.on('end', () => {
      found = { top: parts[0] ?? '', text: Buffer.concat(chunks).toString('utf8') };
    });
  });
  let parseError: unknown;
  parser.on('error', (err: unknown) => {
    parseError ??= err;
  });
  const stream = createReadStream(path);
  try {
    for await (const chunk of stream) {
      if (found !== undefined || failure !== undefined || parseError !== undefined) break;
      parser.write(chunk as Buffer);
    }
    if (found === undefined && failure === undefined && parseError === undefined) {
      // A damaged archive (a cut gzip stream) ends in an error, never in 'end'.
      await new Promise<void>((resolve) => {
        parser.on('end', () => resolve());
        parser.on('error', () => resolve());
        parser.end();
      });
    }
  } finally {
    stream.destroy();
  }
  if (failure !== undefined) throw failure;
  if (found === undefined) {
    const why = parseError !== undefined ? `is not a gzipped tar archive (${parseError instanceof Error ? parseError.message : 'unreadable'})` : 'has no Chart.yaml in its top directory';
    throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref, `the archive ${why}`);
  }
  return parseChartYaml(found.text, ref, `${found.top}/Chart.yaml`);
}
