/**
 * Renders the operatorhub-2021 corpus with src/catalog and resolves every package's default
 * channel. Each answer must be a solution whose every chosen bundle has its requirements met
 * (checked here, independently of the solver) or an explanation in words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import semver from 'semver';
import {
  PROP_GVK,
  PROP_GVK_REQUIRED,
  PROP_PACKAGE,
  PROP_PACKAGE_REQUIRED,
  decodeGVKProperty,
  decodePackageProperty,
  decodePackageRequiredProperty,
  propertiesOfType,
  type Bundle,
} from '../../src/catalog/index.js';
import { render } from '../../src/catalog-render/index.js';
import { CatalogIndex, ResolutionError, resolve } from '../../src/resolve/index.js';
import { operatorCorpusDir } from './corpus.test-helper.js';

const CORPUS = operatorCorpusDir();

test('every corpus package resolves to a valid solution or an explanation', { timeout: 600_000 }, async (t) => {
  const out = await render([CORPUS]);
  const cfg = out.config;
  assert.ok(cfg.bundles.length > 500, `rendered ${cfg.bundles.length} bundles`);
  const index = new CatalogIndex([{ name: 'operatorhub-2021', priority: 0, config: cfg }]);
  const bundleByName = new Map<string, Bundle>(cfg.bundles.map((b) => [b.name, b]));
  const gvkKey = (g: { group: string; version: string; kind: string }): string => `${g.group}/${g.version}/${g.kind}`;

  let solved = 0;
  let explained = 0;
  let withDeps = 0;
  let worst = 0;
  for (const pkg of index.packages()) {
    const def = index.defaultChannel(pkg);
    const started = performance.now();
    let chosen;
    try {
      chosen = resolve({ catalogs: index, requests: [{ package: pkg, channels: def === undefined ? [] : [def] }] }).bundles;
    } catch (err) {
      assert.ok(err instanceof ResolutionError, `${pkg}: unexpected ${String(err)}`);
      assert.ok(err.sentences.length > 0 && err.sentences.every((s) => s.length > 10), `${pkg}: empty explanation`);
      explained++;
      continue;
    } finally {
      worst = Math.max(worst, performance.now() - started);
    }
    solved++;
    if (chosen.length > 1) withDeps++;
    // Independent check of the answer against the raw FBC records.
    const raw = chosen.map((c) => {
      const b = bundleByName.get(c.name);
      assert.ok(b !== undefined, `${pkg}: chose unknown bundle ${c.name}`);
      return b;
    });
    const packages = raw.map((b) => b.package);
    assert.equal(new Set(packages).size, packages.length, `${pkg}: two bundles of one package`);
    assert.ok(packages.includes(pkg), `${pkg}: the requested package is missing`);
    const requested = raw.find((b) => b.package === pkg);
    if (def !== undefined && requested !== undefined) {
      const inChannel = cfg.channels.some((c) => c.package === pkg && c.name === def && c.entries.some((e) => e.name === requested.name));
      assert.ok(inChannel, `${pkg}: ${requested.name} is not in channel ${def}`);
    }
    const provided = new Set(raw.flatMap((b) => propertiesOfType(b.properties, PROP_GVK).flatMap((v) => {
      const g = decodeGVKProperty(v);
      return g === undefined ? [] : [gvkKey(g)];
    })));
    const versions = new Map(raw.map((b) => [b.package, decodePackageProperty(propertiesOfType(b.properties, PROP_PACKAGE)[0])?.version ?? '']));
    raw.forEach((b, position) => {
      for (const v of propertiesOfType(b.properties, PROP_GVK_REQUIRED)) {
        const g = decodeGVKProperty(v);
        if (g !== undefined) assert.ok(provided.has(gvkKey(g)), `${pkg}: ${b.name} needs ${gvkKey(g)}, which nothing chosen provides`);
      }
      for (const v of propertiesOfType(b.properties, PROP_PACKAGE_REQUIRED)) {
        const r = decodePackageRequiredProperty(v);
        if (r === undefined) continue;
        const have = versions.get(r.packageName);
        assert.ok(have !== undefined && semver.satisfies(have, r.versionRange, { includePrerelease: true, loose: true }), `${pkg}: ${b.name} needs ${r.packageName} ${r.versionRange}`);
        const at = packages.indexOf(r.packageName);
        assert.ok(at < position, `${pkg}: dependency ${r.packageName} comes after ${b.name}`);
      }
    });
  }
  // Upgrades under CatalogProvided: from an entry something replaces, the answer must be a real successor.
  let upgrades = 0;
  let refused = 0;
  for (const ch of cfg.channels) {
    const tail = ch.entries.find((e) => !ch.entries.some((o) => o.replaces === e.name || (o.skips ?? []).includes(e.name)) ? false : true);
    const from = tail === undefined ? undefined : bundleByName.get(tail.name);
    const fromVersion = from === undefined ? undefined : decodePackageProperty(propertiesOfType(from.properties, PROP_PACKAGE)[0])?.version;
    if (from === undefined || fromVersion === undefined || semver.valid(fromVersion) === null) continue;
    try {
      const r = resolve({
        catalogs: index,
        installed: [{ package: ch.package, version: fromVersion }],
        requests: [{ package: ch.package, channels: [ch.name], versionRange: `>${fromVersion}` }],
      });
      const to = r.bundles.find((b) => b.package === ch.package);
      assert.ok(to !== undefined);
      const entry = ch.entries.find((e) => e.name === to.name);
      const ok =
        entry !== undefined &&
        (entry.replaces === from.name ||
          (entry.skips ?? []).includes(from.name) ||
          (entry.skipRange !== undefined && semver.satisfies(fromVersion, entry.skipRange, { includePrerelease: true, loose: true })));
      assert.ok(ok, `${ch.package}/${ch.name}: ${to.name} is no successor of ${from.name}`);
      upgrades++;
    } catch (err) {
      assert.ok(err instanceof ResolutionError, `${ch.package}: unexpected ${String(err)}`);
      refused++;
      if (refused <= 5) t.diagnostic(`${ch.package}/${ch.name} from ${fromVersion}: ${err.sentences.join("; ")}`);
    }
  }
  t.diagnostic(`upgrades from an entry something replaces: ${upgrades} found, ${refused} explained`);
  assert.ok(upgrades > 50);
  t.diagnostic(`packages ${index.packages().length}: solved ${solved} (${withDeps} with dependencies), explained ${explained}; slowest ${worst.toFixed(1)} ms`);
  assert.equal(solved + explained, index.packages().length);
  assert.ok(solved > 150, `only ${solved} solved`);
  assert.ok(withDeps > 0, 'some corpus packages have dependencies');
  assert.ok(worst < 5000, `a resolution took ${worst} ms`);
});
