/**
 * The README's benchmark tables, generated from the stored results (bench/lib/results.ts), never
 * typed. README.md marks each table's place with a pair of comments:
 *
 *   <!-- bench:NAME -->            the newest result of bench/NAME.ts (bench/results/NAME/)
 *   <!-- bench:NAME file=F.json --> that stored result, when a table must stay with one run
 *   <!-- bench:NAME files=A.json,B.json --> runs of one bench side by side, each row named by
 *                                   what it varied (only benches with a comparer below)
 *   ...generated...
 *   <!-- /bench:NAME -->
 *
 * `renderReadme` replaces what is between each pair and leaves the rest of the file alone; each
 * table names the file it came from, the commit, the machine, its load and the command line.
 * `npx tsx hack/bench-readme.ts` writes README.md; test/bench/readme.test.ts fails when README.md
 * differs from what the stored results give.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RESULT_FORMAT, type BenchResult, type GoalVerdict, type SideSettings, type Spread } from './results.js';
import type {
  BundleSummary,
  CatalogSummary,
  CelSummary,
  YamlSummary,
  CliStartupSummary,
  ClusterUpSummary,
  ConsoleCatalogSummary,
  FluxSummary,
  CatalogScaleSummary,
  HelmOperatorFigures,
  HelmOperatorMemorySummary,
  HelmOperatorSummary,
  HelmSummary,
  HelmEngineVersionsSummary,
  InstallSummary,
  ResolveSummary,
} from './summaries.js';

/** A stored result and its path relative to the repository (forward slashes: it is a README link). */
export interface StoredResult {
  file: string;
  result: BenchResult;
}

/** One bench's table body, from its stored result. */
type Renderer = (r: BenchResult) => string[];

/** Reads bench/results/<bench>/*.json under `root`, oldest first (the names begin with the date). */
export function storedResults(root: string, bench: string): StoredResult[] {
  const dir = path.join(root, 'bench', 'results', bench);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ file: `bench/results/${bench}/${f}`, result: readResult(path.join(dir, f), bench) }));
}

/** Reads one stored result, checking what the tables rely on. */
export function readResult(file: string, bench: string): BenchResult {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`${file}: not a JSON object`);
  const r = parsed as Partial<BenchResult>;
  if (r.format !== RESULT_FORMAT) throw new Error(`${file}: format ${String(r.format)}, this reader knows ${RESULT_FORMAT}`);
  if (r.bench !== bench) throw new Error(`${file}: a result of ${String(r.bench)}, stored under ${bench}`);
  for (const key of ['startedAt', 'git', 'machine', 'node', 'argv', 'loadavg', 'settings', 'rounds', 'summary', 'goals'] as const) {
    if (r[key] === undefined || r[key] === null) throw new Error(`${file}: no ${key}`);
  }
  return parsed as BenchResult;
}

const MARKER = /<!-- bench:([a-z0-9-]+)((?: [a-z]+=[^\s>]+)*) -->\n[\s\S]*?<!-- \/bench:\1 -->/g;

/** README.md with every marked table generated again from the stored results under `root`. */
export function renderReadme(readme: string, root: string): string {
  return readme.replace(MARKER, (_all, name: string, attrs: string) => {
    const file = /(?:^| )file=(\S+)/.exec(attrs)?.[1];
    const files = /(?:^| )files=(\S+)/.exec(attrs)?.[1];
    const body = files === undefined ? renderBlock(root, name, file) : renderComparison(root, name, files.split(','));
    return `<!-- bench:${name}${attrs} -->\n${body}\n<!-- /bench:${name} -->`;
  });
}

/** The names of the marked tables, in order (the test checks each bench's table is there). */
export function markedTables(readme: string): string[] {
  return [...readme.matchAll(MARKER)].map((m) => m[1] ?? '');
}

function renderBlock(root: string, bench: string, file: string | undefined): string {
  const renderer = RENDERERS[bench];
  if (renderer === undefined) throw new Error(`README.md marks a table for bench "${bench}", which has no renderer in bench/lib/readme.ts`);
  const all = storedResults(root, bench);
  const stored = file === undefined ? all.at(-1) : all.find((s) => path.basename(s.file) === file);
  if (stored === undefined) {
    if (file !== undefined) throw new Error(`README.md names bench/results/${bench}/${file}, which is not there`);
    return `No stored result: \`npx tsx bench/${bench}.ts\` stores one in \`bench/results/${bench}/\`.`;
  }
  const notes = (stored.result.notes ?? []).map((n) => `Note stored with the result: ${n}`);
  return [...renderer(stored.result), '', provenance(stored), ...notes.flatMap((n) => ['', n]), ...goals(stored.result.goals)].join('\n');
}

/** Several stored runs of one bench in one table (COMPARERS), each run's provenance below it. */
function renderComparison(root: string, bench: string, files: readonly string[]): string {
  const comparer = COMPARERS[bench];
  if (comparer === undefined) throw new Error(`README.md compares runs of bench "${bench}", which has no comparer in bench/lib/readme.ts`);
  const all = storedResults(root, bench);
  const runs = files.map((f) => {
    const stored = all.find((s) => path.basename(s.file) === f);
    if (stored === undefined) throw new Error(`README.md names bench/results/${bench}/${f}, which is not there`);
    return stored;
  });
  return [...comparer(runs.map((s) => s.result)), '', ...runs.map((s, i) => `${i + 1}. ${provenance(s)}`)].join('\n');
}

/** An argument as a shell would need it typed: an empty one or one with spaces quoted. */
const shellWord = (a: string): string => (a === '' || /[\s'"]/.test(a) ? `'${a.replaceAll("'", "'\\''")}'` : a);

/** Where the table came from: the file, the command, the commit, the machine and its load. */
export function provenance({ file, result: r }: StoredResult): string {
  const cpu = r.machine.cpus[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU';
  const tree = r.git.dirty ? `with uncommitted changes to ${r.git.changes.join(', ')}` : 'clean';
  const load = (xs: number[]): string => xs.map((x) => x.toFixed(2)).join(' / ');
  return (
    `From [\`${file}\`](${file}): \`npx tsx bench/${r.bench}.ts${r.argv.length > 0 ? ` ${r.argv.map(shellWord).join(' ')}` : ''}\` at commit \`${r.git.commit.slice(0, 7)}\` (${tree}), ` +
    `${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, on ${r.machine.cpuCount} × ${cpu}, Node ${r.node}; ` +
    `load average (1 / 5 / 15 min) ${load(r.loadavg.before)} before, ${load(r.loadavg.after)} after.`
  );
}

function goals(gs: GoalVerdict[]): string[] {
  if (gs.length === 0) return [];
  const word = (g: GoalVerdict): string => (g.verdict === 'met' ? 'met' : g.verdict === 'not-met' ? '**NOT met**' : 'not compared');
  return ['', 'Goals, as the bench judged them:', '', ...gs.map((g) => `- ${g.goal}: ${word(g)}${g.detail === undefined ? '' : ` (${g.detail})`}`)];
}

// ---------------------------------------------------------------------------------------------
// Formatting. JSON keeps NaN as null: every figure may be missing.

type Num = number | null | undefined;
/** A setting as text: what the bench stored when it is a string or a number, else a dash. */
const str = (x: unknown): string => (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean' ? String(x) : '–');
const ok = (x: Num): x is number => typeof x === 'number' && Number.isFinite(x);
const fix = (x: Num, digits: number): string => (ok(x) ? x.toFixed(digits) : '–');
const ms = (x: Num): string => (ok(x) ? `${x.toFixed(0)} ms` : '–');
const sec = (x: Num, digits = 2): string => (ok(x) ? `${(x / 1000).toFixed(digits)} s` : '–');
const times = (x: Num): string => (ok(x) ? `${x.toFixed(2)}×` : '–');
/** A spread of rounds: the median, and smallest to largest when there were several and they differ. */
function spreadText(s: { median: Num; min: Num; max: Num; n: number } | null | undefined, f: (x: Num) => string): string {
  if (s === null || s === undefined) return '–';
  return s.n > 1 && ok(s.min) && ok(s.max) && f(s.min) !== f(s.max) ? `${f(s.median)} (${f(s.min)}–${f(s.max)})` : f(s.median);
}
const table = (head: string[], rows: string[][]): string[] => [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)];

// ---------------------------------------------------------------------------------------------
// One renderer per bench.

const cliStartup: Renderer = (r) => {
  const s = r.summary as CliStartupSummary;
  const runs = r.settings.bench.runs;
  return [
    // Runs stored before the CPU time was read to the millisecond said so in their settings.
    String(r.settings.bench.cpu).startsWith('mean of the middle half')
      ? `Median of ${str(runs)} interleaved runs each (CPU time: mean of the middle half of \`/usr/bin/time\`'s 10 ms steps, which reads \`node -e 0\` low), against \`node -e 0\` measured in the same run.`
      : `Median of ${str(runs)} interleaved runs each (CPU time, user + sys, to the millisecond from bash's \`time\`; peak RSS from \`/usr/bin/time\`), against \`node -e 0\` measured in the same run.`,
    '',
    ...table(
      ['command', 'wall', 'CPU', 'peak RSS', '× node -e 0 (wall / CPU / memory)'],
      s.rows.map((x) => [x.reference ? `${x.label} (reference)` : x.judged ? x.label : `${x.label} (not judged)`, ms(x.wallMs), ms(x.cpuMs), `${fix(x.rssMb, 1)} MB`, `${times(x.wallRatio)} / ${times(x.cpuRatio)} / ${times(x.rssRatio)}${x.failedRuns > 0 ? ` (${x.failedRuns} runs failed)` : ''}`]),
    ),
  ];
};

const catalog: Renderer = (r) => {
  const s = r.summary as CatalogSummary;
  const rounds = str(r.settings.bench.rounds);
  const out = [`Medians of ${rounds} rounds, each step a process of its own, beside opm (${r.settings.reference?.module === undefined ? 'built by `hack/bench-tools/opm`' : `\`${str(r.settings.reference.module)}\``}) in the same run. Binnacle's start-up (\`binnacle --help\`): ${sec(s.startupMs)}.`, ''];
  if (s.corpus !== undefined) out.push(`The whole corpus (every layout; opm reads only some), rendered by Binnacle: ${sec(s.corpus.renderMs)}, ${fix(s.corpus.renderRssMb, 0)} MB peak, ${fix(s.corpus.outputMb, 1)} MB of FBC.`, '');
  if (s.comparisons === undefined) return [...out, 'opm was not built: no side-by-side figures.'];
  out.push(
    ...table(
      ['step', 'binnacle', 'opm', 'time ×', 'net time × (start-up taken out)', 'memory ×'],
      s.comparisons.map((c) => [c.step, `${sec(c.binnacleMs)}, ${fix(c.binnacleRssMb, 0)} MB`, `${sec(c.opmMs)}, ${fix(c.opmRssMb, 0)} MB`, times(c.timeRatio), times(c.netTimeRatio), times(c.memoryRatio)]),
    ),
  );
  if (s.identical !== undefined) out.push('', `Output identical to opm's: render FBC ${s.identical.renderFbc ? 'yes' : 'no'}; the catalog testdata ${s.identical.renderTestdata ? 'yes' : 'no'}; bundle directories ${s.identical.renderBundles}.`);
  return out;
};

const bundle: Renderer = (r) => {
  const s = r.summary as BundleSummary;
  const out = [`Every version directory of the corpus (${s.directories}), validated and converted; ${str(r.settings.bench.rounds)} rounds a side, alternating.`, ''];
  const rows = [['Binnacle (one process, load + validate + convert)', spreadText(s.binnacleMs, (x) => sec(x)), String(s.binnacleWithErrors)]];
  if (s.verifyMs !== undefined) rows.push([`\`operator-verify manifests\`, ${str(r.settings.reference?.version)} (a process per directory)`, spreadText(s.verifyMs, (x) => sec(x)), String(s.verifyWithErrors ?? '–')]);
  out.push(...table(['side', 'time, median (min–max)', 'directories with errors'], rows));
  if (s.timeRatio !== undefined) out.push('', `Time ratio Binnacle / operator-verify: ${times(s.timeRatio)} (operator-verify pays one process start per directory).`);
  if (s.agree !== undefined && s.differ !== undefined) {
    out.push(`Verdicts agree on ${s.agree.bothErrors + s.agree.bothClean} directories (${s.agree.bothErrors} both find errors, ${s.agree.bothClean} both clean); differ on ${s.differ.onlyBinnacle.length + s.differ.onlyVerify.length} (only Binnacle finds errors: ${s.differ.onlyBinnacle.length}; only operator-verify: ${s.differ.onlyVerify.length}).`);
  }
  return out;
};

const resolve: Renderer = (r) => {
  const s = r.summary as ResolveSummary;
  const row = (label: string, q: { p50: Num; p99: Num; max: Num; n: number }): string[] => [label, String(q.n), `${fix(q.p50, 3)} ms`, `${fix(q.p99, 3)} ms`, `${fix(q.max, 3)} ms`];
  const out = [
    `${s.packages} packages, ${s.bundles} bundles; each request's figure is the median of ${str(r.settings.bench.repeat)} runs. ${s.resolved} resolved, ${s.explained} explained as unsatisfiable.`,
    '',
    ...table(['requests', 'n', 'p50', 'p99', 'max'], [
      row('package (default channel)', s.groups.package),
      row('upgrade', s.groups.upgrade),
      row('bulk (ten packages)', s.groups.bulk),
      row('**all, end to end** (problem building + SAT)', s.endToEnd),
      row('all, SAT only', s.sat),
      ...(s.deppy === null ? [] : [row('Deppy v0.3.0, SAT only (the same problems)', s.deppy)]),
    ]),
  ];
  if (s.deppy !== null) out.push('', `Binnacle's SAT / Deppy's: p50 ${times(ok(s.deppy.p50) && ok(s.sat.p50) ? s.sat.p50 / s.deppy.p50 : null)}, p99 ${times(ok(s.deppy.p99) && ok(s.sat.p99) ? s.sat.p99 / s.deppy.p99 : null)}; end to end / Deppy's SAT at p50: ${times(ok(s.deppy.p50) && ok(s.endToEnd.p50) ? s.endToEnd.p50 / s.deppy.p50 : null)}.`);
  if (s.sameAnswer !== null) out.push(`Same answer as Deppy: ${s.sameAnswer.corpus} of ${s.sameAnswer.corpusOf} corpus problems, ${s.sameAnswer.random} of ${s.sameAnswer.randomOf} random ones.`);
  return out;
};

const helm: Renderer = (r) => {
  const s = r.summary as HelmSummary;
  const b = r.settings.binnacle;
  const rounds = r.rounds as { charts?: { chart: string; helm: { ms: Num; maxRssKb: Num }; binnacleFirstMs: Num; pairedHelmMs: number[]; warmMs: number[]; warmRatio: Num; output: string }[] }[];
  const mb = (kb: Num): string => (ok(kb) ? `${(kb / 1024).toFixed(0)} MB` : '–');
  const perChart = rounds[0]?.charts ?? [];
  const median = (xs: number[]): number => {
    const t = [...xs].sort((x, y) => x - y);
    const m = Math.floor(t.length / 2);
    return t.length === 0 ? NaN : t.length % 2 === 1 ? (t[m] ?? NaN) : ((t[m - 1] ?? NaN) + (t[m] ?? NaN)) / 2;
  };
  return [
    `${s.charts} charts of the corpus, default values, beside \`helm template\` (${str(r.settings.reference?.version)}) in the same run. Binnacle: the ${str(b.engine)} engine, ${str(b.threads)} thread(s), spare RSA keys ${b.spareKeys === true ? '**on** (as it ships)' : 'off (each key searched for inside the render that asks, as helm does)'}.`,
    '',
    ...table(['figure', 'binnacle', 'helm', 'ratio'], [
      [`whole corpus: one cold process / the sum of ${s.charts} helm processes (median of ${s.corpus.ratios.length} rounds)`, spreadText(s.corpus.binnacleMs, (x) => sec(x)), spreadText(s.corpus.helmMs, (x) => sec(x)), `${times(s.corpus.ratio)} (the median of the rounds' ratios)`],
      ['peak memory: the process tree / the largest helm process', spreadText(s.memory.binnacleHwmKb, mb), spreadText(s.memory.helmMaxRssKb, mb), `${times(s.memory.ratio)} (the median of the rounds' ratios)`],
      ['CPU time, first round (user + system)', sec(s.cpu.binnacleMs), sec(s.cpu.helmMs), times(s.cpu.ratio)],
      [`warm render / a helm process, per chart (median over charts; ${str(r.settings.bench.warmPairs)} ABBA pairs a chart)`, `faster on ${s.warm.faster} of ${s.charts}`, '', times(s.warm.medianRatio)],
    ]),
    '',
    `Outputs: ${s.outputs.same} byte-identical, ${s.outputs.sameButHelmRandom} identical but for the lines Helm itself randomizes, ${s.outputs.bothFail} failing with Helm's own error on both sides, ${s.outputs.mismatch} mismatched.`,
    ...(perChart.length === 0
      ? []
      : [
          '',
          '<details><summary>Each chart (first round): helm process, Binnacle\'s first render in the cold process, the warm pairs</summary>',
          '',
          ...table(
            ['chart', 'helm', 'helm peak', 'first render', 'warm (median)', 'helm, paired (median)', 'warm / helm', 'output'],
            perChart.map((c) => [c.chart, ms(c.helm.ms), mb(c.helm.maxRssKb), ms(c.binnacleFirstMs), ms(median(c.warmMs)), ms(median(c.pairedHelmMs)), times(c.warmRatio), c.output]),
          ),
          '',
          '</details>',
        ]),
  ];
};

const clusterUp: Renderer = (r) => {
  const s = r.summary as ClusterUpSummary;
  return [
    `\`binnacle cluster up\` with its binaries cached, ${str(r.settings.bench.rounds)} rounds; then ${str(r.settings.bench.gets)} GETs of a Namespace through Binnacle's client beside a bare keep-alive HTTPS GET with the same credentials (the floor), in the same run.`,
    '',
    ...table(['figure', 'p50', 'p99', 'max'], [
      ['cluster up', sec(s.up.p50), sec(s.up.p99), sec(s.up.max)],
      ['cluster up, already running', ms(s.idempotentUpMs), '', ''],
      ['GET, binnacle client', `${fix(s.get.binnacle.p50, 2)} ms`, `${fix(s.get.binnacle.p99, 2)} ms`, `${fix(s.get.binnacle.max, 2)} ms`],
      ['GET, bare HTTPS (floor)', `${fix(s.get.floor.p50, 2)} ms`, `${fix(s.get.floor.p99, 2)} ms`, `${fix(s.get.floor.max, 2)} ms`],
    ]),
    '',
    `GET ratio binnacle / floor at p50: ${times(s.get.ratioP50)}.`,
  ];
};

const install: Renderer = (r) => {
  const s = r.summary as InstallSummary;
  return [
    `A ${s.objects}-object registry+v1 bundle: ClusterExtension created → Installed, beside \`kubectl apply --server-side\` of the same objects and a wait for the Deployment (the floor), in the same run.`,
    '',
    ...table(['figure', 'binnacle', 'floor', 'ratio'], [
      [`one install (p50 of ${str(r.settings.bench.rounds)})`, sec(s.single.p50Ms), sec(s.single.floorP50Ms), times(s.single.ratio)],
      [`${s.many.n} at once, until all Installed`, sec(s.many.ms), sec(s.many.floorMs), times(s.many.ratio)],
      ['manager peak memory (VmHWM)', `${fix(s.memory.peakMiB, 0)} MiB`, '', ''],
      ['manager resident memory, ready / all installed', `${fix(s.memory.readyRssMiB, 0)} / ${fix(s.memory.installedRssMiB, 0)} MiB`, '', ''],
      [`API requests per extension (${s.many.n} at once)`, fix(s.requestsPerExtension, 1), '', ''],
    ]),
  ];
};

const OPERATOR_LABELS: Record<string, string> = { binnacle: 'binnacle helm-operator run', 'binnacle-manager': 'binnacle manager (HelmOperator)', 'binnacle-before': 'binnacle (before)', 'operator-sdk': "operator-sdk's helm-operator" };

const helmOperator: Renderer = (r) => {
  const s = r.summary as HelmOperatorSummary;
  const out = [
    `Each operator alone against the local control plane, N CRs over ${str(r.settings.bench.namespaces)} namespaces created at once until all \`Deployed\`, then every CR changed until every release is at revision 2, then ${fix(Number(r.settings.bench.idleMs) / 1000, 0)} s idle once converged. Medians of the rounds, smallest to largest in brackets; idle figures only for a side that converged in every round. ${r.settings.bench.matched === true ? `**Matched settings:** both sides run ${str(r.settings.bench.matchedConcurrency)} reconciles at once, neither with a client-side rate limit` : "Each side runs with its own defaults (operator-sdk's: as many reconciles at once as CPUs; Binnacle's: 16)"}, as the result file records.`,
    '',
  ];
  // Flags given to one side beyond its defaults or the matched settings (a client-side limit, say).
  const extra = (side: SideSettings | undefined): string[] => (Array.isArray(side?.extraArgs) ? side.extraArgs.map(String) : []);
  const given: [string, string[]][] = [
    ['Binnacle', extra(r.settings.binnacle)],
    ['operator-sdk', extra(r.settings.reference)],
  ];
  const withArgs = given.filter(([, args]) => args.length > 0);
  const limit = r.settings.bench.memoryLimitMib;
  if (typeof limit === 'number') out[0] = `${out[0] ?? ''} Each side held to a ${limit} MiB memory limit (its cgroup's; swap limited too where the kernel accounts it), as a container with that limit.`;
  if (withArgs.length > 0) out[0] = `${out[0] ?? ''} Besides: ${withArgs.map(([who, args]) => `${who} ran with \`${args.join(' ')}\``).join('; ')}.`;
  const phase = (n: number, x: HelmOperatorFigures['deployedMs'], reached: number): string => (reached >= n ? spreadText(x, (v) => sec(v, 1)) : `> ${sec(x.median, 0)} (${reached} of ${n})`);
  const rows: string[][] = [];
  // Results stored before each side ran in a memory cgroup of its own have no such column.
  const anyHas = (k: 'cgroupPeakMib' | 'workingSetPeakMib'): boolean => s.figures.some((at) => Object.values(at.operators).some((f) => (f[k] ?? null) !== null));
  const cgroup = anyHas('cgroupPeakMib');
  const workingSet = anyHas('workingSetPeakMib');
  const mib = (x: Spread | null | undefined): string => (x === null || x === undefined ? '–' : spreadText(x, (v) => `${fix(v, 0)} MiB`));
  const oom = (f: HelmOperatorFigures): string => ((f.oomKills ?? 0) > 0 ? ` (${String(f.oomKills)} OOM kills)` : '');
  const cgroupCell = (f: HelmOperatorFigures): string[] => [...(cgroup ? [`${mib(f.cgroupPeakMib)}${oom(f)}`] : []), ...(workingSet ? [mib(f.workingSetPeakMib)] : [])];
  for (const at of s.figures) {
    for (const [label, f] of Object.entries(at.operators)) {
      rows.push([
        at.chart,
        String(at.n),
        OPERATOR_LABELS[label] ?? label,
        String(f.rounds),
        phase(at.n, f.deployedMs, f.deployed),
        phase(at.n, f.upgradeMs, f.upgraded),
        spreadText(f.peakMib, (v) => `${fix(v, 0)} MiB`),
        ...cgroupCell(f),
        f.steadyMib === null ? 'not converged' : spreadText(f.steadyMib, (v) => `${fix(v, 0)} MiB`),
        spreadText(f.convergeCpuS, (v) => `${fix(v, 1)} s`),
        f.idleCpuS === null ? 'not converged' : spreadText(f.idleCpuS, (v) => `${fix(v, 2)} s`),
        spreadText(f.requests, (v) => fix(v, 0)),
      ]);
    }
    for (const [label, x] of Object.entries(at.ratios)) {
      const t = (k: string): string => {
        const v = x[k];
        return typeof v === 'string' ? v : times(v);
      };
      rows.push([at.chart, String(at.n), `*${OPERATOR_LABELS[label] ?? label} / operator-sdk's*`, '', t('deployed'), t('upgrade'), t('peak'), ...(cgroup ? [x.cgroupPeak === undefined ? '–' : t('cgroupPeak')] : []), ...(workingSet ? [x.workingSetPeak === undefined ? '–' : t('workingSetPeak')] : []), t('steady'), t('convergeCpu'), t('idleCpu'), t('requests')]);
    }
  }
  out.push(...table(['chart', 'N', 'operator', 'rounds', 'to Deployed', 'upgrade', ...(cgroup ? ['peak RSS (VmHWM summed)', 'peak (its cgroup, page cache included)'] : ['peak RSS']), ...(workingSet ? ['peak working set (its cgroup)'] : []), 'steady RSS', 'CPU converging', 'idle CPU', 'API requests'], rows));
  return out;
};

const helmOperatorMemory: Renderer = (r) => {
  const s = r.summary as HelmOperatorMemorySummary;
  const rows = (['binnacle', 'operator-sdk'] as const).flatMap((label) => {
    const f = s[label];
    return f === null ? [] : [[OPERATOR_LABELS[label] ?? label, spreadText(f.idleMib, (v) => `${fix(v, 0)} MiB`), spreadText(f.peakMib, (v) => `${fix(v, 0)} MiB`), spreadText(f.steadyMib, (v) => `${fix(v, 0)} MiB`), spreadText(f.deployedMs, (v) => sec(v, 1))]];
  });
  return [
    `One memcached CR (operator-sdk's sample), until \`Deployed\` and ${fix(Number(r.settings.bench.settleMs) / 1000, 0)} s more; memory of the whole process tree (Binnacle's native Helm engine is a child process). Medians of ${str(r.settings.bench.rounds)} round(s), smallest to largest in brackets. Binnacle's engine: ${str(r.settings.binnacle.engine)}.`,
    '',
    ...table(['operator', 'idle RSS', 'peak RSS', 'steady RSS', 'to Deployed'], rows),
  ];
};

const consoleCatalog: Renderer = (r) => {
  const s = r.summary as ConsoleCatalogSummary;
  return [
    `The console's catalog page with the whole corpus (${str(r.settings.bench.packages)} packages) in headless Chromium (${str(r.settings.binnacle.browserVersion)}), ${str(r.settings.bench.runs)} runs; no peer: the budget is the issue's 1 s.`,
    '',
    ...table(['figure', 'median (min–max)'], [
      ['navigation → every card drawn', spreadText(s.pageMs, ms)],
      ['`/api/packages`, cached catalog', spreadText(s.apiMs, ms)],
    ]),
    '',
    `Ratio to the 1 s budget: ${fix(s.ratioToBudget, 2)}.`,
  ];
};

const cel: Renderer = (r) => {
  const s = r.summary as CelSummary;
  const ref = r.settings.reference;
  const version = str(ref?.version);
  const bench = r.settings.bench as { resolveRounds?: unknown };
  const pair = (x: { wall: Num; cpu: Num; rss: Num } | null): string => (x === null ? '' : `${times(x.wall)} / ${times(x.cpu)} / ${times(x.rss)}`);
  const rowLabel: Record<string, string> = { node: '`node -e 0` (reference)', hand: 'hand-written (`src/resolve/cel.ts`), bundled', inlined: `@bufbuild/cel ${version}, inlined in the bundle`, external: `@bufbuild/cel ${version}, from node_modules` };
  const a = s.answers;
  return [
    `The hand-written CEL evaluator against @bufbuild/cel ${version} behind the same contract, each side bundled as the CLI bundles; ${str(r.settings.bench.rounds)} interleaved runs (\`binnacle resolve\`: ${str(bench.resolveRounds)}), medians; CPU is user + system in 10 ms steps.`,
    '',
    'Start-up to the first answer (import the evaluator, compile one OLM rule, run it once):',
    '',
    ...table(
      ['process', 'wall', 'CPU', 'peak RSS', '× node -e 0 (wall / CPU / memory)', '× hand-written (wall / CPU / memory)'],
      s.startup.rows.map((x) => [rowLabel[x.variant] ?? x.label, ms(x.wallMs), ms(x.cpuMs), `${fix(x.rssMb, 1)} MiB`, pair(x.toNode), x.variant === 'node' || x.variant === 'hand' ? '' : pair(x.toHand)]),
    ),
    '',
    `In one process, the ${s.inProcess.rules} distinct parity rules both compile, over ${s.inProcess.inputs} candidates (after warm-up rounds):`,
    '',
    ...table(['figure', 'hand-written', '@bufbuild/cel', '@bufbuild/cel / hand-written'], [
      ['compile, per rule', `${fix(s.inProcess.compileUs.hand, 1)} µs`, `${fix(s.inProcess.compileUs.bufbuild, 1)} µs`, times(s.inProcess.compileUs.ratio)],
      ['evaluate, per rule over one candidate', `${fix(s.inProcess.evaluateUs.hand, 2)} µs`, `${fix(s.inProcess.evaluateUs.bufbuild, 2)} µs`, times(s.inProcess.evaluateUs.ratio)],
    ]),
    '',
    `\`binnacle resolve --all-packages -o json\` over a generated catalog (${s.resolve.packages} packages, ${s.resolve.bundles} bundles, ${s.resolve.celRules} CEL rules; ${s.resolve.resolvedPackages} packages resolve), the CLI bundled with each evaluator; the resolution alone is the command less the same command for a package no catalog offers:`,
    '',
    ...table(
      ['CLI with', 'wall', 'CPU', 'peak RSS', 'resolution alone, CPU', '× hand-written (CPU / resolution CPU / memory)'],
      s.resolve.rows.map((x) => [x.variant === 'hand' ? 'hand-written' : `@bufbuild/cel, ${x.variant === 'inlined' ? 'inlined' : 'from node_modules'}`, sec(x.all.wallMs), sec(x.all.cpuMs), `${fix(x.all.rssMb, 1)} MiB`, sec(x.resolution.cpuMs), x.variant === 'hand' ? '' : `${times(x.toHand.cpu)} / ${times(x.toHand.resolutionCpu)} / ${times(x.toHand.rss)}`]),
    ),
    '',
    `Same resolution in every run of every variant: ${s.resolve.sameResolution ? 'yes' : '**no**'}. Over the parity data (${a.rules} rules × ${a.inputs} candidates, against OLM's own answers; \`src/resolve/cel-parity.test.ts\` gives each difference's reason), the hand-written answers as OLM ${a.asOlm.hand} of ${a.answers} (differs on ${a.differ.hand.length === 0 ? 'none' : a.differ.hand.join(', ')}), @bufbuild/cel ${a.asOlm.bufbuild} of ${a.answers} (differs on ${a.differ.bufbuild.length === 0 ? 'none' : a.differ.bufbuild.join(', ')}); the two agree on ${a.agree}.`,
  ];
};

const yaml: Renderer = (r) => {
  const s = r.summary as YamlSummary;
  return [
    `Every YAML file of the operator and chart corpora (${s.files} files, ${s.documents} documents, ${fix(s.bytes / 2 ** 20, 0)} MiB; charts' templates aside) through the bundle and catalog reader, medians of ${str(r.settings.bench.rounds)} interleaved rounds, each side a process of its own; same values on both sides: ${s.sameValues ? 'yes' : 'no'}.`,
    '',
    ...table(['reader', 'reading', 'wall', 'peak RSS'], [
      ['js-yaml path (default)', sec(s.fast.readMs), sec(s.fast.wallMs), `${fix(s.fast.rssMb, 0)} MB`],
      ['the `yaml` package alone (`BINNACLE_FAST_YAML=0`, reference)', sec(s.exact.readMs), sec(s.exact.wallMs), `${fix(s.exact.rssMb, 0)} MB`],
      ['reference ÷ js-yaml path', times(s.readRatio), times(s.wallRatio), times(s.rssRatio)],
    ]),
  ];
};

const flux: Renderer = (r) => {
  const s = r.summary as FluxSummary;
  const ref = r.settings.reference;
  const rows: string[][] = [];
  for (const at of s.figures) {
    const mode = at.mode === 'matched' ? `matched (${str(at.concurrency)})` : 'defaults';
    for (const [label, f] of Object.entries(at.sides)) {
      rows.push([
        String(at.n),
        mode,
        label === 'flux' ? 'helm-controller + source-controller' : 'binnacle manager',
        String(f.rounds),
        f.ready >= at.n ? spreadText(f.readyMs, (v) => sec(v, 1)) : `> ${sec(f.readyMs.median, 0)} (${f.ready} of ${at.n})`,
        spreadText(f.peakMib, (v) => `${fix(v, 0)} MiB`),
        spreadText(f.cpuS, (v) => `${fix(v, 1)} s`),
        spreadText(f.requests, (v) => fix(v, 0)),
      ]);
    }
    if (at.ratios !== null) rows.push([String(at.n), mode, '*binnacle / flux*', '', times(at.ratios.readyTime), times(at.ratios.peakRss), times(at.ratios.cpu), times(at.ratios.requests)]);
  }
  return [
    `N podinfo releases, one a namespace, created at once until every HelmRelease is Ready / every \`helm\` BundleDeployment Installed; ${str(ref?.what)} beside \`binnacle manager\`, each alone against the local control plane. Peak RSS is the sum over each side's processes and their children; CPU over the same span; API requests from the audit log, start-up included. Defaults: each side as it ships; matched: helm-controller \`--concurrent\` and Binnacle \`--workers\` the same, client rate limits each side's default (Flux 50 QPS / burst 300, Binnacle none). Medians of the rounds, smallest to largest in brackets.`,
    '',
    ...table(['N', 'settings', 'side', 'rounds', 'to all ready', 'peak RSS', 'CPU', 'API requests'], rows),
  ];
};

/** The manager's Node flags as a catalog-scale run's settings say them (runs before the image had flags: none). */
function managerNodeFlags(r: BenchResult): string {
  const flags = /\(node (.*?)\s*bin\/binnacle\.js/.exec(str(r.settings.binnacle.what))?.[1]?.trim() ?? '';
  const malloc = Object.keys((r.settings.binnacle as { env?: Record<string, string> }).env ?? {}).some((k) => k.startsWith('MALLOC_')) ? ', glibc MALLOC_* set' : '';
  return flags === '' ? `node without flags${malloc}` : `node ${flags}${malloc}`;
}

const catalogScale: Renderer = (r) => {
  const s = r.summary as CatalogScaleSummary;
  // Runs before --catalog-workers passed --workers 1, which the catalog controller never read.
  const matched = str(r.settings.binnacle.matched);
  const flags = managerNodeFlags(r);
  const names: Record<string, string> = {
    'binnacle-defaults': `binnacle manager (defaults; ${flags})`,
    'binnacle-matched': matched === '--workers 1' ? `binnacle manager (--workers 1: the catalog controller still 2; ${flags})` : `binnacle manager (matched: ${matched}; ${flags})`,
    catalogd: str(r.settings.reference?.what),
    olmv1: str((r.settings.olmv1 as { what?: unknown } | undefined)?.what),
    opm: str((r.settings.opm as { what?: unknown } | undefined)?.what),
  };
  const idle = Object.values(s.sides).some((f) => f.idleMib !== undefined);
  const resolvable = s.sides.olmv1 !== undefined;
  const rows = Object.entries(s.sides).map(([side, f]) => [
    names[side] ?? side,
    String(f.rounds),
    spreadText(f.servingMs, (v) => sec(v, 1)),
    // catalogd alone does not resolve (the run of 2026-12-07T07-01 stored its Serving there).
    ...(resolvable ? [f.resolvableMs === undefined || side === 'catalogd' ? '–' : spreadText(f.resolvableMs, (v) => sec(v, 1))] : []),
    ...(idle ? [f.idleMib === undefined ? '–' : spreadText(f.idleMib, (v) => `${fix(v, 0)} MiB`)] : []),
    spreadText(f.peakMib, (v) => `${fix(v, 0)} MiB`),
    spreadText(f.steadyMib, (v) => `${fix(v, 0)} MiB`),
    spreadText(f.cpuToServingS, (v) => `${fix(v, 1)} s`),
    f.allMBps === undefined ? (side === 'opm' ? 'gRPC only' : '–') : `${fix(f.allMBps, 0)} MB/s`,
    f.metasPackagesP99Ms === undefined ? '–' : `${fix(f.metasPackagesP50Ms, 1)} / ${fix(f.metasPackagesP99Ms, 1)} ms`,
    f.metasOnePackageP99Ms === undefined ? '–' : `${fix(f.metasOnePackageP50Ms, 1)} / ${fix(f.metasOnePackageP99Ms, 1)} ms`,
  ]);
  const c = s.catalogs;
  // Runs before the client was a setting used Node's https.
  const client = r.settings.bench?.client === undefined ? "Node's https client, its first request (opening the connection) timed with the rest" : str(r.settings.bench.client);
  return [
    `${c.count === 1 ? 'One catalog' : `${c.count} catalogs`} of ${c.bundlesEach} bundles (${c.packagesEach} packages, ${c.bytesEach.map((b) => `${fix(b / 1e6, 1)} MB`).join(' / ')} of FBC JSON) each: the operatorhub-2021 corpus's valid packages copied under new names, as catalog images in the cluster's registry, the same \`olm.operatorframework.io/v1\` ClusterCatalogs given to each side alone; opm serve reads the same FBC directories, one process a catalog. Serving: first ClusterCatalog created until all are Serving (opm: start until every port accepts, its cache built beforehand). Peak and steady (15 s after serving) RSS of the process tree${c.count === 1 ? '' : `, summed over opm's ${c.count}`}. ${resolvable ? "OLM v1: catalogd and operator-controller, each a process, memory and CPU summed (its peak the sum of each process's own: a bound from above); until resolvable: until operator-controller's cache holds every catalog (Binnacle's: Serving, the same unpack builds its resolution view); its steady RSS 15 s after that; its queries are catalogd's row's. " : ''}Queries over HTTPS on keep-alive connections (${client}): \`/api/v1/all\` throughput, and p50 / p99 of \`/api/v1/metas?schema=olm.package\` and \`?package=${c.onePackage}\`. Medians of the rounds, smallest to largest in brackets.`,
    '',
    ...table(['side', 'rounds', 'to Serving', ...(resolvable ? ['until resolvable'] : []), ...(idle ? ['idle RSS (no catalog)'] : []), 'peak RSS', 'steady RSS', 'CPU to Serving', '/api/v1/all', 'metas schema=olm.package', 'metas package=…'], rows),
    '',
    ...(s.sides.opm?.cacheBuildMs === undefined ? [] : [`opm's caches, built beforehand as a catalog image's Dockerfile does (\`--cache-only\`, not in its time to Serving): ${sec(s.sides.opm.cacheBuildMs.median, 1)} for the ${c.count}.`, '']),
    `One extension (${c.onePackage}) resolved against ${c.count === 1 ? 'the catalog' : `all ${c.count} catalogs`}: ${fix(s.resolution.inProcessMs.median, 1)} ms in process (the catalogs loaded once, as the manager holds them; median of ${s.resolution.inProcessMs.n}), ${ms(s.resolution.cliMs)} as \`binnacle resolve\` with ${c.count === 1 ? 'its directory' : `the ${c.count} directories`} (loading included).`,
  ];
};

/** managerNodeFlags as a table cell: the flags in code, the allocator note after them. */
function nodeFlagsCell(text: string): string {
  const [flags = '', ...notes] = text.replace(/^node /, '').split(', ');
  const cell = flags === 'without flags' ? 'none' : `\`${flags}\``;
  return [cell, ...notes].join(', ');
}

/** catalog-scale runs that varied the manager's Node flags (`--node-flags`): Binnacle's rows of each, named by their flags. */
const catalogScaleRuns: Comparer = (rs) => {
  const rows = rs.flatMap((r, i) =>
    Object.entries((r.summary as CatalogScaleSummary).sides)
      .filter(([side]) => side.startsWith('binnacle'))
      .map(([side, f]) => [
        String(i + 1),
        nodeFlagsCell(managerNodeFlags(r)),
        side.replace(/^binnacle-/, ''),
        String(f.rounds),
        spreadText(f.servingMs, (v) => sec(v, 1)),
        spreadText(f.peakMib, (v) => `${fix(v, 0)} MiB`),
        spreadText(f.steadyMib, (v) => `${fix(v, 0)} MiB`),
        spreadText(f.cpuToServingS, (v) => `${fix(v, 1)} s`),
        `${fix(f.allMBps, 0)} MB/s`,
        `${fix(f.metasPackagesP50Ms, 1)} / ${fix(f.metasPackagesP99Ms, 1)} ms`,
      ]),
  );
  return table(['run', "manager's Node flags", 'mode', 'rounds', 'to Serving', 'peak RSS', 'steady RSS', 'CPU to Serving', '/api/v1/all', 'metas schema=olm.package p50 / p99'], rows);
};

const helmEngineVersions: Renderer = (r) => {
  const s = r.summary as HelmEngineVersionsSummary;
  const b = r.settings.bench as { rounds?: unknown; warm?: unknown };
  const pct = (x: number): string => `${x > 0 ? '+' : ''}${x.toFixed(1)}%`;
  const label = { native: 'native (`helm-engine`)', wasm: 'WebAssembly (`helm.wasm`)' };
  const mib = (v: Num): string => `${fix(v, 1)} MiB`;
  return [
    `Helm's engine from \`${s.modules.before}\` (\`src/helm-engine\` at the last commit on Helm 3, built by its own \`build.sh\`) and from \`${s.modules.after}\`, one fresh process per measurement, spare RSA keys off; ${str(b.rounds)} rounds in alternating order, each chart rendered once and then ${str(b.warm)} times warm. Warm figures: the five charts' (${s.charts.map((c) => c.split('__').at(-1) ?? c).join(', ')}) median render time and CPU time per render, summed; medians of the rounds (smallest–largest).`,
    '',
    ...table(
      ['engine', 'size (Helm 3 → 4)', 'start-up memory', 'warm, wall', 'warm, CPU per render'],
      s.engines.map((e) => [
        label[e.kind],
        `${(e.before.bytes / 1e6).toFixed(1)} → ${(e.after.bytes / 1e6).toFixed(1)} MB (${pct(e.change.bytesPct)})`,
        `${spreadText(e.before.startupMiB, mib)} → ${spreadText(e.after.startupMiB, mib)} (${pct(e.change.startupPct)})`,
        `${spreadText(e.before.warmWallMs, ms)} → ${spreadText(e.after.warmWallMs, ms)} (${pct(e.change.warmWallPct)})`,
        `${spreadText(e.before.warmCpuMs, ms)} → ${spreadText(e.after.warmCpuMs, ms)} (${pct(e.change.warmCpuPct)})`,
      ]),
    ),
  ];
};

/** One table of several runs of a bench. */
type Comparer = (rs: BenchResult[]) => string[];
const COMPARERS: Partial<Record<string, Comparer>> = { 'catalog-scale': catalogScaleRuns };

const RENDERERS: Partial<Record<string, Renderer>> = {
  yaml,
  'cli-startup': cliStartup,
  catalog,
  bundle,
  resolve,
  helm,
  'helm-engine-versions': helmEngineVersions,
  'cluster-up': clusterUp,
  install,
  'helm-operator': helmOperator,
  'helm-operator-memory': helmOperatorMemory,
  'console-catalog': consoleCatalog,
  cel,
  flux,
  'catalog-scale': catalogScale,
};

/** The benches the README can show (every bench/*.ts has a renderer). */
export const RENDERED_BENCHES = Object.keys(RENDERERS);
