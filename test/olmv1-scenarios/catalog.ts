/**
 * The scenarios' catalogs and bundles, built from a Gherkin table and pushed to the local
 * registry: what operator-controller's test/internal/catalog (bundle.go, catalog.go) and the
 * table parser of test/e2e/steps/steps.go (parseCatalogTable, parseContents) build, with
 * Binnacle's own image builder and registry client (src/oci).
 *
 * Names as upstream: package `<pkg>-<id>`; CSV `<package>.v<version>`; FBC bundle
 * `<package>.<version>`; bundle image `<registry>/bundles/<package>:v<version>`; catalog image
 * `<registry>/e2e/<name>-catalog-<id>:<tag>` holding `configs/catalog.yaml`. Binnacle's manager
 * pulls from the same loopback registry the images are pushed to, so the cluster address is the
 * push address (upstream's CLUSTER_REGISTRY_HOST).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { stringify } from 'yaml';
import { buildImage, parseReference, pushImage, RegistryClient } from '../../src/oci/index.js';

type InstallMode = 'AllNamespaces' | 'SingleNamespace' | 'MultiNamespace' | 'OwnNamespace';
const ALL_MODES: InstallMode[] = ['AllNamespaces', 'SingleNamespace', 'MultiNamespace', 'OwnNamespace'];

export interface BundleOptions {
  crd?: boolean;
  deployment?: boolean;
  configMap?: boolean;
  badImage?: boolean;
  properties?: { type: string; value: string }[];
  installModes?: InstallMode[];
  largeCrdFields?: number;
  staticBundleDir?: string;
  clusterRegistry?: string;
}

interface PackageSpec {
  name: string;
  bundles: { version: string; opts: BundleOptions }[];
  channels: { name: string; entries: { version: string; replaces: string }[] }[];
}

/** parseContents (steps.go): the `contents` cell of a catalog table row. */
export function parseContents(contentsIn: string, projectRoot: string): BundleOptions {
  const contents = contentsIn.trim();
  if (contents === '') return {};
  if (contents.toLowerCase() === 'badimage') return { crd: true, deployment: true, badImage: true };
  const o: BundleOptions = {};
  for (const raw of contents.split(',')) {
    const part = raw.trim();
    const inner = (prefix: string): string | undefined => (part.startsWith(`${prefix}(`) && part.endsWith(')') ? part.slice(prefix.length + 1, -1) : undefined);
    if (part === 'CRD') o.crd = true;
    else if (part === 'Deployment') o.deployment = true;
    else if (part === 'ConfigMap') o.configMap = true;
    else if (inner('Property') !== undefined) {
      const kv = inner('Property') ?? '';
      const i = kv.indexOf('=');
      if (i >= 0) (o.properties ??= []).push({ type: kv.slice(0, i), value: kv.slice(i + 1) });
    } else if (inner('InstallMode') !== undefined) (o.installModes ??= []).push(inner('InstallMode') as InstallMode);
    else if (inner('LargeCRD') !== undefined) {
      const n = Number.parseInt(inner('LargeCRD') ?? '', 10);
      if (!Number.isInteger(n) || n <= 0) throw new Error(`invalid LargeCRD field count "${inner('LargeCRD')}": must be a positive integer`);
      o.crd = true;
      o.largeCrdFields = n;
    } else if (inner('ClusterRegistry') !== undefined) o.clusterRegistry = inner('ClusterRegistry');
    else if (inner('StaticBundleDir') !== undefined) o.staticBundleDir = join(projectRoot, inner('StaticBundleDir') ?? '');
  }
  return o;
}

/** parseCatalogTable (steps.go): rows `package | version | channel | replaces | contents` after a header. */
export function parseCatalogTable(rows: string[][], projectRoot: string): PackageSpec[] {
  const pkgs = new Map<string, PackageSpec>();
  const seen = new Set<string>();
  for (const row of rows.slice(1)) {
    const [pkg = '', version = '', channel = '', replaces = '', contents = ''] = row;
    let spec = pkgs.get(pkg);
    if (spec === undefined) pkgs.set(pkg, (spec = { name: pkg, bundles: [], channels: [] }));
    const key = `${pkg}\u0000${version}`;
    if (seen.has(key)) {
      if (contents.trim() !== '') throw new Error(`duplicate bundle ${pkg}/${version}: contents must be empty for repeated versions`);
    } else {
      seen.add(key);
      spec.bundles.push({ version, opts: parseContents(contents, projectRoot) });
    }
    let ch = spec.channels.find((c) => c.name === channel);
    if (ch === undefined) spec.channels.push((ch = { name: channel, entries: [] }));
    ch.entries.push({ version, replaces });
  }
  return [...pkgs.values()];
}

function deploymentSpec(name: string, id: string, version: string, sa: string, scriptCm: string, image: string): Record<string, unknown> {
  const probe = (path: string, extra: Record<string, number>): Record<string, unknown> => ({ httpGet: { path, port: 8080 }, ...extra });
  return {
    name,
    label: { 'app.kubernetes.io/name': name, 'app.kubernetes.io/version': version, 'app.kubernetes.io/component': 'controller' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: id } },
      template: {
        metadata: { labels: { app: id } },
        spec: {
          serviceAccountName: sa,
          terminationGracePeriodSeconds: 0,
          volumes: [{ name: 'scripts', configMap: { name: scriptCm, defaultMode: 0o755 } }],
          containers: [
            {
              name: 'busybox-httpd-container',
              image,
              command: ['/scripts/httpd.sh'],
              ports: [{ containerPort: 8080 }],
              volumeMounts: [{ name: 'scripts', mountPath: '/scripts', readOnly: true }],
              startupProbe: probe('/started', { failureThreshold: 30, periodSeconds: 10 }),
              livenessProbe: probe('/live', { failureThreshold: 1, periodSeconds: 2 }),
              readinessProbe: probe('/ready', { initialDelaySeconds: 1, periodSeconds: 1 }),
            },
          ],
        },
      },
    },
  };
}

function crd(name: string, group: string, kind: string, plural: string, id: string, largeFields: number): Record<string, unknown> {
  const props: Record<string, unknown> = { testField: { type: 'string' } };
  const desc = 'This field provides configuration for the large CRD test operator. It is used to validate that the OLM installation pipeline correctly handles bundles containing large Custom Resource Definitions. '.repeat(20);
  for (let i = 0; i < largeFields; i++) props[`field${String(i).padStart(4, '0')}`] = { type: 'string', description: desc };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: `e2e-${id}test` },
      scope: 'Cluster',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } } } }],
    },
  };
}

/** buildBundle (bundle.go): the bundle's files, path → content. */
async function bundleFiles(id: string, pkg: string, version: string, o: BundleOptions): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  if (o.staticBundleDir !== undefined) {
    const walk = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else files.set(relative(o.staticBundleDir ?? '', p), await readFile(p, 'utf8'));
      }
    };
    await walk(o.staticBundleDir);
    return files;
  }
  const group = `e2e-${id}.e2e.operatorframework.io`;
  const plural = `e2e-${id}tests`;
  const kind = 'E2ETest';
  const crdName = `${plural}.${group}`;
  const deployName = `test-operator-${id}`;
  const sa = `bundle-manager-${id}`;
  const scriptCm = `httpd-script-${id}`;
  const modes = o.installModes ?? ['AllNamespaces', 'SingleNamespace'];
  const strategySpec: Record<string, unknown> = {};
  if (o.deployment === true) {
    strategySpec.deployments = [deploymentSpec(deployName, id, version, sa, scriptCm, o.badImage === true ? 'wrong/image' : 'busybox:1.36')];
    const all = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    strategySpec.permissions = [
      {
        serviceAccountName: sa,
        rules: [
          { apiGroups: [''], resources: ['configmaps', 'serviceaccounts'], verbs: all },
          { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: all },
          { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
        ],
      },
    ];
    strategySpec.clusterPermissions = [
      {
        serviceAccountName: sa,
        rules: [
          { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
          { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
        ],
      },
    ];
  }
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: `${pkg}.v${version}` },
    spec: {
      ...(o.crd === true ? { customresourcedefinitions: { owned: [{ name: crdName, kind, version: 'v1', displayName: kind, description: 'E2E Test Resource' }] } } : {}),
      install: { strategy: 'deployment', spec: strategySpec },
      installModes: ALL_MODES.map((type) => ({ type, supported: modes.includes(type) })),
    },
  };
  files.set('manifests/csv.yaml', stringify(csv));
  if (o.deployment === true) {
    files.set('manifests/script-configmap.yaml', stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: scriptCm }, data: { 'httpd.sh': '#!/bin/sh\nmkdir -p /tmp/www\necho true > /tmp/www/started\necho true > /tmp/www/ready\necho true > /tmp/www/live\nexec httpd -f -h /tmp/www -p 8080\n' } }));
    files.set('manifests/networkpolicy.yaml', stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: `${deployName}-network-policy` }, spec: { podSelector: {}, policyTypes: ['Ingress'] } }));
  }
  if (o.configMap === true) {
    const name = `test-configmap-${id}`;
    files.set('manifests/bundle-configmap.yaml', stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { version, name } }));
  }
  if (o.crd === true) files.set('manifests/crd.yaml', stringify(crd(crdName, group, kind, plural, id, o.largeCrdFields ?? 0)));
  // bundlefs: annotations name only the package; properties as strings.
  files.set('metadata/annotations.yaml', stringify({ annotations: { 'operators.operatorframework.io.bundle.package.v1': pkg } }));
  if ((o.properties ?? []).length > 0) files.set('metadata/properties.yaml', stringify({ properties: (o.properties ?? []).map((p) => ({ type: p.type, value: p.value })) }));
  return files;
}

async function writeTree(root: string, files: Map<string, string>): Promise<void> {
  for (const [path, content] of files) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

async function pushTree(files: Map<string, string>, labels: Record<string, string>, ref: string, client: RegistryClient): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'olmv1-scenarios-image-'));
  try {
    await writeTree(join(work, 'root'), files);
    const image = await buildImage({ layers: [{ dir: join(work, 'root'), prefix: '/' }], labels, outputDir: join(work, 'layout') });
    await pushImage(image, ref, client);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export interface BuildResult {
  catalogImageRef: string;
  catalogName: string;
  /** Table package name → `<name>-<id>`. */
  packageNames: Map<string, string>;
}

/** Catalog.Build (catalog.go): bundles, then the FBC catalog image tagged `tag`. */
export async function buildCatalog(name: string, id: string, packages: PackageSpec[], tag: string, registry: string, client = new RegistryClient()): Promise<BuildResult> {
  const packageNames = new Map<string, string>();
  const docs: string[] = [];
  for (const pkg of packages) {
    const param = `${pkg.name}-${id}`;
    packageNames.set(pkg.name, param);
    const refs = new Map<string, string>();
    for (const b of pkg.bundles) {
      const files = await bundleFiles(id, param, b.version, b.opts);
      const labels = {
        'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
        'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
        'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
        'operators.operatorframework.io.bundle.package.v1': param,
        'operators.operatorframework.io.bundle.channels.v1': 'default',
      };
      await pushTree(files, labels, `${registry}/bundles/${param}:v${b.version}`, client);
      refs.set(b.version, `${b.opts.clusterRegistry ?? registry}/bundles/${param}:v${b.version}`);
    }
    if (pkg.channels.length === 0) throw new Error(`package "${pkg.name}" must define at least one channel`);
    docs.push(stringify({ schema: 'olm.package', name: param }));
    for (const ch of pkg.channels) {
      docs.push(stringify({ schema: 'olm.channel', name: ch.name, package: param, entries: ch.entries.map((e) => (e.replaces === '' ? { name: `${param}.${e.version}` } : { name: `${param}.${e.version}`, replaces: `${param}.${e.replaces}` })) }));
    }
    for (const b of pkg.bundles) {
      docs.push(stringify({ schema: 'olm.bundle', name: `${param}.${b.version}`, package: param, image: refs.get(b.version), properties: [{ type: 'olm.package', value: { packageName: param, version: b.version } }] }));
    }
  }
  const catalogName = `${name}-catalog-${id}`;
  const ref = `${registry}/e2e/${catalogName}:${tag}`;
  await pushTree(new Map([['configs/catalog.yaml', docs.join('---\n')]]), { 'operators.operatorframework.io.index.configs.v1': '/configs' }, ref, client);
  return { catalogImageRef: ref, catalogName, packageNames };
}

/** crane.Tag: the manifest of `<ref>` put again under `newTag`. */
export async function tagImage(ref: string, newTag: string, client = new RegistryClient()): Promise<void> {
  const m = await client.getManifest(ref);
  await client.putManifest({ ...parseReference(ref), tag: newTag, digest: undefined }, m.bytes, m.mediaType);
}
