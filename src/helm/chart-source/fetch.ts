/**
 * The two operations on a chart reference: fetch it into the cache, and list the versions it
 * offers (for a controller that follows new versions in a range). Each kind of reference has its
 * own module; this one checks the reference and picks the module.
 */
import { fetchLocalChart, localVersion } from './local.js';
import { fetchOciChart, listOciVersions } from './oci.js';
import { normalizeChartRef, type ChartRef } from './reference.js';
import { fetchRepoChart, listRepoVersions } from './repo.js';
import { BinnacleError } from '../../util/errors.js';
import type { ChartSourceOptions, FetchedChart, ListVersionsOptions } from './types.js';

/**
 * Resolve `ref` (its tag, digest, or the highest version in its range) and put the chart in the
 * cache. Throws ChartSourceError (see index.ts for the codes) or ChartIndexError.
 */
export async function fetchChart(ref: ChartRef, opts: ChartSourceOptions): Promise<FetchedChart> {
  const checked = normalizeChartRef(ref);
  if (opts.verifyKeys !== undefined && checked.type !== 'oci') {
    const what = checked.type === 'repo' ? "a Helm repository's chart (Helm's .prov files are not supported)" : `a ${checked.type} chart`;
    throw new BinnacleError('input', 'SIGNATURE_UNSUPPORTED_SOURCE', `${what} cannot carry an OCI signature, so it cannot be verified; use an oci:// chart, or remove verify`);
  }
  switch (checked.type) {
    case 'dir':
    case 'archive':
      return fetchLocalChart(checked, opts);
    case 'oci':
      return fetchOciChart(checked, opts);
    case 'repo':
      return fetchRepoChart(checked, opts);
  }
}

/**
 * Every version the reference could resolve to, highest first: an OCI repository's tags that are
 * versions (`_` read as `+`), a repository index's entries for the chart, or a local chart's own
 * version. A tag or digest in an oci:// reference is ignored: the repository is listed.
 */
export async function listChartVersions(ref: ChartRef, opts: ListVersionsOptions = {}): Promise<string[]> {
  const checked = normalizeChartRef(ref);
  switch (checked.type) {
    case 'dir':
    case 'archive':
      return [await localVersion(checked, opts)];
    case 'oci':
      return listOciVersions(checked, opts);
    case 'repo':
      return listRepoVersions(checked, opts);
  }
}
