/** The Prometheus text format, as far as operator-controller's PrometheusMetricsAreReturned step relies on expfmt's parser. */
const METRIC_NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/;
/** Go's ParseFloat as expfmt calls it: Inf, Infinity and NaN in any case (prom-client writes `Nan`), a sign on Inf only. */
const FLOAT = /^(?:[+-]?(?:inf|infinity)|nan|[+-]?(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?))$/i;
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** The label names of `{…}` (without the braces), checked: each `name="value"` with only `\\`, `\"` and `\n` escaped, no name twice. */
function labelNames(body: string, fail: (why: string) => never): string[] {
  const names: string[] = [];
  let rest = body;
  while (rest !== '') {
    const m = LABEL.exec(rest);
    if (m === null) fail(`invalid label pair near ${JSON.stringify(rest.slice(0, 40))}`);
    const name = m[1] as string;
    if (names.includes(name)) fail(`duplicate label name "${name}"`);
    if (name === '__name__') fail('label name "__name__" is reserved');
    names.push(name);
    rest = rest.slice(m[0].length);
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (rest !== '') fail(`expected "," or "}" after label ${name}`);
  }
  return names;
}

/** The family a sample belongs to: a histogram's or summary's `_bucket`, `_sum`, `_count` series under its own name. */
function familyOf(name: string, types: ReadonlyMap<string, string>): string {
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const base = m?.[1];
  return base !== undefined && (types.get(base) === 'histogram' || types.get(base) === 'summary') ? base : name;
}

/**
 * expfmt's TextToMetricFamilies, as far as PrometheusMetricsAreReturned relies on it: every line
 * a comment (`# HELP name …`, `# TYPE name type`, one TYPE per family, before its samples) or a
 * sample (`name{labels} value [timestamp]`, a float value, label values escaped as the format
 * says, no label twice); the families that have samples. An error names the line.
 */
export function metricFamilies(text: string): Set<string> {
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const sampled = new Set<string>();
  if (text !== '' && !text.endsWith('\n')) throw new Error('text format parsing error: unexpected end of input stream (the last line has no newline)');
  text.split('\n').forEach((line, i) => {
    const fail: (why: string) => never = (why) => {
      throw new Error(`text format parsing error in line ${i + 1}: ${why}`);
    };
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = new RegExp(`^#[ \\t]+(HELP|TYPE)[ \\t]+(${METRIC_NAME})(?:[ \\t]+(.*))?$`).exec(line);
      if (m === null) return; // other comments are ignored
      const [name, type] = [m[2] as string, m[3] ?? ''];
      if (m[1] === 'HELP') {
        if (helped.has(name)) fail(`second HELP line for metric name "${name}"`);
        if (/\\[^\\n]/.test(type.replace(/\\\\/g, ''))) fail(`invalid escape sequence in HELP of "${name}"`);
        helped.add(name);
        return;
      }
      if (!TYPES.includes(type)) fail(`unknown metric type "${type}"`);
      if (types.has(name)) fail(`second TYPE line for metric name "${name}", or TYPE reported after samples`);
      if (sampled.has(name)) fail(`TYPE reported after samples for metric name "${name}"`);
      types.set(name, type);
      return;
    }
    const m = new RegExp(`^(${METRIC_NAME})(?:\\{(.*)\\})?[ \\t]+(\\S+)(?:[ \\t]+(-?\\d+))?[ \\t]*$`).exec(line);
    if (m === null) fail(JSON.stringify(line.slice(0, 80)));
    if (m[2] !== undefined) labelNames(m[2], fail);
    if (!FLOAT.test(m[3] as string)) fail(`expected float as value, got ${JSON.stringify(m[3])}`);
    const family = familyOf(m[1] as string, types);
    if (!types.has(family)) types.set(family, 'untyped');
    sampled.add(family);
  });
  return sampled;
}
