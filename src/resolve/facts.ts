/**
 * Facts: what each constraint of a resolution problem means in OLM terms, kept as data so a
 * failed resolution can say which facts clash — and rendered as sentences a cluster admin can
 * act on.
 */

/** Why a request or dependency has no candidate at all. */
export type EmptyReason =
  | { kind: 'no-package' }
  | { kind: 'no-channel'; channels: string[]; available: string[] }
  | {
      kind: 'no-version-in-range';
      channels: string[];
      versionRange: string;
      offered: string[];
      /** Prerelease versions that would match if the range allowed prereleases. */
      prereleases: string[];
    }
  | { kind: 'no-upgrade-edge'; from: string; versionRange: string | undefined; outsideRange: string[]; prereleases: string[] }
  | { kind: 'invalid'; reason: string };

export type Fact =
  | { kind: 'requested'; package: string }
  | {
      kind: 'request';
      package: string;
      channels: string[];
      versionRange: string | undefined;
      policy: string;
      installed: string | undefined;
      candidates: string[];
      empty: EmptyReason | undefined;
    }
  /** `owner` says who has it installed, e.g. "needed by extension nhc". */
  | { kind: 'installed'; package: string; version: string; owner?: string | undefined }
  | { kind: 'installed-stays'; package: string; version: string; candidates: string[]; owner?: string | undefined }
  | {
      kind: 'requires-package';
      bundle: string;
      package: string;
      versionRange: string;
      candidates: string[];
      offered: string[];
      invalid: string | undefined;
    }
  | { kind: 'requires-gvk'; bundle: string; gvk: string; candidates: string[] }
  | {
      kind: 'requires-constraint';
      bundle: string;
      description: string;
      failureMessage: string | undefined;
      candidates: string[];
      invalid: string | undefined;
    }
  | {
      kind: 'cluster-constraint';
      bundle: string;
      /** What the bundle needs, e.g. "Kubernetes 1.25.0 or newer". */
      requirement: string;
      /** Where it says so: minKubeVersion, olm.maxOpenShiftVersion or olm.constraint. */
      source: string;
      /** What the cluster runs, e.g. "runs Kubernetes 1.22.3". */
      cluster: string;
      failureMessage: string | undefined;
    }
  | { kind: 'one-per-package'; package: string; bundles: string[] }
  | { kind: 'one-provider-per-api'; gvk: string; bundles: string[] };

function list(items: readonly string[], limit = 8): string {
  if (items.length === 0) return 'nothing';
  const shown = items.slice(0, limit);
  const more = items.length > limit ? ` and ${items.length - limit} more` : '';
  if (shown.length === 1) return `${shown[0] ?? ''}${more}`;
  if (more !== '') return `${shown.join(', ')}${more}`;
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1] ?? ''}`;
}

function orList(items: readonly string[], limit = 8): string {
  if (items.length <= 1 || items.length > limit) return list(items, limit);
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1] ?? ''}`;
}

function quoteList(items: readonly string[]): string {
  return items.map((c) => `"${c}"`).join(', ');
}

function channelWords(channels: readonly string[]): string {
  if (channels.length === 0) return '';
  return channels.length === 1 ? ` in channel "${channels[0] ?? ''}"` : ` in channels ${quoteList(channels)}`;
}

function prereleaseHint(prereleases: readonly string[]): string {
  const first = prereleases[0];
  if (first === undefined) return '';
  return `; prerelease versions such as ${first} match only ranges that name a prerelease of the same major.minor.patch (e.g. >=${first.replace(/-.*$/, '')}-0)`;
}

function emptySentence(pkg: string, e: EmptyReason): string {
  switch (e.kind) {
    case 'no-package':
      return `no catalog offers package ${pkg}`;
    case 'no-channel':
      return `package ${pkg} has no channel ${quoteList(e.channels)} (it has ${list(e.available.map((c) => `"${c}"`))})`;
    case 'no-version-in-range':
      return `no bundle of package ${pkg}${channelWords(e.channels)} matches version range ${e.versionRange} (${
        e.channels.length === 0 ? 'the catalogs offer' : e.channels.length === 1 ? 'channel offers' : 'channels offer'
      } ${e.offered.length === 0 ? 'nothing' : e.offered.slice(0, 12).join(', ')}${e.offered.length > 12 ? ', …' : ''})${
        e.prereleases.length === 0
          ? ''
          : `; prerelease versions such as ${e.prereleases[0] ?? ''} match only ranges that name a prerelease of the same major.minor.patch (e.g. >=${(e.prereleases[0] ?? '').replace(/-.*$/, '')}-0)`
      }`;
    case 'no-upgrade-edge': {
      const inRange = e.versionRange === undefined ? '' : ` within version range ${e.versionRange}`;
      const outside =
        e.outsideRange.length === 0 ? '' : ` (successors outside the range: ${list(e.outsideRange)})`;
      return `upgrade of ${pkg} from ${e.from} is not allowed: no bundle${inRange} replaces, skips or has a skipRange covering ${e.from}${outside} (use upgrade policy SelfCertified to allow it)${prereleaseHint(e.prereleases)}`;
    }
    case 'invalid':
      return `the request for package ${pkg} is invalid: ${e.reason}`;
  }
}

function requiresPackageSentence(f: Extract<Fact, { kind: 'requires-package' }>): string {
  if (f.invalid !== undefined) return `${f.bundle} has an unusable olm.package.required: ${f.invalid}`;
  if (f.candidates.length > 0) return `${f.bundle} requires package ${f.package} ${f.versionRange}, offered by ${orList(f.candidates)}`;
  if (f.offered.length === 0) return `${f.bundle} requires package ${f.package} ${f.versionRange}; no catalog offers package ${f.package}`;
  return `${f.bundle} requires package ${f.package} ${f.versionRange}; the catalogs offer only ${list(f.offered, 12)}`;
}

function requestSentence(f: Extract<Fact, { kind: 'request' }>): string {
  if (f.empty !== undefined) return emptySentence(f.package, f.empty);
  const range = f.versionRange === undefined ? '' : ` with version range ${f.versionRange}`;
  const from = f.installed === undefined ? '' : ` (installed ${f.installed}, upgrade policy ${f.policy})`;
  const cands = f.candidates.length === 1 ? `its only candidate is ${f.candidates[0] ?? ''}` : `candidates: ${orList(f.candidates)}`;
  return `package ${f.package} was requested${channelWords(f.channels)}${range}${from}; ${cands}`;
}

function requiresConstraintSentence(f: Extract<Fact, { kind: 'requires-constraint' }>): string {
  if (f.invalid !== undefined) return `${f.bundle} has an unusable olm.constraint: ${f.invalid}`;
  const what = f.failureMessage ?? `requires ${f.description}`;
  const prefix = f.failureMessage === undefined ? `${f.bundle} ${what}` : `${f.bundle}: ${what}`;
  if (f.candidates.length > 0) return `${prefix} (satisfied by ${orList(f.candidates)})`;
  return `${prefix}; no bundle in the catalogs satisfies it`;
}

function ownerWords(owner: string | undefined): string {
  return owner === undefined || owner === '' ? '' : ` (${owner})`;
}

/** One plain sentence per fact. */
export function factSentence(f: Fact): string {
  switch (f.kind) {
    case 'requested':
      return `package ${f.package} was requested`;
    case 'request':
      return requestSentence(f);
    case 'installed':
      return `${f.package} ${f.version} is installed${ownerWords(f.owner)}`;
    case 'installed-stays':
      return `${f.package} ${f.version} is installed${ownerWords(f.owner)} and no request allows it to change`;
    case 'requires-package':
      return requiresPackageSentence(f);
    case 'requires-gvk':
      if (f.candidates.length > 0) return `${f.bundle} requires the API ${f.gvk}, provided by ${orList(f.candidates)}`;
      return `${f.bundle} requires the API ${f.gvk}; no bundle in the catalogs provides it`;
    case 'requires-constraint':
      return requiresConstraintSentence(f);
    case 'cluster-constraint': {
      const why = f.failureMessage === undefined ? '' : `: ${f.failureMessage}`;
      return `${f.bundle} requires ${f.requirement} (${f.source})${why}; the cluster ${f.cluster}`;
    }
    case 'one-per-package':
      return `only one bundle of package ${f.package} can be installed at a time`;
    case 'one-provider-per-api':
      return `only one bundle may provide the API ${f.gvk} (${list(f.bundles)} ${f.bundles.length === 2 ? 'both' : 'all'} do)`;
  }
}

/**
 * Sentences for a clashing set of facts. "X was requested" and "X is installed" add nothing
 * when a sentence about the same package's candidates is there too, so they are dropped.
 */
export function explainFacts(facts: readonly Fact[]): string[] {
  // The same bundle offered by several catalogs gives the same sentence more than once.
  return [
    ...new Set(
      orderFacts(facts)
        .filter((f, _, all) => !redundant(f, all))
        .map(factSentence),
    ),
  ];
}

const RANK: Record<Fact['kind'], number> = {
  requested: 0,
  request: 0,
  installed: 1,
  'installed-stays': 1,
  'requires-package': 2,
  'requires-gvk': 2,
  'requires-constraint': 2,
  'cluster-constraint': 2,
  'one-per-package': 3,
  'one-provider-per-api': 3,
};

/** Roots first (requests, installed), then requirements, then the uniqueness rules. */
export function orderFacts(facts: readonly Fact[]): Fact[] {
  return facts.map((f, i) => ({ f, i })).sort((a, b) => RANK[a.f.kind] - RANK[b.f.kind] || a.i - b.i).map((x) => x.f);
}

function redundant(f: Fact, all: readonly Fact[]): boolean {
  if (f.kind === 'requested') return all.some((g) => g.kind === 'request' && g.package === f.package);
  if (f.kind === 'installed') return all.some((g) => g.kind === 'installed-stays' && g.package === f.package);
  return false;
}
