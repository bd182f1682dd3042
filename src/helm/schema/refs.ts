/**
 * `$ref` lookup inside one schema document. Local JSON pointers (`#/definitions/x`,
 * `#/$defs/x`, `#/properties/a/items`, `#`) resolve; so does a reference that spells out the
 * document's own `$id`. Anything else (another file, a URL, an anchor) is refused: Binnacle
 * never fetches schemas while building a CRD.
 */
import { isRecord } from '../../util/object.js';

export type RefTarget = { ok: true; node: unknown; key: string } | { ok: false; reason: 'remote' | 'not-found' | 'anchor' };

function decodeSegment(segment: string): string {
  let s = segment;
  try {
    s = decodeURIComponent(segment);
  } catch {
    // not percent-encoded after all
  }
  return s.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** The document-local part of `ref` (`#...`), or undefined for a reference to elsewhere. */
function localPart(root: unknown, ref: string): string | undefined {
  if (ref.startsWith('#')) return ref;
  const id = isRecord(root) ? (root.$id ?? root.id) : undefined;
  if (typeof id === 'string' && id !== '') {
    const base = id.replace(/#$/, '');
    if (ref === base) return '#';
    if (ref.startsWith(`${base}#`)) return ref.slice(base.length);
  }
  return undefined;
}

export function resolveRef(root: unknown, ref: string): RefTarget {
  const local = localPart(root, ref);
  if (local === undefined) return { ok: false, reason: 'remote' };
  const pointer = local.slice(1);
  if (pointer !== '' && !pointer.startsWith('/')) return { ok: false, reason: 'anchor' };
  let node: unknown = root;
  for (const raw of pointer === '' ? [] : pointer.slice(1).split('/')) {
    const seg = decodeSegment(raw);
    if (Array.isArray(node) && /^\d+$/.test(seg)) node = node[Number(seg)];
    else if (isRecord(node) && Object.hasOwn(node, seg)) node = node[seg];
    else return { ok: false, reason: 'not-found' };
  }
  return node === undefined ? { ok: false, reason: 'not-found' } : { ok: true, node, key: `#${pointer}` };
}
