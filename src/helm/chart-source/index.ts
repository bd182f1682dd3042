/**
 * Helm chart sources: turning a chart reference into a chart on local disk for Helm's engine
 * (src/helm-engine/engine, which takes a chart directory or a `.tgz`), and listing the versions a
 * reference offers so a controller can follow new chart versions in a range. References are a
 * local directory, a local `.tgz`, `oci://host/path/name` (by tag, digest or version range) and a
 * chart repository (URL + chart name + version range). Registries are reached through src/oci's
 * RegistryClient (token and Basic auth; loopback and `insecure` registries over plain HTTP);
 * repositories over HTTP(S). Every chart lands in the content-addressed cache that src/source
 * keeps (archives by their sha256, directories as trees by their tree digest) and nothing is
 * written outside it. Version ranges follow Helm (Masterminds semver), parsed by
 * src/resolve/version-range.
 *
 * Error codes (BinnacleError.code), each naming the reference:
 * - `HELM_CHART_REF`: the reference or its version range cannot be read;
 * - `HELM_CHART_NOT_FOUND`: no such path, repository index, chart, tag or URL;
 * - `HELM_CHART_NO_VERSION` (NoMatchingVersionError): nothing in range; lists what exists;
 * - `HELM_CHART_INDEX` (ChartIndexError): index.yaml is malformed; names every bad field;
 * - `HELM_CHART_DIGEST_MISMATCH`: the bytes do not hash to the index's or the registry's digest;
 * - `HELM_CHART_UNREACHABLE`: the host does not answer; `HELM_CHART_HTTP`: another HTTP status;
 * - `HELM_CHART_DENIED`: credentials missing or refused;
 * - `HELM_CHART_TOO_LARGE`: over a size limit;
 * - `HELM_CHART_NOT_A_CHART`: no Chart.yaml, or an OCI artifact that is not a Helm chart;
 * - `HELM_CHART_MISMATCH`: the archive's Chart.yaml is not the chart or version announced;
 * - `HELM_CHART_HOST_PATH_DENIED`: a local path without `allowHostPaths`;
 * - `HELM_CHART_REGISTRY`: any other registry failure (src/oci's error is the cause).
 * Unsafe entries of a chart directory keep src/source's `SOURCE_UNSAFE_*` codes.
 */
export {
  parseChartRef,
  normalizeChartRef,
  describeChartRef,
  parseOciLocation,
  type ChartRef,
  type DirChartRef,
  type ArchiveChartRef,
  type OciChartRef,
  type RepoChartRef,
  type OciLocation,
  type ParseChartRefOptions,
} from './reference.js';
export { fetchChart, listChartVersions } from './fetch.js';
export {
  selectChartVersion,
  parseChartVersion,
  parseChartVersionRange,
  sortChartVersions,
  versionToOciTag,
  ociTagToVersion,
  type ChartVersionRange,
  type SortedVersions,
} from './version.js';
export { decodeIndex, resolveChartUrl, type DecodedIndex, type IndexEntry, type SkippedEntry } from './repo-index.js';
export { HelmMediaType, helmRegistryConfig } from './oci.js';
export { gcCharts, archivePath, type GcChartsResult } from './cache.js';
export { ChartSourceError, NoMatchingVersionError, ChartIndexError, type ChartSourceCode, type IndexProblem } from './errors.js';
export {
  DEFAULT_MAX_ARCHIVE_BYTES,
  DEFAULT_MAX_TREE_BYTES,
  DEFAULT_MAX_INDEX_BYTES,
  type ChartSourceOptions,
  type ListVersionsOptions,
  type FetchedChart,
} from './types.js';
