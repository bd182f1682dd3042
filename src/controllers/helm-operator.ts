/**
 * HelmOperator reconciler: a chart (OCI or repository, a version range) served as an operator.
 * It fetches the highest chart version in range, gives each kind a CRD whose `spec` schema
 * comes from the chart's (or subchart's) values.schema.json or values.yaml, and runs the Helm
 * release reconciler for each kind's custom resources. A new chart version in range (looked
 * for every poll interval) upgrades every CR. Deleting the HelmOperator stops its kinds; CRDs
 * and releases stay, since deleting a CRD deletes every custom resource with it.
 *
 * Steps: Get → FetchChart → Schemas+CRDs → Serve kinds → Status.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { KubeClient } from '../kube/client.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import type { ControllerMetrics } from '../kube/metrics.js';
import { API_VERSION, type HelmOperator, type HelmOperatorKindSpec } from '../api/types.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { applyStatus, Conditions, isDeleting } from './common.js';
import { kindKey, runHelmKind, type RunningKind } from './helm-kinds.js';
import { parseDuration, type CurrentChart, type HelmKind } from './helm-release.js';

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
  chart: CurrentChart;
  kinds: Map<string, ServedKind>;
}

const DEFAULT_POLL_MINUTES = 10;

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
    if (hop === undefined || isDeleting(hop)) {
      await this.stopOperator(req.name);
      return undefined;
    }
    const conditions = new Conditions(hop.status?.conditions, hop.metadata.generation);
    const pollMs = (hop.spec.chart.pollIntervalMinutes ?? DEFAULT_POLL_MINUTES) * 60_000;
    const writeStatus = (extra: Record<string, unknown>): Promise<unknown> =>
      applyStatus(this.o.client, hop, { ...extra, conditions: conditions.toArray(), observedGeneration: hop.metadata.generation });

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
        await this.o.client.apply({ ...crd, metadata: { ...crd.metadata, labels: { ...(crd.metadata.labels ?? {}), 'binnacle.dev/helm-operator': hop.metadata.name ?? '' } } }, { force: true });
        await this.waitEstablished(crd.metadata.name ?? '');
        kindStatus.push({ kind: k.kind, crd: crd.metadata.name ?? '', schema: schema.source, warnings: schema.warnings.length });
      }
    } catch (err) {
      conditions.set('Ready', false, 'CRDFailed', errorMessage(err));
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

  /** Starts, restarts or stops kinds to match the spec; a new chart digest looks at every CR again. */
  private serve(hop: HelmOperator, chart: CurrentChart, logger: Logger): void {
    const name = hop.metadata.name ?? '';
    const op = this.served.get(name) ?? { chart, kinds: new Map<string, ServedKind>() };
    this.served.set(name, op);
    const chartChanged = op.chart.digest !== chart.digest;
    op.chart = chart;
    const wanted = new Map(hop.spec.kinds.map((k) => [kindKey(k), k]));
    for (const [key, served] of op.kinds) {
      if (!wanted.has(key)) {
        void served.running.stop();
        op.kinds.delete(key);
      }
    }
    for (const [key, k] of wanted) {
      const spec = JSON.stringify({ k, sa: hop.spec.serviceAccount });
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
    return {
      group: k.group,
      version: k.version,
      kind: k.kind,
      chart,
      ...(k.overrideValues === undefined ? {} : { overrideValues: k.overrideValues }),
      ...(k.valuesFrom === undefined ? {} : { valuesFrom: k.valuesFrom }),
      ...(period === undefined ? {} : { reconcilePeriodMs: period }),
      ...(hop.spec.serviceAccount === undefined ? {} : { serviceAccount: hop.spec.serviceAccount }),
      ...(k.crdPolicy === undefined ? {} : { crdPolicy: k.crdPolicy }),
      ...(k.watchDependentResources === undefined ? {} : { watchDependentResources: k.watchDependentResources }),
    };
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
