/**
 * Console catalog page benchmark (on demand: `npx tsx bench/console-catalog.ts`; not a test).
 *
 * The whole operatorhub-2021 corpus is rendered once and served by the console as one catalog
 * (from memory: no cluster, no catalog server; a client that lists one serving ClusterCatalog).
 * Headless Chromium (Debian's `chromium`) opens the catalog page; measured per run: the API
 * answer (/api/packages) and the time from navigation start until every package card is in the
 * page. Printed against the budget (1 s after load) as a ratio.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { chromium } from 'playwright-core';
import { defaultBundleRenderer, fbcFromPackageDir } from '../src/catalog-render/index.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../src/declcfg/index.js';
import { cacheDir } from '../src/cluster/layout.js';
import { ensureConsoleAssets } from '../src/console/assets.js';
import { startConsole } from '../src/console/server.js';
import type { KubeClient } from '../src/kube/client.js';
import { judged, spread, startRun } from './lib/results.js';
import type { ConsoleCatalogSummary } from './lib/summaries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CORPUS = process.env.BINNACLE_CORPUS ?? path.join(ROOT, '..', 'shared', 'corpus', 'operatorhub-2021');
const CHROMIUM = process.env.BINNACLE_CHROMIUM ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const RUNS = 5;
const BUDGET_MS = 1000;

async function renderCorpus(): Promise<DeclarativeConfig> {
  const merged = emptyDeclarativeConfig();
  for (const e of (await readdir(CORPUS, { withFileTypes: true })).filter((x) => x.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const r = await fbcFromPackageDir(path.join(CORPUS, e.name), { renderBundle: defaultBundleRenderer, imageFor: (_p, b) => `example.com/${e.name}:${b.version}` }).catch(() => undefined);
    if (r === undefined || r.failures.length > 0) continue;
    merged.packages.push(...r.config.packages);
    merged.channels.push(...r.config.channels);
    merged.bundles.push(...r.config.bundles);
    merged.deprecations.push(...r.config.deprecations);
  }
  return merged;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const recorder = startRun('console-catalog');
if (CHROMIUM === undefined) throw new Error("no Chromium: install Debian's chromium package or set BINNACLE_CHROMIUM");
let t = performance.now();
const config = await renderCorpus();
console.log(`corpus rendered: ${config.packages.length} packages, ${config.bundles.length} bundles in ${((performance.now() - t) / 1000).toFixed(1)} s`);
const catalog = { apiVersion: 'olm.binnacle.dev/v1', kind: 'ClusterCatalog', metadata: { name: 'corpus' }, spec: {}, status: { conditions: [{ type: 'Serving', status: 'True', reason: 'Available', message: '' }], urls: { base: 'memory://corpus' } } };
const client = { list: () => Promise.resolve({ items: [catalog] }), close: () => undefined } as unknown as KubeClient;
const web = await startConsole({
  host: '127.0.0.1',
  port: 0,
  base: client,
  forToken: () => Promise.reject(new Error('no tokens')),
  logger: pino({ level: 'silent' }),
  cacheDir: path.join(ROOT, '.cache', 'bench-data', 'console'),
  assetsDir: await ensureConsoleAssets({ outDir: path.join(cacheDir(), 'console') }),
  catalogLoader: (_base, name, priority) => Promise.resolve({ name, priority, config }),
  // A fake cluster that holds nothing: the bench measures the page, not the login or the rate limit.
  access: { lend: 'unsafe' },
  limits: { ratePerSecond: 1e6, burst: 1e6 },
});
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
try {
  t = performance.now();
  const first = await fetch(`${web.url}/api/packages`);
  const size = (await first.arrayBuffer()).byteLength;
  console.log(`/api/packages first call: ${(performance.now() - t).toFixed(0)} ms, ${(size / 1024).toFixed(0)} KiB`);
  const api: number[] = [];
  const page: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    t = performance.now();
    await (await fetch(`${web.url}/api/packages`)).arrayBuffer();
    api.push(performance.now() - t);
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await p.goto(web.url);
    await p.waitForFunction(`document.querySelectorAll('#packages .card').length === ${config.packages.length}`, undefined, { timeout: 60_000 });
    // Navigation start to all cards in the DOM, as the page's own clock sees it.
    page.push(await p.evaluate<number>('performance.now()'));
    await ctx.close();
  }
  const pm = median(page);
  console.log(`/api/packages (cached catalog), median of ${RUNS}: ${median(api).toFixed(0)} ms`);
  console.log(`catalog page, ${config.packages.length} cards, navigation to all rendered, median of ${RUNS}: ${pm.toFixed(0)} ms (runs: ${page.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`ratio to the 1 s budget: ${(pm / BUDGET_MS).toFixed(2)} (${pm <= BUDGET_MS ? 'within' : 'over'})`);
  recorder.save({
    settings: {
      bench: { runs: RUNS, budgetMs: BUDGET_MS, corpus: path.relative(ROOT, CORPUS), packages: config.packages.length, bundles: config.bundles.length },
      binnacle: { what: "the console's catalog page (startConsole, the bundled page), the corpus served from memory", browser: `${CHROMIUM} (headless, playwright-core)`, browserVersion: browser.version() },
      reference: { what: 'the issue\'s budget: 1 s from navigation to every card drawn (no peer measured)' },
    },
    rounds: page.map((ms, i) => ({ pageMs: ms, apiMs: api[i] })),
    summary: { pageMs: spread(page), apiMs: spread(api), apiFirstCallKiB: size / 1024, ratioToBudget: pm / BUDGET_MS } satisfies ConsoleCatalogSummary,
    goals: [judged(`catalog page of ${config.packages.length} packages drawn within ${BUDGET_MS} ms of navigation (median of ${RUNS})`, pm <= BUDGET_MS, `${pm.toFixed(0)} ms`)],
  });
} finally {
  await browser.close();
  await web.stop();
}
