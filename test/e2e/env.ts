/**
 * The e2e tests' view of the local control plane that `npm test` (hack/test.sh) brings up:
 * its kubeconfig comes in BINNACLE_E2E_KUBECONFIG. Running an e2e file without it is an
 * error, not a skip: a test that cannot reach its cluster has not passed.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { parse as parseYaml, stringify } from 'yaml';
import { startManager, type ManagerOptions, type RunningManager } from '../../src/controllers/manager.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import type { ObjectRef } from '../../src/kube/types.js';
import { managerLogger } from './manager-log.js';

const run = promisify(execFile);

export function e2eKubeconfig(): string {
  const path = process.env.BINNACLE_E2E_KUBECONFIG;
  if (path === undefined || path === '') {
    throw new Error('BINNACLE_E2E_KUBECONFIG is not set: run e2e tests through `npm test` (hack/test.sh), which starts the control plane');
  }
  return path;
}

/** Runs the CLI in this process against the e2e cluster; answers what it printed and its exit code. */
export async function binnacle(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  // Loaded here, not at the top: most e2e files never run the CLI in process.
  const { run } = await import('../../src/cli/main.js');
  let out = '';
  let err = '';
  const code = await run([...args, '--kubeconfig', e2eKubeconfig()], { logger: pino({ level: 'silent' }), out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

export async function e2eClient(): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: e2eKubeconfig() }));
}

/**
 * A manager in the test's process, as `binnacle manager` runs it, keeping its data under
 * WORK/manager and its log, named `name`, after the run (manager-log.ts).
 */
export function startE2eManager(name: string, client: KubeClient, work: string, options: Partial<ManagerOptions> = {}): Promise<RunningManager> {
  return startManager({ client, logger: managerLogger(name), dataDir: join(work, 'manager'), healthTimeoutMs: 30_000, workers: 2, ...options });
}

/**
 * The end of an e2e file that ran a manager: its extensions removed while the manager still runs
 * (so their BundleDeployments uninstall), then `remove` deleted in order (one already gone is
 * fine), the manager stopped, the client closed and `work` deleted.
 */
export async function stopE2e(o: { client: KubeClient; manager: RunningManager | undefined; work: string; remove?: ObjectRef[] }): Promise<void> {
  if (o.manager !== undefined) await removeAllExtensions(o.client);
  for (const ref of o.remove ?? []) await o.client.delete(ref).catch(() => undefined);
  await o.manager?.stop();
  o.client.close();
  await rm(o.work, { recursive: true, force: true });
}

/** What adminInstaller made for `ns`, for stopE2e to remove: its ClusterRoleBinding and the namespace. */
export function adminInstallerObjects(ns: string): ObjectRef[] {
  return [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${ns}-installer` },
    { apiVersion: 'v1', kind: 'Namespace', name: ns },
  ];
}

/** `host:port` of the e2e cluster's OCI registry. */
export function e2eRegistry(): string {
  const reg = process.env.BINNACLE_E2E_REGISTRY;
  if (reg === undefined || reg === '') throw new Error('BINNACLE_E2E_REGISTRY is not set: run e2e tests through `npm test` (hack/test.sh)');
  return reg;
}

/**
 * A namespace with a ServiceAccount `installer` bound to cluster-admin (ClusterRoleBinding
 * `<ns>-installer`): what tests install through when permissions are not what they test.
 */
export async function adminInstaller(client: KubeClient, ns: string): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'installer', namespace: ns } });
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${ns}-installer` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: ns }],
  });
}

/**
 * Deletes every PlatformOperator (whose extensions only it may remove) and every
 * ClusterExtension, and waits (while the manager still runs) until they are gone.
 */
export async function removeAllExtensions(client: KubeClient, timeoutMs = 180_000): Promise<void> {
  const apiVersion = 'binnacle.dev/v1alpha1';
  for (const po of (await client.list(apiVersion, 'PlatformOperator')).items) await client.delete({ apiVersion, kind: 'PlatformOperator', name: po.metadata.name ?? '' });
  for (const ce of (await client.list(apiVersion, 'ClusterExtension')).items) {
    if (ce.metadata.ownerReferences?.some((r) => r.kind === 'PlatformOperator') !== true) await client.delete({ apiVersion, kind: 'ClusterExtension', name: ce.metadata.name ?? '' });
  }
  await eventually('extensions gone', async () => ((await client.list(apiVersion, 'ClusterExtension')).items.length === 0 ? true : undefined), timeoutMs).catch(() => undefined);
}

/** Runs the real kubectl against the e2e cluster. */
export async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', e2eKubeconfig(), ...args], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/**
 * Writes `file`: a kubeconfig for the e2e cluster that authenticates as a ServiceAccount, with a
 * token from the TokenRequest API: how a local process runs as a Pod of that ServiceAccount would.
 */
export async function serviceAccountKubeconfig(namespace: string, name: string, file: string): Promise<void> {
  const token = (await kubectl('create', 'token', name, '-n', namespace, '--duration', '2h')).trim();
  const admin = parseYaml(await readFile(e2eKubeconfig(), 'utf8')) as { clusters: { name: string }[] };
  const cluster = admin.clusters[0];
  if (cluster === undefined) throw new Error(`${e2eKubeconfig()} names no cluster`);
  const user = `system:serviceaccount:${namespace}:${name}`;
  await writeFile(
    file,
    stringify({ apiVersion: 'v1', kind: 'Config', clusters: [cluster], users: [{ name: user, user: { token } }], contexts: [{ name: user, context: { cluster: cluster.name, user } }], 'current-context': user }),
    { mode: 0o600 },
  );
}

/** A namespace name unique to this run. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** Polls `check` until it answers a value, or fails with `what` after `timeoutMs`. */
/**
 * How long a deleted CRD may take to go. The API server deletes its custom resources first, and
 * when that list meets the resource's watch cache still initializing ("could not list instances:
 * storage is (re)initializing", Terminating=True InstanceDeletionFailed), its CRD finalizer retries
 * with the workqueue's exponential backoff: minutes, for a CRD deleted seconds after it was made.
 * operator-controller's e2e waits 5 minutes for the same reason (operator-controller#1437).
 */
export const CRD_DELETION_TIMEOUT_MS = 300_000;

export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastErr instanceof Error ? ` (last error: ${lastErr.message})` : ''}`);
}
