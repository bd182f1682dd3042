/** Where releases live by default, apart from release.ts so the CLI can name them without loading it. */
export const DEFAULT_RELEASE_REPO = 'ghcr.io/binnacle-dev/binnacle-release';
export const RELEASE_REPO_ENV = 'BINNACLE_RELEASE_REPO';
