/**
 * OLM's resolution rules as a SAT problem:
 *
 * - each requested package must get one bundle from its candidates (channels, version range,
 *   and — under upgrade policy CatalogProvided — only the installed bundle or one that
 *   `replaces`, `skips` or has a `skipRange` covering it);
 * - installed packages nobody asked to change keep their bundle;
 * - every chosen bundle's dependencies are met by some chosen bundle;
 * - at most one bundle per package, and at most one provider per API (GVK);
 * - a bundle the cluster cannot run (minKubeVersion, olm.maxOpenShiftVersion, CEL over the
 *   cluster's facts) is not installed; what is already installed is not judged again.
 *
 * An installed bundle's own requirements hold too, so a change that would break another
 * installed operator's dependency is refused — unless nothing could meet that requirement
 * anyway, which is the installed operator's problem and only a warning here.
 *
 * Candidates are ordered by preference: installed, not deprecated, channel head, higher
 * version, higher catalog priority. Only bundles reachable from the requests become variables.
 */
import type semver from 'semver';
import { InputError } from '../util/errors.js';
import { solve, type Constraint, type SolveOptions, type SolveStats, type Variable } from './sat/index.js';
import { CatalogIndex, bundleLabel, type BundleEntity, type CatalogInput } from './catalog-index.js';
import { checkCluster, type ClusterFacts } from './cluster-constraints.js';
import { requirementsOf } from './dependencies.js';
import { ResolutionError } from './errors.js';
import { explainFacts, orderFacts, type EmptyReason, type Fact } from './facts.js';
import { inRange, parseCatalogRange, parseRange, parseVersion, type ParsedRange } from './version-range.js';

export type UpgradePolicy = 'CatalogProvided' | 'SelfCertified';

/** An installed bundle: by package and version, or by bundle name (found in the catalogs). */
export interface InstalledBundle {
  package?: string;
  version?: string;
  bundle?: string;
  /**
   * With package@version: the bundle's name as it was installed. Upgrade edges (`replaces`,
   * `skips`) name it, and a catalog that no longer offers it cannot: without it an installed
   * bundle dropped from the catalog would have no successor.
   */
  bundleName?: string;
  /** Who has it installed, for explanations, e.g. "needed by extension nhc". */
  owner?: string;
  /** The APIs it provides (`group/version/Kind`), used when no catalog offers it any more. */
  provides?: readonly string[];
}

export interface ResolveRequest {
  package: string;
  /** Only bundles in one of these channels; all channels when empty. */
  channels?: string[];
  versionRange?: string;
  upgradePolicy?: UpgradePolicy;
  /**
   * Prefer the best allowed successor over staying on the installed bundle (what a controller
   * keeping an operator up to date wants). Default false: the installed bundle is preferred.
   */
  preferUpgrade?: boolean;
}

/**
 * What an extension asks for its package, as the ClusterExtension controller keeps it current
 * (a newer allowed bundle is taken), so a plan asks exactly what the controller will.
 */
export function extensionRequest(e: { packageName: string; channels?: string[] | undefined; version?: string | undefined; upgradePolicy?: UpgradePolicy | undefined }): ResolveRequest {
  return {
    package: e.packageName,
    ...(e.channels === undefined ? {} : { channels: e.channels }),
    ...(e.version === undefined ? {} : { versionRange: e.version }),
    upgradePolicy: e.upgradePolicy ?? 'CatalogProvided',
    preferUpgrade: true,
  };
}

export interface ResolveInput {
  /** Catalogs, or an index already built from them (when resolving many requests). */
  catalogs: readonly CatalogInput[] | CatalogIndex;
  installed?: readonly InstalledBundle[];
  requests: readonly ResolveRequest[];
  /** The cluster to install on; without it, cluster constraints are reported, not enforced. */
  cluster?: ClusterFacts;
  solver?: SolveOptions;
}

export interface ChosenBundle {
  name: string;
  package: string;
  version: string;
  image: string;
  catalog: string;
  /** True when this is the bundle already installed. */
  installed: boolean;
  deprecated?: string;
  /** Packages of the chosen bundles that meet this bundle's requirements. */
  dependsOn: string[];
  /** The APIs it provides (`group/version/Kind`). */
  provides: string[];
}

export interface Resolution {
  /** Chosen bundles, dependencies before the bundles that need them. */
  bundles: ChosenBundle[];
  warnings: string[];
  /** What the chosen bundles ask of the cluster that was reported rather than enforced. */
  notices: string[];
  stats: SolveStats & { variables: number };
}

/** What is installed of one package, matched against the catalogs. */
interface Installed {
  package: string;
  version: semver.SemVer | undefined;
  versionText: string;
  bundleName: string | undefined;
  /** Catalog entities that are this very bundle. */
  entities: BundleEntity[];
  /** Stands for the installed bundle when no catalog has it. */
  synthetic: string | undefined;
  owner: string | undefined;
  provides: readonly string[];
}

/** Either a catalog bundle or an installed bundle the catalogs no longer offer. */
type Node = { kind: 'bundle'; entity: BundleEntity } | { kind: 'installed'; installed: Installed };

export function parseInstalled(text: string): InstalledBundle {
  const at = text.lastIndexOf('@');
  if (at > 0) return { package: text.slice(0, at), version: text.slice(at + 1) };
  return { bundle: text };
}

function matchInstalled(spec: InstalledBundle, i: number, index: CatalogIndex): Installed {
  const field = `installed[${i}]`;
  if (spec.bundle !== undefined && spec.bundle !== '') {
    const found = index.byName.get(spec.bundle) ?? [];
    const first = found[0];
    if (first === undefined) {
      throw new InputError('RESOLVE_UNKNOWN_INSTALLED', `bundle "${spec.bundle}" is in no catalog; give the installed bundle as package@version`, { field });
    }
    return {
      package: first.package,
      version: first.version,
      versionText: first.version.version,
      bundleName: spec.bundle,
      entities: found,
      synthetic: undefined,
      owner: spec.owner,
      provides: spec.provides ?? first.provides,
    };
  }
  if (spec.package === undefined || spec.package === '' || spec.version === undefined || spec.version === '') {
    throw new InputError('RESOLVE_BAD_INSTALLED', 'an installed bundle needs a package and a version (package@version) or a bundle name', { field });
  }
  const version = parseVersion(spec.version);
  if (version === undefined) throw new InputError('RESOLVE_BAD_INSTALLED', `"${spec.version}" is not a version`, { field });
  const entities = (index.byPackage.get(spec.package) ?? []).filter((e) => e.version.compare(version) === 0);
  return {
    package: spec.package,
    version,
    versionText: version.version,
    bundleName: entities[0]?.name ?? (spec.bundleName === '' ? undefined : spec.bundleName),
    entities,
    synthetic: entities.length === 0 ? `installed-bundle/${spec.package}@${version.version}` : undefined,
    owner: spec.owner,
    provides: spec.provides ?? entities[0]?.provides ?? [],
  };
}

interface PreferenceContext {
  installed: Map<string, Installed>;
  /** Rank the installed bundle like any other (upgrades win when allowed). */
  ignoreInstalled?: boolean;
  /** Channels whose head counts; undefined means each bundle's default channel. */
  channels: readonly string[] | undefined;
}

function isInstalledEntity(e: BundleEntity, installed: Map<string, Installed>): boolean {
  return installed.get(e.package)?.entities.includes(e) ?? false;
}

function relevantMemberships(e: BundleEntity, channels: readonly string[] | undefined): BundleEntity['channels'] {
  if (channels === undefined || channels.length === 0) {
    const def = e.channels.filter((c) => c.channel === e.defaultChannel);
    return def.length > 0 ? def : e.channels;
  }
  return e.channels.filter((c) => channels.includes(c.channel));
}

function deprecatedIn(e: BundleEntity, channels: readonly string[] | undefined): boolean {
  if (e.deprecated !== undefined) return true;
  const ms = relevantMemberships(e, channels);
  return ms.length > 0 && ms.every((m) => m.deprecated !== undefined);
}

/** Sorts candidates, most preferred first. */
function byPreference(list: readonly BundleEntity[], ctx: PreferenceContext): BundleEntity[] {
  const key = new Map(
    list.map((e) => [
      e,
      {
        installed: ctx.ignoreInstalled !== true && isInstalledEntity(e, ctx.installed) ? 0 : 1,
        deprecated: deprecatedIn(e, ctx.channels) ? 1 : 0,
        head: relevantMemberships(e, ctx.channels).some((m) => m.head) ? 0 : 1,
      },
    ]),
  );
  return [...list].sort((a, b) => {
    const ka = key.get(a);
    const kb = key.get(b);
    if (ka === undefined || kb === undefined) return 0;
    return (
      ka.installed - kb.installed ||
      ka.deprecated - kb.deprecated ||
      ka.head - kb.head ||
      b.version.compare(a.version) ||
      b.priority - a.priority ||
      a.catalog.localeCompare(b.catalog) ||
      a.name.localeCompare(b.name)
    );
  });
}

function isSuccessor(e: BundleEntity, inst: Installed, channels: readonly string[], index: CatalogIndex): boolean {
  const isInstalledName = (name: string): boolean => {
    if (name === inst.bundleName) return true;
    if (inst.version === undefined) return false;
    const v = inst.version;
    return (index.byName.get(name) ?? []).some((x) => x.package === inst.package && x.version.compare(v) === 0);
  };
  for (const m of e.channels) {
    if (channels.length > 0 && !channels.includes(m.channel)) continue;
    if (m.entry.replaces !== undefined && isInstalledName(m.entry.replaces)) return true;
    if ((m.entry.skips ?? []).some(isInstalledName)) return true;
    // skipRange is OLM's grammar (parseCatalogRange), as the catalog validator reads it: one it
    // cannot parse (`~1.2`, `^1`, `>=1.0`) skips nothing, as in OLM.
    if (m.entry.skipRange !== undefined && inst.version !== undefined) {
      const r = parseCatalogRange(m.entry.skipRange);
      if (r.ok && r.value.test(inst.version)) return true;
    }
  }
  return false;
}

function versionsOf(list: readonly BundleEntity[]): string[] {
  const seen = new Map<string, BundleEntity>();
  for (const e of list) seen.set(e.version.version, e);
  return [...seen.values()].sort((a, b) => a.version.compare(b.version)).map((e) => e.version.version);
}

interface RequestCandidates {
  entities: BundleEntity[];
  stays: boolean;
  empty: EmptyReason | undefined;
}

function requestCandidates(req: ResolveRequest, range: ParsedRange | undefined, inst: Installed | undefined, index: CatalogIndex): RequestCandidates {
  const channels = req.channels ?? [];
  const all = index.byPackage.get(req.package) ?? [];
  const instInRange = inst?.version !== undefined && (range === undefined || inRange(inst.version, range));
  if (all.length === 0) return packageNotOffered(instInRange && inst?.synthetic !== undefined);
  const inChannels = channels.length === 0 ? all : all.filter((e) => e.channels.some((m) => channels.includes(m.channel)));
  if (inChannels.length === 0) {
    return { entities: [], stays: false, empty: { kind: 'no-channel', channels, available: index.channelsOf.get(req.package) ?? [] } };
  }
  const matching = range === undefined ? inChannels : inChannels.filter((e) => inRange(e.version, range));
  const synthStays = inst?.synthetic !== undefined && instInRange;
  if (matching.length === 0 && !synthStays) return noVersionInRange(channels, range, inChannels);
  if (inst === undefined || (req.upgradePolicy ?? 'CatalogProvided') === 'SelfCertified') {
    return { entities: matching, stays: synthStays, empty: undefined };
  }
  return upgradeCandidates({ inst, channels, range, inChannels, matching, synthStays }, index);
}

/** An installed bundle the catalogs no longer offer may still stay where it is. */
function packageNotOffered(installedStays: boolean): RequestCandidates {
  return { entities: [], stays: installedStays, empty: installedStays ? undefined : { kind: 'no-package' } };
}

function noVersionInRange(channels: string[], range: ParsedRange | undefined, inChannels: readonly BundleEntity[]): RequestCandidates {
  return {
    entities: [],
    stays: false,
    empty: {
      kind: 'no-version-in-range',
      channels,
      versionRange: range?.text ?? '',
      offered: versionsOf(inChannels),
      prereleases: prereleasesMatching(inChannels, range),
    },
  };
}

/** CatalogProvided from an installed bundle: only itself or its successors. */
function upgradeCandidates(
  c: { inst: Installed; channels: readonly string[]; range: ParsedRange | undefined; inChannels: BundleEntity[]; matching: BundleEntity[]; synthStays: boolean },
  index: CatalogIndex,
): RequestCandidates {
  const { inst, channels, range, inChannels, matching, synthStays } = c;
  const allowed = matching.filter((e) => inst.entities.includes(e) || isSuccessor(e, inst, channels, index));
  if (allowed.length === 0 && !synthStays) {
    const inRangeSet = new Set(matching);
    const outside = inChannels.filter((e) => !inRangeSet.has(e) && isSuccessor(e, inst, channels, index));
    return {
      entities: [],
      stays: false,
      empty: {
        kind: 'no-upgrade-edge',
        from: inst.versionText,
        versionRange: range?.text,
        outsideRange: versionsOf(outside),
        prereleases: prereleasesMatching(outside, range),
      },
    };
  }
  return { entities: allowed, stays: synthStays, empty: undefined };
}

/** Prerelease versions the range leaves out only because they are prereleases (for a hint). */
function prereleasesMatching(list: readonly BundleEntity[], range: ParsedRange | undefined): string[] {
  if (range === undefined) return [];
  const loose = parseRange(range.text, { includePrerelease: true });
  if (!loose.ok) return [];
  return versionsOf(list.filter((e) => e.version.prerelease.length > 0 && !range.range.test(e.version) && loose.value.range.test(e.version)));
}

/** Labels in order without repeats (the same bundle may come from several catalogs). */
function unique(labels: readonly string[]): string[] {
  return [...new Set(labels)];
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list === undefined) m.set(k, [v]);
  else list.push(v);
}

class ProblemBuilder {
  readonly variables = new Map<string, { id: string; constraints: Constraint[] }>();
  readonly facts = new Map<Constraint, Fact>();
  readonly nodes = new Map<string, Node>();
  /** Cluster constraints reported but not enforced, per bundle node. */
  readonly notices = new Map<string, string[]>();
  /** Bundle nodes that are installed bundles no request may change. */
  readonly staying = new Set<string>();
  readonly warnings: string[] = [];
  private readonly queue: string[] = [];

  constructor(
    readonly index: CatalogIndex,
    readonly installed: Map<string, Installed>,
    readonly cluster: ClusterFacts | undefined,
  ) {}

  variable(id: string): { id: string; constraints: Constraint[] } {
    let v = this.variables.get(id);
    if (v === undefined) {
      v = { id, constraints: [] };
      this.variables.set(id, v);
    }
    return v;
  }

  add(id: string, c: Constraint, fact: Fact): void {
    this.variable(id).constraints.push(c);
    this.facts.set(c, fact);
  }

  /** Makes a variable for a node and schedules its dependencies. */
  node(id: string, n: Node): string {
    if (!this.nodes.has(id)) {
      this.nodes.set(id, n);
      this.variable(id);
      this.queue.push(id);
    }
    return id;
  }

  entity(e: BundleEntity): string {
    const known = this.nodes.has(e.id);
    const id = this.node(e.id, { kind: 'bundle', entity: e });
    // What is installed already runs here; only new installs are checked against the cluster.
    if (!known && !isInstalledEntity(e, this.installed)) {
      const check = checkCluster(e, this.cluster);
      for (const v of check.violations) this.add(id, { kind: 'prohibited' }, v);
      if (check.notices.length > 0) this.notices.set(id, check.notices);
    }
    return id;
  }

  syntheticInstalled(inst: Installed): string {
    return this.node(inst.synthetic ?? `installed-bundle/${inst.package}`, { kind: 'installed', installed: inst });
  }

  /** Adds the requirement constraints of every reachable bundle. */
  expand(): void {
    for (let q = 0; q < this.queue.length; q++) {
      const id = this.queue[q] ?? '';
      const n = this.nodes.get(id);
      if (n?.kind !== 'bundle') continue;
      for (const req of requirementsOf(n.entity, this.index, this.cluster)) {
        if (this.staying.has(id) && req.candidates.length === 0) {
          const what = explainFacts([req.fact])[0] ?? 'a requirement';
          this.warnings.push(`installed ${bundleLabel(n.entity)} has a requirement nothing can meet, left to its own extension: ${what}`);
          continue;
        }
        const sorted = byPreference(req.candidates, { installed: this.installed, channels: undefined });
        const fact = { ...req.fact };
        if (fact.kind === 'requires-package' || fact.kind === 'requires-gvk' || fact.kind === 'requires-constraint') {
          fact.candidates = unique(sorted.map(bundleLabel));
        }
        this.add(id, { kind: 'dependency', ids: sorted.map((e) => this.entity(e)) }, fact);
      }
    }
  }

  /** At most one bundle per package and one provider per API among the reachable bundles. */
  uniqueness(): void {
    const perPackage = new Map<string, string[]>();
    const perGvk = new Map<string, { id: string; pkg: string; label: string }[]>();
    for (const [id, n] of this.nodes) {
      if (n.kind === 'installed') {
        push(perPackage, n.installed.package, id);
        for (const g of n.installed.provides) push(perGvk, g, { id, pkg: n.installed.package, label: this.label(id) });
        continue;
      }
      push(perPackage, n.entity.package, id);
      for (const g of n.entity.provides) push(perGvk, g, { id, pkg: n.entity.package, label: bundleLabel(n.entity) });
    }
    for (const [pkg, ids] of perPackage) {
      if (ids.length < 2) continue;
      const labels = ids.map((id) => this.label(id));
      this.add(`package/${pkg}`, { kind: 'atMost', n: 1, ids }, { kind: 'one-per-package', package: pkg, bundles: [...new Set(labels)] });
    }
    for (const [gvk, providers] of perGvk) {
      if (new Set(providers.map((p) => p.pkg)).size < 2) continue;
      const fact: Fact = { kind: 'one-provider-per-api', gvk, bundles: [...new Set(providers.map((p) => p.pkg))] };
      this.add(`api/${gvk}`, { kind: 'atMost', n: 1, ids: providers.map((p) => p.id) }, fact);
    }
  }

  label(id: string): string {
    const n = this.nodes.get(id);
    if (n === undefined) return id;
    return n.kind === 'bundle' ? bundleLabel(n.entity) : `${n.installed.package} ${n.installed.versionText}`;
  }
}

/** Orders chosen nodes so each comes after the chosen bundles it depends on. */
function installOrder(selected: readonly string[], builder: ProblemBuilder): string[] {
  const chosen = new Set(selected);
  const out: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string): void => {
    if (state.has(id)) return; // done, or a cycle: break it here
    state.set(id, 'visiting');
    for (const c of builder.variables.get(id)?.constraints ?? []) {
      if (c.kind !== 'dependency') continue;
      const dep = c.ids.find((x) => chosen.has(x));
      if (dep !== undefined) visit(dep);
    }
    state.set(id, 'done');
    out.push(id);
  };
  for (const id of selected) visit(id);
  return out;
}

interface Problem {
  index: CatalogIndex;
  installed: Map<string, Installed>;
  builder: ProblemBuilder;
  variables: Variable[];
}

function buildProblem(input: ResolveInput): Problem {
  const index = input.catalogs instanceof CatalogIndex ? input.catalogs : new CatalogIndex(input.catalogs);
  const installed = new Map<string, Installed>();
  (input.installed ?? []).forEach((spec, i) => {
    const inst = matchInstalled(spec, i, index);
    if (installed.has(inst.package)) {
      throw new InputError('RESOLVE_BAD_INSTALLED', `package ${inst.package} is installed twice`, { field: `installed[${i}]` });
    }
    installed.set(inst.package, inst);
  });
  const b = new ProblemBuilder(index, installed, input.cluster);
  const requested = new Set<string>();
  const rootIds: string[] = [];
  input.requests.forEach((req, i) => {
    const field = `requests[${i}]`;
    if (req.package === '') throw new InputError('RESOLVE_BAD_REQUEST', 'the package name is empty', { field: `${field}.package` });
    if (requested.has(req.package)) throw new InputError('RESOLVE_BAD_REQUEST', `package ${req.package} is requested twice`, { field });
    requested.add(req.package);
    let range: ParsedRange | undefined;
    if (req.versionRange !== undefined && req.versionRange.trim() !== '') {
      const r = parseRange(req.versionRange);
      if (!r.ok) throw new InputError('RESOLVE_BAD_REQUEST', r.reason, { field: `${field}.versionRange` });
      range = r.value;
    }
    const inst = installed.get(req.package);
    const cands = requestCandidates(req, range, inst, index);
    const ctx: PreferenceContext = { installed, channels: req.channels, ignoreInstalled: req.preferUpgrade === true };
    const ids = byPreference(cands.entities, ctx).map((e) => b.entity(e));
    if (cands.stays && inst !== undefined) {
      if (req.preferUpgrade === true) ids.push(b.syntheticInstalled(inst));
      else ids.unshift(b.syntheticInstalled(inst));
    }
    const root = `request/${req.package}`;
    rootIds.push(root);
    b.add(root, { kind: 'mandatory' }, { kind: 'requested', package: req.package });
    b.add(
      root,
      { kind: 'dependency', ids },
      {
        kind: 'request',
        package: req.package,
        channels: req.channels ?? [],
        versionRange: range?.text,
        policy: req.upgradePolicy ?? 'CatalogProvided',
        installed: inst?.versionText,
        candidates: unique(ids.map((id) => b.label(id))),
        empty: cands.empty,
      },
    );
  });
  for (const inst of installed.values()) {
    if (requested.has(inst.package)) continue;
    const ids = inst.synthetic !== undefined ? [b.syntheticInstalled(inst)] : byPreference(inst.entities, { installed, channels: undefined }).map((e) => b.entity(e));
    for (const id of ids) b.staying.add(id);
    const root = `installed/${inst.package}`;
    rootIds.push(root);
    b.add(root, { kind: 'mandatory' }, { kind: 'installed', package: inst.package, version: inst.versionText, owner: inst.owner });
    b.add(root, { kind: 'dependency', ids }, { kind: 'installed-stays', package: inst.package, version: inst.versionText, candidates: unique(ids.map((id) => b.label(id))), owner: inst.owner });
  }
  b.expand();
  b.uniqueness();
  return { index, installed, builder: b, variables: [...b.variables.values()] };
}

/**
 * The SAT problem a request becomes, without solving it (benchmarks feed it to other solvers).
 * Throws `InputError` for malformed input, like `resolve`.
 */
export function resolutionProblem(input: ResolveInput): Variable[] {
  return buildProblem(input).variables;
}

/** Resolves; throws `ResolutionError` with an explanation when no solution exists. */
export function resolve(input: ResolveInput): Resolution {
  const { index, installed, builder: b, variables } = buildProblem(input);
  const result = solve(variables, input.solver);
  if (!result.satisfiable) {
    const facts = orderFacts(
      result.core.flatMap((a) => {
        const f = b.facts.get(a.constraint);
        return f === undefined ? [] : [f];
      }),
    );
    throw new ResolutionError(facts, explainFacts(facts));
  }
  const selected = result.selected.map((v) => v.id).filter((id) => b.nodes.has(id));
  const chosenIds = new Set(selected);
  const packageOf = (id: string): string | undefined => {
    const n = b.nodes.get(id);
    return n === undefined ? undefined : n.kind === 'bundle' ? n.entity.package : n.installed.package;
  };
  const notices: string[] = [];
  const bundles = installOrder(selected, b).flatMap((id): ChosenBundle[] => {
    const n = b.nodes.get(id);
    if (n === undefined) return [];
    const dependsOn = unique(
      (b.variables.get(id)?.constraints ?? []).flatMap((c) => (c.kind === 'dependency' ? c.ids.filter((x) => chosenIds.has(x)).flatMap((x) => packageOf(x) ?? []) : [])),
    );
    notices.push(...(b.notices.get(id) ?? []));
    if (n.kind === 'installed') {
      const i = n.installed;
      return [{ name: i.bundleName ?? `${i.package}.v${i.versionText}`, package: i.package, version: i.versionText, image: '', catalog: '', installed: true, dependsOn, provides: [...i.provides] }];
    }
    const e = n.entity;
    const chosen: ChosenBundle = {
      name: e.name,
      package: e.package,
      version: e.version.version,
      image: e.image,
      catalog: e.catalog,
      installed: isInstalledEntity(e, installed),
      dependsOn,
      provides: [...e.provides],
    };
    if (e.deprecated !== undefined) chosen.deprecated = e.deprecated;
    return [chosen];
  });
  return { bundles, warnings: [...index.warnings, ...b.warnings], notices, stats: { ...result.stats, variables: variables.length } };
}

/**
 * The chosen bundles `pkg` needs, itself included: what one request's resolution set is when
 * the resolution also holds everything else installed. In install order.
 */
export function neededBundles(bundles: readonly ChosenBundle[], pkg: string): ChosenBundle[] {
  const byPackage = new Map(bundles.map((x) => [x.package, x]));
  const want = new Set<string>();
  const visit = (p: string): void => {
    if (want.has(p)) return;
    const chosen = byPackage.get(p);
    if (chosen === undefined) return;
    want.add(p);
    for (const d of chosen.dependsOn) visit(d);
  };
  visit(pkg);
  return bundles.filter((x) => want.has(x.package));
}
