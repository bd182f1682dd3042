/**
 * The beacon chart operator of issue 29 §3 (fixtures/chart-operator, v1 to v3), shared by the e2e
 * tests that release it with `binnacle helm release` and check what its operator deployed:
 * chart-operator-upgrade (the operator as a local process) and real-node (the operator's Pod).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { objectsOf } from '../../src/publish/helm-bundle/render.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BINNACLE = join(ROOT, 'bin', 'binnacle.js');
const CHARTS = join(import.meta.dirname, 'fixtures', 'chart-operator');
export const BEACON_GROUP = 'beacon.helm.binnacle.dev';
export const BEACON_CRD = `beacons.${BEACON_GROUP}`;
/** The catalog's olm.semver template before the first release. */
export const BEACON_TEMPLATE = '# the beacon operator catalog\nschema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: false\nstable:\n  bundles: []\n';

export interface Beacon extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: Parameters<typeof findCondition>[0]; deployedRelease?: { name: string; manifest: string } };
}

export interface BeaconRelease {
  /** The fixture chart version released. */
  version: 'v1' | 'v2' | 'v3';
  /** The catalog's semver template file. */
  template: string;
  /** Registry and repository prefix the bundle and the catalog are pushed to. */
  registry: string;
  repo: string;
  cacheDir: string;
  /** Binnacle's image the operator's Deployment runs (helm release's default otherwise). */
  image?: string;
}

/** `binnacle helm release` of one fixture chart version; answers its output and the catalog image by digest. */
export async function releaseBeacon(r: BeaconRelease): Promise<{ stdout: string; catalog: string }> {
  const args = ['helm', 'release', join(CHARTS, r.version), '--kind', 'Beacon', '--template', r.template, '--bundle-repository', `${r.registry}/${r.repo}/beacon-bundle`, '--catalog-image', `${r.registry}/${r.repo}/catalog:latest`, '--cache-dir', r.cacheDir, '-o', 'json', ...(r.image === undefined ? [] : ['--image', r.image])];
  const { stdout } = await run(process.execPath, [BINNACLE, ...args], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  const out = JSON.parse(stdout) as { catalogImage: string };
  return { stdout, catalog: out.catalogImage };
}

/**
 * The Beacon if it is Deployed with chart `version`: its release's manifest and the ConfigMap it
 * rendered say so (with that ConfigMap's data); else undefined.
 */
export async function beaconDeployedAt(client: KubeClient, namespace: string, name: string, version: string): Promise<{ cr: Beacon; data: Record<string, string> } | undefined> {
  const cr = await client.get<Beacon>({ apiVersion: `${BEACON_GROUP}/v1alpha1`, kind: 'Beacon', namespace, name });
  if (findCondition(cr.status?.conditions, 'Deployed')?.status !== 'True') return undefined;
  const manifest = objectsOf(cr.status?.deployedRelease?.manifest ?? '');
  if (!manifest.some((o) => o.kind === 'ConfigMap' && o.metadata.labels?.['helm.sh/chart'] === `beacon-${version}`)) return undefined;
  const cm = await client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: `${name}-beacon` });
  const data = (cm?.data ?? {}) as Record<string, string>;
  return data.chartVersion === version ? { cr, data } : undefined;
}

/** The Beacon's status conditions, for a failure message. */
export async function beaconConditions(client: KubeClient, namespace: string, name: string): Promise<string> {
  const cr = await client.find<Beacon>({ apiVersion: `${BEACON_GROUP}/v1alpha1`, kind: 'Beacon', namespace, name });
  return JSON.stringify(cr?.status?.conditions);
}
