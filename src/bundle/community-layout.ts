/**
 * The layout the community-operators repositories (k8s-operatorhub/community-operators,
 * redhat-openshift-ecosystem/community-operators-prod) expect of a submission:
 * `operators/<package>/<version>/{manifests,metadata}` and `operators/<package>/ci.yaml`, whose
 * `updateGraph` says how the index builds the upgrade graph (`replaces-mode` follows each
 * CSV's `spec.replaces`, `semver-mode` orders versions by semver) and whose `reviewers` may
 * approve changes. Their pipeline accepts a ci.yaml change only as a pull request of its own, so
 * an existing ci.yaml is never rewritten here: a different wish is reported instead.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { InputError } from '../util/errors.js';
import { readYaml, YamlError } from '../util/yaml.js';

export const UPDATE_GRAPH_MODES = ['replaces-mode', 'semver-mode'] as const;
export type UpdateGraphMode = (typeof UPDATE_GRAPH_MODES)[number];

export interface CommunityOptions {
  /** The repository's root (the folder that holds `operators/`). */
  repoRoot: string;
  packageName: string;
  version: string;
  updateGraph?: UpdateGraphMode;
  /** GitHub user names. */
  reviewers?: string[];
}

export interface CommunityLayout {
  /** Where the bundle goes: `operators/<package>/<version>`. */
  bundleDir: string;
  ciYaml: string;
  /** The ci.yaml to write once the bundle is written (undefined: an existing one is kept). */
  ciText?: string;
  /** Differences between the kept ci.yaml and what was asked, for the user to send separately. */
  notes: string[];
}

export function parseUpdateGraph(value: string): UpdateGraphMode {
  if ((UPDATE_GRAPH_MODES as readonly string[]).includes(value)) return value as UpdateGraphMode;
  throw new InputError('COMMUNITY_OPTION', `${JSON.stringify(value)}: expected ${UPDATE_GRAPH_MODES.join(' or ')}`, { field: 'updateGraph' });
}

const GITHUB_USER = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

/**
 * Plans `operators/<package>/`: where the bundle goes and the ci.yaml to write when there is
 * none. Writes nothing, so a bundle that fails to generate leaves no ci.yaml behind; the caller
 * writes the bundle into `bundleDir`, then calls writeCommunityCi.
 */
export async function prepareCommunityLayout(opts: CommunityOptions): Promise<CommunityLayout> {
  for (const r of opts.reviewers ?? []) {
    if (!GITHUB_USER.test(r)) throw new InputError('COMMUNITY_OPTION', `${JSON.stringify(r)}: not a GitHub user name (letters, digits and single hyphens, at most 39)`, { field: 'reviewers' });
  }
  if (opts.version.startsWith('v')) throw new InputError('COMMUNITY_OPTION', `${opts.version}: the community layout names version folders without a "v" (${opts.version.slice(1)})`, { field: 'version' });
  const packageDir = join(opts.repoRoot, 'operators', opts.packageName);
  const bundleDir = join(packageDir, opts.version);
  if (existsSync(bundleDir)) throw new InputError('COMMUNITY_OPTION', `${opts.version} already exists in ${packageDir}: a published version is never rewritten; bump it`, { field: 'version' });
  const ciYaml = join(packageDir, 'ci.yaml');
  const wanted: { updateGraph: UpdateGraphMode; reviewers?: string[] } = { updateGraph: opts.updateGraph ?? 'replaces-mode' };
  if (opts.reviewers !== undefined && opts.reviewers.length > 0) wanted.reviewers = opts.reviewers;
  if (!existsSync(ciYaml)) {
    const ciText = `---\n# How the index builds the upgrade graph: replaces-mode follows each CSV's spec.replaces,\n# semver-mode orders versions by semver. Switching back from semver-mode is not easy.\n${stringify(wanted)}`;
    return { bundleDir, ciYaml, ciText, notes: [] };
  }
  return { bundleDir, ciYaml, notes: await ciNotes(ciYaml, opts) };
}

/** What an existing ci.yaml says otherwise than the options: left for a pull request of its own. */
async function ciNotes(ciYaml: string, opts: CommunityOptions): Promise<string[]> {
  const notes: string[] = [];
  let existing: unknown;
  try {
    existing = readYaml(await readFile(ciYaml, 'utf8'), ciYaml);
  } catch (err) {
    throw err instanceof YamlError ? err : new InputError('YAML_INVALID', `not YAML: ${err instanceof Error ? err.message : String(err)}`, { file: ciYaml, cause: err });
  }
  const current = (typeof existing === 'object' && existing !== null ? existing : {}) as { updateGraph?: unknown; reviewers?: unknown };
  if (opts.updateGraph !== undefined && current.updateGraph !== opts.updateGraph) {
    notes.push(`${ciYaml} has updateGraph ${JSON.stringify(current.updateGraph ?? 'replaces-mode')}, not ${opts.updateGraph}: change it in a pull request of its own`);
  }
  const have = Array.isArray(current.reviewers) ? current.reviewers.map(String) : [];
  const missing = (opts.reviewers ?? []).filter((r) => !have.includes(r));
  if (missing.length > 0) notes.push(`${ciYaml} does not list reviewer(s) ${missing.join(', ')}: add them in a pull request of its own`);
  return notes;
}

/** Writes the planned ci.yaml, if any; true when it was written. */
export async function writeCommunityCi(layout: CommunityLayout): Promise<boolean> {
  if (layout.ciText === undefined) return false;
  await mkdir(dirname(layout.ciYaml), { recursive: true });
  await writeFile(layout.ciYaml, layout.ciText);
  return true;
}
