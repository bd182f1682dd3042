/**
 * The refusal of an unsafe archive or tree entry, on its own so that what only checks trees
 * (source/tree.ts, loaded by `helm-operator run`) does not load the tar reader with unpack.ts.
 */
import { InputError } from '../util/errors.js';

export type UnsafeReason = 'path' | 'link' | 'type' | 'size';

/**
 * An entry of an archive (`OCI_…` codes) or of a directory tree being copied (`SOURCE_…`) that
 * Binnacle refuses; `entry` is its path as written there, `file` names the archive or tree.
 */
export class UnsafeEntryError extends InputError {
  readonly entry: string;
  readonly reason: UnsafeReason;
  constructor(reason: UnsafeReason, source: string, entry: string, message: string, codePrefix: 'OCI' | 'SOURCE' = 'OCI') {
    const code = `${codePrefix}_${{ path: 'UNSAFE_PATH', link: 'UNSAFE_LINK', type: 'UNSAFE_TYPE', size: 'TOO_LARGE' }[reason]}`;
    super(code, `entry "${entry}": ${message}`, { file: source });
    this.entry = entry;
    this.reason = reason;
  }
}
