/** One source (or package of it) that `catalog render` could not render, and why. */
export interface ConversionFailure {
  source: string;
  /** Package name, when the failure is one package of a larger tree. */
  package: string | undefined;
  /** Stable reason code, e.g. `BUNDLE_NO_CSV`, `CHANNEL_HEAD_MISSING`, `fbc.parse`. */
  reason: string;
  message: string;
}
