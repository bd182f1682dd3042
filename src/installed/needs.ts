/**
 * Who needs a BundleDeployment, recorded on the object itself so it survives restarts and
 * every reader sees the same answer: one label per ClusterExtension,
 * `needed-by.binnacle.dev/<extension>`, valued `requested` (the extension's own package) or
 * `dependency`; and one ownerReference per such extension, so that even without Binnacle the
 * garbage collector removes a BundleDeployment once every extension needing it is gone.
 */
import { LABEL_NEEDED_BY_PREFIX, LABEL_OWNER_KIND, LABEL_OWNER_NAME, type BundleDeployment } from '../api/types.js';

export type NeedRole = 'requested' | 'dependency';

export interface Need {
  extension: string;
  role: NeedRole;
}

export function neededByLabel(extension: string): string {
  return `${LABEL_NEEDED_BY_PREFIX}${extension}`;
}

/**
 * The needs recorded on a BundleDeployment, sorted: requested first, then by name. One made
 * before needs were recorded names only its owner (`binnacle.dev/owner-name`): that extension
 * needs it, in the role `legacyRole` gives.
 */
export function recordedNeeds(bd: BundleDeployment, legacyRole: (extension: string) => NeedRole = () => 'dependency'): Need[] {
  const labels = bd.metadata.labels ?? {};
  const out: Need[] = [];
  for (const [k, v] of Object.entries(labels)) {
    if (!k.startsWith(LABEL_NEEDED_BY_PREFIX)) continue;
    const extension = k.slice(LABEL_NEEDED_BY_PREFIX.length);
    if (extension !== '') out.push({ extension, role: v === 'requested' ? 'requested' : 'dependency' });
  }
  const owner = labels[LABEL_OWNER_NAME];
  if (out.length === 0 && labels[LABEL_OWNER_KIND] === 'ClusterExtension' && owner !== undefined && owner !== '') out.push({ extension: owner, role: legacyRole(owner) });
  return sortNeeds(out);
}

export function sortNeeds(needs: readonly Need[]): Need[] {
  return [...needs].sort((a, b) => (a.role === b.role ? a.extension.localeCompare(b.extension) : a.role === 'requested' ? -1 : 1));
}

/** The labels that record `needs`. */
export function needLabels(needs: readonly Need[]): Record<string, string> {
  return Object.fromEntries(needs.map((n) => [neededByLabel(n.extension), n.role]));
}

/** "requested by extension pp, needed by extensions a and b". */
export function describeNeeds(needs: readonly Need[]): string {
  const names = (list: readonly Need[]): string => {
    const n = list.map((x) => x.extension);
    const joined = n.length <= 1 ? (n[0] ?? '') : `${n.slice(0, -1).join(', ')} and ${n[n.length - 1] ?? ''}`;
    return `${n.length === 1 ? 'extension' : 'extensions'} ${joined}`;
  };
  const requested = needs.filter((n) => n.role === 'requested');
  const deps = needs.filter((n) => n.role === 'dependency');
  const parts: string[] = [];
  if (requested.length > 0) parts.push(`requested by ${names(requested)}`);
  if (deps.length > 0) parts.push(`needed by ${names(deps)}`);
  return parts.join(', ');
}

/** Every extension a BundleDeployment names: those that need it and its holder (for event routing). */
export function extensionsNamedOn(bd: { metadata: { labels?: Record<string, string> } }): string[] {
  const labels = bd.metadata.labels ?? {};
  const out = new Set<string>();
  for (const k of Object.keys(labels)) if (k.startsWith(LABEL_NEEDED_BY_PREFIX) && k.length > LABEL_NEEDED_BY_PREFIX.length) out.add(k.slice(LABEL_NEEDED_BY_PREFIX.length));
  const owner = labels[LABEL_OWNER_NAME];
  if (labels[LABEL_OWNER_KIND] === 'ClusterExtension' && owner !== undefined && owner !== '') out.add(owner);
  return [...out];
}
