/**
 * Catalog validation: every rule of `opm validate` (operator-registry's model Validate methods
 * and its DeclarativeConfig → model conversion) plus icon checks. All problems are collected in
 * one `ValidationResult` tree: catalog → package → channel / bundle.
 */
import type { Problem, ValidationResult } from '../util/errors.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import { nodeFor, toModel, bundleForValidation, type Model, type ModelChannel, type ModelPackage } from './model.js';
import { base64Problem, iconDataChecked, withIconDataChecked, type Decoded } from './decode.js';
import { configSink, scanFbcDir, type LoadOptions, type LoadResult } from './load.js';

export { readInPart } from './load.js';

export const ICON_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/svg+xml'] as const;

/**
 * Icon checks are warnings: opm accepts an icon without data or with any media type (its check is
 * switched off), and a console shows no icon at worst. Data that is not base64 is an error, as in
 * opm (whose JSON decoding of the icon fails).
 */
function validateIcon(p: ModelPackage, node: ValidationResult): void {
  const icon = p.icon;
  if (icon === undefined) return;
  if (!(ICON_MEDIA_TYPES as readonly string[]).includes(icon.mediatype)) {
    node.warning('package.icon', `icon mediatype "${icon.mediatype}" is not one of ${ICON_MEDIA_TYPES.join(', ')}`, { field: 'icon.mediatype' });
  }
  if (icon.base64data === '') node.warning('package.icon', 'icon base64data is empty', { field: 'icon.base64data' });
  // A catalog loaded from files has this checked by its decoder already; one rendered from bundles has not.
  const bad = iconDataChecked(icon) ? undefined : base64Problem(icon.base64data);
  if (bad !== undefined) node.error('package.icon', `icon base64data: ${bad} (the icon data must be standard, padded base64)`, { field: 'icon.base64data' });
}

/** The single entry nothing replaces or skips; problems when there are none or several. */
export function channelHead(c: ModelChannel): { head: string | undefined; problem: string | undefined } {
  const incoming = new Set<string>();
  for (const e of c.entries.values()) {
    if (e.replaces !== undefined) incoming.add(e.replaces);
    for (const s of e.skips) incoming.add(s);
  }
  const heads = [...c.entries.keys()].filter((n) => !incoming.has(n)).sort();
  if (heads.length === 0) return { head: undefined, problem: 'no channel head found in graph' };
  if (heads.length > 1) return { head: undefined, problem: `multiple channel heads found in graph: ${heads.join(', ')}` };
  return { head: heads[0], problem: undefined };
}

function validateReplacesChain(c: ModelChannel, node: ValidationResult): void {
  const { head, problem } = channelHead(c);
  if (head === undefined) {
    node.error('channel.single-head', problem ?? 'no channel head');
    return;
  }
  const skipped = new Set<string>();
  for (const e of c.entries.values()) for (const s of e.skips) skipped.add(s);
  const chain = [head];
  const onChain = new Set<string>([head]);
  let cur = c.entries.get(head);
  while (cur !== undefined) {
    const next = cur.replaces;
    // A replaces edge to a skipped entry is not followed, as in opm.
    if (next === undefined || skipped.has(next)) break;
    if (onChain.has(next)) {
      const from = chain.indexOf(next);
      node.error('channel.replaces-cycle', `detected cycle in replaces chain of upgrade graph: ${[...chain.slice(from), next].join(' -> ')}`);
      return;
    }
    chain.push(next);
    onChain.add(next);
    cur = c.entries.get(next);
  }
  const stranded = [...c.entries.keys()].filter((n) => !onChain.has(n) && !skipped.has(n)).sort();
  if (stranded.length > 0) {
    node.error('channel.stranded', `channel contains one or more stranded bundles (not reachable from head "${head}" by replaces): ${stranded.join(', ')}`);
  }
}

function validateUniqueVersions(p: ModelPackage, node: ValidationResult): void {
  const byVersion = new Map<string, string[]>();
  for (const b of p.bundles.values()) {
    if (b.version === undefined) continue;
    // Build metadata is part of identity in opm's comparison (String() keeps it).
    // With a release (operator-registry main), the same version rebuilt is a different one.
    const key = b.release === '' ? b.version.raw : `${b.version.raw}-${b.release}`;
    byVersion.set(key, [...(byVersion.get(key) ?? []), b.name]);
  }
  for (const [v, names] of [...byVersion.entries()].sort()) {
    if (names.length > 1) node.error('package.duplicate-version', `duplicate version ${v} in bundles: ${names.sort().join(', ')}`);
  }
}

/**
 * The rules a catalog someone else built may break and still be put to work, in one table: `use`
 * (every use: a ClusterCatalog serves it, `run bundle --index-image` adds to it) or `serve` (a
 * ClusterCatalog serves it; building on it is still refused). Validation of a catalog Binnacle
 * builds or publishes tolerates none of them.
 */
export const TOLERATED_RULES: ReadonlyMap<string, { when: 'use' | 'serve'; why: string }> = new Map([
  // operator-registry main enforces these and v1.47.0 did not: `opm validate` of today refuses a
  // catalog that breaks them, but catalogs built by an older opm carry them, harmlessly.
  ['channel.skip-range', { when: 'use', why: 'since opm 1.47: an unparseable skipRange skips nothing' }],
  ['bundle.image-pull-spec', { when: 'use', why: 'since opm 1.47: an invalid pull spec cannot be pulled anyway' }],
  ['bundle.related-image', { when: 'use', why: 'since opm 1.47: an invalid related image cannot be pulled anyway' }],
  ['bundle.release', { when: 'use', why: 'since opm 1.47: bundle releases' }],
  ['bundle.normalized-name', { when: 'use', why: 'since opm 1.47: bundle names normalized from releases' }],
  // catalogd serves any FBC that parses, and resolution does not need these: without a default
  // channel it reads every channel of the package (as OLM v1's does); it ranks every entry of a
  // channel, so a second head or an entry no upgrade reaches is only a preference lost.
  // operator-controller's own e2e catalogs break the first two. A replaces cycle stays refused:
  // an upgrade walk could go round it.
  ['package.default-channel', { when: 'serve', why: 'catalogd serves a package without a (valid) default channel' }],
  ['channel.single-head', { when: 'serve', why: 'catalogd serves a channel with more than one head' }],
  ['channel.stranded', { when: 'serve', why: 'catalogd serves a channel with entries no upgrade reaches' }],
]);

const tolerated = (when: 'use' | 'serve'): ReadonlySet<string> => new Set([...TOLERATED_RULES].filter(([, t]) => t.when === when).map(([rule]) => rule));

/** The rules operator-registry main enforces and v1.47.0 did not (TOLERATED_RULES' `use` rows). */
export const RULES_SINCE_OPM_1_47: ReadonlySet<string> = tolerated('use');

/** The rules catalogd does not hold a served catalog to, beyond RULES_SINCE_OPM_1_47 (the `serve` rows). */
export const RULES_CATALOGD_SERVES: ReadonlySet<string> = tolerated('serve');

/** The errors that stop a ClusterCatalog from being served: blockingErrors less RULES_CATALOGD_SERVES. */
export function servingBlockers(result: ValidationResult): Problem[] {
  return blockingErrors(result).filter((p) => !RULES_CATALOGD_SERVES.has(p.rule));
}

/** The errors that stop Binnacle from using a catalog someone else built: all but RULES_SINCE_OPM_1_47. */
export function blockingErrors(result: ValidationResult): Problem[] {
  return result.errors().filter((p) => !RULES_SINCE_OPM_1_47.has(p.rule));
}

/** Model-level rules (the conversion has already reported its own). */
export function validateModel(model: Model, result: ValidationResult): void {
  for (const p of [...model.packages.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const node = nodeFor(result, [`package "${p.name}"`]);
    validateIcon(p, node);
    if (p.defaultChannelName === '') node.error('package.default-channel', 'default channel must be set', { field: 'defaultChannel' });
    else if (p.defaultChannel === undefined) {
      node.error('package.default-channel', `default channel "${p.defaultChannelName}" not found in channels list`, { field: 'defaultChannel' });
    }
    if (p.channels.size === 0) node.error('package.channels', 'package must contain at least one channel');
    for (const c of [...p.channels.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const cnode = nodeFor(node, [`channel "${c.name}"`]);
      if (c.entries.size === 0) cnode.error('channel.entries', 'channel must contain at least one bundle');
      else validateReplacesChain(c, cnode);
    }
    validateUniqueVersions(p, node);
  }
}

/** Converts and validates: the full `opm validate` rule set, every problem collected. */
export function validateConfig(cfg: DeclarativeConfig, subject = 'catalog'): { model: Model; result: ValidationResult } {
  const { model, result } = toModel(cfg, subject);
  validateModel(model, result);
  return { model, result };
}

/**
 * A record as validation holds it: what is checked as it is read (a bundle's objects, CSV
 * metadata and related images, `bundleForValidation`; a package's icon data,
 * `withIconDataChecked`) is dropped once checked, and so is what no rule reads (a package's
 * description), so what is held is the catalog's structure, not all it carries.
 * `validateConfig` of such records reports what it reports of the records themselves.
 */
export function recordForValidation(d: Decoded): Decoded {
  if (d.kind === 'bundle') return { kind: 'bundle', value: bundleForValidation(d.value) };
  if (d.kind === 'package') {
    const checked = withIconDataChecked(d.value);
    if (checked === d.value && d.value.description === undefined) return d;
    const { description: _unread, ...value } = checked;
    return { kind: 'package', value };
  }
  return d;
}

/** Loads an FBC directory or file to validate it and nothing else (`recordForValidation`). */
export async function loadFbcForValidation(root: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const cfg = emptyDeclarativeConfig();
  const add = configSink(cfg);
  const { result, files } = await scanFbcDir(root, (d, file) => add(recordForValidation(d), file, undefined), opts);
  return { config: cfg, result, files };
}
