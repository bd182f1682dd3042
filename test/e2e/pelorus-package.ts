/**
 * The Pelorus chart as an operator package, for the e2e files that install it (pelorus.test.ts
 * under kwok with a local `helm-operator run`, real-node.test.ts with the operator's Pod on the
 * real node): `binnacle helm bundle` turns the chart (with its `exporters` subchart) into a
 * registry+v1 bundle requiring Prometheus and Grafana APIs, and a stand-in package provides the
 * Grafana APIs the corpus's grafana-operator 3.x does not (see pelorus.test.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { generateBundle, loadBundleDir, providedApis, type RegistryV1Bundle } from '../../src/bundle/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { eventually } from './env.js';
import { CORPUS } from './operators.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BINNACLE = join(ROOT, 'bin', 'binnacle.js');
export const PELORUS_CHART = join(ROOT, '..', 'shared', 'corpus', 'charts', 'pelorus__pelorus');
export const PELORUS_VERSION = '2.0.13';
export const PELORUS_GROUP = 'pelorus.helm.binnacle.dev';
export const STAND_IN = 'grafana-v1beta1-apis';
/** The operator's Deployment `helm bundle` writes, and its charts' ConfigMap. */
export const PELORUS_DEPLOYMENT = 'pelorus-controller-manager';

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}
export const gvkKey = (g: Gvk): string => `${g.group}/${g.version}/${g.kind}`;

export interface HelmCr extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: Parameters<typeof findCondition>[0]; deployedRelease?: { name: string; manifest: string } };
}

/** What the newest bundle of a corpus package provides. */
export async function corpusProvides(pkg: string, version: string): Promise<Set<string>> {
  const b = await loadBundleDir(join(CORPUS, pkg, version), { packageName: pkg });
  return new Set(providedApis(b).map(gvkKey));
}

/**
 * A package that provides `gvks` and does nothing else: CRDs whose schemas keep every field,
 * and a Deployment, through the bundle writer.
 */
async function standInPackage(dir: string, gvks: readonly Gvk[]): Promise<void> {
  const input = join(dir, 'input');
  await mkdir(input, { recursive: true });
  const crds = gvks.map((g) => {
    const plural = `${g.kind.toLowerCase()}s`;
    return {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${g.group}` },
      spec: {
        group: g.group,
        names: { kind: g.kind, listKind: `${g.kind}List`, plural, singular: g.kind.toLowerCase() },
        scope: 'Namespaced',
        versions: [{ name: g.version, served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }, subresources: { status: {} } }],
      },
    };
  });
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${STAND_IN}-controller` },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: STAND_IN } },
      template: { metadata: { labels: { app: STAND_IN } }, spec: { containers: [{ name: 'controller', image: 'registry.invalid/stand-in:5.0.0' }] } },
    },
  };
  await writeFile(join(input, 'objects.yaml'), [...crds, deployment].map((o) => stringify(o)).join('---\n'));
  await generateBundle({ inputDir: input, outputDir: join(dir, STAND_IN, '5.0.0'), packageName: STAND_IN, version: '5.0.0', channels: ['stable'] });
  await rm(input, { recursive: true, force: true });
}

export interface PelorusPackages {
  bundle: RegistryV1Bundle;
  /** The package directories to publish in one catalog: Pelorus, the Grafana stand-in, and the corpus Prometheus operator. */
  packages: string[];
}

/**
 * Writes under `work` the Pelorus package (`binnacle helm bundle`, its operator running `image`
 * when given, else helm bundle's default) and the stand-in for the Grafana APIs it requires.
 */
export async function writePelorusPackages(work: string, image?: string): Promise<PelorusPackages> {
  const pkgDir = join(work, 'pelorus');
  const args = [BINNACLE, 'helm', 'bundle', PELORUS_CHART, '--kind', 'Pelorus', '--kind', 'Exporter=charts/exporters', '--version', PELORUS_VERSION, '--output-dir', join(pkgDir, PELORUS_VERSION)];
  await run(process.execPath, [...args, ...(image === undefined ? [] : ['--image', image])], { cwd: ROOT });
  const bundle = await loadBundleDir(join(pkgDir, PELORUS_VERSION));
  const required = bundle.dependencies.filter((d) => d.type === 'olm.gvk').map((d) => d.value as Gvk);
  await standInPackage(work, required.filter((g) => g.group === 'grafana.integreatly.org'));
  return { bundle, packages: [join(CORPUS, 'prometheus'), pkgDir, join(work, STAND_IN)] };
}

/** The sample `Pelorus` of the bundle's CSV (alm-examples). */
export function pelorusSample(bundle: RegistryV1Bundle): HelmCr {
  const examples = JSON.parse(bundle.csv.annotations['alm-examples'] ?? '[]') as HelmCr[];
  const sample = examples.find((e) => e.kind === 'Pelorus');
  if (sample === undefined) throw new Error('the Pelorus bundle has no Pelorus example');
  return sample;
}

/** Waits until a Pelorus kind's CR says Deployed; on time out, `describe()` says why. */
export async function deployedCr(client: KubeClient, kind: string, namespace: string, name: string, timeoutMs: number, describe: () => Promise<string>): Promise<HelmCr> {
  try {
    return await eventually(
      `${kind} ${namespace}/${name} Deployed`,
      async () => {
        const cr = await client.get<HelmCr>({ apiVersion: `${PELORUS_GROUP}/v1alpha1`, kind, namespace, name });
        return findCondition(cr.status?.conditions, 'Deployed')?.status === 'True' ? cr : undefined;
      },
      timeoutMs,
      1000,
    );
  } catch (err) {
    const cr = await client.find<HelmCr>({ apiVersion: `${PELORUS_GROUP}/v1alpha1`, kind, namespace, name });
    throw new Error(`${String(err)}\nstatus: ${JSON.stringify(cr?.status?.conditions)}\n${await describe()}`, { cause: err });
  }
}

/** The kinds of `objects` that exist in the cluster, and those that do not. */
export async function liveKinds(client: KubeClient, objects: readonly KubeObject[], namespace: string): Promise<{ kinds: Set<string>; missing: string[] }> {
  const kinds = new Set<string>();
  const missing: string[] = [];
  for (const o of objects) {
    const live = await client.find({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace ?? namespace, name: o.metadata.name ?? '' });
    if (live === undefined) missing.push(`${o.kind} ${o.metadata.name ?? ''}`);
    else kinds.add(o.kind);
  }
  return { kinds, missing };
}

/** The chart's objects whose APIs only OpenShift serves (Routes, ImageStreams). */
export function openShiftOnly(o: KubeObject): boolean {
  return ['route.openshift.io', 'image.openshift.io'].includes(o.apiVersion.split('/')[0] ?? '');
}
