/**
 * Binnacle's render against `helm template` (the `helm` CLI built from the same pinned Helm
 * module, helm.sh/helm/v4, in .cache/bin) for every chart in the charts corpus: with default values, with each
 * of the chart's `ci/*.yaml` values files, and with a pinned Kubernetes version plus extra API
 * versions and CRDs. Output must be byte-identical; where Helm fails, Binnacle fails with
 * Helm's error text. Templates that draw random values (randAlphaNum passwords, genCA, bcrypt
 * salts) differ between two runs of Helm itself: for those, `helm template` runs twice, the
 * lines where Helm disagrees with itself are the random ones, and every other line must be
 * byte-identical. Prints a table per chart.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it, after } from 'node:test';
import { createHelmEngine, HelmError, type TemplateRequest } from '../../src/helm-engine/index.js';

const CHARTS = process.env.BINNACLE_CHARTS_CORPUS ?? path.resolve(import.meta.dirname, '../../../shared/corpus/charts');
/** The witness `helm` (Helm 4, built by hack/build-tools.sh into the tools folder, BINNACLE_BIN_DIR when set). */
const HELM = path.join(process.env.BINNACLE_BIN_DIR ?? path.resolve(import.meta.dirname, '../../.cache/bin'), 'helm');

interface Case {
  chart: string;
  label: string;
  args: string[];
  req: TemplateRequest;
}

interface Outcome {
  ok: boolean;
  text: string;
}

/** `helm template`, answering stdout, or Helm's error text (after "Error: ") on failure. */
function helmTemplate(args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(HELM, ['template', ...args], { maxBuffer: 256 * 1024 * 1024, env: { ...process.env, HELM_CACHE_HOME: '/tmp/helm-cache', HELM_CONFIG_HOME: '/tmp/helm-config' } }, (err, stdout, stderr) => {
      if (err === null) return resolve({ ok: true, text: stdout });
      const at = stderr.indexOf('Error: ');
      resolve({ ok: false, text: (at >= 0 ? stderr.slice(at + 'Error: '.length) : stderr).trim() });
    });
  });
}

async function casesFor(dir: string): Promise<Case[]> {
  const chart = path.join(CHARTS, dir);
  const base = { chart, releaseName: 'corpus', namespace: 'corpus-ns' };
  const common = ['corpus', chart, '-n', 'corpus-ns'];
  const cases: Case[] = [{ chart: dir, label: 'defaults', args: common, req: base }];
  const ciDir = path.join(chart, 'ci');
  if (existsSync(ciDir)) {
    for (const f of (await readdir(ciDir)).filter((n) => /\.ya?ml$/.test(n)).sort()) {
      const file = path.join(ciDir, f);
      cases.push({ chart: dir, label: `ci/${f}`, args: [...common, '-f', file], req: { ...base, valueFiles: [file] } });
    }
  }
  const apis = ['monitoring.coreos.com/v1', 'route.openshift.io/v1', 'autoscaling.k8s.io/v1/VerticalPodAutoscaler'];
  cases.push({
    chart: dir,
    label: 'kube 1.36.3 + APIs + CRDs',
    args: [...common, '--kube-version', 'v1.36.3', ...apis.flatMap((a) => ['-a', a]), '--include-crds'],
    req: { ...base, kubeVersion: 'v1.36.3', apiVersions: apis, includeCrds: true },
  });
  return cases;
}

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T);
      }
    }),
  );
  return out;
}

describe('Helm charts corpus: Binnacle render vs helm template', { timeout: 1_800_000 }, () => {
  const engine = createHelmEngine();
  after(() => engine.close());

  it('renders every chart and values file byte-identically to helm template, or fails with Helm’s error', async () => {
    assert.ok(existsSync(CHARTS), `charts corpus not found at ${CHARTS} (set BINNACLE_CHARTS_CORPUS)`);
    assert.ok(existsSync(HELM), `helm CLI not found at ${HELM}: build it with \`bash hack/build-tools.sh helm\``);
    const version = execFileSync(HELM, ['version', '--template', '{{.Version}}'], { encoding: 'utf8' }).trim();
    assert.match(version, /^v4\./, `${HELM} is Helm ${version}, not Helm 4 (the engine's module): rebuild it with \`bash hack/build-tools.sh helm\``);
    const dirs = (await readdir(CHARTS, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    assert.ok(dirs.length >= 60, `expected the 60-chart corpus, found ${dirs.length} charts`);
    const cases = (await Promise.all(dirs.map(casesFor))).flat();

    const results = await pool(cases, 2, async (c) => {
      const helm = await helmTemplate(c.args);
      let ours: Outcome;
      try {
        ours = { ok: true, text: (await engine.render(c.req)).output };
      } catch (err) {
        if (!(err instanceof HelmError)) throw err;
        ours = { ok: false, text: err.message.trim() };
      }
      let same = helm.ok === ours.ok && helm.text === ours.text;
      let randomLines = 0;
      if (!same && helm.ok && ours.ok) {
        const again = await helmTemplate(c.args);
        if (again.ok && again.text !== helm.text) {
          const a = helm.text.split('\n');
          const b = again.text.split('\n');
          const o = ours.text.split('\n');
          if (a.length === b.length && a.length === o.length) {
            const volatile = a.map((line, i) => line !== b[i]);
            randomLines = volatile.filter(Boolean).length;
            same = a.every((line, i) => volatile[i] === true || line === o[i]);
          }
        }
      }
      return { c, helm, ours, same, randomLines };
    });

    const byChart = new Map<string, { rendered: number; random: number; failedLikeHelm: number; differ: string[] }>();
    for (const r of results) {
      const row = byChart.get(r.c.chart) ?? { rendered: 0, random: 0, failedLikeHelm: 0, differ: [] };
      if (!r.same) row.differ.push(r.c.label);
      else if (r.randomLines > 0) row.random++;
      else if (r.helm.ok) row.rendered++;
      else row.failedLikeHelm++;
      byChart.set(r.c.chart, row);
    }
    const lines = ['chart | byte-identical | identical but Helm-random lines | same failure as helm | differ'];
    for (const [chart, row] of byChart) lines.push(`${chart} | ${row.rendered} | ${row.random} | ${row.failedLikeHelm} | ${row.differ.join(', ') || '-'}`);
    const identical = results.filter((r) => r.same && r.helm.ok).length;
    const random = results.filter((r) => r.same && r.randomLines > 0).length;
    const sameFail = results.filter((r) => r.same && !r.helm.ok).length;
    lines.push(
      `total: ${results.length} cases over ${dirs.length} charts; ${identical - random} byte-identical, ${random} identical but for the lines Helm itself randomizes, ${sameFail} failed with Helm's own error, ${results.length - identical - sameFail} differ`,
    );
    console.log(lines.join('\n'));

    const differ = results.filter((r) => !r.same);
    assert.deepEqual(
      differ.map((r) => `${r.c.chart} [${r.c.label}]: helm ${r.helm.ok ? 'ok' : `failed: ${r.helm.text.slice(0, 300)}`}; binnacle ${r.ours.ok ? 'ok' : `failed: ${r.ours.text.slice(0, 300)}`}${r.helm.ok && r.ours.ok ? ` (first difference at byte ${firstDiff(r.helm.text, r.ours.text)})` : ''}`),
      [],
    );
    assert.ok(identical > results.length / 2, 'most cases render');
  });
});

function firstDiff(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}
