/** Binnacle's own version: the CLI's --version, the ClusterOperator's operator version, install-self's record. */
export const BINNACLE_VERSION = '0.1.0';
