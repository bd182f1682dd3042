/**
 * Released install manifests: what `install-self --version V` installs, as operator-sdk's
 * `olm install --version` fetches a released OLM's crds.yaml and olm.yaml, but from an OCI
 * registry instead of the internet's release pages.
 *
 * A release is an OCI artifact beside the image, one tag per version in a release repository
 * (`DEFAULT_RELEASE_REPO`, or `--release-repo` / `$BINNACLE_RELEASE_REPO`): a manifest whose
 * config has media type `RELEASE_MEDIA_TYPE.config` (the artifact type, as Helm marks charts)
 * and holds `{version, image, namespace, binnacleVersion}`, and one layer
 * `RELEASE_MEDIA_TYPE.manifests`: every object of the installation as multi-document YAML,
 * rendered by the binary that published it (its CRDs, RBAC, and the Deployment pointing at the
 * image by digest). `publishSelfVersion` renders and pushes one (`binnacle release-self`, or
 * `build-self-image --release V`), through `pushSelfVersion`; `fetchSelfVersion` pulls one and checks
 * it, gathering every problem, before `installSelf` applies its objects through the one install
 * path.
 */
import { stringify } from 'yaml';
import semver from 'semver';
import { BINNACLE_VERSION } from '../api/version.js';
import type { KubeObject } from '../kube/types.js';
import { formatReference, isSha256Digest, MediaType, parseReference, RegistryClient, sha256Digest, withDigest, type ImageManifest, type ImageReference } from '../oci/index.js';
import { BinnacleError, errorMessage, InputError, ValidationResult } from '../util/errors.js';
import { YamlAliasError, yamlPackage, yamlValue } from '../util/yaml.js';
export { DEFAULT_RELEASE_REPO, RELEASE_REPO_ENV };
import { DEFAULT_RELEASE_REPO, RELEASE_REPO_ENV } from './release-defaults.js';
import { ANNOTATION_RELEASE_VERSION, DEFAULT_SELF_NAMESPACE, MANAGER_NAME, SELF_LABELS, selfManifests } from './manifests.js';
import { isRecord } from '../util/object.js';

export const RELEASE_MEDIA_TYPE = {
  config: 'application/vnd.binnacle.release.config.v1+json',
  manifests: 'application/vnd.binnacle.release.manifests.v1+yaml',
} as const;

const LAYER_TITLE = 'binnacle.yaml';
const TAG_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** Kinds a release may hold: those `selfManifests` renders, nothing that grants or reads more. */
const RELEASE_KINDS: ReadonlySet<string> = new Set(['Namespace', 'CustomResourceDefinition', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'Deployment', 'Service']);
const CLUSTER_KINDS: ReadonlySet<string> = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);
/** The APIs without which no Binnacle release can work. */
const REQUIRED_CRDS = ['clustercatalogs.binnacle.dev', 'clusterextensions.binnacle.dev', 'bundledeployments.binnacle.dev'];

export interface ReleaseConfig {
  version: string;
  /** The manager image, by digest. */
  image: string;
  namespace: string;
  /** The Binnacle that rendered the manifests. */
  binnacleVersion: string;
}

export interface SelfVersion {
  version: string;
  /** The release artifact, by digest. */
  ref: string;
  config: ReleaseConfig;
  /** The installation's objects, in the order to apply them. */
  objects: KubeObject[];
}

/**
 * The release repository: the option (`releaseRepo`, which the CLI says as its flag), else
 * `$BINNACLE_RELEASE_REPO`, else the default; a repository, no tag.
 */
export function selfVersionRepository(releaseRepo?: string, env: NodeJS.ProcessEnv = process.env): ImageReference {
  const envRepo = env[RELEASE_REPO_ENV];
  const fromOption = releaseRepo !== undefined && releaseRepo !== '';
  const [repo, from] = fromOption ? [releaseRepo, ''] : envRepo !== undefined && envRepo !== '' ? [envRepo, `$${RELEASE_REPO_ENV} `] : [DEFAULT_RELEASE_REPO, 'the default release repository '];
  const bad = (why: string, cause?: unknown): InputError => new InputError('SELF_RELEASE_REPO', `${from}${repo}: ${why}`, fromOption ? { field: 'releaseRepo', cause } : { cause });
  let ref: ImageReference;
  try {
    ref = parseReference(repo);
  } catch (err) {
    throw bad(errorMessage(err), err);
  }
  if (ref.digest !== undefined || /:[^/]*$/.test(repo.replace(/^[^/]*\//, ''))) {
    throw bad('name a repository (registry/path), no tag or digest; versions are its tags');
  }
  return { ...ref, tag: undefined };
}

function checkVersion(version: string): void {
  if (!TAG_RE.test(version)) throw new InputError('SELF_RELEASE_VERSION', `${version}: a release version is a tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}), e.g. 0.1.0`, { field: 'version' });
}

/** Tags newest first: versions by semver, then the rest by name. */
export function sortReleaseTags(tags: readonly string[]): string[] {
  const versions = tags.filter((t) => semver.valid(t, { loose: true }) !== null).sort((a, b) => semver.rcompare(a, b, { loose: true }));
  const others = tags.filter((t) => semver.valid(t, { loose: true }) === null).sort();
  return [...versions, ...others];
}

/** The release's objects: this binary's manifests for `image`, the Deployment marked with the version. */
export function selfVersionManifests(o: { version: string; image: string; namespace?: string }): { config: ReleaseConfig; objects: KubeObject[] } {
  const namespace = o.namespace ?? DEFAULT_SELF_NAMESPACE;
  const objects = selfManifests({ namespace, image: o.image }).map((obj) =>
    obj.kind === 'Deployment' ? { ...obj, metadata: { ...obj.metadata, annotations: { ...(obj.metadata.annotations ?? {}), [ANNOTATION_RELEASE_VERSION]: o.version } } } : obj,
  );
  return { config: { version: o.version, image: o.image, namespace, binnacleVersion: BINNACLE_VERSION }, objects };
}

/** The image pinned by digest: as given when it has one, else the digest its tag points at now. */
async function pinImage(client: RegistryClient, image: string): Promise<string> {
  const ref = parseReference(image);
  if (ref.digest !== undefined) return image;
  try {
    const m = await client.getManifest(ref);
    return formatReference(withDigest(ref, m.digest));
  } catch (err) {
    if (err instanceof BinnacleError && err.code === 'OCI_NOT_FOUND') {
      throw new BinnacleError('input', 'SELF_RELEASE_IMAGE', `image ${image} was not found in its registry: push it first with \`binnacle build-self-image --base REF@DIGEST -t ${image}\``, { cause: err });
    }
    throw err;
  }
}

export interface PublishedSelfVersion {
  version: string;
  /** The release artifact, by digest. */
  ref: string;
  /** The image its Deployment runs, by digest. */
  image: string;
}

/** Pushes the release of `version` running `image` (pinned by digest) to `repository:version`. */
export async function publishSelfVersion(o: { version: string; image: string; repository: ImageReference; client?: RegistryClient; namespace?: string }): Promise<PublishedSelfVersion> {
  checkVersion(o.version);
  const client = o.client ?? new RegistryClient();
  const image = await pinImage(client, o.image);
  return pushSelfVersion(selfVersionManifests({ version: o.version, image, ...(o.namespace === undefined ? {} : { namespace: o.namespace }) }), o.repository, client);
}

/** Pushes rendered release objects as the artifact `repository:config.version`, unchecked (`fetchSelfVersion` checks). */
export async function pushSelfVersion(rendered: { config: ReleaseConfig; objects: readonly KubeObject[] }, repository: ImageReference, client: RegistryClient = new RegistryClient()): Promise<PublishedSelfVersion> {
  const { version, image } = rendered.config;
  checkVersion(version);
  const configBytes = Buffer.from(JSON.stringify(rendered.config));
  const layerBytes = Buffer.from(rendered.objects.map((obj) => `---\n${stringify(obj, { lineWidth: 0 })}`).join(''));
  const target: ImageReference = { ...repository, tag: version, digest: undefined };
  const config = { mediaType: RELEASE_MEDIA_TYPE.config, digest: sha256Digest(configBytes), size: configBytes.length };
  const layer = { mediaType: RELEASE_MEDIA_TYPE.manifests, digest: sha256Digest(layerBytes), size: layerBytes.length, annotations: { 'org.opencontainers.image.title': LAYER_TITLE } };
  await client.uploadBlob(target, { ...config, open: () => configBytes });
  await client.uploadBlob(target, { ...layer, open: () => layerBytes });
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.ociManifest,
      config,
      layers: [layer],
      annotations: { 'org.opencontainers.image.version': version, 'org.opencontainers.image.title': 'binnacle install manifests' },
    }),
  );
  const digest = await client.putManifest(target, manifest, MediaType.ociManifest);
  return { version, ref: formatReference(withDigest(target, digest)), image };
}

/** The version's release is not in the repository: names the versions it has. */
async function notFound(client: RegistryClient, repository: ImageReference, version: string): Promise<BinnacleError> {
  const repo = formatReference(repository);
  let tags: string[];
  try {
    tags = sortReleaseTags(await client.listTags(repository));
  } catch (err) {
    if (!(err instanceof BinnacleError && err.code === 'OCI_NOT_FOUND')) throw err;
    tags = [];
  }
  const publish = `publish one with \`binnacle release-self --version ${version} --image REF --release-repo ${repo}\``;
  return new BinnacleError(
    'input',
    'SELF_RELEASE_NOT_FOUND',
    tags.length === 0
      ? `release ${version} not found: ${repo} has no releases (no tags); ${publish}, or point --release-repo (or $${RELEASE_REPO_ENV}) at the repository that has them`
      : `release ${version} not found in ${repo}; it has: ${tags.join(', ')}. Pick one with --version, or ${publish}`,
  );
}

function parseConfig(bytes: Buffer, res: ValidationResult): ReleaseConfig | undefined {
  const file = 'config';
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    res.error('release.config', `not JSON: ${errorMessage(err)}`, { file });
    return undefined;
  }
  if (!isRecord(doc)) {
    res.error('release.config', 'expected a JSON object', { file });
    return undefined;
  }
  const out: Partial<ReleaseConfig> = {};
  for (const field of ['version', 'image', 'namespace', 'binnacleVersion'] as const) {
    const v = doc[field];
    if (typeof v === 'string' && v !== '') out[field] = v;
    else res.error('release.config', 'expected a non-empty string', { file, field });
  }
  return out.version !== undefined && out.image !== undefined && out.namespace !== undefined && out.binnacleVersion !== undefined ? (out as ReleaseConfig) : undefined;
}

/** The Deployment's manager container image, if it has one. */
function managerImage(d: KubeObject): unknown {
  const containers = (d.spec as { template?: { spec?: { containers?: unknown } } } | undefined)?.template?.spec?.containers;
  return Array.isArray(containers) && isRecord(containers[0]) ? containers[0].image : undefined;
}

/**
 * Checks a release's objects against its config and what every installation needs; gathers
 * every problem in `res`. Answers the objects that are well-formed.
 */
export function validateReleaseObjects(docs: readonly unknown[], config: ReleaseConfig | undefined, res: ValidationResult): KubeObject[] {
  const file = LAYER_TITLE;
  const objects: KubeObject[] = [];
  docs.forEach((doc, i) => {
    const at = `[${i}]`;
    if (!isRecord(doc)) return void res.error('release.object', 'expected a Kubernetes object', { file, field: at });
    const meta = doc.metadata;
    const name = isRecord(meta) ? meta.name : undefined;
    if (typeof doc.apiVersion !== 'string' || typeof doc.kind !== 'string' || !isRecord(meta) || typeof name !== 'string' || name === '') {
      return void res.error('release.object', 'expected apiVersion, kind and metadata.name', { file, field: at });
    }
    const what = `${at} ${doc.kind} ${name}`;
    if (!RELEASE_KINDS.has(doc.kind)) return void res.error('release.kind', `kind ${doc.kind} is not part of a Binnacle installation (expected ${[...RELEASE_KINDS].join(', ')})`, { file, field: what });
    const labels = isRecord(meta.labels) ? meta.labels : {};
    if (labels['app.kubernetes.io/part-of'] !== SELF_LABELS['app.kubernetes.io/part-of']) {
      res.error('release.labels', `metadata.labels["app.kubernetes.io/part-of"] must be "binnacle" (install-self, status-self and uninstall-self go by it)`, { file, field: what });
    }
    const ns = meta.namespace;
    const nsText = typeof ns === 'string' ? ns : JSON.stringify(ns);
    if (CLUSTER_KINDS.has(doc.kind) && ns !== undefined) res.error('release.namespace', `a cluster-scoped ${doc.kind} has metadata.namespace ${nsText}`, { file, field: what });
    if (!CLUSTER_KINDS.has(doc.kind) && config !== undefined && ns !== config.namespace) {
      res.error('release.namespace', `metadata.namespace is ${nsText ?? '(none)'}, but the release installs into ${config.namespace}`, { file, field: what });
    }
    objects.push(doc as unknown as KubeObject);
  });
  const has = (kind: string, name?: string): KubeObject | undefined => objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  const missing: string[] = [];
  const need = (kind: string, name: string | undefined): KubeObject | undefined => {
    const found = has(kind, name);
    if (found === undefined) missing.push(`${kind}${name === undefined ? '' : ` ${name}`}`);
    return found;
  };
  need('Namespace', config?.namespace);
  for (const crd of REQUIRED_CRDS) need('CustomResourceDefinition', crd);
  need('ServiceAccount', MANAGER_NAME);
  need('ClusterRole', MANAGER_NAME);
  need('ClusterRoleBinding', MANAGER_NAME);
  const deployment = need('Deployment', MANAGER_NAME);
  if (missing.length > 0) res.error('release.missing', `the release has no ${missing.join(', ')}: it cannot install a working manager`, { file });
  if (deployment !== undefined) {
    const image = managerImage(deployment);
    if (typeof image !== 'string' || image === '') res.error('release.image', 'the manager container has no image', { file, field: `Deployment ${MANAGER_NAME}.spec.template.spec.containers[0].image` });
    else {
      if (!isSha256Digest(digestOf(image))) res.error('release.image', `${image} is not pinned by digest (…@sha256:…): a release names exactly one image`, { file, field: `Deployment ${MANAGER_NAME}.spec.template.spec.containers[0].image` });
      if (config !== undefined && image !== config.image) res.error('release.image', `${image} is not the release's image ${config.image}`, { file, field: `Deployment ${MANAGER_NAME}.spec.template.spec.containers[0].image` });
    }
  }
  return objects;
}

/** Pulls the release of `version` from `repository` and checks it; every problem named, with what to do. */
export async function fetchSelfVersion(o: { version: string; repository: ImageReference; client?: RegistryClient }): Promise<SelfVersion> {
  checkVersion(o.version);
  const client = o.client ?? new RegistryClient();
  const tagged: ImageReference = { ...o.repository, tag: o.version, digest: undefined };
  const name = formatReference(tagged);
  if ((await client.headManifest(tagged)) === undefined) throw await notFound(client, o.repository, o.version);
  const got = await client.getManifest(tagged);
  const ref = formatReference(withDigest(tagged, got.digest));
  const wrong = (found: string): BinnacleError =>
    new BinnacleError(
      'input',
      'SELF_RELEASE_WRONG_TYPE',
      `${name} is ${found}, not a Binnacle release (an artifact whose config is ${RELEASE_MEDIA_TYPE.config}): is --release-repo the image repository? Releases are pushed by \`binnacle release-self --version ${o.version} --image REF --release-repo REPO\``,
    );
  if (got.manifest.kind === 'index') throw wrong('an image index (a multi-platform image)');
  const manifest: ImageManifest = got.manifest;
  const type = manifest.config.mediaType;
  if (type !== RELEASE_MEDIA_TYPE.config) {
    throw wrong(type === MediaType.ociConfig || type === MediaType.dockerConfig ? `a container image (config ${type})` : `an artifact of type ${type}`);
  }
  const res = new ValidationResult(`release ${ref}`);
  const config = parseConfig(await client.getBlobBytes(tagged, manifest.config.digest, manifest.config.size, 1024 * 1024), res);
  if (config !== undefined && config.version !== o.version) res.error('release.version', `the config says version ${config.version}, but the tag is ${o.version}`, { file: 'config', field: 'version' });
  const layers = manifest.layers.filter((l) => l.mediaType === RELEASE_MEDIA_TYPE.manifests);
  let objects: KubeObject[] = [];
  if (layers.length !== 1) {
    res.error('release.layers', `expected one layer of media type ${RELEASE_MEDIA_TYPE.manifests}, found ${layers.length} (layers: ${manifest.layers.map((l) => l.mediaType).join(', ') || 'none'})`, { field: 'layers' });
  } else {
    const layer = layers[0];
    const text = layer === undefined ? '' : (await client.getBlobBytes(tagged, layer.digest, layer.size, 16 * 1024 * 1024)).toString('utf8');
    const docs: unknown[] = [];
    for (const [i, d] of yamlPackage().parseAllDocuments(text).entries()) {
      if (d.errors.length > 0) res.error('release.yaml', d.errors.map((e) => e.message).join('; '), { file: LAYER_TITLE, field: `document ${i}` });
      else if (d.contents !== null) {
        try {
          docs.push(yamlValue(d, `${LAYER_TITLE}: document ${i}`));
        } catch (err) {
          if (!(err instanceof YamlAliasError)) throw err;
          res.error('release.yaml', err.reason, { file: LAYER_TITLE, field: `document ${i}` });
        }
      }
    }
    objects = validateReleaseObjects(docs, config, res);
  }
  if (!res.ok || config === undefined) {
    throw new BinnacleError('terminal', 'SELF_RELEASE_INVALID', `${name} is not a usable Binnacle release:\n${res.render()}\npublish it again with \`binnacle release-self --version ${o.version} --image REF\`, or pick another --version`);
  }
  return { version: o.version, ref, config, objects };
}

/** An image reference's digest; '' when it has none or is no reference. */
function digestOf(image: string): string {
  try {
    return parseReference(image).digest ?? '';
  } catch {
    return '';
  }
}
