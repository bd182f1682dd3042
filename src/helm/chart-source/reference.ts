/**
 * Chart references: where a chart comes from. Four kinds, as Helm knows them:
 * - `dir`: a chart directory on this machine;
 * - `archive`: a packaged chart (`.tgz`) on this machine;
 * - `oci`: `oci://host[:port]/path/name` with `:tag`, `@sha256:…`, or a version range (Helm's
 *   `--version`); the tag of a version is the version with `+` written `_`;
 * - `repo`: a chart repository (its base URL, where `index.yaml` lives), a chart name and a version
 *   or range.
 * Parsing checks everything that can be checked without touching the network or the disk.
 */
import { parseReference } from '../../oci/index.js';
import { carriesCredential, credentialInReferenceMessage, redactReference } from '../../util/redact.js';
import { ChartSourceError } from './errors.js';
import { parseChartVersionRange } from './version.js';

export interface DirChartRef {
  type: 'dir';
  path: string;
}

export interface ArchiveChartRef {
  type: 'archive';
  path: string;
}

export interface OciChartRef {
  type: 'oci';
  /** `oci://host[:port]/path/name`, optionally with `:tag` and/or `@sha256:<hex>`. */
  ref: string;
  /** A version or a range; with a tag in `ref` it must equal the tag's version. Empty: highest stable. */
  version?: string;
  /** Speak plain HTTP to this registry (loopback registries are plain HTTP already). */
  insecure?: boolean;
}

export interface RepoChartRef {
  type: 'repo';
  /** The repository's URL (http or https); a trailing `/index.yaml` is accepted and dropped. */
  url: string;
  chart: string;
  /** A version or a range. Empty: the highest stable version. */
  version?: string;
}

export type ChartRef = DirChartRef | ArchiveChartRef | OciChartRef | RepoChartRef;

/** An `oci://` reference taken apart. `tag` and `digest` are only what was written. */
export interface OciLocation {
  registry: string;
  repository: string;
  /** The last path component: Helm's chart name for the repository. */
  name: string;
  tag: string | undefined;
  digest: string | undefined;
}

const OCI_SCHEME = 'oci://';

/** A one-line name of a reference, for messages and logs. */
export function describeChartRef(ref: ChartRef): string {
  switch (ref.type) {
    case 'dir':
    case 'archive':
      return ref.path;
    case 'oci':
      return ref.version === undefined || ref.version === '' ? ref.ref : `${ref.ref} (version "${ref.version}")`;
    case 'repo':
      return `${ref.chart} from ${ref.url}${ref.version === undefined || ref.version === '' ? '' : ` (version "${ref.version}")`}`;
  }
}

function refError(ref: string, reason: string): ChartSourceError {
  return new ChartSourceError('HELM_CHART_REF', redactReference(ref), reason);
}

/** Where a chart's credentials go instead of its URL. */
const OCI_CREDENTIALS = 'the registry auth file of whoever pulls (REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json, `helm registry login`; for the manager, a file mounted from a Secret)';
const REPO_CREDENTIALS = "the caller's repository credentials option (a HelmOperator's chart repository takes none yet: publish the chart to an OCI registry)";

/** Refuses `ref` when it carries a credential (its message masks it). */
function refuseCredential(ref: string, instead: string): void {
  if (carriesCredential(ref)) throw new ChartSourceError('HELM_CHART_REF', redactReference(ref), credentialInReferenceMessage(ref, instead));
}

/** Take `oci://host/path/name[:tag][@digest]` apart, checking it with the image reference grammar. */
export function parseOciLocation(text: string): OciLocation {
  if (!text.startsWith(OCI_SCHEME)) throw refError(text, 'an OCI chart reference starts with oci://');
  refuseCredential(text, OCI_CREDENTIALS);
  let rest = text.slice(OCI_SCHEME.length);
  const at = rest.indexOf('@');
  const digest = at >= 0 ? rest.slice(at + 1) : undefined;
  if (at >= 0) rest = rest.slice(0, at);
  const lastSlash = rest.lastIndexOf('/');
  if (lastSlash < 0) throw refError(text, 'expected oci://host/path/name');
  const colon = rest.indexOf(':', lastSlash + 1);
  // A version's `+` cannot be in a tag: Helm's tag for `1.2.3+build` is `1.2.3_build`.
  const tag = colon >= 0 ? rest.slice(colon + 1).replaceAll('+', '_') : undefined;
  const name = rest.slice(0, colon >= 0 ? colon : undefined);
  const host = name.slice(0, name.indexOf('/'));
  let parsed;
  try {
    parsed = parseReference(`${name}${tag === undefined ? '' : `:${tag}`}${digest === undefined ? '' : `@${digest}`}`);
  } catch (err) {
    throw refError(text, err instanceof Error ? err.message : String(err));
  }
  // The image grammar reads `registry/chart` as Docker Hub's `registry/chart`; after oci:// the
  // first component is always the host, so insist that the grammar saw it as one.
  if (parsed.registry !== host) {
    throw refError(text, `"${host}" is not recognisable as a registry host (write it with a "." or a ":port", or use localhost)`);
  }
  const chartName = parsed.repository.slice(parsed.repository.lastIndexOf('/') + 1);
  return { registry: parsed.registry, repository: parsed.repository, name: chartName, tag, digest: parsed.digest };
}

/** `registry/repository` with `oci://`, without tag or digest. */
export function ociBase(loc: OciLocation): string {
  return `${OCI_SCHEME}${loc.registry}/${loc.repository}`;
}

/** The base URL of a chart repository: no `/index.yaml`, no trailing slash, query kept. */
export function repoBaseUrl(url: string): string {
  refuseCredential(url, REPO_CREDENTIALS);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refError(url, 'the repository URL is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw refError(url, `repository URL scheme ${parsed.protocol} is not supported; expected http: or https: (use oci:// for registries)`);
  }
  if (parsed.hash !== '') throw refError(url, 'the repository URL must not have a #fragment');
  parsed.pathname = parsed.pathname.replace(/\/index\.yaml$/, '').replace(/\/+$/, '');
  return parsed.toString().replace(/\/(\?|$)/, '$1');
}

function checkVersion(ref: string, version: string | undefined): void {
  if (version === undefined || version.trim() === '') return;
  const parsed = parseChartVersionRange(version);
  if (!parsed.ok) throw refError(ref, parsed.reason);
}

/**
 * Check a reference built in code or decoded from an API object, and return it in normal form
 * (repository URL without `/index.yaml`). Throws ChartSourceError `HELM_CHART_REF`.
 */
export function normalizeChartRef(ref: ChartRef): ChartRef {
  switch (ref.type) {
    case 'dir':
    case 'archive':
      if (ref.path === '' || ref.path.includes('\0')) throw refError(JSON.stringify(ref.path), 'the path is empty or has a NUL byte');
      return { type: ref.type, path: ref.path };
    case 'oci':
      return normalizeOciRef(ref);
    case 'repo':
      return normalizeRepoRef(ref);
  }
}

/** An oci:// chart: a version or a digest, and a version that agrees with the tag. */
function normalizeOciRef(ref: Extract<ChartRef, { type: 'oci' }>): ChartRef {
  const loc = parseOciLocation(ref.ref);
  checkVersion(ref.ref, ref.version);
  const version = ref.version?.trim() ?? '';
  if (version !== '' && loc.digest !== undefined) throw refError(ref.ref, 'give either a digest or a version, not both');
  if (version !== '' && loc.tag !== undefined && version.replaceAll('+', '_') !== loc.tag) {
    throw refError(ref.ref, `the tag "${loc.tag}" and the version "${version}" disagree; give one of them`);
  }
  return { type: 'oci', ref: ref.ref, ...(version === '' ? {} : { version }), ...(ref.insecure === true ? { insecure: true } : {}) };
}

/** A chart in a repository: one word for its name, the repository URL without `/index.yaml`. */
function normalizeRepoRef(ref: Extract<ChartRef, { type: 'repo' }>): ChartRef {
  const url = repoBaseUrl(ref.url);
  if (ref.chart === '' || /[/\\\s]/.test(ref.chart)) throw refError(`${ref.chart} from ${url}`, 'the chart name must be one word without "/" or spaces');
  checkVersion(`${ref.chart} from ${url}`, ref.version);
  const version = ref.version?.trim() ?? '';
  return { type: 'repo', url, chart: ref.chart, ...(version === '' ? {} : { version }) };
}

export interface ParseChartRefOptions {
  /** `--version`: a version or a range, for oci:// and repository charts. */
  version?: string;
  /** `--repo`: the chart repository URL; the argument is then the chart's name. */
  repo?: string;
  /** `--plain-http` / `--insecure` for an oci:// registry that is not on loopback. */
  insecure?: boolean;
}

/**
 * A chart reference as written on a command line: `oci://…`, a path to a directory or a `.tgz`,
 * or (with `repo`) a chart name in a repository. A path is an archive when it ends in `.tgz` or
 * `.tar.gz`, else a directory.
 */
export function parseChartRef(text: string, opts: ParseChartRefOptions = {}): ChartRef {
  const version = opts.version?.trim() === '' ? undefined : opts.version?.trim();
  if (text.trim() === '') throw refError('""', 'the chart reference is empty');
  if (opts.repo !== undefined) {
    if (text.startsWith(OCI_SCHEME) || text.includes('/')) throw refError(text, 'with a repository URL, give the chart by its name only');
    return normalizeChartRef({ type: 'repo', url: opts.repo, chart: text, ...(version === undefined ? {} : { version }) });
  }
  if (text.startsWith(OCI_SCHEME)) {
    return normalizeChartRef({ type: 'oci', ref: text, ...(version === undefined ? {} : { version }), ...(opts.insecure === true ? { insecure: true } : {}) });
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw refError(text, 'a chart repository needs the chart name too: give the repository URL as the repo option and the chart name as the reference');
  }
  if (version !== undefined) throw refError(text, 'a version applies only to oci:// and repository charts, not to a local path');
  const looksArchive = /\.(tgz|tar\.gz)$/i.test(text);
  return normalizeChartRef({ type: looksArchive ? 'archive' : 'dir', path: text });
}
