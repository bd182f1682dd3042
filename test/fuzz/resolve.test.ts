/**
 * Fuzzing what src/resolve reads from catalogs and users: version ranges (npm and Masterminds
 * syntax, OLM's blang ranges in src/util/semver.ts, Helm chart ranges) and the CEL subset of
 * `olm.constraint`. Every range goes through every parser (each answers or says why not, never
 * throws), then through each place that takes a range from outside, in turn, the most lenient
 * grammar first; the first that cannot read it refuses it with an error naming the field: a
 * request's versionRange (the resolver), a chart reference's version, a catalog's skipRange (the
 * catalog validator). A range all of them read is the answer. A CEL rule compiles or
 * throws a CelError, and a compiled rule answers true or false for any properties.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { olmRangeProblem, satisfiesOlmRange } from '../../src/util/semver.js';
import { ValidationError } from '../../src/util/errors.js';
import { normalizeChartRef, parseChartVersion, parseChartVersionRange, selectChartVersion } from '../../src/helm/chart-source/index.js';
import { validateConfig } from '../../src/catalog/validate.js';
import { CelError, compileCel } from '../../src/resolve/cel.js';
import { ResolutionError } from '../../src/resolve/errors.js';
import { catalog } from '../../src/resolve/fixtures.test-helper.js';
import { resolve } from '../../src/resolve/resolver.js';
import { inRange, parseCatalogRange, parseRange, parseVersion } from '../../src/resolve/version-range.js';
import { fc, fuzz, nastyString, nastyValue } from './harness.js';

/** Versions every grammar reads: MAJOR.MINOR.PATCH, sometimes with a pre-release or build. */
const goodVersion = fc
  .record({ parts: fc.array(fc.nat({ max: 20 }), { minLength: 3, maxLength: 3 }), pre: fc.constantFrom('', '', '', '-rc.1', '-alpha', '-0'), build: fc.constantFrom('', '', '', '+build.5') })
  .map((r) => `${r.parts.join('.')}${r.pre}${r.build}`);
/** A near miss of a version: what a hand-written range gets wrong. */
const badVersion = fc.oneof(
  fc.constantFrom('1.2', '1', 'v1.2.3', '=1.2.3', '01.2.3', '1.2.3-', '1.2.3+', '1.2.3.4', '1.2.x.4', 'x.y.z', '', '99999999999999999999.0.0', '1.0.0-01', '1..0', '1.2.3-a..b', '-1.0.0'),
  fc.record({ parts: fc.array(fc.oneof(fc.nat({ max: 20 }).map(String), fc.constantFrom('x', 'X', '*', '01', '')), { minLength: 1, maxLength: 4 }) }).map((r) => r.parts.join('.')),
);
/** Operators every grammar reads, and the dialects' own (npm's ~ and ^, Masterminds' ~> and a space after the operator). */
const goodOp = fc.constantFrom('', '>=', '<=', '>', '<', '=', '>=', '<');
const dialectOp = fc.constantFrom('~', '^', '~>', '!=', '==', '=>', '=<', '>= ', '< ');
const badOp = fc.constantFrom('!', '>>', '<>', '=~', '=>=', '≥', '=!', '~~', '^^', '&&');
const term = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: goodOp, v: goodVersion }) },
  { weight: 2, arbitrary: fc.record({ op: dialectOp, v: goodVersion }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('', '>=', '<', '~', '^'), v: fc.constantFrom('1.x', '1.2.x', '*', 'x', '1.X', '1.*') }) },
).map((t) => `${t.op}${t.v}`);
/** A range in all grammars' shape: alternatives of ANDed terms, sometimes a hyphen range. */
const goodRange = fc
  .array(fc.oneof({ weight: 5, arbitrary: fc.array(term, { minLength: 1, maxLength: 3 }).map((ts) => ts.join(' ')) }, { weight: 1, arbitrary: fc.tuple(goodVersion, goodVersion).map(([a, b]) => `${a} - ${b}`) }), { minLength: 1, maxLength: 3 })
  .map((alts) => alts.join(' || '));

/**
 * One thing wrong with a range: a bad operator or version in one term, a dangling `||` or
 * hyphen, an empty alternative, commas where a grammar has none, too many `!=` (each doubles
 * the npm form), oversized (hundreds of terms, a number past 2^53), words and brackets no grammar
 * has, or junk. (npm's loose reading drops a term it cannot read instead of refusing the range,
 * so a bad operator or version there is mostly accepted: the OLM grammar refuses it.)
 */
const corruption = fc.constantFrom('bad-op', 'bad-version', 'dangling-or', 'dangling-hyphen', 'empty-alternative', 'commas', 'exclusions', 'many-terms', 'huge-number', 'no-grammar', 'junk');
const noGrammar = fc.constantFrom('latest', 'stable', '(>=1.0.0)', '>=1.0.0;<2.0.0', '[1.0.0,2.0.0)', '1.0.0...2.0.0', '>=1.0.0 AND <2.0.0', 'v', '>=', '~>', '!=');
const corruptedRange = fc.record({ range: goodRange, how: corruption, op: badOp, v: badVersion, n: fc.integer({ min: 9, max: 40 }), word: noGrammar, junk: fc.oneof(nastyString, fc.string({ maxLength: 60 })) }).map(({ range, how, op, v, n, word, junk }) => {
  switch (how) {
    case 'bad-op':
      return range.replace(/^[<>=~^!]*/, op);
    case 'bad-version':
      return `${range} ${['>=', '<', ''][n % 3] ?? ''}${v}`;
    case 'dangling-or':
      return n % 2 === 0 ? `${range} ||` : `|| ${range}`;
    case 'dangling-hyphen':
      return `${range} -`;
    case 'empty-alternative':
      return `${range} || || ${range}`;
    case 'commas':
      return range.replace(/ (?=[<>=~^\d])/g, ', ');
    case 'exclusions':
      return Array.from({ length: n }, (_, i) => `!=1.${i}.0`).join(' ');
    case 'many-terms':
      return Array.from({ length: 25 * n }, (_, i) => `>=0.${i}.0`).join(' ');
    case 'huge-number':
      return range.replace(/\d+/, '9'.repeat(n));
    case 'no-grammar':
      return n % 2 === 0 ? word : `${range} ${word}`;
    case 'junk':
      return junk;
  }
});
const rangeText = fc.oneof({ weight: 2, arbitrary: goodRange }, { weight: 3, arbitrary: corruptedRange });
const versionText = fc.oneof({ weight: 4, arbitrary: goodVersion }, { weight: 1, arbitrary: badVersion });

/** Where a range comes from outside, the most lenient grammar first (npm's loose reading, Masterminds', OLM's). */
const READERS = ['request', 'chart-ref', 'skip-range'] as const;
type Reader = (typeof READERS)[number];

/** Reads `range` where `reader` takes one: an answer, or the place's error naming the field. */
function readAt(reader: Reader, range: string, versions: readonly string[]): unknown {
  switch (reader) {
    case 'request': {
      // A ClusterExtension's versionRange; the catalog offers the versions (those that are versions).
      const offered = [...new Set(versions.filter((v) => parseVersion(v) !== undefined))];
      const cat = catalog('fuzz', [{ name: 'p', bundles: offered.map((version) => ({ version })) }]);
      try {
        return resolve({ catalogs: [cat], requests: [{ package: 'p', versionRange: range }] }).bundles.length;
      } catch (err) {
        // Nothing offered in the range is the resolver's answer; a range it cannot read is an InputError.
        if (err instanceof ResolutionError) return 'nothing in range';
        throw err;
      }
    }
    case 'chart-ref':
      return normalizeChartRef({ type: 'oci', ref: 'oci://registry.example.com/charts/memcached', version: range }).type;
    case 'skip-range': {
      const cat = catalog('fuzz', [{ name: 'p', bundles: [{ version: '1.0.0' }, { version: '2.0.0', replaces: '1.0.0', skipRange: range }] }]);
      const { result } = validateConfig(cat.config);
      if (!result.ok) throw new ValidationError(result);
      return 'valid';
    }
  }
}

test('fuzz: version ranges (resolve, OLM skipRange, Helm chart ranges)', { timeout: 30 * 60_000 }, async () => {
  await fuzz(
    'version-ranges',
    fc.record({ range: rangeText, versions: fc.array(versionText, { maxLength: 4 }), pre: fc.boolean() }),
    ({ range, versions, pre }) => {
      // Every parser answers or says why not.
      const parsed = parseRange(range, { includePrerelease: pre });
      if (!parsed.ok) assert.ok(parsed.reason.length > 0);
      const olm = parseCatalogRange(range);
      assert.equal(olm.ok, olmRangeProblem(range) === undefined);
      const chart = parseChartVersionRange(range);
      let matched = 0;
      for (const text of versions) {
        const v = parseVersion(text);
        if (parsed.ok && v !== undefined && inRange(v, parsed.value)) matched++;
        if (olm.ok && v !== undefined && olm.value.test(v)) matched++;
        if (satisfiesOlmRange(text, range)) matched++;
        const cv = parseChartVersion(text);
        if (chart.ok && cv !== undefined && chart.value.test(cv)) matched++;
      }
      const chosen = selectChartVersion(versions, range);
      // Each place in turn: the first that cannot read the range throws its error.
      const read = READERS.map((reader) => readAt(reader, range, versions));
      return { read, npm: parsed.ok, olm: olm.ok, chart: chart.ok, matched, chosen };
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
