/**
 * What the operator e2e tests share: corpus packages published as bundle images and one catalog
 * image to the e2e registry, a manager running against the e2e cluster serving that catalog,
 * and helpers to create ClusterExtensions and wait for them. `OperatorHarness.start` in
 * `before`, `stop` in `after` (extensions first, while the manager still runs).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { Logger } from 'pino';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../../src/declcfg/index.js';
import { publishPackages, type PublishResult } from '../../src/publish/packages.js';
import { startManager, type RunningManager } from '../../src/controllers/manager.js';
import { neededByLabel } from '../../src/installed/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition } from '../../src/kube/types.js';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../../src/api/types.js';
import { e2eClient, e2eRegistry, eventually, removeAllExtensions, uniqueName } from './env.js';
import { managerLogger } from './manager-log.js';
import { CORPUS, createExtension, deploymentAvailable, describeExtension, getExtension, installedAt, removeExtension, serviceAccount, type Cleanup } from './extensions.js';

export { CORPUS };

export interface HarnessOptions {
  /** Package directories to publish as one catalog: corpus package names, or absolute paths. */
  packages: string[];
  /** A catalog image published already (by `binnacle helm release`): served instead of `packages`. */
  catalogImage?: string;
  /** Prefix of the catalog's (unique) name and image repository. */
  prefix: string;
  /** Rewrites the catalog before it is built (e.g. to raise a bundle's minKubeVersion). */
  transform?: (cfg: DeclarativeConfig) => void;
  healthTimeoutMs?: number;
}

export class OperatorHarness {
  /** Undone in reverse order by `stop`, after every extension is gone. */
  readonly cleanup: Cleanup = [];
  readonly logger: Logger;

  private constructor(
    readonly client: KubeClient,
    readonly manager: RunningManager,
    readonly dataDir: string,
    readonly catalogName: string,
    readonly published: PublishResult,
    logger: Logger,
  ) {
    this.logger = logger;
  }

  static async start(o: HarnessOptions): Promise<OperatorHarness> {
    // Kept after the run as .cache/test-artifacts/manager-PREFIX.log (manager-log.ts).
    const logger = managerLogger(o.prefix);
    const client = await e2eClient();
    const dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-manager-'));
    const catalogName = uniqueName(o.prefix);
    const published =
      o.catalogImage !== undefined
        ? { catalog: o.catalogImage, bundles: [], config: emptyDeclarativeConfig(), rejected: [] }
        : await publishPackages({
            packages: o.packages.map((p) => (isAbsolute(p) ? p : join(CORPUS, p))),
            registry: e2eRegistry(),
            repository: catalogName,
            ...(o.transform === undefined ? {} : { transform: o.transform }),
          });
    const manager = await startManager({ client, logger, dataDir, healthTimeoutMs: o.healthTimeoutMs ?? 60_000, workers: 4 });
    await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
    return new OperatorHarness(client, manager, dataDir, catalogName, published, logger);
  }

  async stop(): Promise<void> {
    // Extensions first, while their ServiceAccounts still exist and the manager still runs…
    await removeAllExtensions(this.client);
    // …then namespaces, bindings and the catalog.
    for (const fn of this.cleanup.reverse()) await fn().catch(() => undefined);
    await this.client.delete({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: this.catalogName }).catch(() => undefined);
    await this.manager.stop();
    this.client.close();
    await rm(this.dataDir, { recursive: true, force: true });
  }

  /** A namespace with ServiceAccount `name`, bound to cluster-admin when `admin`; removed by `stop`. */
  async serviceAccount(namespace: string, name: string, admin: boolean): Promise<void> {
    await serviceAccount(this.client, this.cleanup, namespace, name, admin);
  }

  /** The selector that limits an extension to this harness's catalog. */
  get catalogSelector(): { matchLabels: Record<string, string> } {
    return { matchLabels: { 'olm.operatorframework.io/metadata.name': this.catalogName } };
  }

  async createExtension(name: string, namespace: string, catalog: ClusterExtension['spec']['source']['catalog'], sa = 'installer', extra: Partial<ClusterExtension['spec']> = {}): Promise<void> {
    await createExtension(this.client, this.catalogName, name, namespace, catalog, sa, extra);
  }

  async extension(name: string): Promise<ClusterExtension> {
    return getExtension(this.client, name);
  }

  /** Waits until the extension is Installed at `version` and settled. */
  async installedAt(name: string, version: string, timeoutMs = 180_000): Promise<ClusterExtension> {
    return installedAt(this.client, name, version, timeoutMs);
  }

  /** Waits until the extension's resolution failed for its current generation; answers the explanation. */
  async resolutionFailed(name: string, timeoutMs = 60_000): Promise<ClusterExtension> {
    return eventually(
      `${name} resolution refused`,
      async () => {
        const ce = await this.extension(name);
        const p = findCondition(ce.status?.conditions, 'Progressing');
        return ce.status?.observedGeneration === ce.metadata.generation && p?.status === 'True' && p.message.startsWith('resolution failed') ? ce : undefined;
      },
      timeoutMs,
      500,
    );
  }

  /** The BundleDeployments an extension needs. */
  async bundleDeploymentsOf(name: string): Promise<BundleDeployment[]> {
    return (await this.client.list<BundleDeployment>(API_VERSION, 'BundleDeployment', { labelSelector: neededByLabel(name) })).items;
  }

  /** The extension's and its BundleDeployments' conditions, for failure messages. */
  async describeExtension(name: string): Promise<string> {
    return describeExtension(this.client, name);
  }

  /** Deletes the extension and waits until it (and so whatever it alone needed) is gone. */
  async removeExtension(name: string): Promise<void> {
    await removeExtension(this.client, name);
  }

  async deploymentAvailable(namespace: string, name: string): Promise<boolean> {
    return deploymentAvailable(this.client, namespace, name);
  }
}
