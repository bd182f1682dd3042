/**
 * `run bundle` and `run bundle-upgrade`: one bundle installed through the normal path. The
 * bundle's catalog (its own, or an existing index image's content with the bundle added) is kept
 * in ConfigMaps and served by a ClusterCatalog of source type ConfigMaps; a bundle directory is
 * shipped in ConfigMaps too (`configmaps://` bundle references), so no registry is needed. A
 * ClusterExtension pinned to the bundle's version, limited to that catalog, installs it; the
 * manager does the rest. Upgrades add the new bundle to the same catalog and move the pin, so the
 * resolver's upgrade rules (replaces, skips, skipRange) decide, and a missing edge is named
 * before anything changes.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { addBundleToConfig, type BundleDirInfo } from '../catalog-render/bundle-dir.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import { bundleAnnotations, stageBundleLayout } from '../bundle/index.js';
import { loadFbcDir } from '../catalog/load.js';
import { satisfiesOlmRange } from '../util/semver.js';
import { blockingErrors, validateConfig } from '../catalog/validate.js';
import { orderedMetas } from '../catalog/write.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';

import { fetchConfigMaps, formatConfigMapsImage } from '../source/index.js';
import { API_VERSION, type ClusterCatalog, type ClusterExtension } from '../api/types.js';
import { boundedName } from '../api/names.js';
import { BinnacleError, UsageError } from '../util/errors.js';
import type { BundleInput } from './bundle-input.js';
import { contentHash, namePart, packConfigMaps, readFlatDir, type PackedFile } from './configmaps.js';
import { diagnoseExtension, settledAt } from './diagnose.js';

/** Every object `run bundle` makes carries it, valued with the package: `cleanup` finds them by it. */
export const LABEL_RUN_BUNDLE = 'binnacle.dev/run-bundle';
const ANNOTATION_CONTENT = 'binnacle.dev/run-bundle-content';
const BINNACLE_CRDS = ['clustercatalogs.binnacle.dev', 'clusterextensions.binnacle.dev', 'bundledeployments.binnacle.dev'];

export interface RunBundleOptions {
  client: KubeClient;
  input: BundleInput;
  /** Install namespace (default: the package name). */
  namespace?: string;
  /** `AllNamespaces`, `OwnNamespace`, `SingleNamespace=ns`, `MultiNamespace=a,b` (default: the install modes decide). */
  installMode?: string;
  /** An existing ServiceAccount in the namespace (default: one bound to cluster-admin is made). */
  serviceAccount?: string;
  timeoutMs: number;
  /** An existing catalog (an index image's FBC) the bundle is added to. */
  baseCatalog?: DeclarativeConfig;
  progress: (line: string) => void;
}

export interface RunBundleResult {
  extension: string;
  catalog: string;
  namespace: string;
  bundle: string;
  version: string;
  image: string;
}

/** Names derived from the package. */
export function runBundleNames(pkg: string): { extension: string; catalog: string; installer: string } {
  const base = boundedName(namePart(pkg, 200), 40);
  return { extension: base, catalog: `${base}-run-bundle`, installer: `${base}-run-bundle-installer` };
}

/** Binnacle's CRDs must be on the cluster; say what to run when they are not. */
export async function requireBinnacle(client: KubeClient): Promise<void> {
  const missing: string[] = [];
  for (const name of BINNACLE_CRDS) {
    if ((await client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name })) === undefined) missing.push(name);
  }
  if (missing.length > 0) {
    throw new BinnacleError(
      'terminal',
      'RUN_BUNDLE_NO_BINNACLE',
      `this cluster has no Binnacle (missing CRDs: ${missing.join(', ')}): install it with \`binnacle install-self\`, or run a manager against the cluster with \`binnacle manager\` (it installs the CRDs), then run this again`,
    );
  }
}

function watchOf(mode: string | undefined, namespace: string): NonNullable<ClusterExtension['spec']['install']> {
  if (mode === undefined || mode === '') return {};
  const [kind = '', arg] = mode.split('=', 2);
  const list = (arg ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  switch (kind) {
    case 'AllNamespaces':
      return { watchNamespace: '' };
    case 'OwnNamespace':
      return { watchNamespace: namespace };
    case 'SingleNamespace':
      if (list.length !== 1) throw new UsageError(`--install-mode ${mode}: SingleNamespace needs one namespace, e.g. SingleNamespace=team-a`);
      return { watchNamespace: list[0] ?? '' };
    case 'MultiNamespace':
      if (list.length === 0) throw new UsageError(`--install-mode ${mode}: MultiNamespace needs namespaces, e.g. MultiNamespace=a,b`);
      return { watchNamespaces: list };
    default:
      throw new UsageError(`--install-mode ${mode}: expected AllNamespaces, OwnNamespace, SingleNamespace=NS or MultiNamespace=NS1,NS2`);
  }
}

/**
 * The bundle's files as ConfigMaps: `manifests/` and `metadata/`, flat. A package-manifest
 * version directory is staged in the bundle layout first, its annotations made from the package
 * file (src/bundle/build.ts), so the manager loads it as it loads any bundle.
 */
async function bundleFiles(info: BundleDirInfo): Promise<{ manifests: PackedFile[]; metadata: PackedFile[] }> {
  const has = async (p: string): Promise<boolean> => (await stat(p).catch(() => undefined))?.isDirectory() === true;
  if (info.bundle.layout === 'package-manifest') {
    const staged = await mkdtemp(join(tmpdir(), 'binnacle-run-bundle-stage-'));
    try {
      await stageBundleLayout(info.bundle, staged, bundleAnnotations(info.bundle));
      return { manifests: await readFlatDir(join(staged, 'manifests')), metadata: await readFlatDir(join(staged, 'metadata')) };
    } finally {
      await rm(staged, { recursive: true, force: true });
    }
  }
  if (!(await has(join(info.dir, 'manifests')))) throw new BinnacleError('input', 'RUN_BUNDLE_LAYOUT', `${info.dir} has no manifests/ directory: run bundle takes the bundle layout (manifests/, metadata/) or a package-manifest version directory`);
  const manifests = await readFlatDir(join(info.dir, 'manifests'));
  const metadata = (await has(join(info.dir, 'metadata'))) ? await readFlatDir(join(info.dir, 'metadata')) : [];
  return { manifests, metadata };
}

/** Ships a bundle directory in ConfigMaps; answers its `configmaps://` reference. */
async function shipBundle(client: KubeClient, info: BundleDirInfo, pkg: string, namespace: string): Promise<string> {
  const { manifests, metadata } = await bundleFiles(info);
  const base = `${namePart(pkg, 30)}-${namePart(info.version, 20)}-${contentHash([...manifests, ...metadata.map((f) => ({ ...f, key: `metadata/${f.key}` }))])}`;
  const labels = { [LABEL_RUN_BUNDLE]: namePart(pkg, 63) };
  const packed = [...packConfigMaps(manifests, { base, path: 'manifests', namespace, labels }), ...packConfigMaps(metadata, { base, path: 'metadata', namespace, labels })];
  for (const p of packed) await client.apply(p.object, { force: true });
  return formatConfigMapsImage(namespace, packed.map((p) => ({ name: p.name, path: p.path })));
}

/** Adds the bundle to `cfg`: its package (if new), its channels, its `olm.bundle`. */
async function addBundle(cfg: DeclarativeConfig, info: BundleDirInfo, pkg: string, image: string): Promise<void> {
  const record = await addBundleToConfig(cfg, info, { packageName: pkg, image, fallbackChannel: 'run-bundle' });
  // A bundle kept in ConfigMaps is no image to mirror: it is not a related image.
  if (record.relatedImages !== undefined) record.relatedImages = record.relatedImages.filter((r) => r.image !== image || !image.startsWith('configmaps://'));
}

/** Writes the catalog into ConfigMaps `<catalog>-fbc[-n]` and points the ClusterCatalog at them. */
async function publishCatalog(client: KubeClient, cfg: DeclarativeConfig, o: { catalog: string; namespace: string; pkg: string }): Promise<void> {
  const validation = validateConfig(cfg).result;
  // As for the index it came from (bundle-input.ts): rules opm added since v1.47.0 do not stop it.
  if (blockingErrors(validation).length > 0) throw new BinnacleError('input', 'RUN_BUNDLE_CATALOG', `the catalog with this bundle is not valid:\n${validation.render()}`);
  // One file per ~meta chunk: ConfigMaps are packed under their size limit at file boundaries.
  const files: PackedFile[] = [];
  let chunk: string[] = [];
  let size = 0;
  const flush = (): void => {
    if (chunk.length === 0) return;
    files.push({ key: `catalog-${String(files.length).padStart(4, '0')}.json`, content: Buffer.from(chunk.join('')) });
    chunk = [];
    size = 0;
  };
  for (const m of orderedMetas(cfg)) {
    const text = `${JSON.stringify(m.blob)}\n`;
    if (size + text.length > 256 * 1024) flush();
    chunk.push(text);
    size += text.length;
  }
  flush();
  const labels = { [LABEL_RUN_BUNDLE]: namePart(o.pkg, 63), 'binnacle.dev/run-bundle-catalog': o.catalog };
  const packed = packConfigMaps(files, { base: o.catalog, path: 'fbc', namespace: o.namespace, labels });
  for (const p of packed) await client.apply(p.object, { force: true });
  const keep = new Set(packed.map((p) => p.name));
  for (const old of (await client.list('v1', 'ConfigMap', { namespace: o.namespace, labelSelector: `binnacle.dev/run-bundle-catalog=${o.catalog}` })).items) {
    if (!keep.has(old.metadata.name ?? '')) await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: o.namespace, name: old.metadata.name ?? '' });
  }
  await client.apply(
    {
      apiVersion: API_VERSION,
      kind: 'ClusterCatalog',
      metadata: { name: o.catalog, labels: { [LABEL_RUN_BUNDLE]: namePart(o.pkg, 63) }, annotations: { [ANNOTATION_CONTENT]: contentHash(files) } },
      spec: { source: { type: 'ConfigMaps', configMaps: packed.map((p) => ({ namespace: o.namespace, name: p.name })) } },
    },
    { force: true },
  );
}

/** The catalog a `run bundle` ClusterCatalog serves, read back from its ConfigMaps. */
async function readCatalog(client: KubeClient, catalog: ClusterCatalog): Promise<DeclarativeConfig> {
  const source = catalog.spec.source;
  if (source.type !== 'ConfigMaps') throw new BinnacleError('input', 'RUN_BUNDLE_NOT_OURS', `ClusterCatalog ${catalog.metadata.name ?? ''} is not served from ConfigMaps`);
  const dir = await mkdtemp(join(tmpdir(), 'binnacle-run-bundle-'));
  try {
    await fetchConfigMaps({ type: 'configMaps', configMaps: source.configMaps }, join(dir, 'fbc'), { client, maxBytes: 256 * 1024 * 1024 });
    const loaded = await loadFbcDir(join(dir, 'fbc'));
    if (!loaded.result.ok) throw new BinnacleError('input', 'RUN_BUNDLE_CATALOG', `the catalog in ${source.configMaps.map((c) => c.name).join(', ')} cannot be read:\n${loaded.result.render()}`);
    return loaded.config;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function ensureInstaller(client: KubeClient, o: { namespace: string; serviceAccount?: string; installer: string; pkg: string }): Promise<string> {
  if (o.serviceAccount !== undefined) {
    if ((await client.find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: o.namespace, name: o.serviceAccount })) === undefined) {
      throw new BinnacleError('input', 'RUN_BUNDLE_SERVICE_ACCOUNT', `--service-account ${o.serviceAccount}: ServiceAccount ${o.namespace}/${o.serviceAccount} does not exist: create it with the permissions the install needs, or leave the flag out to get one bound to cluster-admin`);
    }
    return o.serviceAccount;
  }
  const labels = { [LABEL_RUN_BUNDLE]: namePart(o.pkg, 63) };
  await client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: o.installer, namespace: o.namespace, labels } });
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${o.namespace}-${o.installer}`.slice(0, 253), labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: o.installer, namespace: o.namespace }],
  });
  return o.installer;
}

/** The bundle's CRDs that exist on the cluster but belong to no one (kept by a `cleanup` without --delete-crds). */
async function orphanedCrds(client: KubeClient, info: BundleDirInfo): Promise<string[]> {
  const out: string[] = [];
  for (const crd of info.bundle.crds) {
    const name = crd.name;
    const live = await client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
    if (live !== undefined && live.metadata.labels?.['binnacle.dev/owner-kind'] === undefined) out.push(name);
  }
  return out;
}

/** Waits until the extension is installed at `version`; on timeout, says what is stuck. */
export async function waitInstalled(client: KubeClient, o: { extension: string; catalog: string; version: string; timeoutMs: number; progress: (line: string) => void }): Promise<ClusterExtension> {
  const deadline = Date.now() + o.timeoutMs;
  let last = '';
  for (;;) {
    const ce = await client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: o.extension });
    if (settledAt(ce, o.version) && ce !== undefined) return ce;
    const p = ce?.status?.conditions?.find((c) => c.type === 'Progressing');
    const line = p === undefined ? '' : `${p.reason}: ${p.message}`;
    if (line !== '' && line !== last) o.progress(`  … ${line}`);
    last = line;
    if (Date.now() >= deadline) break;
    await sleep(1000);
  }
  const stuck = await diagnoseExtension(client, { extension: o.extension, catalog: o.catalog, version: o.version });
  throw new BinnacleError(
    'transient',
    'RUN_BUNDLE_TIMEOUT',
    `${o.extension} was not installed at ${o.version} within ${Math.round(o.timeoutMs / 1000)}s; what is stuck:\n${stuck.map((l) => `  ${l}`).join('\n')}\n(remove it with \`binnacle cleanup ${o.extension}\`)`,
  );
}

export async function runBundle(o: RunBundleOptions): Promise<RunBundleResult> {
  const { client, input } = o;
  const pkg = input.packageName;
  await requireBinnacle(client);
  const names = runBundleNames(pkg);
  const namespace = o.namespace ?? names.extension;
  const install = watchOf(o.installMode, namespace);
  for (const ce of (await client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')).items) {
    if (ce.spec.source.catalog.packageName === pkg) {
      throw new BinnacleError('input', 'RUN_BUNDLE_INSTALLED', `package ${pkg} is already installed by ClusterExtension ${ce.metadata.name ?? ''}: upgrade it with \`binnacle run bundle-upgrade ${input.arg}\`, or remove it first with \`binnacle cleanup ${pkg}\``);
    }
  }
  const labels = { [LABEL_RUN_BUNDLE]: namePart(pkg, 63) };
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const sa = await ensureInstaller(client, { namespace, installer: names.installer, pkg, ...(o.serviceAccount === undefined ? {} : { serviceAccount: o.serviceAccount }) });
  const image = input.image ?? (await shipBundle(client, input.info, pkg, namespace));
  o.progress(input.image === undefined ? `• bundle ${input.info.name} shipped in ConfigMaps in ${namespace}` : `• bundle ${input.info.name} from ${input.image}`);
  const cfg = o.baseCatalog ?? emptyDeclarativeConfig();
  await addBundle(cfg, input.info, pkg, image);
  await publishCatalog(client, cfg, { catalog: names.catalog, namespace, pkg });
  o.progress(`• ClusterCatalog ${names.catalog} serves it from ConfigMaps${o.baseCatalog === undefined ? '' : ' (with the index image content)'}`);
  const adopt = (await orphanedCrds(client, input.info)).length > 0;
  const spec: ClusterExtension['spec'] = {
    namespace,
    serviceAccount: { name: sa },
    source: { sourceType: 'Catalog', catalog: { packageName: pkg, version: input.info.version, selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': names.catalog } } } },
    // A failed install stays for debugging; CRDs a cleanup kept are taken back.
    install: { ...install, keepFailedInstall: true, ...(adopt ? { adoptExisting: true } : {}) },
  };
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name: names.extension, labels }, spec }, { force: true });
  o.progress(`• ClusterExtension ${names.extension} installs ${pkg} ${input.info.version} into ${namespace}`);
  await waitInstalled(client, { extension: names.extension, catalog: names.catalog, version: input.info.version, timeoutMs: o.timeoutMs, progress: o.progress });
  return { extension: names.extension, catalog: names.catalog, namespace, bundle: input.info.name, version: input.info.version, image };
}

/** Why `next` cannot replace the installed bundle, or undefined when it has an upgrade edge from it. */
export function missingUpgradeEdge(next: BundleDirInfo, installed: { name: string; version: string }): string | undefined {
  if (next.replaces === installed.name) return undefined;
  if (next.skips.includes(installed.name)) return undefined;
  if (next.skipRange !== undefined && satisfiesOlmRange(installed.version, next.skipRange)) return undefined;
  const has = [
    `replaces: ${next.replaces ?? '(none)'}`,
    `skips: ${next.skips.length === 0 ? '(none)' : next.skips.join(', ')}`,
    `olm.skipRange: ${next.skipRange ?? '(none)'}`,
  ].join('; ');
  return `bundle ${next.name} (${next.version}) has no upgrade edge from the installed ${installed.name} (${installed.version}): its CSV has ${has}; add \`spec.replaces: ${installed.name}\` (or a skips entry or olm.skipRange covering ${installed.version}) to the CSV`;
}

export async function runBundleUpgrade(o: Omit<RunBundleOptions, 'baseCatalog' | 'installMode' | 'serviceAccount'>): Promise<RunBundleResult & { from: string }> {
  const { client, input } = o;
  const pkg = input.packageName;
  await requireBinnacle(client);
  const names = runBundleNames(pkg);
  const ce = (await client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')).items.find((c) => c.spec.source.catalog.packageName === pkg);
  if (ce === undefined) throw new BinnacleError('input', 'RUN_BUNDLE_NOT_INSTALLED', `package ${pkg} is not installed: install it first with \`binnacle run bundle\``);
  const installed = ce.status?.install?.bundle;
  if (installed === undefined) throw new BinnacleError('input', 'RUN_BUNDLE_NOT_INSTALLED', `ClusterExtension ${ce.metadata.name ?? ''} has not installed ${pkg} yet: wait for it, or \`binnacle cleanup ${pkg}\` and run bundle again`);
  const why = missingUpgradeEdge(input.info, installed);
  if (why !== undefined) throw new BinnacleError('input', 'RUN_BUNDLE_NO_UPGRADE_EDGE', why);
  let catalog: ClusterCatalog;
  try {
    catalog = await client.get<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: names.catalog });
  } catch (err) {
    if (isNotFound(err)) throw new BinnacleError('input', 'RUN_BUNDLE_NOT_OURS', `${pkg} was not installed by \`binnacle run bundle\` (no ClusterCatalog ${names.catalog}): upgrade it with \`binnacle upgrade ${ce.metadata.name ?? ''}\``, { cause: err });
    throw err;
  }
  const namespace = ce.spec.namespace;
  const cfg = await readCatalog(client, catalog);
  const image = input.image ?? (await shipBundle(client, input.info, pkg, namespace));
  await addBundle(cfg, input.info, pkg, image);
  await publishCatalog(client, cfg, { catalog: names.catalog, namespace, pkg });
  o.progress(`• ClusterCatalog ${names.catalog} now offers ${input.info.name} (upgrade edge from ${installed.name})`);
  const name = ce.metadata.name ?? '';
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: input.info.version } } } });
  o.progress(`• ClusterExtension ${name}: ${installed.version} → ${input.info.version}`);
  await waitInstalled(client, { extension: name, catalog: names.catalog, version: input.info.version, timeoutMs: o.timeoutMs, progress: o.progress });
  return { extension: name, catalog: names.catalog, namespace, bundle: input.info.name, version: input.info.version, image, from: installed.version };
}

