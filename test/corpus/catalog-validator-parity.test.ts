/**
 * Parity figures of Binnacle's catalog (FBC) loader and validator against operator-registry
 * v1.47.0, the version hack/bench-tools/opm pins: hack/bench-tools/opm-parity runs what
 * `opm validate` runs (declcfg.LoadFS, declcfg.ConvertToModel, model.Validate) on each directory
 * and, beside it, blang/semver ParseRange on every skipRange and olm.package.required
 * versionRange (what OLM resolves them with; `opm validate` itself does not parse them). The test
 * builds it (cached in .cache/bench-bin/opm-parity; cold build ≈ 3.5 min on a loaded 2-core
 * machine) and fails with a message when Go cannot.
 *
 * Cases: one small FBC directory each under src/catalog/testdata/parity/, written for this test
 * (valid and invalid package, channel, bundle, property and deprecation records; files that are
 * not JSON or YAML; .indexignore; skipRange grammar), plus the catalogs Binnacle renders for its
 * golden tests. Prints a table and three figures: verdict agreement (both accept or both
 * reject), same-problem agreement (where both reject, the reference's problem is among ours,
 * by the classes below), and range agreement (the same ranges refused as blang refuses).
 * Every verdict must agree, except the deliberate differences listed in DELIBERATE.
 *
 * This module replaces src/catalog/opm-parity.test.ts: one module for one concept (parity of the
 * catalog validator with opm), next to the bundle one (validator-parity.test.ts). The byte-for-byte
 * comparison with `opm render` needs the whole of opm (CGO, sqlite, containers/image: far more
 * than 3 minutes to build cold on 2 cores), so it stays in bench/catalog.ts, which builds opm.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { loadFbcDir } from '../../src/catalog/load.js';
import { render } from '../../src/catalog-render/render.js';
import { validateConfig } from '../../src/catalog/validate.js';
import { toFbcJson } from '../../src/catalog/write.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TOOL = join(ROOT, '.cache', 'bench-bin', 'opm-parity');
const CASES = join(ROOT, 'src', 'catalog', 'testdata', 'parity');
const TESTDATA = join(ROOT, 'src', 'catalog', 'testdata');
const GOLDEN = join(ROOT, 'src', 'catalog-render', 'testdata', 'golden');

/**
 * Deliberate differences: case directory → why Binnacle's verdict differs from opm's. Keep it
 * short; everything else must agree.
 */
const DELIBERATE: Record<string, string> = {
  'replaces-through-skipped':
    'a replaces edge to an entry that is skipped is not followed when looking for stranded entries, as later operator-registry does ' +
    '(main, alpha/model validateReplacesChain: "if the replaces edge is known to be skipped, disregard it"); v1.47.0 follows it and so accepts ' +
    'an entry reachable only through a skipped one, which OLM never offers as an upgrade',
};

/**
 * Problem classes, so that two wordings of one problem match (first match wins). Each names the
 * reference's wording and Binnacle's rule id (case-sensitive: opm's Go type names such as
 * `Channel.entries` are not rule ids).
 */
const CLASSES: [RegExp, string][] = [
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
  ranges?: { where: string; range: string; error: string }[];
}

function buildReference(): void {
  const r = spawnSync('bash', [join(ROOT, 'hack', 'bench-tools', 'opm-parity', 'build.sh')], { encoding: 'utf8' });
  assert.ok(
    r.status === 0 && existsSync(TOOL),
    `cannot build the reference catalog validator (hack/bench-tools/opm-parity/build.sh needs Go and the module proxy): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
  );
}

function reference(dirs: string[]): Map<string, Reference> {
  const r = spawnSync(TOOL, [], { input: dirs.join('\n'), encoding: 'utf8', maxBuffer: 64 << 20 });
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

async function binnacle(dir: string): Promise<Ours> {
  const loaded = await loadFbcDir(dir);
  const { result } = validateConfig(loaded.config);
  const all = [...loaded.result.all(), ...result.all()];
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

async function compare(dirs: string[], root: string, withRanges = true): Promise<Row[]> {
  const theirs = reference(dirs);
  const rows: Row[] = [];
  for (const dir of dirs) {
    const ref = theirs.get(dir) ?? { dir, valid: false, error: 'reference printed nothing' };
    const ours = await binnacle(dir);
    const weReject = ours.errors.length > 0;
    const theyReject = !ref.valid;
    const refRanges = (ref.ranges ?? []).map((x) => x.range).sort();
    const anyRange = withRanges && (refRanges.length > 0 || ours.ranges.length > 0);
    rows.push({
      name: relative(root, dir),
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
  it('written cases: every verdict agrees, except the listed deliberate differences; ranges as blang/semver reads them', async () => {
    assert.ok(existsSync(CASES), `no parity cases at ${CASES}`);
    buildReference();
    const dirs = readdirSync(CASES, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(CASES, e.name))
      .sort();
    assert.ok(dirs.length >= 60, `expected at least 60 cases in ${CASES}, found ${dirs.length}`);
    const rows = await compare(dirs, CASES);
    figures('written cases', rows);
    const differ = rows.filter((r) => !r.verdictAgrees).map((r) => r.name);
    assert.deepEqual(differ.filter((n) => DELIBERATE[n] === undefined), [], 'verdicts differ');
    assert.deepEqual(rows.filter((r) => r.rangesAgree === false).map((r) => r.name), [], 'range verdicts differ from blang/semver ParseRange');
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
