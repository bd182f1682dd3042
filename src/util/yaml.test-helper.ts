/** YAML texts for the alias tests of every reader (see yamlValue in yaml.ts). */

/** Mapping lines: nine levels of nine aliases each, a billion "lol"s once expanded. */
export const BILLION_LAUGHS = [
  'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
  ...'bcdefghi'.split('').map((c, i) => `${c}: &${c} [${Array.from({ length: 9 }, () => `*${'abcdefghi'[i] ?? ''}`).join(', ')}]`),
  '',
].join('\n');

/** The reason a billion laughs is refused with (the message is `source: reason`). */
export const BOMB_REASON = "excessive YAML aliasing (an alias bomb?): its aliases expand to 4,630 of 4,671 nodes, more than the 99% Go's YAML (Helm, kubectl) accepts";

/** Mapping lines: `anchor` a small map, `aliases` a list of `n` aliases of it (Helm and kubectl read them). */
export function aliasLines(n = 150): string {
  return `anchor: &a {x: "1"}\naliases: [${Array.from({ length: n }, () => '*a').join(', ')}]\n`;
}

/** A ConfigMap `name` with `n` aliases of its labels in `data`-less field `aliases`. */
export function manyAliasesObject(name = 'many', n = 150): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels: &a {app: x}\naliases: [${Array.from({ length: n }, () => '*a').join(', ')}]\n`;
}

/** The reason bombObject() is refused with. */
export const BOMB_REASON_IN_OBJECT = "excessive YAML aliasing (an alias bomb?): its aliases expand to 5,540 of 5,590 nodes, more than the 99% Go's YAML (Helm, kubectl) accepts";

/** A ConfigMap `name` that is a billion laughs. */
export function bombObject(name = 'bomb'): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${BILLION_LAUGHS}`;
}

/** The reason any text with a billion laughs in it is refused with (the counts depend on what precedes it). */
export const BOMB = /excessive YAML aliasing \(an alias bomb\?\): its aliases expand to [\d,]+ of [\d,]+ nodes, more than the 99% Go's YAML \(Helm, kubectl\) accepts/;

/** The whole message of a YamlAliasError for a billion laughs in `source` (`source: reason`). */
export function bombMessage(source: string): RegExp {
  return new RegExp(`^${source.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${BOMB.source}$`);
}
