/**
 * README.md's benchmark tables are generated from the stored results (bench/lib/readme.ts,
 * `npx tsx hack/bench-readme.ts`), never typed: this regenerates them and fails on any
 * difference. It times nothing; it compares text.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { markedTables, readResult, RENDERED_BENCHES, renderReadme, storedResults } from '../../bench/lib/readme.js';
import { RESULT_FORMAT, type BenchResult } from '../../bench/lib/results.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The first line where two texts differ, with its neighbours: what a failure should show. */
function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  const i = x.findIndex((line, k) => line !== y[k]);
  const at = i === -1 ? Math.min(x.length, y.length) : i;
  return `README.md line ${at + 1}:\n  README.md: ${JSON.stringify(x[at])}\n  generated: ${JSON.stringify(y[at])}`;
}

describe('README.md benchmark tables', () => {
  test('are exactly what the stored results in bench/results/ give (run npx tsx hack/bench-readme.ts after a bench)', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const generated = renderReadme(readme, ROOT);
    assert.ok(generated === readme, firstDifference(readme, generated));
  });

  test('every bench in bench/ has its table marked in README.md, and a renderer', () => {
    const benches = readdirSync(path.join(ROOT, 'bench')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
    assert.deepEqual([...RENDERED_BENCHES].sort(), benches);
    const marked = new Set(markedTables(readFileSync(path.join(ROOT, 'README.md'), 'utf8')));
    assert.deepEqual(benches.filter((b) => !marked.has(b)), [], 'benches without a table in README.md');
  });

  test('every stored result reads as a result of the bench it is stored under', () => {
    const dir = path.join(ROOT, 'bench', 'results');
    const benches = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    assert.ok(benches.length > 0, 'no stored results');
    for (const b of benches) {
      for (const s of storedResults(ROOT, b)) {
        assert.equal(s.result.bench, b, s.file);
        assert.ok(s.result.rounds.length > 0, `${s.file}: no rounds`);
        assert.match(s.result.git.commit, /^[0-9a-f]{40}$/, `${s.file}: commit`);
      }
    }
  });
});

describe('renderReadme', () => {
  const result = (startedAt: string, commit: string, wallMs: number): BenchResult => ({
    format: RESULT_FORMAT,
    bench: 'cli-startup',
    startedAt,
    finishedAt: startedAt,
    git: { commit, dirty: false, changes: [] },
    machine: { hostname: 'h', platform: 'linux', release: '6', arch: 'x64', cpuCount: 2, cpus: [{ model: 'Test CPU', speedMHz: 1 }, { model: 'Test CPU', speedMHz: 1 }], totalMemoryMiB: 1024 },
    node: 'v20.0.0',
    argv: ['--runs', '3'],
    loadavg: { before: [1.5, 1, 0.5], after: [2.25, 1, 0.5] },
    settings: { bench: { runs: 3 }, binnacle: { what: 'binnacle' }, reference: { what: 'node -e 0' } },
    rounds: [{ label: 'node -e 0', samples: [] }],
    summary: { rows: [{ label: 'binnacle --help', wallMs, cpuMs: 50, rssMb: 60, wallRatio: 1.5, cpuRatio: 1.25, rssRatio: null, failedRuns: 0, reference: false, judged: true }] },
    goals: [{ goal: 'within 2x', verdict: 'not-met', detail: 'memory' }],
  });
  const fixture = (): string => {
    const root = mkdtempSync(path.join(tmpdir(), 'bench-readme-'));
    const dir = path.join(root, 'bench', 'results', 'cli-startup');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, '2026-01-01T00-00-00Z-aaaaaaa.json'), JSON.stringify(result('2026-01-01T00:00:00.000Z', 'a'.repeat(40), 111)));
    writeFileSync(path.join(dir, '2026-02-01T00-00-00Z-bbbbbbb.json'), JSON.stringify(result('2026-02-01T00:00:00.000Z', 'b'.repeat(40), 222)));
    return root;
  };

  test('fills a marked block from the newest result, naming its file, commit, machine, load and goals; the rest stays', () => {
    const root = fixture();
    try {
      const out = renderReadme('before\n<!-- bench:cli-startup -->\nold 999 ms\n<!-- /bench:cli-startup -->\nafter\n', root);
      assert.ok(out.startsWith('before\n<!-- bench:cli-startup -->\n') && out.endsWith('\n<!-- /bench:cli-startup -->\nafter\n'), out);
      assert.doesNotMatch(out, /999/);
      assert.match(out, /\| binnacle --help \| 222 ms \| 50 ms \| 60\.0 MB \| 1\.50× \/ 1\.25× \/ – \|/);
      assert.match(out, /From \[`bench\/results\/cli-startup\/2026-02-01T00-00-00Z-bbbbbbb\.json`\]/);
      assert.match(out, /`npx tsx bench\/cli-startup\.ts --runs 3` at commit `bbbbbbb` \(clean\), 2026-02-01 00:00 UTC, on 2 × Test CPU, Node v20\.0\.0; load average \(1 \/ 5 \/ 15 min\) 1\.50 \/ 1\.00 \/ 0\.50 before, 2\.25 \/ 1\.00 \/ 0\.50 after\./);
      assert.match(out, /- within 2x: \*\*NOT met\*\* \(memory\)/);
      assert.equal(renderReadme(out, root), out, 'generating again changes nothing');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('file= keeps a table with one stored run; a file that is not there is an error', () => {
    const root = fixture();
    try {
      const out = renderReadme('<!-- bench:cli-startup file=2026-01-01T00-00-00Z-aaaaaaa.json -->\n<!-- /bench:cli-startup -->\n', root);
      assert.match(out, /\| 111 ms \|/);
      assert.match(out, /^<!-- bench:cli-startup file=2026-01-01T00-00-00Z-aaaaaaa\.json -->\n/);
      assert.throws(() => renderReadme('<!-- bench:cli-startup file=nope.json -->\n<!-- /bench:cli-startup -->\n', root), /nope\.json, which is not there/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("files= puts several stored runs in one table, each row named by the manager's Node flags, each run's provenance numbered below; a bench without a comparer or a missing file is an error", () => {
    const root = mkdtempSync(path.join(tmpdir(), 'bench-readme-'));
    try {
      const dir = path.join(root, 'bench', 'results', 'catalog-scale');
      mkdirSync(dir, { recursive: true });
      const scale = (flags: string, allMBps: number): BenchResult => ({
        ...result('2026-03-01T00:00:00.000Z', 'c'.repeat(40), 1),
        bench: 'catalog-scale',
        settings: { bench: {}, binnacle: { what: `binnacle manager (node ${flags} bin/binnacle.js, the built bundle)` } },
        summary: {
          catalogs: { count: 3, bundlesEach: 1, packagesEach: 1, bytesEach: [1], onePackage: 'p' },
          resolution: { inProcessMs: { median: 1, min: 1, max: 1, n: 1 }, cliMs: 1, chosen: [] },
          sides: {
            'binnacle-defaults': { rounds: 1, servingMs: { median: 8000, min: 8000, max: 8000, n: 1 }, peakMib: { median: 400, min: 400, max: 400, n: 1 }, allMBps, metasPackagesP50Ms: 70, metasPackagesP99Ms: 150 },
            catalogd: { rounds: 1, servingMs: { median: 9000, min: 9000, max: 9000, n: 1 }, allMBps: 330 },
          },
        },
      });
      writeFileSync(path.join(dir, 'a.json'), JSON.stringify(scale('', 174)));
      writeFileSync(path.join(dir, 'b.json'), JSON.stringify(scale('--optimize-for-size', 95)));
      const out = renderReadme('<!-- bench:catalog-scale files=a.json,b.json -->\n<!-- /bench:catalog-scale -->\n', root);
      assert.match(out, /\| 1 \| none \| defaults \| 1 \| 8\.0 s \| 400 MiB \| – \| – \| 174 MB\/s \| 70\.0 \/ 150\.0 ms \|/);
      assert.match(out, /\| 2 \| `--optimize-for-size` \| defaults \|.*\| 95 MB\/s \|/);
      assert.doesNotMatch(out, /330 MB\/s/, "catalogd's rows are the single-run tables' business");
      assert.match(out, /^1\. From \[`bench\/results\/catalog-scale\/a\.json`\]/m);
      assert.match(out, /^2\. From \[`bench\/results\/catalog-scale\/b\.json`\]/m);
      assert.equal(renderReadme(out, root), out, 'generating again changes nothing');
      assert.throws(() => renderReadme('<!-- bench:catalog-scale files=a.json,nope.json -->\n<!-- /bench:catalog-scale -->\n', root), /nope\.json, which is not there/);
      assert.throws(() => renderReadme('<!-- bench:cli-startup files=a.json -->\n<!-- /bench:cli-startup -->\n', root), /no comparer/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a bench with no stored result says so in words; an unknown bench or a foreign file is an error', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'bench-readme-'));
    try {
      assert.match(renderReadme('<!-- bench:helm -->\n<!-- /bench:helm -->\n', root), /No stored result: `npx tsx bench\/helm\.ts` stores one/);
      assert.throws(() => renderReadme('<!-- bench:nope -->\n<!-- /bench:nope -->\n', root), /no renderer/);
      const dir = path.join(root, 'bench', 'results', 'helm');
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'x.json'), JSON.stringify(result('2026-01-01T00:00:00.000Z', 'a'.repeat(40), 1)));
      assert.throws(() => readResult(path.join(dir, 'x.json'), 'helm'), /a result of cli-startup, stored under helm/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
