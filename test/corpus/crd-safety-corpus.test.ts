/**
 * CRD upgrade safety over the operatorhub-2021 corpus: for every package, every CRD that two
 * consecutive versions (by semver) both ship is checked as an upgrade from the older to the
 * newer, after the v1beta1 → v1 conversion Binnacle applies. No input may crash the checker,
 * every finding names a rule and a field, and the totals are printed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { parseAllDocuments } from 'yaml';
import { checkCrdUpgrade } from '../../src/apply/index.js';
import { crdToV1, CrdSchemaError } from '../../src/bundle/index.js';
import { operatorCorpusDir } from './corpus.test-helper.js';


/** CRDs refused as not structural, named once each. */
const notStructural: string[] = [];

const CORPUS = operatorCorpusDir();

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function dirs(path: string): string[] {
  return readdirSync(path).filter((d) => statSync(join(path, d)).isDirectory());
}

/** CRDs a version directory ships, by name; files that do not parse are other tests' business. */
function crdsOf(versionDir: string): Map<string, Json> {
  const out = new Map<string, Json>();
  const where = existsSync(join(versionDir, 'manifests')) ? join(versionDir, 'manifests') : versionDir;
  for (const f of readdirSync(where)) {
    if (!/\.(ya?ml|json)$/.test(f)) continue;
    const path = join(where, f);
    if (!statSync(path).isFile()) continue;
    for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
      if (doc.errors.length > 0) continue;
      const v: unknown = doc.toJS();
      if (!isRecord(v) || v.kind !== 'CustomResourceDefinition' || !isRecord(v.metadata) || typeof v.metadata.name !== 'string') continue;
      try {
        out.set(v.metadata.name, crdToV1(v));
      } catch (err) {
        // A CRD that cannot be made structural without loss is refused at install with its
        // fields named (src/bundle/crd-structural.ts); there is no upgrade of it to check.
        if (!(err instanceof CrdSchemaError)) throw err;
        notStructural.push(`${v.metadata.name}: ${err.problems.length} fields`);
      }
    }
  }
  return out;
}

/** The CRD as the cluster would hold it after install: its storage version recorded as stored. */
function asInstalled(crd: Json): Json {
  const spec = isRecord(crd.spec) ? crd.spec : {};
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : [];
  const stored = versions.filter((v) => v.storage === true && typeof v.name === 'string').map((v) => v.name);
  return { ...crd, status: { storedVersions: stored } };
}

describe('crd safety corpus', () => {
  it('checks every CRD upgrade between consecutive versions without crashing', (t) => {
    let pairs = 0;
    let unsafe = 0;
    const rules: Record<string, number> = {};
    for (const pkg of dirs(CORPUS)) {
      const versions = dirs(join(CORPUS, pkg))
        .filter((v) => semver.coerce(v) !== null)
        .sort((a, b) => semver.compare(semver.coerce(a) ?? '0.0.0', semver.coerce(b) ?? '0.0.0') || a.localeCompare(b));
      let prev: Map<string, Json> | undefined;
      for (const v of versions) {
        const cur = crdsOf(join(CORPUS, pkg, v));
        if (prev !== undefined) {
          for (const [name, next] of cur) {
            const old = prev.get(name);
            if (old === undefined) continue;
            pairs++;
            const result = checkCrdUpgrade(asInstalled(old), next, `${pkg}/${v}`);
            const errors = result.errors();
            if (errors.length > 0) unsafe++;
            for (const p of errors) {
              assert.ok(p.rule.startsWith('crd.'), p.rule);
              assert.ok(p.field !== undefined && p.field !== '', `${pkg}/${v} ${name}: problem without a field`);
              assert.equal(p.file, `${pkg}/${v}`);
              rules[p.rule] = (rules[p.rule] ?? 0) + 1;
            }
          }
        }
        prev = cur;
      }
    }
    t.diagnostic(`CRD upgrades checked: ${pairs}, refused: ${unsafe}, problems by rule: ${JSON.stringify(rules)}; CRD versions refused as not structural: ${notStructural.length}`);
    assert.ok(pairs > 100, `expected many CRD upgrade pairs in the corpus, got ${pairs}`);
    // Real operators do sometimes tighten or drop fields between releases; the checker must see it.
    assert.ok(unsafe > 0 && unsafe < pairs, `refused ${unsafe} of ${pairs}`);
  });
});
