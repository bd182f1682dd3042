/**
 * Fuzzing what src/resolve reads from catalogs and users: version ranges (npm and Masterminds
 * syntax, OLM's blang ranges in src/catalog/semver-range, Helm chart ranges) and the CEL subset of
 * `olm.constraint`. A range either parses or says why not (it never throws); a CEL rule compiles
 * or throws a CelError, and a compiled rule answers true or false for any properties.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { olmRangeProblem, satisfiesOlmRange } from '../../src/util/semver.js';
import { parseChartVersion, parseChartVersionRange, selectChartVersion } from '../../src/helm/chart-source/version.js';
import { CelError, compileCel } from '../../src/resolve/cel.js';
import { inRange, parseRange, parseVersion } from '../../src/resolve/version-range.js';
import { fc, fuzz, nastyString, nastyValue } from './harness.js';

const num = fc.oneof({ weight: 6, arbitrary: fc.nat({ max: 20 }).map(String) }, { weight: 1, arbitrary: fc.constantFrom('x', 'X', '*', '01', '99999999999999999999', '-1', '') });
const versionText = fc
  .record({
    v: fc.constantFrom('', '', 'v', 'V', '='),
    parts: fc.array(num, { minLength: 1, maxLength: 4 }),
    pre: fc.oneof(fc.constant(''), fc.constantFrom('-rc.1', '-alpha', '-0', '-', '-a.b.c.d', '-x-y')),
    build: fc.oneof(fc.constant(''), fc.constantFrom('+1', '+build.5', '+', '+a+b')),
  })
  .map((r) => `${r.v}${r.parts.join('.')}${r.pre}${r.build}`);
const op = fc.constantFrom('', '>=', '<=', '>', '<', '=', '==', '!=', '~', '^', '=>', '=<', '~>', '!', '>>');
const term = fc.record({ op, sp: fc.constantFrom('', '', ' '), v: versionText }).map((t) => `${t.op}${t.sp}${t.v}`);
const rangeText = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .array(fc.record({ t: term, sep: fc.constantFrom(' ', ' ', ', ', ',', ' || ', '||', ' - ', ' -', '  ', '\t') }), { minLength: 1, maxLength: 40 })
      .map((ts) => ts.map((x, i) => (i === 0 ? x.t : `${x.sep}${x.t}`)).join('')),
  },
  { weight: 1, arbitrary: fc.array(versionText, { maxLength: 30 }).map((vs) => vs.map((v) => `!=${v}`).join(' ')) },
  { weight: 1, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
);

test('fuzz: version ranges (resolve, OLM skipRange, Helm chart ranges)', { timeout: 30 * 60_000 }, async () => {
  await fuzz(
    'version-ranges',
    fc.record({ range: rangeText, versions: fc.array(versionText, { maxLength: 4 }), pre: fc.boolean() }),
    ({ range, versions, pre }) => {
      const parsed = parseRange(range, { includePrerelease: pre });
      if (!parsed.ok) assert.ok(parsed.reason.length > 0);
      const olm = olmRangeProblem(range);
      const chart = parseChartVersionRange(range);
      let matched = 0;
      for (const text of versions) {
        const v = parseVersion(text);
        if (parsed.ok && v !== undefined && inRange(v, parsed.value)) matched++;
        if (satisfiesOlmRange(text, range)) matched++;
        parseChartVersion(text);
      }
      selectChartVersion(versions, range);
      return { ok: parsed.ok, olm, chart: chart.ok, matched };
    },
    { ciRuns: 1000, timeoutMs: 5_000 },
  );
});

/** Grammar-shaped CEL: identifiers, literals, operators, calls, macros, nesting. */
const celExpr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('properties', 'cluster', 'p', 'x', 'true', 'false', 'null', '1', '-1', '1.5', '"a"', "'b'", '"1.0.0"', '[]', '{}', '"\\"', '0x10', '1u', 'b"x"', '9223372036854775808'),
    fc.record({ l: tie('e'), op: fc.constantFrom('==', '!=', '<', '<=', '>', '>=', '&&', '||', '+', '-', '*', '/', '%', 'in', '?', ':'), r: tie('e') }).map((b) => `${b.l} ${b.op} ${b.r}`),
    fc.record({ u: fc.constantFrom('!', '-', '!!', '--'), x: tie('e') }).map((u) => `${u.u}${u.x}`),
    tie('e').map((x) => `(${x})`),
    fc.array(tie('e'), { maxLength: 3 }).map((xs) => `[${xs.join(', ')}]`),
    fc.record({ of: tie('e'), f: fc.constantFrom('type', 'value', 'packageName', 'version', 'group', 'kind', 'kubeVersion', 'platform', '__proto__', 'constructor', 'length') }).map((r) => `${r.of}.${r.f}`),
    fc.record({ of: tie('e'), at: tie('e') }).map((r) => `${r.of}[${r.at}]`),
    fc
      .record({
        of: tie('e'),
        m: fc.constantFrom('exists', 'all', 'exists_one', 'map', 'filter', 'startsWith', 'endsWith', 'contains', 'matches', 'size'),
        v: fc.constantFrom('p', 'x', 'properties', '1'),
        body: tie('e'),
      })
      .map((r) => `${r.of}.${r.m}(${r.v}, ${r.body})`),
    fc.record({ fn: fc.constantFrom('semver_compare', 'size', 'int', 'string', 'has', 'matches', 'unknown_fn'), args: fc.array(tie('e'), { maxLength: 3 }) }).map((r) => `${r.fn}(${r.args.join(', ')})`),
    fc.constantFrom('"(a+)+$"', '"[a-"', '"(?<x>a)"', '"\\\\1"').map((re) => `"aaaaaaaaaaaaaaaaaaaaaaaaaaaa!".matches(${re})`),
  ),
})).e;

const celSource = fc.oneof(
  { weight: 10, arbitrary: celExpr },
  { weight: 1, arbitrary: fc.nat({ max: 20000 }).map((n) => `${'('.repeat(n)}1${')'.repeat(n)}`) },
  { weight: 1, arbitrary: fc.nat({ max: 20000 }).map((n) => `${'!'.repeat(n)}true`) },
  { weight: 1, arbitrary: fc.nat({ max: 5000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`) },
  { weight: 1, arbitrary: fc.nat({ max: 5000 }).map((n) => Array.from({ length: n }, () => '1').join(' + ')) },
  { weight: 1, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
);

const propertiesArb = fc.array(
  fc.oneof(
    fc.record({ type: fc.constantFrom('olm.package', 'olm.gvk', 'olm.label', 'olm.constraint', '__proto__'), value: nastyValue }),
    fc.constant({ type: 'olm.package', value: { packageName: 'etcd', version: '1.0.0' } }),
    fc.constant({ type: 'olm.gvk', value: { group: 'etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdCluster' } }),
  ),
  { maxLength: 5 },
);

test('fuzz: CEL constraints (olm.constraint cel rules)', { timeout: 30 * 60_000 }, async () => {
  await fuzz(
    'cel-constraints',
    fc.record({ source: celSource, properties: propertiesArb, cluster: fc.oneof(fc.constant(undefined), fc.dictionary(nastyString, nastyValue, { maxKeys: 3 })) }),
    ({ source, properties, cluster }) => {
      const rule = compileCel(source);
      const a = rule.matches(properties, cluster);
      const b = rule.test({ properties, cluster: cluster ?? {} });
      assert.equal(typeof a, 'boolean');
      assert.equal(typeof b, 'boolean');
      return { a, b, refs: [...rule.references] };
    },
    { ciRuns: 1000, timeoutMs: 5_000, errors: [CelError] },
  );
});
