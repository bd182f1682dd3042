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
 * With `spec.upgradeApproval: Manual` a new chart version in range waits for the approval of
 * its plan's digest (`upgrade-approval.ts`); meanwhile the chart served before keeps serving.
 *
 * Steps: Get → (Delete) → Identity → FetchChart (→ approval) → Schemas+CRDs → Serve kinds →
 * Usable (Ready once kubectl can use every kind: discovery and OpenAPI v3) → Status.
 */
import type { Logger } from 'pino';
import type { ManagerClient } from '../../kube/ports.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../../kube/controller.js';
import { isNotFound } from '../../kube/errors.js';
import type { ControllerMetrics } from '../../kube/metrics.js';
import { escalationProblems, helmKindsAppTeamRole, helmKindsManagerRole } from '../../api/app-team-role.js';
import { API_VERSION, type HelmOperator, type HelmOperatorKindSpec } from '../../api/types.js';
import { describeOwner, driftSpecProblems } from '../../apply/index.js';
import { checkCrdUpgrade } from '../../apply/crd-safety.js';
import type { KubeObject } from '../../kube/types.js';
import type { ChartRef, FetchedChart, OciChartRef, RepoChartRef } from '../../helm/chart-source/index.js';
import type { ChartDescription } from '../../helm-engine/engine.js';
import type { TrustedKey } from '../../oci/index.js';
import { parseVerifyPolicy, secretReader, trustedKeysFromSecret } from '../../source/index.js';
import { goDurationMs } from '../../util/duration.js';
import { BinnacleError, InputError, errorMessage } from '../../util/errors.js';
import type { PendingPlan } from '../../api/approval.js';
import { approvedDigest, decideApproval, planDigest } from '../upgrade-approval.js';
import { applyStatus, Conditions, CONTINUE, methodSteps, ensureFinalizer, isDeleting, removeFinalizer, reconcileSteps, stop, type StepOutcome } from '../common.js';
import { kindKey, runHelmKind, type RunningKind, type RunningKindOptions } from './helm-kinds.js';
import type { ReleaseEngineOptions } from '../release-engine.js';
import { DEFAULT_HELM_RECONCILES } from './watches.js';
import { UNINSTALL_FINALIZER, type CurrentChart, type HelmKind, type ReleaseIdentity } from './helm-release.js';
import { waitCrdsEstablished } from '../../kube/crd-established.js';
import { kindPending } from '../../kube/kind-usable.js';

/** Held until the HelmOperator's custom resources are uninstalled (or orphaned). */
export const HELM_OPERATOR_FINALIZER = 'binnacle.dev/helm-operator-cleanup';
/** Marks the CRDs and ClusterRoles a HelmOperator made, with its name. */
export const HELM_OPERATOR_LABEL = 'binnacle.dev/helm-operator';
/** The floor of a CR's reconcile-period annotation when the HelmOperator sets none. */
export const DEFAULT_MIN_RECONCILE_PERIOD_MS = 60_000;

/** What the reconciler fetches, inspects and runs with; Helm's chart sources and engine, or fakes in tests. */
export interface HelmOperatorPorts {
  fetchChart(ref: ChartRef, opts: { cacheDir: string; logger: Logger; verifyKeys?: readonly TrustedKey[] }): Promise<FetchedChart>;
  inspect(chartPath: string): Promise<ChartDescription[]>;
  runKind(kind: HelmKind, opts: RunningKindOptions): RunningKind;
}

export interface HelmOperatorReconcilerOptions {
  client: ManagerClient;
  logger: Logger;
  /** The trusted release records and the engine's settings, for every kind's releases. */
  engine: ReleaseEngineOptions;
  cacheDir: string;
  metrics?: ControllerMetrics;
  healthTimeoutMs?: number;
  ports?: Partial<HelmOperatorPorts>;
}

interface KindStatus {
  kind: string;
  crd: string;
  schema: string;
  warnings: number;
}

/** What the steps of one reconcile share; status is written from it once. */
interface OperatorState {
  hop: HelmOperator;
  logger: Logger;
  conditions: Conditions;
  pollMs: number;
  status: { chart?: { name: string; version: string; digest: string }; kinds?: KindStatus[]; pendingPlan?: PendingPlan };
  writeStatus: boolean;
  fetched?: FetchedChart;
  charts?: ChartDescription[];
}

const DEFAULT_PORTS: HelmOperatorPorts = {
  fetchChart: async (ref, opts) => (await import('../../helm/chart-source/index.js')).fetchChart(ref, opts),
  inspect: async (path) => (await import('../../helm-engine/engine.js')).helmEngine().inspect(path),
  runKind: runHelmKind,
};

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
/** How soon a reconcile comes back while the API server's discovery or OpenAPI lacks a kind (seconds, usually). */
const KINDS_PENDING_REQUEUE_MS = 1000;

/** Each kind's CRD, its spec schema from the values of the chart (or subchart) serving it. */
async function kindCrds(hop: HelmOperator, fetched: FetchedChart, charts: readonly ChartDescription[]): Promise<{ k: HelmOperatorKindSpec; crd: KubeObject; schema: { source: string; warnings: unknown[] } }[]> {
  const { valuesSchema, crdForChart, pluralForKind } = await import('../../helm/schema/index.js');
  const root = charts[0]?.path ?? fetched.name;
  return hop.spec.kinds.map((k) => {
    const path = k.chart === undefined ? root : `${root}/${k.chart.split('/').map((p) => `charts/${p}`).join('/')}`;
    const desc = charts.find((c) => c.path === path);
    if (desc === undefined) throw new InputError('HELM_OPERATOR_SUBCHART', `kind ${k.kind}: chart ${fetched.name} ${fetched.version} has no subchart ${k.chart ?? ''} (has ${charts.map((c) => c.path).join(', ')})`, { field: 'spec.kinds.chart' });
    const schema = valuesSchema({ valuesYaml: desc.valuesYaml ?? '', ...(desc.schema === undefined || desc.schema === '' ? {} : { schemaJson: desc.schema }), chartName: desc.path });
    const crd = crdForChart({
      group: k.group,
      version: k.version,
      kind: k.kind,
      plural: k.plural ?? pluralForKind(k.kind),
      scope: 'Namespaced',
      spec: schema.schema,
      description: `${k.kind}: a Helm release of ${desc.metadata.name}; its spec is the chart's values.`,
    });
    return { k, crd, schema };
  });
}

/** The ClusterRole for app teams that a HelmOperator makes for its kinds. */
export function appTeamRoleName(helmOperator: string): string {
  return `binnacle-helm-operator-${helmOperator}-edit`;
}

/** The ClusterRole for the manager itself over a HelmOperator's kinds (aggregated into its own). */
export function managerRoleName(helmOperator: string): string {
  return `binnacle-helm-operator-${helmOperator}-manager`;
}

export class HelmOperatorReconciler implements Reconciler {
  private readonly served = new Map<string, ServedOperator>();
  private readonly ports: HelmOperatorPorts;

  constructor(private readonly o: HelmOperatorReconcilerOptions) {
    this.ports = { ...DEFAULT_PORTS, ...o.ports };
  }

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
    const s: OperatorState = {
      hop,
      logger: ctx.logger,
      conditions: new Conditions(hop.status?.conditions, hop.metadata.generation),
      pollMs: (hop.spec.chart.pollIntervalMinutes ?? DEFAULT_POLL_MINUTES) * 60_000,
      status: {},
      writeStatus: true,
    };
    const steps = methodSteps<OperatorState, HelmOperatorReconciler>(this, ['delete', 'identity', 'fetchChart', 'inspect', 'crds', 'serve', 'usable']);
    return reconcileSteps(steps, s, ctx.logger, {
      write: (st) => this.writeStatus(st),
      onError: (st, err) => st.conditions.set('Ready', false, 'ReconcileError', errorMessage(err)),
    });
  }

  /** The one status write of a reconcile. */
  private async writeStatus(s: OperatorState): Promise<void> {
    await applyStatus(this.o.client, s.hop, { ...s.status, conditions: s.conditions.toArray(), observedGeneration: s.hop.metadata.generation });
  }

  async delete(s: OperatorState): Promise<StepOutcome> {
    if (!isDeleting(s.hop)) {
      await ensureFinalizer(this.o.client, s.hop, HELM_OPERATOR_FINALIZER);
      return CONTINUE;
    }
    return stop(await this.remove(s));
  }

  /** Once, releases fell back to the manager's own identity: no longer. Nothing is served until the operator names one. */
  async identity(s: OperatorState): Promise<StepOutcome> {
    const drift = driftSpecProblems(s.hop.spec.drift, 'spec.drift');
    if (drift.length > 0) {
      await this.stopOperator(s.hop.metadata.name ?? '');
      s.conditions.set('Ready', false, 'InvalidSpec', drift.join('; '));
      return stop({ failed: true });
    }
    if (s.hop.spec.serviceAccount !== undefined) return CONTINUE;
    await this.stopOperator(s.hop.metadata.name ?? '');
    s.conditions.set('Ready', false, 'ServiceAccountRequired', "spec.serviceAccount is required: name the ServiceAccount each release acts as (in its custom resource's namespace; with namespace, one for all); releases never act as the manager");
    return stop({ failed: true });
  }

  async fetchChart(s: OperatorState): Promise<StepOutcome> {
    try {
      const c = s.hop.spec.chart;
      const ref =
        c.oci !== undefined
          ? { type: 'oci' as const, ref: c.oci.ref, ...(c.version === undefined ? {} : { version: c.version }), ...(c.oci.insecure === true ? { insecure: true } : {}) }
          : c.repository !== undefined
            ? { type: 'repo' as const, url: c.repository.url, chart: c.repository.name, ...(c.version === undefined ? {} : { version: c.version }) }
            : undefined;
      if (ref === undefined) throw new InputError('HELM_OPERATOR_SPEC', 'spec.chart: set oci or repository', { field: 'spec.chart' });
      // The verify keys are read once a reconcile: the chart held back under approval is checked with the same.
      const verifyKeys = await this.chartKeys(s.hop);
      const opts = { cacheDir: this.o.cacheDir, logger: s.logger, ...(verifyKeys === undefined ? {} : { verifyKeys }) };
      s.fetched = await this.heldForApproval(s, ref, await this.ports.fetchChart(ref, opts), opts);
      s.status.chart = { name: s.fetched.name, version: s.fetched.version, digest: s.fetched.digest };
      return CONTINUE;
    } catch (err) {
      // A refused chart is neither downloaded nor loaded: nothing of it reaches a CRD or a release.
      const refused = err instanceof BinnacleError && err.code.startsWith('SIGNATURE_');
      s.conditions.set('Ready', false, refused ? 'VerificationFailed' : 'ChartUnavailable', errorMessage(err));
      return stop({ requeueAfterMs: Math.min(s.pollMs, 60_000) });
    }
  }

  /**
   * issue 31 §1: under Manual approval, a chart other than the one served (by digest) is served
   * only once the digest of its plan is approved; until then the chart served before is
   * fetched again by its exact version (and must still have its digest) and keeps serving.
   * The plan is the chart change (its digests pin every manifest it renders for a CR's values,
   * which are the app team's and not held back) with the kinds' CRDs the new chart makes and
   * their upgrade-safety verdicts against the CRDs served now.
   */
  private async heldForApproval(s: OperatorState, ref: OciChartRef | RepoChartRef, fetched: FetchedChart, fetchOpts: Parameters<HelmOperatorPorts['fetchChart']>[1]): Promise<FetchedChart> {
    const current = s.hop.status?.chart;
    if (s.hop.spec.upgradeApproval !== 'Manual' || current === undefined || current.digest === fetched.digest) return fetched;
    const to = { name: fetched.name, version: fetched.version, digest: fetched.digest };
    const crds = await kindCrds(s.hop, fetched, await this.ports.inspect(fetched.path));
    const crdSafety = await this.crdVerdicts(crds.map((c) => c.crd));
    const planned = { digest: planDigest({ chart: { from: current, to }, crds: crds.map((c) => c.crd), crdSafety }), crdSafety, changes: [{ name: fetched.name, from: current.version, to: fetched.version, ref: ref.type === 'oci' ? ref.ref : `${ref.url} ${ref.chart}`, digest: fetched.digest }] };
    const decision = decideApproval({
      planned,
      approved: approvedDigest(s.hop),
      previous: s.hop.status?.pendingPlan,
      now: new Date(),
      what: `the upgrade of chart ${fetched.name} from ${current.version} to ${fetched.version}`,
      approveCommand: `binnacle approve ${s.hop.metadata.name ?? ''} --helm-operator`,
    });
    if (decision.approved) {
      s.logger.info({ digest: planned.digest, version: fetched.version }, 'approved plan: upgrading the chart');
      return fetched;
    }
    s.status.pendingPlan = decision.pending;
    const kept = await this.ports.fetchChart({ ...ref, version: current.version }, fetchOpts);
    if (kept.digest !== current.digest) {
      throw new BinnacleError('transient', 'HELM_CHART_CHANGED', `chart ${current.name} ${current.version} served before now has digest ${kept.digest}, not ${current.digest}, so it cannot be kept while ${decision.message}`);
    }
    return kept;
  }

  /** The CRD-safety verdict of each CRD that exists already, as the applier would judge the change. */
  private async crdVerdicts(crds: readonly KubeObject[]): Promise<{ crd: string; safe: boolean; problems?: string[] }[]> {
    const out: { crd: string; safe: boolean; problems?: string[] }[] = [];
    for (const crd of crds) {
      const live = await this.o.client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crd.metadata.name ?? '' });
      if (live === undefined) continue;
      const problems = checkCrdUpgrade(live, crd).errors().map((p) => `${p.message} (${p.rule})`);
      out.push({ crd: crd.metadata.name ?? '', safe: problems.length === 0, ...(problems.length === 0 ? {} : { problems }) });
    }
    return out;
  }

  /** The keys of `spec.chart.verify`, read as the manager itself (install-self lets it read Secrets in its own namespace only). */
  private async chartKeys(hop: HelmOperator): Promise<TrustedKey[] | undefined> {
    const raw = hop.spec.chart.verify;
    if (raw === undefined) return undefined;
    const problems: string[] = [];
    const policy = parseVerifyPolicy(raw, 'spec.chart.verify', (field, message) => problems.push(`${field}: ${message}`));
    if (policy === undefined) throw new InputError('SIGNATURE_POLICY', problems.join('; '));
    return trustedKeysFromSecret(secretReader(this.o.client, "Binnacle's own service account"), policy.secretRef);
  }

  async inspect(s: OperatorState): Promise<StepOutcome> {
    if (s.fetched === undefined) return stop();
    try {
      s.charts = await this.ports.inspect(s.fetched.path);
      return CONTINUE;
    } catch (err) {
      s.conditions.set('Ready', false, 'InvalidChart', errorMessage(err));
      return stop({ requeueAfterMs: s.pollMs });
    }
  }

  /** One CRD per kind, its spec schema from the values of the chart (or subchart) serving it; then the kinds' app-team role. */
  async crds(s: OperatorState): Promise<StepOutcome> {
    const { fetched, charts } = s;
    if (fetched === undefined || charts === undefined) return stop();
    const { pluralForKind } = await import('../../helm/schema/index.js');
    const hopName = s.hop.metadata.name ?? '';
    const kinds: KindStatus[] = [];
    s.status.kinds = kinds;
    try {
      // The app-team role first: a kind no team may be given is refused before anything is made.
      const role = this.appTeamRole(s.hop, s.hop.spec.kinds.map((k) => ({ group: k.group, plural: k.plural ?? pluralForKind(k.kind) })));
      for (const { k, crd, schema } of await kindCrds(s.hop, fetched, charts)) {
        const crdName = crd.metadata.name ?? '';
        await this.assertCrdIsOurs(crdName, hopName);
        await this.o.client.apply({ ...crd, metadata: { ...crd.metadata, labels: { ...(crd.metadata.labels ?? {}), [HELM_OPERATOR_LABEL]: hopName } } }, { force: true });
        await waitCrdsEstablished(this.o.client, [crdName], { timeoutMs: 60_000, intervalMs: 250 });
        kinds.push({ kind: k.kind, crd: crdName, schema: schema.source, warnings: schema.warnings.length });
      }
      await this.o.client.apply(role, { force: true });
      const own = helmKindsManagerRole(managerRoleName(hopName), kinds.map((k) => ({ plural: k.crd.slice(0, k.crd.indexOf('.')), group: k.crd.slice(k.crd.indexOf('.') + 1) })), { [HELM_OPERATOR_LABEL]: hopName });
      await this.o.client.apply(own as KubeObject, { force: true });
    } catch (err) {
      if (!(err instanceof BinnacleError)) throw err;
      s.conditions.set('Ready', false, err.code === 'HELM_OPERATOR_CRD_OWNED' ? 'CRDOwnedElsewhere' : 'CRDFailed', errorMessage(err));
      return stop({ requeueAfterMs: s.pollMs });
    }
    this.o.client.invalidateDiscovery();
    return CONTINUE;
  }

  async serve(s: OperatorState): Promise<StepOutcome> {
    const fetched = s.fetched;
    if (fetched === undefined) return stop();
    await this.serveKinds(s.hop, { path: fetched.path, digest: fetched.digest, version: fetched.version });
    return CONTINUE;
  }

  /**
   * Ready means kubectl can use every kind: besides its CRD Established (the CRDs step waited
   * for that), the kind is in the API server's discovery and in the OpenAPI v3 document of its
   * group-version, which catch up a few seconds later. Until then Ready=False KindsPending names
   * what is missing, and the reconcile comes back soon. The kinds are served meanwhile.
   */
  async usable(s: OperatorState): Promise<StepOutcome> {
    const fetched = s.fetched;
    if (fetched === undefined) return stop();
    const { pluralForKind } = await import('../../helm/schema/index.js');
    const pending: string[] = [];
    for (const k of s.hop.spec.kinds) {
      const missing = await kindPending(this.o.client, { group: k.group, version: k.version, kind: k.kind, plural: k.plural ?? pluralForKind(k.kind) });
      if (missing.length > 0) pending.push(`${k.kind} (${k.group === '' ? k.version : `${k.group}/${k.version}`}) is not yet in the API server's ${missing.join(' or ')}`);
    }
    if (pending.length > 0) {
      s.logger.info({ pending }, 'kinds not yet usable by kubectl');
      s.conditions.set('Ready', false, 'KindsPending', `its CRDs are Established but kubectl cannot use every kind yet: ${pending.join('; ')}`);
      return stop({ requeueAfterMs: KINDS_PENDING_REQUEUE_MS });
    }
    const plan = s.status.pendingPlan === undefined ? '' : `; ${s.status.pendingPlan.message}`;
    s.conditions.set('Ready', true, 'Serving', `serving ${s.hop.spec.kinds.map((k) => k.kind).join(', ')} with ${fetched.name} ${fetched.version}${plan}`);
    return stop({ requeueAfterMs: s.pollMs });
  }

  /**
   * Starts, restarts or stops kinds to match the spec; a new chart digest looks at every CR
   * again. Without a chart (uninstalling after a restart) the kinds run only to finalize.
   * A kind restarted for a changed spec starts once the old one has stopped and its in-flight
   * reconciles have ended: two controllers reconciling one CR at once race on its release.
   */
  private async serveKinds(hop: HelmOperator, chart: CurrentChart | undefined): Promise<void> {
    const name = hop.metadata.name ?? '';
    const op = this.served.get(name) ?? { chart, kinds: new Map<string, ServedKind>() };
    this.served.set(name, op);
    const chartChanged = chart !== undefined && op.chart?.digest !== chart.digest;
    if (chart !== undefined) op.chart = chart;
    const wanted = new Map(hop.spec.kinds.map((k) => [kindKey(k), k]));
    const specOf = (k: HelmOperatorKindSpec): string =>
      JSON.stringify({ k, sa: hop.spec.serviceAccount, allowed: hop.spec.allowedObjects, drift: hop.spec.drift, limits: hop.spec.limits, conflicts: hop.spec.conflictPolicy, take: hop.spec.takeOwnership, post: hop.spec.postRenderers });
    const stopping: Promise<void>[] = [];
    for (const [key, served] of op.kinds) {
      const k = wanted.get(key);
      if (k === undefined || served.spec !== specOf(k)) {
        stopping.push(served.running.stop());
        op.kinds.delete(key);
      }
    }
    await Promise.all(stopping);
    // The operator stopped meanwhile (deleted, or the manager lost its lease): start nothing.
    if (this.served.get(name) !== op) return;
    for (const [key, k] of wanted) {
      const spec = specOf(k);
      const current = op.kinds.get(key);
      if (current !== undefined) {
        if (chartChanged) current.running.enqueueAll();
        continue;
      }
      const kind = this.helmKind(hop, k, () => {
        const c = this.served.get(name)?.chart;
        return c === undefined ? undefined : { ...c, ...(k.chart === undefined ? {} : { subchart: k.chart }) };
      });
      const selector = Object.entries(k.selector?.matchLabels ?? {}).map(([a, b]) => `${a}=${b}`).join(',');
      op.kinds.set(key, {
        spec,
        running: this.ports.runKind(kind, {
          client: this.o.client,
          engine: this.o.engine,
          // From the reconciler's own logger, not this reconcile's: the kind outlives it, and its controller
          // names itself and each CR's key and kind (bound twice, a JSON line would carry duplicate keys).
          logger: this.o.logger.child({ helmOperator: name }),
          ...(this.o.metrics === undefined ? {} : { metrics: this.o.metrics }),
          ...(this.o.healthTimeoutMs === undefined ? {} : { healthTimeoutMs: this.o.healthTimeoutMs }),
          ...(selector === '' ? {} : { selector }),
          maxConcurrentReconciles: k.maxConcurrentReconciles ?? DEFAULT_HELM_RECONCILES,
        }),
      });
    }
  }

  private helmKind(hop: HelmOperator, k: HelmOperatorKindSpec, chart: () => CurrentChart | undefined): HelmKind {
    const period = k.reconcilePeriod === undefined ? undefined : goDurationMs(k.reconcilePeriod);
    const sa = hop.spec.serviceAccount;
    const identity: ReleaseIdentity =
      sa === undefined ? { type: 'namespaceServiceAccount', name: 'default' } : sa.namespace === undefined || sa.namespace === '' ? { type: 'namespaceServiceAccount', name: sa.name } : { type: 'serviceAccount', namespace: sa.namespace, name: sa.name };
    const allowed = hop.spec.allowedObjects ?? {};
    return {
      identity,
      scope: { ...(allowed.namespaces === undefined ? {} : { namespaces: allowed.namespaces }), ...(allowed.clusterScopedKinds === undefined ? {} : { clusterScopedKinds: allowed.clusterScopedKinds }) },
      minReconcilePeriodMs: (k.minReconcilePeriod === undefined ? undefined : goDurationMs(k.minReconcilePeriod)) ?? DEFAULT_MIN_RECONCILE_PERIOD_MS,
      group: k.group,
      version: k.version,
      kind: k.kind,
      chart,
      ...(k.overrideValues === undefined ? {} : { overrideValues: k.overrideValues }),
      ...(k.valuesFrom === undefined ? {} : { valuesFrom: k.valuesFrom }),
      ...(period === undefined ? {} : { reconcilePeriodMs: period }),
      ...(k.crdPolicy === undefined ? {} : { crdPolicy: k.crdPolicy }),
      ...(k.watchDependentResources === undefined ? {} : { watchDependentResources: k.watchDependentResources }),
      ...(hop.spec.drift === undefined ? {} : { drift: hop.spec.drift }),
      ...(hop.spec.limits === undefined ? {} : { limits: hop.spec.limits }),
      ...(hop.spec.conflictPolicy === undefined ? {} : { conflictPolicy: hop.spec.conflictPolicy }),
      ...(hop.spec.takeOwnership === true ? { takeOwnership: true } : {}),
      ...(hop.spec.postRenderers === undefined ? {} : { postRenderers: hop.spec.postRenderers }),
    };
  }

  /** A CRD that exists and is not this operator's belongs to someone else: never overwritten. */
  private async assertCrdIsOurs(crdName: string, hopName: string): Promise<void> {
    const live = await this.o.client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crdName });
    if (live === undefined) return;
    const holder = live.metadata.labels?.[HELM_OPERATOR_LABEL];
    if (holder === hopName) return;
    throw new BinnacleError(
      'terminal',
      'HELM_OPERATOR_CRD_OWNED',
      `CustomResourceDefinition ${crdName} exists and belongs to ${holder === undefined ? describeOwner(live) : `HelmOperator ${holder}`}; a HelmOperator never overwrites another owner's CRD (serve another group or kind, or delete that CRD if nothing needs it)`,
    );
  }

  /**
   * The ClusterRole that lets an app team write this operator's custom resources, aggregated
   * into Binnacle's app-team role (bound per namespace by a RoleBinding): the kinds' resources
   * and their status read-only (the manager writes it), nothing else.
   */
  private appTeamRole(hop: HelmOperator, kinds: { group: string; plural: string }[]): KubeObject {
    const name = hop.metadata.name ?? '';
    const role = helmKindsAppTeamRole(appTeamRoleName(name), kinds, { [HELM_OPERATOR_LABEL]: name });
    // A kind in a group an app team must never write (rbac, apiextensions, binnacle.dev, …) is refused, not granted.
    const problems = escalationProblems(role);
    if (problems.length > 0) throw new InputError('HELM_OPERATOR_KIND_ESCALATES', `the app-team role for this operator's kinds would let a team escalate: ${problems.join('; ')}`, { field: 'spec.kinds' });
    return role as KubeObject;
  }

  /**
   * Deleting: the CRs' releases are uninstalled (their own finalizers do it, as their
   * ServiceAccounts) or orphaned, then what the operator made (CRDs, its ClusterRole) goes and
   * the finalizer with it. A CR whose uninstall cannot finish is named in status, with the way out.
   */
  private async remove(s: OperatorState): Promise<ReconcileResult | undefined> {
    const { hop, logger } = s;
    const name = hop.metadata.name ?? '';
    // Nothing more to say in status once the finalizer goes; only a wait below writes it.
    s.writeStatus = false;
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
      await this.serveKinds(hop, undefined);
      for (const cr of crs) {
        if (!isDeleting(cr)) await this.o.client.delete({ apiVersion: cr.apiVersion, kind: cr.kind, namespace: cr.metadata.namespace, name: cr.metadata.name ?? '' });
      }
      const named = crs.slice(0, 5).map((cr) => {
        const stuck = (cr.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)?.conditions?.find((c) => (c.type === 'Irreconcilable' || (c.type === 'ReleaseFailed' && c.reason === 'UninstallError')) && c.status === 'True');
        return `${cr.kind} ${cr.metadata.namespace ?? ''}/${cr.metadata.name ?? ''}${stuck === undefined ? '' : ` (${stuck.message ?? ''})`}`;
      });
      s.conditions.set('Ready', false, 'Deleting', `uninstalling ${crs.length} release${crs.length === 1 ? '' : 's'} before the HelmOperator goes: ${named.join('; ')}${crs.length > 5 ? '; …' : ''}; spec.deletionPolicy: Orphan leaves them in place instead`);
      s.status = hop.status?.chart === undefined ? {} : { chart: hop.status.chart };
      s.writeStatus = true;
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
