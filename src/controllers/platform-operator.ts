/**
 * PlatformOperator reconciler: the packages a cluster must always have. Each becomes a
 * ClusterExtension owned by the PlatformOperator (controller reference and Binnacle's owner
 * labels, which the admission policy in `platform-protection` and cluster-wide resolution read);
 * a package taken off the list has its extension removed, and the status says so until the
 * next change. Status reports every package's health with its reason (`platform-health`), and
 * one aggregated `Available` condition (with `Progressing`, `Degraded`, `Upgradeable`) that the
 * cluster's health reporting reads — on OpenShift also as a ClusterOperator (`cluster-operator`).
 *
 * Steps: Validate → EnsureExtensions → RemoveDropped → Report → ClusterOperator, and the status
 * written once after them (reconcileSteps): an unexpected error is said in `Available` and
 * written, then retried with backoff.
 */
import type { Logger } from 'pino';
import type { Discovery, ObjectReader, ObjectWriter, StatusWriter } from '../kube/ports.js';
import type { KeyMapper, ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import {
  API_VERSION,
  LABEL_OWNER_KIND,
  LABEL_OWNER_NAME,
  type BundleDeployment,
  type ClusterExtension,
  type PlatformOperator,
  type PlatformPackageStatus,
} from '../api/types.js';
import { boundedName } from '../api/names.js';
import { extensionsNamedOn } from '../installed/index.js';
import { applyStatus, Conditions, CONTINUE, methodSteps, reconcileSteps, sameStatus, stop, type StepOutcome } from './common.js';
import { errorMessage } from '../util/errors.js';
import { clusterOperatorStatus, writeClusterOperator } from './cluster-operator.js';
import { aggregateConditions, packageHealth } from './platform-health.js';
import { platformOwner, PLATFORM_OWNER_KIND } from '../actions/platform-protection.js';

export function platformExtensionName(po: string, pkg: string): string {
  return boundedName(`${po}-${pkg}`);
}

/** The installer a PlatformOperator without spec.serviceAccount installs as: install-self's, in the manager's namespace. */
const DEFAULT_INSTALLER = 'binnacle-installer';

/**
 * Maps a BundleDeployment to the PlatformOperators whose extensions need it, so that a
 * package's health changing reaches the PlatformOperator's status.
 */
export function platformOperatorsOfDeployment(extension: (name: string) => Pick<KubeObject, 'metadata'> | undefined): KeyMapper<KubeObject> {
  return (bd) => {
    const owners = extensionsNamedOn(bd).flatMap((name) => {
      const ce = extension(name);
      const po = ce === undefined ? undefined : platformOwner(ce);
      return po === undefined ? [] : [po];
    });
    return [...new Set(owners)];
  };
}

interface State {
  po: PlatformOperator;
  name: string;
  conditions: Conditions;
  logger: Logger;
  /** Extension name → package, for every package in the spec. */
  wanted: Map<string, string>;
  owned: ClusterExtension[];
  deployments: Map<string, BundleDeployment[]>;
  packages: PlatformPackageStatus[];
  /** Write status after the steps (reconcileSteps). */
  writeStatus: boolean;
  /** Whether Report ran: until then (an invalid spec, an error before it) the last status's packages stay. */
  reported: boolean;
}

/** What the reconciler asks of the cluster: its PlatformOperator and extensions read, the extensions applied and deleted, its status and ClusterOperator written. */
export type PlatformOperatorClient = Pick<ObjectReader, 'get' | 'list'> & Pick<ObjectWriter, 'apply' | 'delete'> & Pick<StatusWriter, 'applyStatus'> & Pick<Discovery, 'resourceFor'>;

export class PlatformOperatorReconciler implements Reconciler {
  /** The manager's namespace (default binnacle-system): where the default installer lives, where nothing is installed. */
  private readonly managerNamespace: string;

  constructor(
    private readonly client: PlatformOperatorClient,
    o: { managerNamespace?: string } = {},
  ) {
    this.managerNamespace = o.managerNamespace ?? 'binnacle-system';
  }

  private installer(po: PlatformOperator): { name: string; namespace: string } {
    return po.spec.serviceAccount ?? { name: DEFAULT_INSTALLER, namespace: this.managerNamespace };
  }

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let po: PlatformOperator;
    try {
      po = await this.client.get<PlatformOperator>({ apiVersion: API_VERSION, kind: 'PlatformOperator', name: req.name });
    } catch (err) {
      if (isNotFound(err)) return undefined; // owned ClusterExtensions (and the ClusterOperator) go with it (ownerReferences)
      throw err;
    }
    const state: State = {
      po,
      name: po.metadata.name ?? '',
      conditions: new Conditions(po.status?.conditions, po.metadata.generation),
      logger: ctx.logger,
      wanted: new Map(),
      owned: [],
      deployments: new Map(),
      packages: [],
      writeStatus: true,
      reported: false,
    };
    const steps = methodSteps<State, PlatformOperatorReconciler>(this, ['validate', 'ensureExtensions', 'removeDropped', 'report', 'clusterOperator']);
    return reconcileSteps(steps, state, ctx.logger, {
      write: (st) => this.writeStatus(st),
      // Anything a step did not expect: said in status, then retried with backoff.
      onError: (st, err) => {
        st.conditions.set('Available', false, 'ReconcileFailed', errorMessage(err));
      },
    });
  }

  /** The one status write of a reconcile; none when nothing in it changed. */
  private async writeStatus(s: State): Promise<void> {
    const status = { conditions: s.conditions.toArray(), observedGeneration: s.po.metadata.generation, packages: s.reported ? s.packages : (s.po.status?.packages ?? []) };
    if (sameStatus(status, { packages: [], ...s.po.status })) return;
    await applyStatus(this.client, s.po, status);
  }

  private packages(s: State): PlatformOperator['spec']['packages'] {
    return Array.isArray(s.po.spec.packages) ? s.po.spec.packages : [];
  }

  validate(s: State): Promise<StepOutcome> {
    return Promise.resolve(this.checkSpec(s));
  }

  private checkSpec(s: State): StepOutcome {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const [i, p] of this.packages(s).entries()) {
      if (typeof p.name !== 'string' || p.name === '') problems.push(`spec.packages[${i}].name: required`);
      else if (seen.has(p.name)) problems.push(`spec.packages[${i}].name: package "${p.name}" is listed twice`);
      else seen.add(p.name);
      // Nothing is installed in the manager's namespace, where the default installer lives (its
      // BundleDeployment would be refused there: bundle-deployment.ts managerNamespaceProblems).
      const into = p.namespace === undefined || p.namespace === '' ? this.installer(s.po).namespace : p.namespace;
      if (into === this.managerNamespace) {
        const why = p.namespace === undefined || p.namespace === '' ? ` (the namespace of the installer ${s.po.spec.serviceAccount === undefined ? `${DEFAULT_INSTALLER}, the default` : 'spec.serviceAccount names'}) ` : ' ';
        problems.push(`spec.packages[${i}].namespace: "${into}"${why}is Binnacle's own namespace, where no operator is installed: name another`);
      }
    }
    if (problems.length === 0) return CONTINUE;
    s.conditions.set('Available', false, 'InvalidSpec', problems.join('; '));
    return stop();
  }

  async ensureExtensions(s: State): Promise<StepOutcome> {
    const sa = this.installer(s.po);
    for (const p of this.packages(s)) {
      const ceName = platformExtensionName(s.name, p.name);
      s.wanted.set(ceName, p.name);
      const catalog: ClusterExtension['spec']['source']['catalog'] = { packageName: p.name };
      if (p.channel !== undefined) catalog.channels = [p.channel];
      if (p.version !== undefined) catalog.version = p.version;
      await this.client.apply(
        {
          apiVersion: API_VERSION,
          kind: 'ClusterExtension',
          metadata: {
            name: ceName,
            // The owner labels mark it as a platform operator's for admission and for cluster-wide resolution.
            labels: { [LABEL_OWNER_KIND]: PLATFORM_OWNER_KIND, [LABEL_OWNER_NAME]: s.name },
            ownerReferences: [{ apiVersion: API_VERSION, kind: PLATFORM_OWNER_KIND, name: s.name, uid: s.po.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
          },
          // The ServiceAccount stays in its own namespace wherever the package is installed.
          spec: { namespace: p.namespace ?? sa.namespace, serviceAccount: { name: sa.name, namespace: sa.namespace }, source: { sourceType: 'Catalog', catalog } },
        },
        { force: true },
      );
    }
    s.owned = (await this.client.list<ClusterExtension>(API_VERSION, 'ClusterExtension', { labelSelector: `${LABEL_OWNER_KIND}=${PLATFORM_OWNER_KIND},${LABEL_OWNER_NAME}=${s.name}` })).items;
    // A package's health is that of every BundleDeployment its extension needs, shared dependencies included.
    const bds = (await this.client.list<BundleDeployment>(API_VERSION, 'BundleDeployment')).items;
    const owners = new Set(s.owned.map((ce) => ce.metadata.name ?? ''));
    for (const bd of bds) {
      for (const ce of extensionsNamedOn(bd)) if (owners.has(ce)) s.deployments.set(ce, [...(s.deployments.get(ce) ?? []), bd]);
    }
    for (const [ceName, pkg] of s.wanted) {
      const ce = s.owned.find((x) => x.metadata.name === ceName);
      s.packages.push(packageHealth(pkg, ceName, ce, s.deployments.get(ceName) ?? []));
    }
    return CONTINUE;
  }

  /** Day-2 removal: a package taken off the list is uninstalled, and the status says so. */
  async removeDropped(s: State): Promise<StepOutcome> {
    const removing = new Set<string>();
    for (const ce of s.owned) {
      const ceName = ce.metadata.name ?? '';
      if (s.wanted.has(ceName)) continue;
      const pkg = ce.spec.source.catalog.packageName;
      removing.add(pkg);
      if (ce.metadata.deletionTimestamp === undefined) {
        s.logger.info({ package: pkg, extension: ceName }, 'package removed from the PlatformOperator: uninstalling it');
        await this.client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName });
      }
      s.packages.push({ name: pkg, extension: ceName, installed: false, healthy: false, reason: 'Removing', message: `removed from spec.packages: uninstalling ClusterExtension ${ceName}` });
    }
    // Removals that finished stay in the status until the spec changes again.
    const listed = new Set(this.packages(s).map((p) => p.name));
    const sameSpec = s.po.status?.observedGeneration === s.po.metadata.generation;
    for (const prev of s.po.status?.packages ?? []) {
      if (listed.has(prev.name) || removing.has(prev.name)) continue;
      if (prev.reason === 'Removing' || (prev.reason === 'Removed' && sameSpec)) {
        const done: PlatformPackageStatus = { name: prev.name, installed: false, healthy: false, reason: 'Removed', message: 'removed from spec.packages and uninstalled' };
        if (prev.extension !== undefined) done.extension = prev.extension;
        s.packages.push(done);
      }
    }
    return CONTINUE;
  }

  report(s: State): Promise<StepOutcome> {
    return Promise.resolve(this.aggregate(s));
  }

  private aggregate(s: State): StepOutcome {
    for (const c of aggregateConditions(s.packages)) s.conditions.set(c.type, c.status, c.reason, c.message);
    s.reported = true;
    return CONTINUE;
  }

  async clusterOperator(s: State): Promise<StepOutcome> {
    const sa = this.installer(s.po);
    const namespaces = this.packages(s).map((p) => p.namespace ?? sa.namespace);
    await writeClusterOperator(this.client, s.po, clusterOperatorStatus(s.po, s.conditions.toArray(), s.packages, namespaces));
    const settled = s.packages.every((p) => p.reason === 'Healthy' || p.reason === 'Removed');
    return stop(settled ? undefined : { requeueAfterMs: 10_000 });
  }
}
