/**
 * Parity figures of Binnacle's catalog (FBC) loader and validator against operator-registry:
 * hack/bench-tools/opm-parity runs what `opm validate` runs (declcfg.LoadFS, declcfg.ConvertToModel,
 * model.Validate) on each directory and, beside it, blang/semver ParseRange on every skipRange and
 * olm.package.required versionRange (what OLM resolves them with). It is built twice: against
 * v1.47.0, the version hack/bench-tools/opm pins (.cache/bench-bin/opm-parity), and against main
 * (v1.73.0, go.main.mod; .cache/bench-bin/opm-parity-main). The test builds them (cold build ≈ 3.5
 * min each on a loaded 2-core machine) and fails with a message when Go cannot.
 *
 * Cases:
 * - one small FBC directory each under src/catalog/testdata/parity/, written for this test (valid
 *   and invalid package, channel, bundle, property and deprecation records; files that are not JSON
 *   or YAML; .indexignore; skipRange grammar; pull specs; bundle releases), judged by both
 *   references: every verdict agrees with main; with v1.47.0 too, except where main changed
 *   v1.47.0's verdict (counted and printed); and a catalog v1.47.0 accepts is still served.
 * - the catalogs Binnacle renders for its golden tests, and its broken testdata catalogs;
 * - operator-registry's own test tables (load, ConvertToModel, model Validate), written out by its
 *   own test code into test/vendor/operator-registry-v1.73.0 (hack/bench-tools/opm-parity/extract.sh),
 *   judged by main, counted per case of the reference's tables.
 * Prints a table and three figures: verdict agreement (both accept or both reject), same-problem
 * agreement (where both reject, the reference's problem is among ours, by the classes below), and
 * range agreement (the same ranges refused as blang refuses).
 *
 * This module replaces src/catalog/opm-parity.test.ts: one module for one concept (parity of the
 * catalog validator with opm), next to the bundle one (validator-parity.test.ts). The byte-for-byte
 * comparison with `opm render` needs the whole of opm (CGO, sqlite, containers/image: far more
 * than 3 minutes to build cold on 2 cores), so it stays in bench/catalog.ts, which builds opm.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { loadFbcDir } from '../../src/catalog/load.js';
import { render } from '../../src/catalog-render/render.js';
import { RULES_SINCE_OPM_1_47, validateConfig } from '../../src/catalog/validate.js';
import { toFbcJson } from '../../src/catalog/write.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TOOL = join(ROOT, '.cache', 'bench-bin', 'opm-parity');
/** The same tool built against operator-registry's main (hack/bench-tools/opm-parity/go.main.mod). */
const TOOL_MAIN = join(ROOT, '.cache', 'bench-bin', 'opm-parity-main');
/** operator-registry's own test tables written out as FBC directories (hack/bench-tools/opm-parity/extract.sh). */
const VENDORED = join(ROOT, 'test', 'vendor', 'operator-registry-v1.73.0', 'cases');
const CASES = join(ROOT, 'src', 'catalog', 'testdata', 'parity');
const TESTDATA = join(ROOT, 'src', 'catalog', 'testdata');
const GOLDEN = join(ROOT, 'src', 'catalog-render', 'testdata', 'golden');

/**
 * Deliberate differences: case directory → why Binnacle's verdict differs from opm's. Keep it
 * short; everything else must agree.
 */
const DELIBERATE: Record<string, string> = {
  // None. Where main changed v1.47.0's verdict, Binnacle follows main (a replaces edge to a skipped
  // entry is not followed when looking for stranded entries; skipRange, pull specs and releases
  // are checked): those cases are counted apart, not listed here.
};

/**
 * Problem classes, so that two wordings of one problem match (first match wins). Each names the
 * reference's wording and Binnacle's rule id (case-sensitive: opm's Go type names such as
 * `Channel.entries` are not rule ids).
 */
const CLASSES: [RegExp, string][] = [
  [/invalid image pull spec/, 'pull-spec'],
  [/expected value for key/, 'field'],
  [/invalid character/, 'parse'],
  [/skipRange|channel\.skip-range/, 'skip-range'],
  [/normalized name/, 'normalized-name'],
  [/release version|build metadata in version|bundle\.release/, 'release'],
  [/[Dd]eprecat/, 'deprecation'],
  [/bundle object/, 'bundle-object'],
  [/icon|base64/, 'icon'],
  [/skip\[|channel\.skips/, 'skips'],
  [/stranded/, 'stranded'],
  [/cycle/, 'cycle'],
  [/channel head|channel\.single-head/, 'head'],
  [/default channel|package\.default-channel/, 'default-channel'],
  [/duplicate versions|package\.duplicate-version/, 'duplicate-version'],
  [/duplicate keys/, 'duplicate-keys'],
  [/duplicate package|package\.duplicate/, 'duplicate-package'],
  [/duplicate bundle|bundle\.duplicate/, 'duplicate-bundle'],
  [/duplicate channel|channel\.duplicate/, 'duplicate-channel'],
  [/duplicate entry|channel\.entry-duplicate/, 'duplicate-entry'],
  [/not found in any channel|bundle\.channel:/, 'bundle-in-no-channel'],
  [/no olm\.bundle blobs|channel\.entry-bundle/, 'entry-without-bundle'],
  [/at least one bundle|channel\.entries/, 'channel-empty'],
  [/root schema field|key "schema"/, 'schema'],
  [/bundle image|bundle\.image:/, 'image'],
  [/exactly 1|exactly one|bundle\.package-property|does not match "olm\.package"/, 'package-property'],
  [/parse propert|bundle\.property/, 'property'],
  [/error parsing bundle .*version|bundle\.version/, 'version'],
  [/package name must be set|bundle\.package: .*no package/, 'no-package'],
  [/unknown package|channel\.package|bundle\.package/, 'unknown-package'],
  [/no name|invalid package name|RFC 1123|package\.name|channel\.name|bundle\.name/, 'name'],
  [/parse (package|channel|bundle)|cannot unmarshal|fbc\.field/, 'field'],
  [/yaml|json|EOF|fbc\.parse|UTF-8/i, 'parse'],
];

function classOf(text: string): string {
  return CLASSES.find(([re]) => re.test(text))?.[1] ?? 'other';
}

/**
 * The reference's problems: opm stops at the first error, but model.Validate's error is a tree
 * (`invalid index: └── invalid package "foo": └── …`) whose leaves are each a problem.
 */
function referenceProblems(error: string): string[] {
  const lines = error.split('\n').map((l) => l.replace(/^[\s│├└─]+/, '').trim()).filter((l) => l !== '');
  const leaves = lines.filter((l) => !l.endsWith(':'));
  return leaves.length > 0 ? leaves : [error];
}

interface Reference {
  dir: string;
  valid: boolean;
  error?: string;
  failedAt?: 'load' | 'model';
  ranges?: { where: string; range: string; error: string }[];
}

function buildReference(which: 'v1.47.0' | 'main' = 'v1.47.0'): void {
  const args = which === 'main' ? ['main'] : [];
  const r = spawnSync('bash', [join(ROOT, 'hack', 'bench-tools', 'opm-parity', 'build.sh'), ...args], { encoding: 'utf8' });
  assert.ok(
    r.status === 0 && existsSync(which === 'main' ? TOOL_MAIN : TOOL),
    `cannot build the reference catalog validator (hack/bench-tools/opm-parity/build.sh needs Go and the module proxy): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
  );
}

/** Each line is a directory, or "load<TAB>directory" to run only declcfg.LoadFS on it. */
function reference(lines: string[], tool = TOOL): Map<string, Reference> {
  const r = spawnSync(tool, [], { input: lines.join('\n'), encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `opm-parity failed: ${r.stderr}`);
  const out = new Map<string, Reference>();
  for (const line of r.stdout.split('\n').filter((l) => l !== '')) {
    const v = JSON.parse(line) as Reference;
    out.set(v.dir, v);
  }
  return out;
}

interface Ours {
  errors: string[];
  /** The ranges Binnacle calls invalid (skipRange, olm.package.required), error or warning. */
  ranges: string[];
}

/** Binnacle's verdict; `loadOnly` for the reference's load-stage cases (its loader's problems only). */
async function binnacle(dir: string, loadOnly = false): Promise<Ours> {
  const loaded = await loadFbcDir(dir);
  const all = [...loaded.result.all(), ...(loadOnly ? [] : validateConfig(loaded.config).result.all())];
  const errors = all.filter((p) => p.severity === 'error').map((p) => `${p.rule}: ${p.field ?? ''}: ${p.message}`);
  const ranges = all.map((p) => /(?:skipRange|versionRange) "([^"]*)"/.exec(p.message)?.[1]).filter((r) => r !== undefined);
  return { errors, ranges };
}

interface Row {
  name: string;
  theirs: Reference;
  ours: Ours;
  verdictAgrees: boolean;
  sameProblem: boolean | undefined;
  rangesAgree: boolean | undefined;
}

interface CompareOptions {
  tool?: string;
  /** Directories of the reference's load-stage cases: only loading is judged. */
  loadOnly?: ReadonlySet<string>;
  /** How a row is named (default: the directory relative to root). */
  name?: (dir: string) => string;
}

async function compare(dirs: string[], root: string, withRanges = true, opts: CompareOptions = {}): Promise<Row[]> {
  const loadOnly = opts.loadOnly ?? new Set<string>();
  const theirs = reference(dirs.map((d) => (loadOnly.has(d) ? `load\t${d}` : d)), opts.tool);
  const rows: Row[] = [];
  for (const dir of dirs) {
    const ref = theirs.get(dir) ?? { dir, valid: false, error: 'reference printed nothing' };
    const ours = await binnacle(dir, loadOnly.has(dir));
    const weReject = ours.errors.length > 0;
    const theyReject = !ref.valid;
    const refRanges = (ref.ranges ?? []).map((x) => x.range).sort();
    const anyRange = withRanges && (refRanges.length > 0 || ours.ranges.length > 0);
    rows.push({
      name: opts.name?.(dir) ?? relative(root, dir),
      theirs: ref,
      ours,
      verdictAgrees: weReject === theyReject,
      sameProblem: weReject && theyReject ? referenceProblems(ref.error ?? '').some((t) => ours.errors.some((e) => classOf(e) === classOf(t))) : undefined,
      rangesAgree: anyRange ? JSON.stringify(refRanges) === JSON.stringify([...ours.ranges].sort()) : undefined,
    });
  }
  return rows;
}

function figures(title: string, rows: Row[]): void {
  const pct = (n: number, d: number): string => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);
  const one = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n));
  console.log(`\n${title}: ${rows.length} cases`);
  console.log(`  ${one('case', 40)} ${one('opm', 7)} ${one('binnacle', 9)} ${one('same', 5)} reference's error / Binnacle's first error`);
  for (const r of rows) {
    const same = r.sameProblem === undefined ? '' : r.sameProblem ? 'yes' : 'NO';
    const mark = r.verdictAgrees ? ' ' : '!';
    const text = referenceProblems(r.theirs.error ?? '').join(' | ');
    console.log(`${mark} ${one(r.name, 40)} ${one(r.theirs.valid ? 'valid' : 'invalid', 7)} ${one(r.ours.errors.length === 0 ? 'valid' : 'invalid', 9)} ${one(same, 5)} ${one(text, 90)}`);
    if (!r.verdictAgrees || r.sameProblem === false) for (const e of r.ours.errors.slice(0, 3)) console.log(`      ours: ${e.slice(0, 200)}`);
    if (r.rangesAgree === false) console.log(`      ranges: opm refuses ${JSON.stringify((r.theirs.ranges ?? []).map((x) => x.range))}, Binnacle ${JSON.stringify(r.ours.ranges)}`);
  }
  const agree = rows.filter((r) => r.verdictAgrees).length;
  const both = rows.filter((r) => r.sameProblem !== undefined);
  const same = both.filter((r) => r.sameProblem === true).length;
  const withRanges = rows.filter((r) => r.rangesAgree !== undefined);
  const rangesSame = withRanges.filter((r) => r.rangesAgree === true).length;
  console.log(`  verdict agreement ${agree}/${rows.length} = ${pct(agree, rows.length)}`);
  console.log(`  same-problem agreement ${same}/${both.length} = ${pct(same, both.length)} (of the cases both reject)`);
  console.log(`  range agreement ${rangesSame}/${withRanges.length} = ${pct(rangesSame, withRanges.length)} (cases where either side refuses a range)`);
}

describe('catalog validator parity with opm (operator-registry v1.47.0)', () => {
  it('written cases: every verdict agrees with main, except the listed deliberate differences; with v1.47.0 where main does; ranges as blang/semver reads them', async () => {
    assert.ok(existsSync(CASES), `no parity cases at ${CASES}`);
    buildReference();
    buildReference('main');
    const dirs = readdirSync(CASES, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(CASES, e.name))
      .sort();
    assert.ok(dirs.length >= 60, `expected at least 60 cases in ${CASES}, found ${dirs.length}`);
    const rows = await compare(dirs, CASES);
    figures('written cases, against v1.47.0', rows);
    const main = await compare(dirs, CASES, true, { tool: TOOL_MAIN });
    figures('written cases, against main (v1.73.0)', main);
    const mainAgrees = new Set(main.filter((r) => r.verdictAgrees).map((r) => r.name));
    // Binnacle follows main where main changed v1.47.0's verdict (skipRange, pull specs, releases).
    const changedByMain = rows.filter((r) => !r.verdictAgrees && mainAgrees.has(r.name)).map((r) => r.name);
    console.log(`  v1.47.0 verdicts that main changed, and Binnacle follows main: ${changedByMain.length}: ${changedByMain.join(', ')}`);
    const differ = rows.filter((r) => !r.verdictAgrees && !mainAgrees.has(r.name)).map((r) => r.name);
    assert.deepEqual(differ.filter((n) => DELIBERATE[n] === undefined), [], 'verdicts differ from v1.47.0 and main');
    assert.deepEqual(main.filter((r) => !r.verdictAgrees).map((r) => r.name).filter((n) => DELIBERATE[n] === undefined), [], 'verdicts differ from main');
    assert.deepEqual(rows.filter((r) => r.rangesAgree === false).map((r) => r.name), [], 'range verdicts differ from blang/semver ParseRange');
    // A ClusterCatalog v1.47.0 accepts is still served: what Binnacle refuses in it is only rules
    // main added (RULES_SINCE_OPM_1_47), but for these two.
    const refusedWhenServed: Record<string, string> = {
      'replaces-through-skipped': 'refused before main too: an entry reachable only through a skipped one is never offered',
      'release-not-string': 'a release that is not a string does not decode into main\'s olm.package',
    };
    const served = rows.filter((r) => r.theirs.valid && r.ours.errors.some((e) => !RULES_SINCE_OPM_1_47.has(e.split(':')[0] ?? '')));
    assert.deepEqual(served.map((r) => r.name).filter((n) => refusedWhenServed[n] === undefined), [], 'catalogs v1.47.0 accepts that a ClusterCatalog would not serve');
  });

  it("the catalogs of Binnacle's golden tests are valid for both; the broken testdata catalogs invalid for both", async (t) => {
    buildReference();
    const root = await mkdtemp(join(tmpdir(), 'catalog-parity-'));
    t.after(() => rm(root, { recursive: true, force: true }));
    const dirs: string[] = [];
    for (const golden of ['render-fbc.json', 'render-package-replaces.json', 'render-package-semver.json', 'template-basic.json', 'template-semver.json', 'template-semver-major.json']) {
      const dir = join(root, golden.replace(/\.json$/, ''));
      await mkdir(dir);
      await writeFile(join(dir, 'catalog.json'), toFbcJson((await render([join(GOLDEN, golden)])).config));
      dirs.push(dir);
    }
    const bad = ['invalid-model', 'bad/wrong-types', 'bad/broken-yaml'].map((d) => join(TESTDATA, d));
    // The reference reads ranges only of catalogs it loads: the range figure is for the written cases.
    const rows = await compare([...dirs, join(TESTDATA, 'fbc', 'valid'), ...bad], root, false);
    figures('golden and testdata catalogs', rows);
    for (const r of rows) assert.ok(r.verdictAgrees, `${r.name}: opm says ${r.theirs.valid ? 'valid' : r.theirs.error ?? ''}, Binnacle ${r.ours.errors.join('; ') || 'valid'}`);
    for (const d of dirs) assert.ok(rows.find((r) => r.name === relative(root, d))?.theirs.valid, `${d} must be valid`);
    for (const d of bad) assert.equal(rows.find((r) => r.name === relative(root, d))?.theirs.valid, false, `${d} must be invalid`);
  });
});

/**
 * Deliberate differences on operator-registry's own test tables: case → why Binnacle's verdict
 * differs from the reference's.
 */
const DELIBERATE_MAIN: Record<string, string> = {};

/** One case of the reference's tables, as hack/bench-tools/opm-parity/extract.sh wrote it. */
interface VendoredCase {
  origin: string;
  test: string;
  name: string;
  /** load: declcfg's load tests (LoadFS only); model: ConvertToModel's; validate: model.Validate's. */
  stage: 'load' | 'model' | 'validate';
  /** Why the case has no directory form (a nil fs.FS, a bundle without its package, …). */
  notExpressible?: string;
  /** The reference's verdict on the table's in-memory value, recorded when the case was written. */
  inMemoryValid?: boolean;
}

describe("catalog validator parity with operator-registry's own test tables (main = v1.73.0)", () => {
  it('verdicts agree on at least 95% of the cases of its declcfg and model tests; every difference is deliberate', async () => {
    assert.ok(existsSync(VENDORED), `no vendored reference cases at ${VENDORED}`);
    buildReference('main');
    const cases = readdirSync(VENDORED, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => ({ dir: join(VENDORED, e.name), meta: JSON.parse(readFileSync(join(VENDORED, e.name, 'case.json'), 'utf8')) as VendoredCase }))
      .sort((a, b) => a.dir.localeCompare(b.dir));
    assert.ok(cases.length >= 100, `expected at least 100 reference cases in ${VENDORED}, found ${cases.length}`);
    const aside = cases.filter((c) => c.meta.notExpressible !== undefined);
    const written = cases.filter((c) => c.meta.notExpressible === undefined);
    const input = (c: { dir: string }): string => join(c.dir, 'input');
    const byInput = new Map(written.map((c) => [input(c), c]));
    const label = (d: string): string => {
      const m = byInput.get(d)?.meta;
      return m === undefined ? d : `${m.test}/${m.name}`;
    };
    const loadOnly = new Set(written.filter((c) => c.meta.stage === 'load').map(input));
    const all = await compare(written.map(input), VENDORED, false, { tool: TOOL_MAIN, loadOnly, name: label });
    // A case whose point its directory form loses (a channel map key that differs from the
    // channel's name): the reference's own verdicts on the value and on the directory differ.
    const lost = all.filter((r) => {
      const m = byInput.get(r.theirs.dir)?.meta;
      return m?.inMemoryValid !== undefined && m.inMemoryValid !== r.theirs.valid;
    });
    const rows = all.filter((r) => !lost.includes(r));
    figures("operator-registry's test tables", rows);
    console.log(`  set aside: ${aside.length + lost.length} (no directory form)`);
    for (const c of aside) console.log(`    ${c.meta.test}/${c.meta.name}: ${c.meta.notExpressible ?? ''}`);
    for (const r of lost) console.log(`    ${r.name}: the reference's verdict on the written directory differs from its verdict on the table's value`);
    const agree = rows.filter((r) => r.verdictAgrees).length;
    assert.ok(rows.length >= 90, `expected at least 90 comparable cases, found ${rows.length}`);
    assert.ok(agree / rows.length >= 0.95, `verdict agreement ${agree}/${rows.length} is under 95%`);
    const differ = rows.filter((r) => !r.verdictAgrees).map((r) => r.name);
    assert.deepEqual(differ.filter((n) => DELIBERATE_MAIN[n] === undefined), [], 'verdicts differ');
  });
});
