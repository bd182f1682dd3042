/**
 * How much one release may hold: objects and manifest bytes, per release. Checked on a render's
 * output before it is parsed (counting its documents is a scan of the text, not a parse), so a
 * chart or bundle that renders a hundred thousand objects is refused by name in a moment, and
 * nothing of it is applied. The defaults are far above the corpora (the largest chart of the 60
 * renders 60 objects, the largest manifest 1.07 MB: argo-rollouts' CRDs) and low enough that the
 * largest release they accept is parsed and applied without holding the manager's event loop
 * (parseManifestAsync) and fits a release record. A HelmOperator's or BundleDeployment's owner
 * may set them (`spec.limits`), up to hard ceilings no spec can pass.
 */
import type { ReleaseLimits } from '../api/types.js';
import { TerminalError } from '../util/errors.js';

const MiB = 1024 * 1024;

export const DEFAULT_RELEASE_LIMITS: Required<ReleaseLimits> = { maxObjects: 2000, maxManifestBytes: 8 * MiB };

/** What no spec may ask for more than: the engine's output bound and a release record's size. */
export const CEILING_RELEASE_LIMITS: Required<ReleaseLimits> = { maxObjects: 20_000, maxManifestBytes: 32 * MiB };

/** A spec's limits, defaults filled in and ceilings applied. */
export function releaseLimits(spec: ReleaseLimits | undefined): Required<ReleaseLimits> {
  const pick = (k: keyof ReleaseLimits): number => Math.min(spec?.[k] ?? DEFAULT_RELEASE_LIMITS[k], CEILING_RELEASE_LIMITS[k]);
  return { maxObjects: pick('maxObjects'), maxManifestBytes: pick('maxManifestBytes') };
}

/**
 * A render past a release's limits: refused before it is parsed, nothing applied, and not
 * rendered again until the object changes (its resync aside): the same input renders the same.
 */
export class ReleaseTooLargeError extends TerminalError {
  constructor(message: string) {
    super('ReleaseTooLarge', message);
  }
}

const DOCUMENT_MARKER = /^---(?=[ \t]*(?:#.*)?$)/gm;

/** How many YAML documents a manifest has, counting no further than `stop` (a scan, not a parse). */
export function countDocuments(text: string, stop = Infinity): number {
  let n = 0;
  DOCUMENT_MARKER.lastIndex = 0;
  while (DOCUMENT_MARKER.exec(text) !== null) {
    if (++n > stop) return n;
  }
  // Text before the first marker is a document too (a manifest need not start with one).
  const first = text.search(/^---(?=[ \t]*(?:#.*)?$)/m);
  if (first !== 0 && text.slice(0, first < 0 ? text.length : first).replace(/^\s*#.*$/gm, '').trim() !== '') n++;
  return n;
}

/**
 * Throws ReleaseTooLargeError when a render's manifest (`texts`: the manifest, the CRD files, the
 * hooks) is larger than `limits` allow, saying which limit and how to raise it.
 */
export function checkRenderLimits(texts: readonly string[], limits: Required<ReleaseLimits>, where: string): void {
  const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
  if (bytes > limits.maxManifestBytes) throw releaseTooLarge('maxManifestBytes', bytes, limits, where);
  let objects = 0;
  for (const t of texts) {
    objects += countDocuments(t, limits.maxObjects - objects);
    if (objects > limits.maxObjects) throw releaseTooLarge('maxObjects', objects, limits, where);
  }
}

/**
 * The error for a render past `limit`, found here or by Helm's engine where it rendered
 * (`size`: its bytes, or the objects counted before counting stopped).
 */
export function releaseTooLarge(limit: keyof ReleaseLimits, size: number, limits: Required<ReleaseLimits>, where: string): ReleaseTooLargeError {
  return limit === 'maxManifestBytes'
    ? new ReleaseTooLargeError(`${where}: the render is ${size} bytes, above this release's limit of ${limits.maxManifestBytes} (spec.limits.maxManifestBytes); nothing of it is applied`)
    : new ReleaseTooLargeError(`${where}: the render holds more than ${limits.maxObjects} objects, this release's limit (spec.limits.maxObjects); nothing of it is applied`);
}
