/**
 * HelmOperator reconciler: a chart (OCI or repository, a version range) served as an operator.
 * It fetches the highest chart version in range, gives each kind a CRD whose `spec` schema
 * comes from the chart's (or subchart's) values.schema.json or values.yaml, and runs the Helm
 * release reconciler for each kind's custom resources. A new chart version in range (looked
 * for every poll interval) upgrades every CR.
 *
 * Trust: creating a HelmOperator is a cluster admin's act (it is cluster-scoped); creating its
 * kinds' custom resources is an app team's. So every release acts as the ServiceAccount the
 * HelmOperator names (in the CR's own namespace by default), is confined to that namespace
 * unless `allowedObjects` says more, and nothing falls back to the manager's identity: without
 * `spec.serviceAccount` no kind is served. A CRD another owner holds is never overwritten. Each
 * operator comes with a ClusterRole for its kinds that aggregates to Binnacle's app-team role.
 * Deleting a HelmOperator uninstalls its CRs' releases (or orphans them, by `deletionPolicy`)
 * before its finalizer goes, so no CR or namespace is left Terminating.
 *
 * Steps: Get → (Delete) → Identity → FetchChart → Schemas+CRDs → Serve kinds → Status.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { KubeClient } from '../kube/client.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import type { ControllerMetrics } from '../kube/metrics.js';
import { API_VERSION, type HelmOperator, type HelmOperatorKindSpec } from '../api/types.js';
import { describeOwner } from '../apply/index.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { applyStatus, Conditions, ensureFinalizer, isDeleting, removeFinalizer } from './common.js';
import { kindKey, runHelmKind, type RunningKind } from './helm-kinds.js';
import { parseDuration, UNINSTALL_FINALIZER, type CurrentChart, type HelmKind, type ReleaseIdentity } from './helm-release.js';

/** Held until the HelmOperator's custom resources are uninstalled (or orphaned). */
export const HELM_OPERATOR_FINALIZER = 'binnacle.dev/helm-operator-cleanup';
/** Marks the CRDs and ClusterRoles a HelmOperator made, with its name. */
export const HELM_OPERATOR_LABEL = 'binnacle.dev/helm-operator';
/** The label by which Binnacle's app-team ClusterRole aggregates each operator's role for its kinds. */
export const AGGREGATE_TO_APP_TEAM_LABEL = 'binnacle.dev/aggregate-to-app-team';
/** The floor of a CR's reconcile-period annotation when the HelmOperator sets none. */
export const DEFAULT_MIN_RECONCILE_PERIOD_MS = 60_000;

export interface HelmOperatorReconcilerOptions {
  client: KubeClient;
  logger: Logger;
  cacheDir: string;
  metrics?: ControllerMetrics;
  healthTimeoutMs?: number;
}

interface ServedKind {
  running: RunningKind;
  /** The kind's spec as last started: a change restarts it. */
  spec: string;
}

interface ServedOperator {
  /** Undefined while only uninstalling (the manager restarted during a deletion). */
  chart: CurrentChart | undefined;
  kinds: Map<string, ServedKind>;
}

const DEFAULT_POLL_MINUTES = 10;

/** The ClusterRole for app teams that a HelmOperator makes for its kinds. */
export function appTeamRoleName(helmOperator: string): string {
  return `binnacle-helm-operator-${helmOperator}-edit`;
}

export class HelmOperatorReconciler implements Reconciler {
  private readonly served = new Map<string, ServedOperator>();

  constructor(private readonly o: HelmOperatorReconcilerOptions) {}

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let hop: HelmOperator | undefined;
    try {
      hop = await this.o.client.get<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name: req.name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (hop === undefined) {
      await this.stopOperator(req.name);
      return undefined;
    }
    const conditions = new Conditions(hop.status?.conditions, hop.metadata.generation);
    const pollMs = (hop.spec.chart.pollIntervalMinutes ?? DEFAULT_POLL_MINUTES) * 60_000;
    const writeStatus = (extra: Record<string, unknown>): Promise<unknown> =>
      applyStatus(this.o.client, hop, { ...extra, conditions: conditions.toArray(), observedGeneration: hop.metadata.generation });
    if (isDeleting(hop)) return this.remove(hop, conditions, writeStatus, ctx.logger);
    await ensureFinalizer(this.o.client, hop, HELM_OPERATOR_FINALIZER);
    if (hop.spec.serviceAccount === undefined) {
      // Once, releases fell back to the manager's own identity: no longer. Nothing is served
      // (and nothing uninstalled) until the operator names who its releases act as.
      await this.stopOperator(req.name);
      conditions.set('Ready', false, 'ServiceAccountRequired', 'spec.serviceAccount is required: name the ServiceAccount each release acts as (in its custom resource\'s namespace; with namespace, one for all); releases never act as the manager');
      await writeStatus({});
      return { failed: true };
    }

    const { fetchChart } = await import('../helm/chart-source/index.js');
    const { helmEngine } = await import('../helm/engine.js');
    let fetched;
    try {
      const c = hop.spec.chart;
      const ref =
        c.oci !== undefined
          ? { type: 'oci' as const, ref: c.oci.ref, ...(c.version === undefined ? {} : { version: c.version }), ...(c.oci.insecure === true ? { insecure: true } : {}) }
          : c.repository !== undefined
            ? { type: 'repo' as const, url: c.repository.url, chart: c.repository.name, ...(c.version === undefined ? {} : { version: c.version }) }
            : undefined;
      if (ref === undefined) throw new BinnacleError('HELM_OPERATOR_SPEC', 'spec.chart: set oci or repository');
      fetched = await fetchChart(ref, { cacheDir: this.o.cacheDir, logger: ctx.logger });
    } catch (err) {
      conditions.set('Ready', false, 'ChartUnavailable', errorMessage(err));
      await writeStatus({});
      return { requeueAfterMs: Math.min(pollMs, 60_000) };
    }

    // One CRD per kind, its spec schema from the values of the chart (or subchart) serving it.
    const { valuesSchema, crdForChart, pluralForKind } = await import('../helm/schema/index.js');
    let charts;
    try {
      charts = await helmEngine().inspect(fetched.path);
    } catch (err) {
      conditions.set('Ready', false, 'InvalidChart', errorMessage(err));
      await writeStatus({ chart: { name: fetched.name, version: fetched.version, digest: fetched.digest } });
      return { requeueAfterMs: pollMs };
    }
    const root = charts[0]?.path ?? fetched.name;
    const kindStatus: { kind: string; crd: string; schema: string; warnings: number }[] = [];
    try {
      for (const k of hop.spec.kinds) {
        const path = k.chart === undefined ? root : `${root}/${k.chart.split('/').map((p) => `charts/${p}`).join('/')}`;
        const desc = charts.find((c) => c.path === path);
        if (desc === undefined) throw new BinnacleError('HELM_OPERATOR_SUBCHART', `kind ${k.kind}: chart ${fetched.name} ${fetched.version} has no subchart ${k.chart ?? ''} (has ${charts.map((c) => c.path).join(', ')})`);
        const schema = valuesSchema({ valuesYaml: desc.valuesYaml ?? '', ...(desc.schema === undefined || desc.schema === '' ? {} : { schemaJson: desc.schema }), chartName: desc.path });
        const plural = k.plural ?? pluralForKind(k.kind);
        const crd = crdForChart({
          group: k.group,
          version: k.version,
          kind: k.kind,
          plural,
          scope: 'Namespaced',
          spec: schema.schema,
          description: `${k.kind}: a Helm release of ${desc.metadata.name}; its spec is the chart's values.`,
        });
        await this.assertCrdIsOurs(crd.metadata.name ?? '', hop.metadata.name ?? '');
        await this.o.client.apply({ ...crd, metadata: { ...crd.metadata, labels: { ...(crd.metadata.labels ?? {}), [HELM_OPERATOR_LABEL]: hop.metadata.name ?? '' } } }, { force: true });
        await this.waitEstablished(crd.metadata.name ?? '');
        kindStatus.push({ kind: k.kind, crd: crd.metadata.name ?? '', schema: schema.source, warnings: schema.warnings.length });
      }
      await this.applyAppTeamRole(hop, kindStatus.map((k) => k.crd));
    } catch (err) {
      conditions.set('Ready', false, err instanceof BinnacleError && err.code === 'HELM_OPERATOR_CRD_OWNED' ? 'CRDOwnedElsewhere' : 'CRDFailed', errorMessage(err));
      await writeStatus({ chart: { name: fetched.name, version: fetched.version, digest: fetched.digest }, kinds: kindStatus });
      if (err instanceof BinnacleError) return { requeueAfterMs: pollMs };
      throw err;
    }
    this.o.client.invalidateDiscovery();

    this.serve(hop, { path: fetched.path, digest: fetched.digest, version: fetched.version }, ctx.logger);
    conditions.set('Ready', true, 'Serving', `serving ${hop.spec.kinds.map((k) => k.kind).join(', ')} with ${fetched.name} ${fetched.version}`);
    await writeStatus({ chart: { name: fetched.name, version: fetched.version, digest: fetched.digest }, kinds: kindStatus });
    return { requeueAfterMs: pollMs };
  }

  /**
   * Starts, restarts or stops kinds to match the spec; a new chart digest looks at every CR
   * again. Without a chart (uninstalling after a restart) the kinds run only to finalize.
   */
  private serve(hop: HelmOperator, chart: CurrentChart | undefined, logger: Logger): void {
    const name = hop.metadata.name ?? '';
    const op = this.served.get(name) ?? { chart, kinds: new Map<string, ServedKind>() };
    this.served.set(name, op);
    const chartChanged = chart !== undefined && op.chart?.digest !== chart.digest;
    if (chart !== undefined) op.chart = chart;
    const wanted = new Map(hop.spec.kinds.map((k) => [kindKey(k), k]));
    for (const [key, served] of op.kinds) {
      if (!wanted.has(key)) {
        void served.running.stop();
        op.kinds.delete(key);
      }
    }
    for (const [key, k] of wanted) {
      const spec = JSON.stringify({ k, sa: hop.spec.serviceAccount, allowed: hop.spec.allowedObjects });
      const current = op.kinds.get(key);
      if (current !== undefined && current.spec === spec) {
        if (chartChanged) current.running.enqueueAll();
        continue;
      }
      if (current !== undefined) void current.running.stop();
      const kind = this.helmKind(hop, k, () => {
        const c = this.served.get(name)?.chart;
        return c === undefined ? undefined : { ...c, ...(k.chart === undefined ? {} : { subchart: k.chart }) };
      });
      const selector = Object.entries(k.selector?.matchLabels ?? {}).map(([a, b]) => `${a}=${b}`).join(',');
      op.kinds.set(key, {
        spec,
        running: runHelmKind(kind, {
          client: this.o.client,
          logger: logger.child({ helmOperator: name, kind: k.kind }),
          ...(this.o.metrics === undefined ? {} : { metrics: this.o.metrics }),
          ...(this.o.healthTimeoutMs === undefined ? {} : { healthTimeoutMs: this.o.healthTimeoutMs }),
          ...(selector === '' ? {} : { selector }),
          maxConcurrentReconciles: k.maxConcurrentReconciles ?? 1,
        }),
      });
    }
  }

  private helmKind(hop: HelmOperator, k: HelmOperatorKindSpec, chart: () => CurrentChart | undefined): HelmKind {
    const period = k.reconcilePeriod === undefined ? undefined : parseDuration(k.reconcilePeriod);
    const sa = hop.spec.serviceAccount;
    const identity: ReleaseIdentity =
      sa === undefined ? { type: 'namespaceServiceAccount', name: 'default' } : sa.namespace === undefined || sa.namespace === '' ? { type: 'namespaceServiceAccount', name: sa.name } : { type: 'serviceAccount', namespace: sa.namespace, name: sa.name };
    const allowed = hop.spec.allowedObjects ?? {};
    return {
      identity,
      scope: { ...(allowed.namespaces === undefined ? {} : { namespaces: allowed.namespaces }), ...(allowed.clusterScopedKinds === undefined ? {} : { clusterScopedKinds: allowed.clusterScopedKinds }) },
      minReconcilePeriodMs: (k.minReconcilePeriod === undefined ? undefined : parseDuration(k.minReconcilePeriod)) ?? DEFAULT_MIN_RECONCILE_PERIOD_MS,
      group: k.group,
      version: k.version,
      kind: k.kind,
      chart,
      ...(k.overrideValues === undefined ? {} : { overrideValues: k.overrideValues }),
      ...(k.valuesFrom === undefined ? {} : { valuesFrom: k.valuesFrom }),
      ...(period === undefined ? {} : { reconcilePeriodMs: period }),
      ...(k.crdPolicy === undefined ? {} : { crdPolicy: k.crdPolicy }),
      ...(k.watchDependentResources === undefined ? {} : { watchDependentResources: k.watchDependentResources }),
    };
  }

  /** A CRD that exists and is not this operator's belongs to someone else: never overwritten. */
  private async assertCrdIsOurs(crdName: string, hopName: string): Promise<void> {
    const live = await this.o.client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crdName });
    if (live === undefined) return;
    const holder = live.metadata.labels?.[HELM_OPERATOR_LABEL];
    if (holder === hopName) return;
    throw new BinnacleError(
      'HELM_OPERATOR_CRD_OWNED',
      `CustomResourceDefinition ${crdName} exists and belongs to ${holder === undefined ? describeOwner(live) : `HelmOperator ${holder}`}; a HelmOperator never overwrites another owner's CRD (serve another group or kind, or delete that CRD if nothing needs it)`,
    );
  }

  /**
   * The ClusterRole that lets an app team write this operator's custom resources, aggregated
   * into Binnacle's app-team role (bound per namespace by a RoleBinding): the kinds' resources
   * only, never their status (the manager's) nor anything else.
   */
  private async applyAppTeamRole(hop: HelmOperator, crdNames: readonly string[]): Promise<void> {
    const name = hop.metadata.name ?? '';
    const rules = crdNames.map((crd) => {
      const dot = crd.indexOf('.');
      return { apiGroups: [crd.slice(dot + 1)], resources: [crd.slice(0, dot)], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] };
    });
    await this.o.client.apply(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: appTeamRoleName(name), labels: { [HELM_OPERATOR_LABEL]: name, [AGGREGATE_TO_APP_TEAM_LABEL]: 'true' } },
        rules,
      },
      { force: true },
    );
  }

  /**
   * Deleting: the CRs' releases are uninstalled (their own finalizers do it, as their
   * ServiceAccounts) or orphaned, then what the operator made (CRDs, its ClusterRole) goes and
   * the finalizer with it. A CR whose uninstall cannot finish is named in status, with the way out.
   */
  private async remove(hop: HelmOperator, conditions: Conditions, writeStatus: (extra: Record<string, unknown>) => Promise<unknown>, logger: Logger): Promise<ReconcileResult | undefined> {
    const name = hop.metadata.name ?? '';
    if (!(hop.metadata.finalizers ?? []).includes(HELM_OPERATOR_FINALIZER)) {
      await this.stopOperator(name);
      return undefined;
    }
    const crs = await this.customResources(hop);
    if (hop.spec.deletionPolicy === 'Orphan') {
      for (const cr of crs) await removeFinalizer(this.o.client, cr, UNINSTALL_FINALIZER);
      await this.stopOperator(name);
      await removeFinalizer(this.o.client, hop, HELM_OPERATOR_FINALIZER);
      logger.info({ helmOperator: name, orphaned: crs.length }, 'HelmOperator deleted; its custom resources and their releases are left in place');
      return undefined;
    }
    if (crs.length > 0) {
      // Their finalizers uninstall; the kinds must run for that (after a restart nothing serves them yet).
      this.serve(hop, undefined, logger);
      for (const cr of crs) {
        if (!isDeleting(cr)) await this.o.client.delete({ apiVersion: cr.apiVersion, kind: cr.kind, namespace: cr.metadata.namespace, name: cr.metadata.name ?? '' });
      }
      const named = crs.slice(0, 5).map((cr) => {
        const stuck = (cr.status as { conditions?: { type: string; status: string; message?: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Irreconcilable' && c.status === 'True');
        return `${cr.kind} ${cr.metadata.namespace ?? ''}/${cr.metadata.name ?? ''}${stuck === undefined ? '' : ` (${stuck.message ?? ''})`}`;
      });
      conditions.set('Ready', false, 'Deleting', `uninstalling ${crs.length} release${crs.length === 1 ? '' : 's'} before the HelmOperator goes: ${named.join('; ')}${crs.length > 5 ? '; …' : ''}; spec.deletionPolicy: Orphan leaves them in place instead`);
      await writeStatus({});
      return { requeueAfterMs: 2000 };
    }
    await this.stopOperator(name);
    const selector = `${HELM_OPERATOR_LABEL}=${name}`;
    for (const kind of [{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }]) {
      for (const o of (await this.o.client.list(kind.apiVersion, kind.kind, { labelSelector: selector })).items) {
        await this.o.client.delete({ ...kind, name: o.metadata.name ?? '' });
      }
    }
    await removeFinalizer(this.o.client, hop, HELM_OPERATOR_FINALIZER);
    logger.info({ helmOperator: name }, 'HelmOperator deleted; its releases are uninstalled');
    return undefined;
  }

  /** Every custom resource of the operator's kinds, in every namespace. */
  private async customResources(hop: HelmOperator): Promise<KubeObject[]> {
    const out: KubeObject[] = [];
    for (const k of hop.spec.kinds) {
      const apiVersion = k.group === '' ? k.version : `${k.group}/${k.version}`;
      try {
        out.push(...(await this.o.client.list(apiVersion, k.kind)).items.map((cr) => ({ ...cr, apiVersion, kind: k.kind })));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return out;
  }

  private async waitEstablished(name: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const live = await this.o.client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
      const conds = (live?.status as { conditions?: { type: string; status: string; message?: string }[] } | undefined)?.conditions ?? [];
      if (conds.some((c) => c.type === 'Established' && c.status === 'True')) return;
      if (Date.now() > deadline) throw new BinnacleError('CRD_NOT_ESTABLISHED', `CRD ${name} is not Established after ${timeoutMs} ms: ${conds.map((c) => `${c.type}=${c.status} ${c.message ?? ''}`).join('; ')}`);
      await sleep(250);
    }
  }

  private async stopOperator(name: string): Promise<void> {
    const op = this.served.get(name);
    if (op === undefined) return;
    this.served.delete(name);
    await Promise.all([...op.kinds.values()].map((k) => k.running.stop()));
  }

  /** Stops every kind (the manager is stopping or lost its lease). */
  async close(): Promise<void> {
    await Promise.all([...this.served.keys()].map((n) => this.stopOperator(n)));
  }
}
