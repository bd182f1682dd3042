/**
 * The `summary` each bench stores (bench/lib/results.ts) and the README's tables read
 * (bench/lib/readme.ts): one type per bench, which the bench's `save` call satisfies, so the
 * writer and the reader cannot drift apart. A figure that could not be measured is NaN when
 * written, and JSON stores NaN as null: readers take every number as possibly null.
 */
import type { Spread } from './results.js';

export interface CliStartupSummary {
  rows: {
    label: string;
    wallMs: number;
    cpuMs: number;
    rssMb: number;
    wallRatio: number;
    cpuRatio: number;
    rssRatio: number;
    failedRuns: number;
    /** node -e 0 itself. */
    reference: boolean;
    /** Held to the goal (the unbundled row is shown for comparison only). */
    judged: boolean;
  }[];
}

export interface CatalogSummary {
  startupMs: number;
  corpus?: { renderMs: number; renderRssMb: number; outputMb: number };
  /** False when opm could not be built: no side-by-side figures. */
  opm?: false;
  comparisons?: { step: string; binnacleMs: number; opmMs: number; binnacleRssMb: number; opmRssMb: number; timeRatio: number; netTimeRatio: number; memoryRatio: number }[];
  identical?: { renderFbc: boolean; renderTestdata: boolean; renderBundles: string };
}

export interface BundleSummary {
  directories: number;
  binnacleMs: Spread;
  binnacleWithErrors: number;
  verifyMs?: Spread;
  timeRatio?: number;
  verifyWithErrors?: number;
  agree?: { bothErrors: number; bothClean: number };
  differ?: { onlyBinnacle: string[]; onlyVerify: string[] };
}

export interface Quantiles {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

export interface ResolveSummary {
  packages: number;
  bundles: number;
  requests: { package: number; upgrade: number; bulk: number };
  resolved: number;
  explained: number;
  groups: { package: Quantiles; upgrade: Quantiles; bulk: Quantiles };
  endToEnd: Quantiles;
  sat: Quantiles;
  deppy: Quantiles | null;
  sameAnswer: { corpus: number; corpusOf: number; random: number; randomOf: number; differ: string[] } | null;
}

export interface HelmChartRow {
  chart: string;
  helm: { ok: boolean; ms: number; maxRssKb: number; cpuMs: number };
  binnacleFirstMs: number;
  pairedHelmMs: number[];
  warmMs: number[];
  warmRatio: number;
  output: string;
}

export interface HelmSummary {
  charts: number;
  failed: { helm: number; binnacle: number };
  corpus: { helmMs: Spread; binnacleMs: Spread; ratio: number; ratios: number[] };
  memory: { helmMaxRssKb: Spread; binnacleHwmKb: Spread; ratio: number; binnacleHwmKbAfterWarm: number };
  cpu: { helmMs: number; binnacleMs: number; ratio: number };
  coldProcess: { nodeAndImportsMs: number; engineStartMs: number; firstRendersMs: number };
  warm: { medianRatio: number; faster: number; slower: string[] };
  outputs: { same: number; sameButHelmRandom: number; bothFail: number; mismatch: number };
}

/** One engine (native or WebAssembly) built from Helm 3 and from Helm 4 (bench/helm-engine-versions.ts). */
export interface HelmEngineFigures {
  bytes: number;
  startupMiB: Spread;
  /** Per round: the five charts' median warm render times, summed. */
  warmWallMs: Spread;
  /** Per round: the five charts' CPU time per warm render, summed. */
  warmCpuMs: Spread;
}

export interface HelmEngineVersionsSummary {
  /** The helm module each build pins, e.g. "helm.sh/helm/v3 v3.22.0". */
  modules: { before: string; after: string };
  charts: string[];
  engines: { kind: 'native' | 'wasm'; before: HelmEngineFigures; after: HelmEngineFigures; change: { bytesPct: number; startupPct: number; warmWallPct: number; warmCpuPct: number } }[];
}

export interface ClusterUpSummary {
  up: { p50: number; p99: number; max: number };
  idempotentUpMs: number;
  get: { binnacle: { p50: number; p99: number; max: number }; floor: { p50: number; p99: number; max: number }; ratioP50: number };
}

export interface InstallSummary {
  objects: number;
  single: { p50Ms: number; floorP50Ms: number; ratio: number };
  many: { n: number; ms: number; floorMs: number; ratio: number };
  memory: { peakMiB: number; readyRssMiB: number; installedRssMiB: number };
  requestsPerExtension: number;
  requestsByResource: Record<string, number>;
  reconcilesPerExtension: Record<string, number>;
}

/** One operator's rounds at one N (bench/helm-operator.ts). Idle figures are null unless every round converged. */
export interface HelmOperatorFigures {
  rounds: number;
  deployed: number;
  upgraded: number;
  converged: boolean;
  deployedMs: Spread;
  upgradeMs: Spread;
  peakMib: Spread;
  /** The tree's peak as its own memory cgroup counted it (absent in results stored before it was measured). */
  cgroupPeakMib?: Spread | null;
  /** The cgroup's working set (usage less inactive file cache), its largest sample (absent before it was measured). */
  workingSetPeakMib?: Spread | null;
  /** Processes killed for the run's memory limit, over all rounds. */
  oomKills?: number;
  steadyMib: Spread | null;
  convergeCpuS: Spread;
  idleCpuS: Spread | null;
  requests: Spread;
}

export interface HelmOperatorSummary {
  figures: {
    chart: string;
    n: number;
    operators: Record<string, HelmOperatorFigures>;
    /** Binnacle's side (label) over operator-sdk's, per figure; "not converged" where one side's idle figures are missing. */
    ratios: Record<string, Record<string, number | string>>;
  }[];
}

export interface HelmOperatorMemoryFigures {
  idleMib: Spread;
  peakMib: Spread;
  steadyMib: Spread;
  deployedMs: Spread;
}

export interface HelmOperatorMemorySummary {
  binnacle: HelmOperatorMemoryFigures | null;
  'operator-sdk': HelmOperatorMemoryFigures | null;
  goalMib: number;
}

export interface ConsoleCatalogSummary {
  pageMs: Spread;
  apiMs: Spread;
  apiFirstCallKiB: number;
  ratioToBudget: number;
}

/** Medians of one command's runs under /usr/bin/time (bench/cel.ts). */
export interface CelProcessFigures {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
}

export interface CelSummary {
  /** Start-up to the first answer: a process that imports one evaluator, compiles one rule and runs it once. */
  startup: {
    rows: (CelProcessFigures & {
      variant: 'node' | 'hand' | 'inlined' | 'external';
      label: string;
      /** Over `node -e 0` in the same run. */
      toNode: { wall: number; cpu: number; rss: number };
      /** Over the hand-written evaluator's; null for node -e 0. */
      toHand: { wall: number; cpu: number; rss: number } | null;
    })[];
  };
  /** In one process, after warm-up rounds: per rule compiled, per evaluation (one rule over one candidate). */
  inProcess: {
    rules: number;
    inputs: number;
    evaluationsPerRound: number;
    compileUs: { hand: number; bufbuild: number; ratio: number };
    evaluateUs: { hand: number; bufbuild: number; ratio: number };
  };
  /** `binnacle resolve --all-packages -o json` over the generated catalog, the CLI bundled three ways. */
  resolve: {
    packages: number;
    bundles: number;
    celRules: number;
    resolvedPackages: number;
    /** Every run of every variant printed the same resolution. */
    sameResolution: boolean;
    rows: {
      variant: 'hand' | 'inlined' | 'external';
      label: string;
      all: CelProcessFigures;
      /** The same command for a package no catalog offers: the start-up and catalog loading. */
      startupPart: CelProcessFigures;
      /** all − startupPart, medians' difference. */
      resolution: { wallMs: number; cpuMs: number };
      /** Over the hand-written CLI's; 1 for the hand-written row. */
      toHand: { cpu: number; resolutionCpu: number; rss: number };
    }[];
  };
  /** Each evaluator's answers against OLM's (src/resolve/testdata/cel/olm-verdicts.json), rule by candidate. */
  answers: {
    rules: number;
    inputs: number;
    answers: number;
    asOlm: { hand: number; bufbuild: number };
    /** Rules with an answer unlike OLM's (ids), and how many answers each. */
    differ: { hand: string[]; bufbuild: string[] };
    /** Answers where the two evaluators agree with each other. */
    agree: number;
  };
}

export interface YamlSummary {
  files: number;
  documents: number;
  bytes: number;
  /** The js-yaml path (medians). */
  fast: { readMs: number; wallMs: number; rssMb: number };
  /** The yaml package alone (medians). */
  exact: { readMs: number; wallMs: number; rssMb: number };
  readRatio: number;
  wallRatio: number;
  rssRatio: number;
  sameValues: boolean;
}

/** One side's rounds at one N and mode (bench/flux.ts). */
export interface FluxFigures {
  rounds: number;
  /** The fewest releases Ready / Installed at the end of a round's wait (N unless one timed out). */
  ready: number;
  readyMs: Spread;
  /** Sum of the side's processes' (and their children's) VmHWM. */
  peakMib: Spread;
  cpuS: Spread;
  requests: Spread;
  /** From the processes' start until every /readyz answered. */
  startMs: Spread;
}

export interface FluxSummary {
  figures: {
    n: number;
    mode: 'defaults' | 'matched';
    /** The matched concurrency (helm-controller --concurrent, Binnacle --workers); null at defaults. */
    concurrency: number | null;
    sides: { binnacle?: FluxFigures; flux?: FluxFigures };
    /** Binnacle over Flux, medians; null when one side did not run. */
    ratios: { readyTime: number; peakRss: number; cpu: number; requests: number } | null;
  }[];
}

/** One side of bench/catalog-scale.ts: medians and spreads of its rounds. */
export interface CatalogScaleFigures {
  rounds: number;
  servingMs: Spread;
  peakMib: Spread;
  /** Started and ready, before any catalog (runs since 2026-12-06; not opm's, which loads as it starts). */
  idleMib?: Spread;
  steadyMib: Spread;
  steadyAfterQueriesMib: Spread;
  cpuToServingS: Spread;
  /** Binnacle and olmv1 (runs since 2026-12-07): until an extension could resolve against every catalog (olmv1: operator-controller's cache holds them all), and the CPU until then. */
  resolvableMs?: Spread;
  cpuToResolvableS?: Spread;
  /** opm only: its caches built beforehand (`--cache-only`), every catalog, one after another. */
  cacheBuildMs?: Spread;
  /** HTTP sides only (opm serve speaks gRPC). */
  allMBps?: number;
  metasPackagesP99Ms?: number;
  metasOnePackageP99Ms?: number;
  metasPackagesP50Ms?: number;
  metasOnePackageP50Ms?: number;
}

export interface CatalogScaleSummary {
  catalogs: { count: number; bundlesEach: number; packagesEach: number; bytesEach: number[]; onePackage: string };
  resolution: { inProcessMs: Spread; cliMs: number; chosen: string[] };
  sides: Partial<Record<'binnacle-defaults' | 'binnacle-matched' | 'catalogd' | 'olmv1' | 'opm', CatalogScaleFigures>>;
}
