/** Where releases live by default, and what the image runs on, apart from release.ts and base.ts so the CLI can name them without loading them. */
export const DEFAULT_RELEASE_REPO = 'ghcr.io/binnacle-dev/binnacle-release';
export const RELEASE_REPO_ENV = 'BINNACLE_RELEASE_REPO';

/**
 * The Node release Binnacle's image is built on by default (`build-node-base`): Node 24, the
 * active LTS (Node 20's fixes ended in April 2026), whatever Node the building machine has.
 */
export const IMAGE_NODE_VERSION = '24.22.3';
