/**
 * Renders and validates the whole operatorhub-2021 corpus: once in one call for the whole tree,
 * and once per package. Every package must become valid FBC or be rejected with a specific
 * reason; the counts are printed at the end.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { toFbcJson, validateConfig, type DeclarativeConfig } from '../../src/catalog/index.js';
import { render } from '../../src/catalog-render/index.js';
import { operatorCorpusDir } from './corpus.test-helper.js';

const CORPUS = operatorCorpusDir();
const IMAGE = 'quay.io/openshift-community-operators/{package}:v{version}';
const ROOT = path.resolve(import.meta.dirname, '../..');
/** `opm validate`'s code (operator-registry v1.47.0), built by hack/bench-tools/opm-parity/build.sh. */
const OPM_VALIDATE = path.join(ROOT, '.cache', 'bench-bin', 'opm-parity');

function onlyPackages(cfg: DeclarativeConfig, names: ReadonlySet<string>): DeclarativeConfig {
  return {
    packages: cfg.packages.filter((p) => names.has(p.name)),
    channels: cfg.channels.filter((c) => names.has(c.package)),
    bundles: cfg.bundles.filter((b) => names.has(b.package)),
    deprecations: cfg.deprecations.filter((d) => names.has(d.package)),
    others: cfg.others.filter((o) => names.has(o.package ?? '')),
  };
}

function onlyPackage(cfg: DeclarativeConfig, name: string): DeclarativeConfig {
  return onlyPackages(cfg, new Set([name]));
}

interface Verdict {
  accepted: boolean;
  reason: string;
  detail: string;
}

describe('operatorhub-2021 corpus', { timeout: 600_000 }, () => {
  const verdicts = new Map<string, Verdict>();
  let packageDirs: string[] = [];

  it('renders the whole tree in one call; each package is valid or rejected with a specific reason', async () => {
    packageDirs = (await readdir(CORPUS, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
    const out = await render([CORPUS], { bundleImage: IMAGE });
    const failedDirs = new Map<string, Verdict>();
    for (const f of out.failures) {
      const dir = path.basename(f.source);
      if (!failedDirs.has(dir)) failedDirs.set(dir, { accepted: false, reason: `render:${f.reason}`, detail: f.message });
    }
    for (const dir of packageDirs) {
      const failed = failedDirs.get(dir);
      if (failed !== undefined) {
        verdicts.set(dir, failed);
        continue;
      }
      // The package name may differ from its directory (e.g. hive-operator/hive.package.yaml).
      const rendered = out.config.packages.find((p) => p.name === dir) ?? out.config.packages.find((p) => out.config.channels.some((c) => c.package === p.name && !packageDirs.includes(p.name)));
      assert.ok(rendered, `package directory ${dir} neither rendered nor reported`);
      const { result } = validateConfig(onlyPackage(out.config, rendered.name), `package ${rendered.name}`);
      const first = result.errors()[0];
      verdicts.set(dir, first === undefined ? { accepted: true, reason: 'valid', detail: '' } : { accepted: false, reason: `validate:${first.rule}`, detail: result.render() });
    }
    const accepted = [...verdicts.values()].filter((v) => v.accepted).length;
    const rejected = [...verdicts.values()].filter((v) => !v.accepted);
    assert.equal(accepted + rejected.length, packageDirs.length);
    for (const v of rejected) {
      assert.match(v.reason, /^(render|validate):[A-Za-z]/);
      assert.ok(v.detail.length > 20, `rejection without detail: ${v.reason}`);
    }
    for (const good of ['etcd', 'prometheus']) assert.equal(verdicts.get(good)?.accepted, true, `${good}: ${verdicts.get(good)?.detail ?? 'missing'}`);
    // Whole-corpus numbers, printed for the report.
    const ok = onlyAccepted(out.config, verdicts);
    const byReason = new Map<string, number>();
    for (const v of rejected) byReason.set(v.reason, (byReason.get(v.reason) ?? 0) + 1);
    console.log(
      `corpus: ${packageDirs.length} packages, ${accepted} valid (${ok.channels} channels, ${ok.bundles} bundles), ${rejected.length} rejected:\n` +
        [...byReason.entries()].sort().map(([r, n]) => `  ${r}: ${n}`).join('\n'),
    );
    for (const [dir, v] of verdicts) if (!v.accepted) console.log(`  - ${dir}: ${v.reason}: ${v.detail.split('\n').slice(0, 3).join(' | ')}`);
    // opm validate's code must agree the valid part is valid (built and cached; fails when Go cannot build it).
    const built = spawnSync('bash', [path.join(ROOT, 'hack', 'bench-tools', 'opm-parity', 'build.sh')], { encoding: 'utf8' });
    assert.ok(built.status === 0 && existsSync(OPM_VALIDATE), `cannot build opm validate (hack/bench-tools/opm-parity/build.sh needs Go): ${built.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    const keep = new Set(out.config.packages.map((p) => p.name).filter((n) => verdicts.get(n)?.accepted === true));
    const dir = await mkdtemp(path.join(tmpdir(), 'corpus-fbc-'));
    await writeFile(path.join(dir, 'catalog.json'), toFbcJson(onlyPackages(out.config, keep)));
    const r = spawnSync(OPM_VALIDATE, [dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const v = JSON.parse(r.stdout) as { valid: boolean; error?: string };
    assert.ok(r.status === 0 && v.valid, `opm validate disagrees: ${v.error ?? r.stderr}`);
    console.log(`opm validate agrees: ${keep.size} packages valid`);
  });

  it('renders each package on its own to the same verdict', async () => {
    assert.ok(packageDirs.length > 0);
    let same = 0;
    for (const dir of packageDirs) {
      const out = await render([path.join(CORPUS, dir)], { bundleImage: IMAGE });
      let accepted = out.failures.length === 0;
      if (accepted) accepted = validateConfig(out.config).result.ok;
      assert.equal(accepted, verdicts.get(dir)?.accepted, `${dir}: per-package verdict differs from the whole-tree one`);
      same++;
    }
    assert.equal(same, packageDirs.length);
  });
});

function onlyAccepted(cfg: DeclarativeConfig, verdicts: Map<string, Verdict>): { channels: number; bundles: number } {
  const ok = new Set(cfg.packages.map((p) => p.name).filter((n) => verdicts.get(n)?.accepted !== false));
  return { channels: cfg.channels.filter((c) => ok.has(c.package)).length, bundles: cfg.bundles.filter((b) => ok.has(b.package)).length };
}
