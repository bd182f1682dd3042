/**
 * Every bundle and package-manifest version of the operatorhub-2021 corpus either loads,
 * validates and converts, or fails with a specific, coded error naming a file. Totals by result
 * are printed; they must add up to the number of version directories.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  convertRegistryV1,
  defaultWatchNamespaces,
  staticCertProvider,
  toFbcBundle,
  validateBundleDir,
  validatePackageManifest,
} from '../../src/bundle/index.js';
import { BinnacleError } from '../../src/util/errors.js';
import { operatorCorpusDir } from './corpus.test-helper.js';

const CORPUS = operatorCorpusDir();
const certProvider = staticCertProvider({ caPem: 'CA', certPem: 'CERT', keyPem: 'KEY' });

describe('bundle corpus', () => {
  it('every version loads, validates and converts, or gets a specific error', async () => {
    const totals: Record<string, number> = {};
    const modes: Record<string, number> = {};
    const rules: Record<string, number> = {};
    const count = (m: Record<string, number>, k: string): void => {
      m[k] = (m[k] ?? 0) + 1;
    };
    let versions = 0;
    let packageManifests = 0;
    let packageManifestErrors = 0;
    const t0 = performance.now();
    for (const pkg of readdirSync(CORPUS).sort()) {
      const pkgDir = join(CORPUS, pkg);
      if (!statSync(pkgDir).isDirectory()) continue;
      const pkgFile = readdirSync(pkgDir).find((f) => /\.package\.ya?ml$/.test(f));
      if (pkgFile !== undefined) {
        packageManifests++;
        const r = validatePackageManifest(readFileSync(join(pkgDir, pkgFile), 'utf8'), pkgFile);
        if (!r.ok) packageManifestErrors++;
      }
      for (const v of readdirSync(pkgDir).sort()) {
        const dir = join(pkgDir, v);
        if (!statSync(dir).isDirectory()) continue;
        versions++;
        const { result, bundle } = await validateBundleDir(dir);
        if (bundle === undefined) {
          const first = result.errors()[0];
          assert.ok(first !== undefined, `${dir}: failed to load without saying why`);
          assert.ok(first.file !== undefined && first.file !== '', `${dir}: load error names no file`);
          count(totals, `load-error (${first.rule})`);
          continue;
        }
        for (const p of result.errors()) count(rules, p.rule);
        try {
          toFbcBundle(bundle, { packageName: bundle.packageName === '' ? pkg : bundle.packageName });
          const watch = defaultWatchNamespaces(bundle, 'operators');
          if (watch === undefined) {
            count(totals, 'no-install-mode');
            continue;
          }
          const out = convertRegistryV1(bundle, { installNamespace: 'operators', watchNamespaces: watch, certProvider });
          assert.ok(out.objects.length > 0);
          count(modes, out.installMode);
          count(totals, result.ok ? 'ok' : 'converts-with-validation-errors');
        } catch (e) {
          assert.ok(e instanceof BinnacleError, `${dir}: crashed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
          count(totals, `convert-error (${e.code})`);
        }
      }
    }
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(`bundle corpus: ${versions} versions, ${packageManifests} package manifests (${packageManifestErrors} with errors), ${seconds}s`);
    console.log('results:', totals);
    console.log('install modes used:', modes);
    console.log('validation errors by rule:', rules);
    const sum = Object.values(totals).reduce((a, b) => a + b, 0);
    assert.equal(sum, versions, 'totals add up to the number of version directories');
    assert.ok(versions >= 1000, `expected the whole corpus, saw ${versions}`);
    assert.ok((totals.ok ?? 0) > versions / 2, 'most corpus bundles are fully valid');
  });
});
