/**
 * What a bundle needs from other bundles: `olm.package.required`, `olm.gvk.required` and
 * `olm.constraint` (gvk, package, cel, and compound all/any/not), each turned into the set of
 * catalog bundles that would meet it plus the fact that explains it. A CEL rule that reads only
 * `cluster` is a constraint on the bundle itself (`cluster-constraints.ts`), not a dependency.
 */
import {
  PROP_CONSTRAINT,
  PROP_GVK_REQUIRED,
  PROP_PACKAGE_REQUIRED,
  decodeConstraintProperty,
  decodeGVKProperty,
  decodePackageRequiredProperty,
  type ConstraintProperty,
} from '../declcfg/index.js';
import { CelError, compileCel } from './cel.js';
import { celCluster, isClusterRule, type ClusterFacts } from './cluster-constraints.js';
import { bundleLabel, gvkKey, type BundleEntity, type CatalogIndex } from './catalog-index.js';
import type { Fact } from './facts.js';
import { parseCatalogRange } from './version-range.js';

export interface Requirement {
  /** Fact without its candidate list, which the caller fills in after ordering. */
  fact: Fact;
  candidates: BundleEntity[];
}

type Predicate = (e: BundleEntity) => boolean;

interface BuiltPredicate {
  test: Predicate;
  description: string;
}

function uniqueVersions(list: readonly BundleEntity[]): string[] {
  const seen = new Map<string, BundleEntity>();
  for (const e of list) seen.set(e.version.version, e);
  return [...seen.values()].sort((a, b) => a.version.compare(b.version)).map((e) => e.version.version);
}

/** Builds a predicate for one `olm.constraint`; throws `CelError` or a string reason. */
function buildPredicate(c: ConstraintProperty, cluster: Record<string, unknown> | undefined): BuiltPredicate {
  if (c.gvk !== undefined) {
    const key = gvkKey(c.gvk);
    return { test: (e) => e.provides.includes(key), description: `the API ${key}` };
  }
  if (c.package !== undefined) {
    const { packageName, versionRange } = c.package;
    const r = parseCatalogRange(versionRange);
    if (!r.ok) throw new CelError(`package ${packageName}: ${r.reason}`);
    const range = r.value;
    return { test: (e) => e.package === packageName && range.test(e.version), description: `package ${packageName} ${versionRange}` };
  }
  if (c.cel !== undefined) {
    const rule = compileCel(c.cel.rule);
    return { test: (e) => rule.matches(e.properties, cluster), description: `a bundle matching the rule ${c.cel.rule}` };
  }
  const compound = (key: 'all' | 'any' | 'not'): BuiltPredicate[] => (c[key]?.constraints ?? []).map((x) => buildPredicate(x, cluster));
  if (c.all !== undefined) {
    const parts = compound('all');
    return { test: (e) => parts.every((p) => p.test(e)), description: `(${parts.map((p) => p.description).join(' and ')})` };
  }
  if (c.any !== undefined) {
    const parts = compound('any');
    return { test: (e) => parts.some((p) => p.test(e)), description: `(${parts.map((p) => p.description).join(' or ')})` };
  }
  const parts = compound('not');
  return { test: (e) => !parts.some((p) => p.test(e)), description: `not ${parts.map((p) => p.description).join(' or ')}` };
}

/** A requirement that cannot be met because it cannot be read: it has no candidates, and says why. */
function invalidConstraint(bundle: string, description: string, invalid: string, failureMessage?: string): Requirement {
  return { fact: { kind: 'requires-constraint', bundle, description, failureMessage, candidates: [], invalid }, candidates: [] };
}

/** Every requirement of `e`, in property order, with unsorted candidates. */
export function requirementsOf(e: BundleEntity, index: CatalogIndex, cluster?: ClusterFacts): Requirement[] {
  const out: Requirement[] = [];
  const clusterEnv = cluster === undefined ? undefined : celCluster(cluster);
  const who = bundleLabel(e);
  for (const p of e.properties) {
    if (p.type === PROP_PACKAGE_REQUIRED) {
      const d = decodePackageRequiredProperty(p.value);
      if (d === undefined) {
        out.push({
          fact: { kind: 'requires-package', bundle: who, package: '', versionRange: '', candidates: [], offered: [], invalid: 'it needs string fields packageName and versionRange' },
          candidates: [],
        });
        continue;
      }
      const all = index.byPackage.get(d.packageName) ?? [];
      const r = parseCatalogRange(d.versionRange);
      const candidates = r.ok ? all.filter((x) => r.value.test(x.version)) : [];
      out.push({
        fact: {
          kind: 'requires-package',
          bundle: who,
          package: d.packageName,
          versionRange: d.versionRange,
          candidates: [],
          offered: uniqueVersions(all),
          invalid: r.ok ? undefined : `package ${d.packageName}: ${r.reason}`,
        },
        candidates,
      });
    } else if (p.type === PROP_GVK_REQUIRED) {
      const g = decodeGVKProperty(p.value);
      if (g === undefined) {
        out.push(invalidConstraint(who, 'an API', 'olm.gvk.required needs string fields version and kind'));
        continue;
      }
      const key = gvkKey(g);
      out.push({ fact: { kind: 'requires-gvk', bundle: who, gvk: key, candidates: [] }, candidates: [...(index.byGvk.get(key) ?? [])] });
    } else if (p.type === PROP_CONSTRAINT) {
      const c = decodeConstraintProperty(p.value);
      if (c === undefined) {
        out.push(invalidConstraint(who, 'a constraint', 'it must set exactly one of gvk, package, cel, all, any, not'));
        continue;
      }
      if (c.cel !== undefined && isClusterRule(c.cel.rule)) continue; // checked against the cluster instead
      try {
        const pred = buildPredicate(c, clusterEnv);
        const candidates = index.bundles.filter((x) => x.id !== e.id && pred.test(x));
        out.push({
          fact: { kind: 'requires-constraint', bundle: who, description: pred.description, failureMessage: c.failureMessage, candidates: [], invalid: undefined },
          candidates,
        });
      } catch (err) {
        if (!(err instanceof CelError)) throw err;
        out.push(invalidConstraint(who, 'a constraint', err.message, c.failureMessage));
      }
    }
  }
  return out;
}
