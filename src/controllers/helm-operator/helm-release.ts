/**
 * The Helm-operator reconciler: one custom resource is one Helm release of a chart. Its spec
 * becomes the chart's values (under `valuesFrom` ConfigMaps/Secrets, below `overrideValues`),
 * Helm's engine renders them, and the shared applier installs or upgrades the release in the
 * CR's namespace, owned by the CR, with Helm release records `helm` reads. A finalizer
 * uninstalls on delete. Status has helm-operator's shape (`Initialized`, `Deployed`,
 * `ReleaseFailed`, `Irreconcilable`, `deployedRelease`), and its annotations are honoured.
 *
 * Trust: a CR's author is the least trusted writer here. Its release is rendered, looked up,
 * applied and removed as the kind's identity (a HelmOperator's: a ServiceAccount in the CR's
 * own namespace, never the manager's), confined to the kind's scope (its own namespace unless
 * the operator's owner allows more), with its knobs floored (reconcile period), and Secret
 * data never reaches status.
 *
 * Steps: Finalize (when deleting) → Pause → Identity → Chart → Values → Render → Confine →
 * Apply. Steps change only the reconcile's state; status is written once, at the end, and
 * only when it changed. An unchanged chart digest and values make no new revision, whatever
 * the templates do (`randAlphaNum`, `now`, generated certificates): the applier re-applies the
 * recorded revision instead, which also repairs drift.
 */
import { ApplyRefusedError, ObjectTerminatingError, decideRelease, needsRender, parseManifest, runDecision, scopeProblems, uninstall as uninstallRelease, type ConfineCheck, type ApplyResult, type MigrationCheck, type ObjectRef, type RecordOwner, type ReleaseDecision, type OperationRequest, type ReleaseRevision } from '../../apply/index.js';
import type { ControllerClient, IdentityClient } from '../../kube/ports.js';
import { EventRecorder, type EventType } from '../../kube/events.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../../kube/controller.js';
import { isNotFound, isTransient, isUnauthorized } from '../../kube/errors.js';
import type { SchemaSource } from '../../kube/openapi.js';
import type { Renderer } from '../../render/index.js';
import { describeRef, type Condition, type KubeObject } from '../../kube/types.js';
import { formatDuration, goDurationMs } from '../../util/duration.js';
import { BinnacleError, InputError, errorMessage } from '../../util/errors.js';
import { MAX_NESTING, nestsDeeperThan } from '../../util/nesting.js';
import { readYaml, YamlError } from '../../util/yaml.js';
import type { Logger } from 'pino';
import type { ChartRender, ChartRenderInput } from '../../helm/chart-render.js';
import { HelmError } from '../../helm-engine/errors.js';
import type { DryRunOption } from './watches.js';
import { applyStatus, Conditions, CONTINUE, methodSteps, ensureFinalizer, isDeleting, removeFinalizer, reconcileSteps, sameStatus, stop, type StepOutcome } from '../common.js';
import { lingeringObjects } from './helm-uninstall-wait.js';
import { deployedReleaseStatus } from './deployed-release.js';
import { impersonationFor } from '../../apply/preflight-permissions.js';
import { DRIFT_CONDITION, driftOutcome } from '../drift-report.js';
import { generationOf, openRelease, reportHistoryRead, type OpenRelease, type ReleaseEngineOptions } from '../release-engine.js';
import type { ConflictPolicy, DriftSpec, PostRenderer, ReleaseLimits } from '../../api/types.js';
import { releaseLimits, ReleaseTooLargeError } from '../../apply/limits.js';
import { PostRenderError } from '../../apply/post-render.js';

/** The condition naming objects of optional APIs that were skipped (the BundleDeployment's too). */
export const SKIPPED_CONDITION = 'OptionalObjectsSkipped';

/** helm-operator's finalizer, so CRs move between it and Binnacle unchanged. */
export const UNINSTALL_FINALIZER = 'helm.sdk.operatorframework.io/uninstall-release';

/** helm-operator's annotations (helm-operator-plugins pkg/annotation). */
export const ANNOTATIONS = {
  upgradeForce: 'helm.sdk.operatorframework.io/upgrade-force',
  uninstallWait: 'helm.sdk.operatorframework.io/uninstall-wait',
  installDisableHooks: 'helm.sdk.operatorframework.io/install-disable-hooks',
  upgradeDisableHooks: 'helm.sdk.operatorframework.io/upgrade-disable-hooks',
  uninstallDisableHooks: 'helm.sdk.operatorframework.io/uninstall-disable-hooks',
  rollbackForce: 'helm.sdk.operatorframework.io/rollback-force',
  reconcilePeriod: 'helm.sdk.operatorframework.io/reconcile-period',
  /** Stops reconciling this CR (Flux's `suspend`); Binnacle's own. */
  paused: 'binnacle.dev/paused',
} as const;

/** A ConfigMap or Secret key holding YAML values (Flux's valuesFrom). */
export interface ValuesReference {
  kind: 'ConfigMap' | 'Secret';
  name: string;
  /** Default `values.yaml`. */
  valuesKey?: string;
  /** Put the (string) value at this dotted path instead of merging a YAML map. */
  targetPath?: string;
  optional?: boolean;
}

/** The chart a kind is served by right now (it changes when a new version in range appears). */
export interface CurrentChart {
  /** Chart directory or `.tgz`. */
  path: string;
  /** The subchart that serves the kind (dependency names or aliases, `a/b`), if not the chart itself. */
  subchart?: string;
  digest: string;
  version: string;
}

/** The longest wait before a release waiting for one of its objects to be deleted looks again. */
const OBJECT_TERMINATING_RETRY_CAP_MS = 60_000;

/** One kind served by a chart: what watches.yaml or a HelmOperator says about it. */
export interface HelmKind {
  group: string;
  version: string;
  kind: string;
  chart: () => CurrentChart | undefined;
  /** Dotted keys → values, `${ENV}` expanded, set on top of the CR's spec (helm-operator's overrideValues). */
  overrideValues?: Record<string, string>;
  valuesFrom?: ValuesReference[];
  /** How often to look again when nothing happens; default 1 minute, as helm-operator. */
  reconcilePeriodMs?: number;
  /** The least period a CR's reconcile-period annotation may ask for (the operator owner's floor); 1 s at the least. */
  minReconcilePeriodMs?: number;
  /** Who each release is rendered, looked up, applied and removed as. */
  identity: ReleaseIdentity;
  /** Where a release may put objects; unconfined (the identity's RBAC alone) when absent. */
  scope?: { namespaces?: string[]; clusterScopedKinds?: string[] };
  crdPolicy?: 'Skip' | 'Create' | 'CreateReplace';
  /** Re-queue a CR when an object of its release changes or goes (helm-operator's default: true). */
  watchDependentResources?: boolean;
  /** Its HelmOperator's drift rules, for every release of the kind. */
  drift?: DriftSpec;
  /** Its HelmOperator's conflict policy (default Force). */
  conflictPolicy?: ConflictPolicy;
  /** Its HelmOperator's takeOwnership: releases take objects that exist and no one holds. */
  takeOwnership?: boolean;
  /** Its HelmOperator's postRenderers, applied to every release's render (in its input digest). */
  postRenderers?: PostRenderer[];
  /** How much each release may hold (its HelmOperator's spec.limits); apply/limits.ts's defaults otherwise. */
  limits?: ReleaseLimits;
  /** The OverrideValuesInUse event says a value was overridden without printing it (`--suppress-override-values`). */
  suppressOverrideValues?: boolean;
  /**
   * watches.yaml's dryRunOption: operator-sdk's dry-run mode for the render that decides an
   * upgrade. Binnacle decides upgrades from the chart's digest and the values instead, and
   * renders each release once, with `lookup` against the cluster as the release's identity,
   * which is what every mode installs; carried so it is seen (see helm-kinds.ts).
   */
  dryRunOption?: DryRunOption;
}

/**
 * Who a kind's releases act as. A HelmOperator's kinds use a ServiceAccount: by default the
 * one of that name in each CR's own namespace (its namespace admin grants it what the chart
 * needs there), or one fixed ServiceAccount, the explicit cluster-wide opt-in of a platform
 * team. `helm-operator run` acts as itself, as operator-sdk's does: the RBAC its bundle grants
 * its ServiceAccount confines it.
 */
export type ReleaseIdentity = { type: 'namespaceServiceAccount'; name: string } | { type: 'serviceAccount'; namespace: string; name: string } | { type: 'own' };

/** The reconciler's ports: rendering and events. Defaults are the one render function (src/render) and an Event recorder; the release engine's operations are real, over the client. */
export interface HelmReleasePorts {
  /** `actingAs`: who `input.client` acts as, so that the render cache never shares a `lookup` between identities. */
  render(input: ChartRenderInput, actingAs: string): Promise<ChartRender>;
  inputDigest(input: ChartRenderInput): Promise<string>;
  /** Records an Event about the CR (as the manager); never throws. */
  event(obj: KubeObject, type: EventType, reason: string, message: string, logger: Logger): Promise<void>;
}

export interface HelmReleaseReconcilerOptions {
  client: ControllerClient;
  kind: HelmKind;
  /** The trusted release records (the manager's namespace) and the engine's settings. */
  engine: ReleaseEngineOptions;
  ports?: Partial<HelmReleasePorts>;
  /** How long a release's hooks may run; default 5 minutes. Rollouts are not waited for (helm-operator's contract). */
  healthTimeoutMs?: number;
  /** Environment for `${ENV}` in overrideValues; default process.env. */
  env?: Record<string, string | undefined>;
  /** Told what a release applied (its dependent resources), after each successful apply. */
  onApplied?: (refs: readonly ObjectRef[]) => void;
  /**
   * The CR as the kind's informer holds it (controller-runtime's cached client), read instead
   * of a GET per reconcile; undefined when the cache has none, and the reconcile GETs it.
   */
  cached?: (namespace: string | undefined, name: string) => KubeObject | undefined;
  /** A release object as the dependent watches hold it (`ApplyRequest.watched`). */
  watched?: (ref: ObjectRef) => KubeObject | undefined;
}

const DEFAULT_RECONCILE_PERIOD_MS = 60_000;
/**
 * How long a release identity's ServiceAccount, once found, is taken to exist. Its existence is
 * the namespace admin's say that releases may act as it (RBAC alone would let them act as a name
 * no account has); a deleted account stops its releases within this time.
 */
export const ACCOUNT_FOUND_TTL_MS = 30_000;
/** The identities remembered at once (one per namespace with namespaceServiceAccount). */
const MAX_ACCOUNTS_FOUND = 10_000;
/** No CR may make its release spin, whatever floor its kind sets. */
export const HARD_MIN_RECONCILE_PERIOD_MS = 1000;

/** The values of a valuesFrom key's text (`where` names it), undefined when empty; YAML and shape errors are HELM_VALUES_FROM. */
export function valuesOf(text: string, where: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = readYaml(text, where);
  } catch (err) {
    throw new InputError('HELM_VALUES_FROM', err instanceof YamlError ? err.message : `${where}: not YAML: ${errorMessage(err)}`, { field: 'valuesFrom', cause: err });
  }
  if (parsed === null || parsed === undefined) return undefined;
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new InputError('HELM_VALUES_FROM', `${where}: not a map of values`, { field: 'valuesFrom' });
  return parsed as Record<string, unknown>;
}

/**
 * A custom resource's spec as values. The API server keeps a free-form spec up to 10,000 levels
 * deep; Binnacle's walkers (merging, hashing, schema checks) do not go that far (util/nesting.ts
 * says why), so such a spec is HELM_VALUES_TOO_DEEP before anything walks it.
 */
export function specValues(spec: Record<string, unknown> | undefined): Record<string, unknown> {
  if (spec === undefined) return {};
  if (nestsDeeperThan(spec)) throw new InputError('HELM_VALUES_TOO_DEEP', `nests deeper than ${MAX_NESTING} levels`, { field: 'spec' });
  return spec;
}

/** `$VAR` and `${VAR}` from env (Go's os.ExpandEnv; unset is empty). */
export function expandEnv(s: string, env: Record<string, string | undefined>): string {
  return s.replace(/\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced: string | undefined, bare: string | undefined) => env[braced ?? bare ?? ''] ?? '');
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const p of parts.slice(0, -1)) {
    const next = node[p];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[p] = {};
    node = node[p] as Record<string, unknown>;
  }
  node[parts.at(-1) ?? path] = value;
}

function mergeInto(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = typeof v === 'object' && v !== null && !Array.isArray(v) && typeof b === 'object' && b !== null && !Array.isArray(b) ? mergeInto(b as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}

interface HelmCr extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: never[]; deployedRelease?: { name: string; manifest: string } };
}

/** What the steps of one reconcile share; they change it, and the status is written from it once. */
interface State {
  cr: HelmCr;
  logger: Logger;
  conditions: Conditions;
  annotations: Record<string, string>;
  release: { name: string; namespace: string };
  owner: RecordOwner & { namespace: string };
  /** The release's identity: what renders, looks up, applies and uninstalls. */
  client: IdentityClient;
  /** The release's trusted history and the engine's configuration, acting as `client`. */
  release$: OpenRelease;
  /** How soon to look again when nothing happens. */
  periodMs: number;
  deployedRelease?: { name: string; manifest: string };
  /** False once the CR is on its way out with nothing left to say (its finalizer removed). */
  writeStatus: boolean;
  chart?: CurrentChart;
  values?: Record<string, unknown>;
  set?: string[];
  upgrading?: boolean;
  /** The release's revisions as this reconcile found them (read once). */
  history?: ReleaseRevision[];
  /** The deployed revision before this reconcile, if any: what tells install, upgrade and repair apart. */
  previousRevision?: number;
  /** What the release engine decided for this reconcile (decide.ts), before anything was rendered. */
  decision?: ReleaseDecision;
  /** The digest of the chart and values the decision was made for: what a new revision records. */
  inputDigest?: string;
  /** The render, when the decision makes a new revision (helm-operator's install or upgrade). */
  rendered?: ChartRender;
}

/**
 * A deleted CR under uninstall-wait looks again for its release's objects after 2 s, then twice
 * as long each time up to its reconcile period or a minute, whichever is less: the dependent
 * watches re-queue it as objects go, and this backstop must not ask the API server every 2 s for
 * an object a finalizer holds, nor hold a namespace's deletion for hours where nothing watches
 * the last object (a reconcile period set to hours).
 */
const UNINSTALL_WAIT_FIRST_MS = 2000;
const UNINSTALL_WAIT_MOST_MS = 60_000;
/** Uninstall waits remembered at once (CRs being deleted); past it they start again from the first wait. */
const MAX_UNINSTALL_WAITS = 10_000;

/** The backstop of the `waits`-th look (from 0) of an uninstall-wait, for a CR looked at every `periodMs`. */
export function uninstallWaitMs(waits: number, periodMs: number): number {
  return Math.min(periodMs, UNINSTALL_WAIT_MOST_MS, UNINSTALL_WAIT_FIRST_MS * 2 ** Math.min(waits, 30));
}

/** Conditions as helm-operator writes them: an empty reason or message is left out. */
/**
 * Objects of optional APIs the cluster does not serve (an OpenShift Route elsewhere) were
 * skipped, not fatal: said in status, as a BundleDeployment says it, and applied once served.
 */
function skippedReport(s: State, result: ApplyResult): void {
  const skipped = result.skipped ?? [];
  if (skipped.length === 0) return void s.conditions.remove(SKIPPED_CONDITION);
  const what = skipped.map((x) => `${describeRef(x.object)} (${x.reason})`).join('; ');
  s.conditions.set(SKIPPED_CONDITION, true, 'APINotServed', `skipped ${skipped.length} object${skipped.length === 1 ? '' : 's'} of optional APIs the cluster does not serve, applied once it does: ${what}`);
}

function helmConditions(conditions: readonly Condition[]): Record<string, unknown>[] {
  return conditions.map(({ reason, message, ...rest }) => ({ ...rest, ...(reason === '' || reason === undefined ? {} : { reason }), ...(message === '' || message === undefined ? {} : { message }) }));
}

/** The default ports: the one render function (Helm's engine loaded on first render, its cache), the shared Applier, and one event recorder per kind. */
function defaultPorts(client: ControllerClient, kind: string, given: Renderer | undefined): HelmReleasePorts {
  let recorder: EventRecorder | undefined;
  let renderer = given;
  return {
    // Loaded on first use; `helm-operator run` loads it at start (warmEngine), so a first CR does not wait for it.
    render: async (input, actingAs) => (renderer ??= (await import('../../render/index.js')).createRenderer()).chart(input, actingAs),
    inputDigest: async (input) => (await import('../../helm/index.js')).chartInputDigest(input),
    event: (obj, type, reason, message, logger) => {
      // operator-sdk's event source: the kind's controller name.
      recorder ??= new EventRecorder(client, `${kind.toLowerCase()}-controller`, logger);
      return recorder.record(obj, type, reason, message);
    },
  };
}

/** An annotation's boolean as operator-sdk reads it (Go's strconv.ParseBool); anything else is false. */
export function annotationTrue(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

/** A string as Go's %q writes it (quotes, backslashes and ASCII control characters escaped), for messages that read as operator-sdk's. */
export function goQuote(text: string): string {
  const named: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (named[ch] !== undefined) out += named[ch];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** helm-operator's OverrideValuesInUse message for one watches.yaml override. */
export function overrideValuesMessage(key: string, value: string, suppress: boolean): string {
  return `Chart value ${goQuote(key)} overridden to ${goQuote(suppress ? '****' : value)} by operator's watches.yaml`;
}

/** The reconcile period: the kind's, or the CR's annotation raised to the kind's floor. */
export function reconcilePeriod(annotation: string | undefined, kind: Pick<HelmKind, 'reconcilePeriodMs' | 'minReconcilePeriodMs'>): { ms: number; raisedFrom?: number } {
  const fallback = kind.reconcilePeriodMs ?? DEFAULT_RECONCILE_PERIOD_MS;
  const asked = annotation === undefined ? undefined : goDurationMs(annotation);
  if (asked === undefined) return { ms: fallback };
  const floor = Math.max(kind.minReconcilePeriodMs ?? HARD_MIN_RECONCILE_PERIOD_MS, HARD_MIN_RECONCILE_PERIOD_MS);
  return asked >= floor ? { ms: asked } : { ms: floor, raisedFrom: asked };
}

/** The ServiceAccount an identity names for a CR in `namespace`; undefined for the process's own. */
export function serviceAccountOf(identity: ReleaseIdentity, namespace: string): { namespace: string; name: string } | undefined {
  if (identity.type === 'own') return undefined;
  return identity.type === 'namespaceServiceAccount' ? { namespace, name: identity.name } : { namespace: identity.namespace, name: identity.name };
}

export class HelmReleaseReconciler implements Reconciler {
  /**
   * The server's schemas, shared by every reconcile and every kind of the process: what they do not declare is dropped and a
   * null where no null is allowed left out, as the API server does when Helm creates objects,
   * where server-side apply would refuse them.
   */
  private readonly schemas: SchemaSource | undefined;
  private readonly ports: HelmReleasePorts;
  /** When each release identity's ServiceAccount was last found, by `namespace/name` (identity step). */
  private readonly accountsFound = new Map<string, number>();
  /** How many times each deleted CR (by uid) under uninstall-wait has looked for its objects. */
  private readonly uninstallWaits = new Map<string, number>();

  constructor(private readonly o: HelmReleaseReconcilerOptions) {
    this.schemas = o.engine.schemas;
    this.ports = { ...defaultPorts(o.client, o.kind.kind, o.engine.renderer), ...o.ports };
  }

  private get apiVersion(): string {
    return this.o.kind.group === '' ? this.o.kind.version : `${this.o.kind.group}/${this.o.kind.version}`;
  }

  /** The client a CR's release acts as: never the manager's own unless the kind says `own`. */
  private clientFor(namespace: string): IdentityClient {
    const sa = serviceAccountOf(this.o.kind.identity, namespace);
    return sa === undefined ? this.o.client : this.o.client.impersonate(impersonationFor(sa));
  }

  /** Who `clientFor(namespace)` acts as, by name. */
  private actingAs(namespace: string): string {
    const sa = serviceAccountOf(this.o.kind.identity, namespace);
    return sa === undefined ? 'own' : impersonationFor(sa).user;
  }

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const cr = await this.readCr(req);
    if (cr === undefined) return undefined;
    const annotations = cr.metadata.annotations ?? {};
    const release = { name: cr.metadata.name ?? req.name, namespace: cr.metadata.namespace ?? req.namespace ?? 'default' };
    // operator-sdk's key fields, so its users' log queries keep working.
    const logger = ctx.logger.child({ namespace: req.namespace ?? '', name: req.name, apiVersion: this.apiVersion, kind: this.o.kind.kind, release: release.name });
    const client = this.clientFor(release.namespace);
    const conditions = new Conditions(cr.status?.conditions, cr.metadata.generation);
    const period = reconcilePeriod(annotations[ANNOTATIONS.reconcilePeriod], this.o.kind);
    if (period.raisedFrom === undefined) conditions.remove('ReconcilePeriodRaised');
    else conditions.set('ReconcilePeriodRaised', true, 'BelowFloor', `${ANNOTATIONS.reconcilePeriod} asks for ${formatDuration(period.raisedFrom)}; this kind's floor is ${formatDuration(period.ms)}, used instead`);
    const owner = { kind: this.o.kind.kind, name: release.name, namespace: release.namespace, uid: cr.metadata.uid ?? '', apiVersion: this.apiVersion };
    const state: State = {
      cr,
      logger,
      conditions,
      annotations,
      release,
      owner,
      client,
      release$: openRelease({ ...this.o.engine, schemas: this.schemas }, owner, release, client, logger, this.migrationCheck(owner, release.namespace)),
      periodMs: period.ms,
      ...(cr.status?.deployedRelease === undefined ? {} : { deployedRelease: cr.status.deployedRelease }),
      writeStatus: true,
    };
    const steps = methodSteps<State, HelmReleaseReconciler>(this, ['finalize', 'pause', 'identity', 'chart', 'values', 'decide', 'render', 'confine', 'apply']);
    return reconcileSteps(steps, state, logger, {
      write: (s) => this.writeStatus(s),
      // Anything a step did not expect: said in status, then retried with backoff.
      onError: (s, err) => s.conditions.set('Irreconcilable', true, 'ReconcileError', errorMessage(err)),
    });
  }

  /** The CR from the informer's cache (a copy: steps change it), else from the API server; undefined when it is gone. */
  private async readCr(req: ReconcileRequest): Promise<HelmCr | undefined> {
    const cached = this.o.cached?.(req.namespace, req.name);
    if (cached !== undefined) return structuredClone(cached);
    try {
      return await this.o.client.get<HelmCr>({ apiVersion: this.apiVersion, kind: this.o.kind.kind, namespace: req.namespace, name: req.name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The one status write of a reconcile; none when nothing in it changed. */
  private async writeStatus(s: State): Promise<void> {
    const status = { ...(s.deployedRelease === undefined ? {} : { deployedRelease: s.deployedRelease }), conditions: helmConditions(s.conditions.toArray()) };
    const before = { ...(s.cr.status?.deployedRelease === undefined ? {} : { deployedRelease: s.cr.status.deployedRelease }), conditions: helmConditions(s.cr.status?.conditions ?? []) };
    if (sameStatus(status, before)) return;
    await applyStatus(this.o.client, s.cr, status);
  }

  /**
   * Deleting: uninstall (hooks per annotation) as the release's identity; with uninstall-wait,
   * hold the CR until every object of the release is gone; then let the CR go. Log lines and
   * status read as helm-operator's.
   */
  async finalize(s: State): Promise<StepOutcome> {
    if (!isDeleting(s.cr)) return CONTINUE;
    if (!(s.cr.metadata.finalizers ?? []).includes(UNINSTALL_FINALIZER)) {
      s.logger.info('Resource is terminated, skipping reconciliation');
      s.writeStatus = false;
      return stop();
    }
    const wait = annotationTrue(s.annotations[ANNOTATIONS.uninstallWait]);
    // Read as the release's identity, which may be gone with a namespace being deleted: then the
    // uninstall below says what to do, so a failed read here must not stop the reconcile.
    const history = await s.release$.history.read().then(
      (read) => read.revisions,
      (err: unknown) => {
        s.logger.debug({ err: errorMessage(err) }, 'cannot read the release records before uninstalling');
        return undefined;
      },
    );
    // The uninstall removes the release's records: with uninstall-wait its objects are remembered in status.
    const record = history === undefined ? undefined : ([...history].reverse().find((r) => r.status === 'deployed') ?? history.at(-1));
    if (wait && record !== undefined) s.deployedRelease = deployedReleaseStatus(s.release, record.manifest);
    const uninstalled = await this.uninstall(s);
    if (uninstalled === undefined) return stop({ failed: true });
    if (!uninstalled.namespaceGoing) s.logger.info(history?.length === 0 ? 'Release not found' : 'Uninstalled release');
    s.conditions.remove('ReleaseFailed');
    s.conditions.set('Deployed', false, 'UninstallSuccessful', wait ? 'Waiting until all resources are deleted.' : '');
    if (!wait) s.deployedRelease = undefined;
    // In a namespace being deleted the objects go with it; holding the CR would hold the namespace.
    else if (!uninstalled.namespaceGoing) {
      const waiting = await this.uninstallWait(s, uninstalled.deleted);
      if (waiting !== undefined) return waiting;
    }
    s.logger.info('Removing finalizer');
    await removeFinalizer(this.o.client, s.cr, UNINSTALL_FINALIZER);
    s.writeStatus = false;
    return stop();
  }

  /** The release uninstalled as its identity; undefined when that failed (said in status). */
  private async uninstall(s: State): Promise<{ deleted: ObjectRef[]; namespaceGoing: boolean } | undefined> {
    try {
      const confine = this.confineCheck(s.release.namespace);
      const { deleted } = await uninstallRelease(s.release$.cfg, { owner: s.owner, release: s.release, disableHooks: annotationTrue(s.annotations[ANNOTATIONS.uninstallDisableHooks]), ...(confine === undefined ? {} : { confine }) });
      return { deleted, namespaceGoing: false };
    } catch (err) {
      if (!(await this.namespaceGoing(s.release.namespace))) {
        const sa = serviceAccountOf(this.o.kind.identity, s.release.namespace);
        const as = sa === undefined ? '' : ` as ServiceAccount ${sa.namespace}/${sa.name}`;
        s.logger.error({ err: errorMessage(err) }, 'Failed to uninstall release');
        s.conditions.set('ReleaseFailed', true, 'UninstallError', `uninstalling release ${s.release.namespace}/${s.release.name}${as} failed: ${errorMessage(err)}; mend that identity, or remove the finalizer ${UNINSTALL_FINALIZER} to leave the release's objects in place`);
        return undefined;
      }
      // The namespace is being deleted: the release's objects and records go with it (a
      // tenant's release holds nothing outside unless its operator allows it), and its
      // ServiceAccount may already be gone. Holding the CR would hold the namespace.
      s.logger.warn({ err: errorMessage(err) }, 'uninstall failed while the namespace is being deleted; its objects go with the namespace, the CR is let go');
      return { deleted: [], namespaceGoing: true };
    }
  }

  /**
   * uninstall-wait: a requeue while any object of the release (the manifest remembered in
   * status, and what this pass deleted) still exists, whichever call deleted it; undefined once
   * all are gone. The dependent watches re-queue the CR as they go; the requeue is the backstop.
   */
  private async uninstallWait(s: State, deleted: ObjectRef[]): Promise<StepOutcome | undefined> {
    s.logger.info('Uninstall wait');
    let left: ObjectRef[];
    try {
      left = await lingeringObjects({ client: s.client, manifest: s.deployedRelease?.manifest, deleted, owner: s.owner, release: s.release, logger: s.logger });
    } catch (err) {
      s.logger.error({ err: errorMessage(err) }, 'Failed to cleanup release');
      s.conditions.set('ReleaseFailed', true, 'UninstallError', `looking for the release's objects left after the uninstall failed: ${errorMessage(err)}`);
      return stop({ failed: true });
    }
    if (left.length === 0) {
      this.uninstallWaits.delete(s.owner.uid);
      return undefined;
    }
    const waits = this.uninstallWaits.get(s.owner.uid) ?? 0;
    if (this.uninstallWaits.size >= MAX_UNINSTALL_WAITS) this.uninstallWaits.clear();
    this.uninstallWaits.set(s.owner.uid, waits + 1);
    s.logger.info({ left: left.slice(0, 10).map(describeRef) }, 'Waiting until all resources are deleted');
    return stop({ requeueAfterMs: uninstallWaitMs(waits, s.periodMs) });
  }

  private async namespaceGoing(namespace: string): Promise<boolean> {
    const ns = await this.o.client.find({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => undefined);
    return ns === undefined || ns.metadata.deletionTimestamp !== undefined;
  }

  async pause(s: State): Promise<StepOutcome> {
    if (s.annotations[ANNOTATIONS.paused] === 'true') {
      s.conditions.set('Paused', true, 'ReconcilePaused', `${ANNOTATIONS.paused} is "true": nothing is reconciled until it is removed`);
      return stop();
    }
    s.conditions.remove('Paused');
    await ensureFinalizer(this.o.client, s.cr, UNINSTALL_FINALIZER);
    // helm-operator's Initialized has no reason or message.
    s.conditions.set('Initialized', true, '', '');
    return CONTINUE;
  }

  /** The release's ServiceAccount must exist: impersonating a missing one would act as its groups alone. */
  async identity(s: State): Promise<StepOutcome> {
    const sa = serviceAccountOf(this.o.kind.identity, s.release.namespace);
    if (sa === undefined) return CONTINUE;
    if (await this.accountExists(sa)) return CONTINUE;
    s.conditions.set(
      'Irreconcilable',
      true,
      'ServiceAccountNotFound',
      `ServiceAccount ${sa.namespace}/${sa.name} does not exist: this kind's releases are installed as it (its HelmOperator's spec.serviceAccount); create it and grant it what the chart needs in namespace ${s.release.namespace}`,
    );
    return stop({ failed: true });
  }

  /**
   * Whether the ServiceAccount exists, as found within the last ACCOUNT_FOUND_TTL_MS: the releases
   * of one identity (a HelmOperator's fixed account, or one per namespace) ask on every
   * reconcile, and a GET each was one request in ten at 1,000 CRs. Not found is never kept.
   */
  private async accountExists(sa: { namespace: string; name: string }): Promise<boolean> {
    const key = `${sa.namespace}/${sa.name}`;
    const now = Date.now();
    const at = this.accountsFound.get(key);
    if (at !== undefined && now - at < ACCOUNT_FOUND_TTL_MS) return true;
    this.accountsFound.delete(key);
    if ((await this.o.client.find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name })) === undefined) return false;
    if (this.accountsFound.size >= MAX_ACCOUNTS_FOUND) {
      for (const [k, t] of this.accountsFound) if (now - t >= ACCOUNT_FOUND_TTL_MS) this.accountsFound.delete(k);
      if (this.accountsFound.size >= MAX_ACCOUNTS_FOUND) this.accountsFound.clear();
    }
    this.accountsFound.set(key, now);
    return true;
  }

  chart(s: State): Promise<StepOutcome> {
    s.chart = this.o.kind.chart();
    if (s.chart !== undefined) return Promise.resolve(CONTINUE);
    s.conditions.set('Irreconcilable', true, 'ErrorGettingChart', 'the chart for this kind is not available yet');
    return Promise.resolve(stop({ requeueAfterMs: 10_000 }));
  }

  /** valuesFrom (read as the release's identity), under the CR's spec, under overrideValues (`${ENV}` expanded). */
  async values(s: State): Promise<StepOutcome> {
    try {
      s.values = mergeInto(await this.valuesFrom(s.client, s.release.namespace), specValues(s.cr.spec));
      const env = this.o.env ?? process.env;
      s.set = Object.entries(this.o.kind.overrideValues ?? {}).map(([k, v]) => `${k}=${expandEnv(v, env)}`);
      return CONTINUE;
    } catch (err) {
      if (!(err instanceof BinnacleError)) throw err;
      s.conditions.set('Irreconcilable', true, 'ErrorGettingValues', errorMessage(err));
      // Not by its class: the object valuesFrom names may yet be created, so back off and look again.
      return stop({ failed: true });
    }
  }

  private failReason(s: State): string {
    return s.upgrading === true ? 'UpgradeError' : 'InstallError';
  }

  /** The input a render would take: the chart, the values, the next revision, the release's identity for `lookup`. */
  private renderInput(s: State): ChartRenderInput | undefined {
    const chart = s.chart;
    if (chart === undefined || s.values === undefined) return undefined;
    return {
      chart: chart.path,
      ...(chart.subchart === undefined ? {} : { subchart: chart.subchart }),
      chartDigest: chart.digest,
      release: s.release,
      values: s.values,
      set: s.set ?? [],
      revision: (s.history?.at(-1)?.revision ?? 0) + 1,
      // `lookup` and the cluster's capabilities as the release's identity.
      client: s.client,
      // One fixed ServiceAccount for every CR: its reads elsewhere are not the tenant's to make (trust-model.md).
      ...(this.o.kind.identity.type === 'serviceAccount' ? { lookupNamespaces: [s.release.namespace, ...(this.o.kind.scope?.namespaces ?? [])] } : {}),
      ...(this.o.kind.crdPolicy === undefined ? {} : { crdPolicy: this.o.kind.crdPolicy }),
      limits: releaseLimits(this.o.kind.limits),
      ...(this.o.kind.postRenderers === undefined ? {} : { postRenderers: this.o.kind.postRenderers }),
    };
  }

  /**
   * The release engine's one decision, before anything is rendered: from the trusted history and
   * the digest of the chart and values, install, upgrade, repair, keep, roll back or refuse.
   * Records refused on the way and a mirror changed by hand are said in status.
   */
  async decide(s: State): Promise<StepOutcome> {
    const read = await s.release$.history.read();
    // Who else holds the release's name is unknown for a while: no revision is decided on that (retried).
    if (read.mirrorUnread !== undefined) throw read.mirrorUnread;
    reportHistoryRead(read, s.conditions, s.logger);
    s.history = read.revisions;
    const deployed = read.revisions.findLast((r) => r.status === 'deployed');
    s.upgrading = deployed !== undefined;
    if (deployed !== undefined) s.previousRevision = deployed.revision;
    const input = this.renderInput(s);
    if (input === undefined) return stop();
    s.inputDigest = await this.ports.inputDigest(input);
    s.decision = decideRelease(read.revisions, { owner: s.owner, inputDigest: s.inputDigest, foreignOwner: read.foreignOwner, ...generationOf(s.cr) });
    if (s.decision.action !== 'refuse') return CONTINUE;
    s.logger.error({ err: s.decision.reason }, 'Release failed');
    s.conditions.set('Irreconcilable', true, 'ReconcileError', s.decision.reason);
    s.conditions.set('ReleaseFailed', true, this.failReason(s), s.decision.reason);
    return stop({ failed: true });
  }

  /** Helm's engine renders the chart, when the decision makes a new revision; a refusal leaves the deployed release running. */
  async render(s: State): Promise<StepOutcome> {
    const input = this.renderInput(s);
    if (input === undefined || s.decision === undefined) return stop();
    if (!needsRender(s.decision)) return CONTINUE;
    try {
      s.rendered = await this.ports.render(input, this.actingAs(s.release.namespace));
      return CONTINUE;
    } catch (err) {
      if (err instanceof ReleaseTooLargeError || err instanceof PostRenderError) {
        s.logger.error({ err: err.message }, 'Release failed');
        s.conditions.set('ReleaseFailed', true, err instanceof PostRenderError ? 'PostRenderFailed' : 'ReleaseTooLarge', err.message);
        s.conditions.remove('Irreconcilable');
        return stop({ failed: true, error: err });
      }
      if (!(err instanceof HelmError) || err.phase === 'internal') throw err;
      s.logger.error({ err: err.message }, 'Release failed');
      s.conditions.set('ReleaseFailed', true, this.failReason(s), err.message);
      s.conditions.remove('Irreconcilable');
      return stop({ failed: true, error: err });
    }
  }

  /**
   * Every object the release would hold (its manifest, hooks and the chart's CRDs) must fit the
   * kind's scope; otherwise nothing of this render is applied and the deployed revision stays.
   */
  /**
   * How a release made before Binnacle kept its history apart (Helm's records in the CR's
   * namespace, which whoever may write Secrets there can change) moves over: each record must
   * name this CR as its owner and hold nothing outside the kind's scope, hooks included.
   */
  private migrationCheck(owner: RecordOwner, namespace: string): MigrationCheck {
    const confine = this.confineCheck(namespace);
    return async (rev) => {
      const problems: string[] = [];
      const recorded = rev.owner;
      if (recorded === undefined || recorded.kind !== owner.kind || recorded.name !== owner.name || (recorded.namespace !== undefined && recorded.namespace !== owner.namespace)) {
        problems.push(`its owner labels name ${recorded === undefined ? 'no Binnacle owner' : `${recorded.kind} ${recorded.namespace ?? ''}/${recorded.name}`}, not this ${owner.kind}`);
      }
      if (confine === undefined) return problems;
      const where = `revision ${rev.revision}`;
      let objects: KubeObject[];
      try {
        objects = [...parseManifest(rev.manifest, where), ...(rev.content?.hooks ?? []).flatMap((h) => parseManifest(h.manifest, `${where} hook ${h.name}`))];
      } catch (err) {
        return [...problems, errorMessage(err)];
      }
      // A discovery read that failed for a while fails the reconcile (retried) rather than refusing
      // a legitimate record for good (a history moves over once), as does a refused credential;
      // anything else is the record's problem (rethrown, a planted record could fail every reconcile).
      try {
        problems.push(...(await confine(objects)));
      } catch (err) {
        if (isTransient(err) || isUnauthorized(err)) throw err;
        problems.push(errorMessage(err));
      }
      return problems;
    };
  }

  /** The kind's scope for a release in `namespace`, as a check of objects; undefined when the kind is unconfined. */
  private confineCheck(namespace: string): ConfineCheck | undefined {
    const scope = this.o.kind.scope;
    if (scope === undefined) return undefined;
    return (objects) =>
      scopeProblems(objects, { namespace, ...scope }, async (apiVersion, kind) => {
        try {
          return (await this.o.client.resourceFor(apiVersion, kind)).namespaced;
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      });
  }

  async confine(s: State): Promise<StepOutcome> {
    const check = this.confineCheck(s.release.namespace);
    const rendered = s.rendered;
    if (check === undefined || rendered === undefined) return CONTINUE;
    const where = `release ${s.release.namespace}/${s.release.name}`;
    // The render's objects were parsed once (the manifest and the chart's CRDs); hooks are small and parsed here.
    const objects = [...rendered.objects, ...rendered.content.hooks.flatMap((h) => parseManifest(h.manifest, `${where} hook ${h.name}`))];
    const problems = await check(objects);
    if (problems.length === 0) return CONTINUE;
    s.conditions.set('ReleaseFailed', true, 'ObjectsOutOfScope', `refused, nothing of this render applied: ${problems.join('; ')}`);
    s.conditions.remove('Irreconcilable');
    s.logger.warn({ refused: problems.length }, 'release holds objects outside its scope; refused');
    return stop({ failed: true });
  }

  /** How the engine runs this CR's release: as its identity, confined, owned by the CR, Helm's options from its annotations. */
  private operationRequest(s: State, disableHooks: boolean): OperationRequest {
    const confine = this.confineCheck(s.release.namespace);
    return {
      owner: s.owner,
      release: s.release,
      disableHooks,
      ...generationOf(s.cr),
      force: s.annotations[ANNOTATIONS.upgradeForce] === 'true',
      rollbackForce: s.annotations[ANNOTATIONS.rollbackForce] === 'true',
      ...(this.o.kind.drift === undefined ? {} : { drift: this.o.kind.drift }),
      ...(this.o.kind.conflictPolicy === undefined ? {} : { conflictPolicy: this.o.kind.conflictPolicy }),
      ...(this.o.kind.takeOwnership === true ? { adopt: 'unowned' as const } : {}),
      ...(this.o.watched === undefined ? {} : { watched: this.o.watched }),
      // Everything a run applies or runs is confined: the render's objects and hooks, and what it takes from the records (a repair, a rollback).
      ...(confine === undefined ? {} : { confine }),
      ownerReference: { apiVersion: this.apiVersion, kind: this.o.kind.kind, name: s.release.name, uid: s.cr.metadata.uid ?? '' },
      // helm-operator's install and upgrade (Helm without --wait): the release is deployed once
      // its objects are applied; a rollout is the workloads' own status to report, and waiting
      // for it here held a worker (and every CR queued behind it) for the whole rollout.
      waitForHealth: false,
      // Still the bound on hooks (a Job hook is waited for, as Helm does without --wait).
      healthTimeoutMs: this.o.healthTimeoutMs ?? 5 * 60_000,
    };
  }

  /** The release engine carries out the decision: installs, upgrades, repairs or rolls back the release; status follows. */
  async apply(s: State): Promise<StepOutcome> {
    const decision = s.decision;
    if (decision === undefined) return stop();
    const rendered = s.rendered;
    if (rendered !== undefined) await this.overrideValuesEvents(s);
    let result;
    try {
      result = await this.runRelease(s, decision);
    } catch (err) {
      if (err instanceof ObjectTerminatingError) {
        // An object of the release still being deleted (an earlier owner's uninstall): applied once
        // it is gone, looked at again within a minute (the kind's backoff would reach 16 minutes).
        s.conditions.set('Irreconcilable', true, 'ReconcileError', errorMessage(err));
        return stop({ failed: true, retryCapMs: OBJECT_TERMINATING_RETRY_CAP_MS });
      }
      if (!(err instanceof ApplyRefusedError || err instanceof InputError)) throw err;
      s.logger.error({ err: errorMessage(err) }, 'Release failed');
      s.conditions.set('Irreconcilable', true, 'ReconcileError', errorMessage(err));
      s.conditions.set('ReleaseFailed', true, this.failReason(s), errorMessage(err));
      return stop({ failed: true, error: err });
    }
    s.conditions.remove('Irreconcilable');
    this.o.onApplied?.(result.applied);
    if (result.status !== 'deployed') {
      s.logger.error({ err: result.message }, 'Release failed');
      s.conditions.set('ReleaseFailed', true, this.failReason(s), result.message);
      return stop({ failed: true });
    }
    this.logOutcome(s, result.revision);
    const current = await this.deployedContent(s, result.revision);
    skippedReport(s, result);
    await this.driftReport(s, result);
    s.conditions.remove('ReleaseFailed');
    s.conditions.set('Deployed', true, result.revision === 1 ? 'InstallSuccessful' : 'UpgradeSuccessful', current?.content?.notes ?? rendered?.notes ?? '');
    s.deployedRelease = deployedReleaseStatus(s.release, current?.manifest ?? rendered?.content.manifest ?? '');
    return stop({ requeueAfterMs: s.periodMs });
  }

  /** The engine runs the decision with this CR's render (none for a repair or rollback) and Helm's hook annotations. */
  private runRelease(s: State, decision: ReleaseDecision): Promise<ApplyResult> {
    const rendered = s.rendered;
    const disableHooks = s.annotations[s.upgrading === true ? ANNOTATIONS.upgradeDisableHooks : ANNOTATIONS.installDisableHooks] === 'true';
    return runDecision(
      s.release$.cfg,
      decision,
      this.operationRequest(s, disableHooks),
      s.history ?? [],
      // The CR's own values recorded apart from the layers (valuesFrom, overrideValues): what `binnacle helm rollback` writes back.
      rendered === undefined ? undefined : { objects: rendered.objects, chart: rendered.chart, values: rendered.values, ownerValues: specValues(s.cr.spec), content: rendered.content, inputDigest: s.inputDigest ?? rendered.inputDigest },
    );
  }

  /**
   * The Drifted condition and its Events (drift-report.ts), as a BundleDeployment says them; only
   * when the HelmOperator sets drift rules, so a CR's status otherwise stays helm-operator's.
   */
  private async driftReport(s: State, result: ApplyResult): Promise<void> {
    if (this.o.kind.drift === undefined) return void s.conditions.remove(DRIFT_CONDITION);
    const drift = driftOutcome(result, this.o.kind.drift, s.conditions.get(DRIFT_CONDITION)?.message);
    if (drift.condition === undefined) s.conditions.remove(DRIFT_CONDITION);
    else s.conditions.set(DRIFT_CONDITION, drift.condition.status, drift.condition.reason, drift.condition.message);
    for (const e of drift.events) await this.ports.event(s.cr, e.type, e.reason, e.message, s.logger);
  }

  /**
   * What the deployed revision holds (its notes and manifest, for status): the render's own
   * content for the new revision this reconcile made, the record the decision named for a repair
   * or a rollback, and (only after a failed upgrade was rolled back) the history read again.
   */
  private async deployedContent(s: State, revision: number): Promise<{ manifest: string; content?: { notes?: string } } | undefined> {
    const d = s.decision;
    const made = (s.history?.at(-1)?.revision ?? 0) + 1;
    if (s.rendered !== undefined && revision === made) return { manifest: s.rendered.content.manifest, content: s.rendered.content };
    if ((d?.action === 'repair' || d?.action === 'keep') && d.revision.revision === revision) return d.revision;
    if (d?.action === 'rollback' && revision === made) return d.to;
    return (await s.release$.history.read()).revisions.findLast((r) => r.status === 'deployed');
  }

  /** helm-operator's log line for what the apply did: a first revision, a new one, or the same one repaired. */
  private logOutcome(s: State, revision: number): void {
    if (s.previousRevision === undefined) s.logger.info('Installed release');
    else if (revision !== s.previousRevision) s.logger.info({ force: annotationTrue(s.annotations[ANNOTATIONS.upgradeForce]) }, 'Upgraded release');
    else s.logger.info('Reconciled release');
  }

  /** Before an install or upgrade, as helm-operator: a Warning on the CR for each watches.yaml override. */
  private async overrideValuesEvents(s: State): Promise<void> {
    const env = this.o.env ?? process.env;
    const suppress = this.o.kind.suppressOverrideValues === true;
    for (const [key, value] of Object.entries(this.o.kind.overrideValues ?? {})) {
      await this.ports.event(s.cr, 'Warning', 'OverrideValuesInUse', overrideValuesMessage(key, expandEnv(value, env), suppress), s.logger);
    }
  }

  /** Values from the kind's ConfigMaps and Secrets, in order, each merged over the last. */
  private async valuesFrom(client: IdentityClient, namespace: string): Promise<Record<string, unknown>> {
    let out: Record<string, unknown> = {};
    for (const ref of this.o.kind.valuesFrom ?? []) {
      const key = ref.valuesKey ?? 'values.yaml';
      const obj = await client.find<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: ref.kind, namespace, name: ref.name });
      const raw = obj?.data?.[key];
      if (raw === undefined) {
        if (ref.optional === true) continue;
        throw new InputError('HELM_VALUES_FROM', obj === undefined ? `${ref.kind} ${namespace}/${ref.name} not found` : `${ref.kind} ${namespace}/${ref.name} has no key ${key}`, { field: 'valuesFrom' });
      }
      const text = ref.kind === 'Secret' ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      if (ref.targetPath !== undefined) {
        const next = { ...out };
        setPath(next, ref.targetPath, text);
        out = next;
        continue;
      }
      const parsed = valuesOf(text, `${ref.kind} ${namespace}/${ref.name} key ${key}`);
      if (parsed !== undefined) out = mergeInto(out, parsed);
    }
    return out;
  }
}
