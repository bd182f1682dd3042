/**
 * BundleDeployment reconciler (rukpak's role): unpack the bundle from its source into the
 * content-addressed cache, render it by format, check the ServiceAccount's permissions when
 * one is named, apply the objects in phases with server-side apply (pruning, CRD upgrade
 * safety, health, Helm-compatible revision records, rollback on failure), and report
 * `Unpacked`, `Installed`, `Healthy` and `Progressing`. A finalizer removes what it installed.
 *
 * Steps: HandleFinalizer → Validate → Unpack → Certificates → Decide → Render → Preflight →
 * Apply. The release engine decides once, before anything is rendered, from the trusted history
 * (kept in the manager's namespace, keyed by this BundleDeployment's UID) and the digest of the
 * inputs (the unpacked content, the spec's render options, the webhook certificates): a repair
 * renders nothing. Steps change only the reconcile's state; status is written once, at the end,
 * and only when it changed (and once, with the error said, when a step throws). The release
 * engine's operations are real and run over the client; the rest goes through ports (unpack,
 * render, certificates, permission preflight, events, clock), so every branch is unit-tested
 * over the one fake cluster (bundle-deployment-reconcile.test.ts).
 */
import type { Logger } from 'pino';
import { revisionDigest } from '../apply/release-chunked.js';
import { ApplyRefusedError, ObjectTerminatingError, decideRelease, type AdoptControlledBy, driftSpecProblems, isOwnedBy, controlledBy, needsRender, parseManifest, runDecision, uninstall as uninstallRelease, type ApplyResult, type MigrationCheck, type RecordOwner, type ReleaseDecision, type ReleaseRevision } from '../apply/index.js';
import type { ControllerClient, IdentityClient } from '../kube/ports.js';
import { failureAction, type ReconcileContext, type ReconcileRequest, type ReconcileResult, type Reconciler } from '../kube/controller.js';
import { isForbidden, isNotFound, isTransient, isUnauthorized } from '../kube/errors.js';
import { EventRecorder, type EventType } from '../kube/events.js';
import { refOf, type KubeObject, type ObjectRef } from '../kube/types.js';
import { parseBundleSource, secretReader, unpackSource, type BundleSource, type SecretReader, type UnpackedSource, type UnpackOptions } from '../source/index.js';
import { API_VERSION, FINALIZER_CLEANUP, type BundleDeployment, type BundleFormat } from '../api/types.js';
import { BinnacleError, TerminalError, ValidationError, errorMessage } from '../util/errors.js';
import { inputDigestOf } from '../util/canonical-json.js';
import { redactText } from '../util/redact.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { applyStatus, Conditions, CONTINUE, methodSteps, ensureFinalizer, isDeleting, removeFinalizer, reconcileSteps, sameStatus, stop, type StepOutcome } from './common.js';
import { lenientReport, SKIPPED_CONDITION, SKIPPED_RECHECK_MS, type LenientReport } from './lenient-report.js';
import { DRIFT_CONDITION, driftOutcome } from './drift-report.js';
import { describeMissing, impersonationFor, missingPermissions, ServiceAccountFallbackClient, type MissingPermission, type ServiceAccountIdentity } from '../apply/preflight-permissions.js';
import { createRenderer, OLMV1_OWNER_KIND_LABEL, OLMV1_OWNER_NAME_LABEL, RENDERERS, type RenderContext, type RenderedBundle, type Renderer } from '../render/index.js';
import { OLMV1_API_VERSION, OLMV1_IMPORTED_HISTORY_ANNOTATION } from '../api/olmv1/types.js';
import { bundleWebhookCerts, type WebhookCerts } from '../render/webhook-certs.js';
import { generationOf, openRelease, reportHistoryRead, type OpenRelease, type ReleaseEngineOptions } from './release-engine.js';

/** How long a failed install (Installed=False, Failed, this generation) waits before it is tried again. */
const FAILED_INSTALL_RETRY_MS = 60_000;

/**
 * The longest wait between tries of a release the preflight refused or found waiting for an
 * object to be deleted (its backoff starts at 1 s): what it waits for changes with no event
 * certain to reach this owner.
 */
const REFUSED_RETRY_CAP_MS = 60_000;

/**
 * What makes a BundleDeployment's spec unusable as written, each as `field: reason`. The spec is
 * taken as the API server hands it over, unchecked (an older CRD's schema may have let anything in).
 */
export function specProblems(written: unknown): string[] {
  const spec: Record<string, unknown> = typeof written === 'object' && written !== null && !Array.isArray(written) ? { ...written } : {};
  const problems: string[] = [];
  const parsed = parseBundleSource(spec.source, { field: 'spec.source' });
  if (!parsed.result.ok) problems.push(...parsed.result.errors().map((p) => `${p.field ?? 'spec.source'}: ${p.message}`));
  const format = spec.format;
  if (typeof format !== 'string' || ![...RENDERERS.keys()].some((f) => f === format)) problems.push(`spec.format: unknown format "${typeof format === 'string' ? format : (JSON.stringify(format) ?? 'undefined')}"`);
  if (typeof spec.installNamespace !== 'string' || spec.installNamespace === '') problems.push('spec.installNamespace: required');
  // The API server keeps free-form fields up to 10,000 levels deep; Binnacle's walkers do not
  // go that far (util/nesting.ts says why), so such a spec is refused before anything walks it.
  for (const field of ['config', 'values', 'bundleConfig'] as const) if (nestsDeeperThan(spec[field])) problems.push(`spec.${field}: nests deeper than ${MAX_NESTING} levels`);
  if (spec.bundleConfig !== undefined) problems.push(...bundleConfigProblems(spec));
  if (spec.postRenderers !== undefined && spec.format !== 'helm') problems.push('spec.postRenderers: only for format helm (patches of a Helm render, as Flux\'s postRenderers)');
  problems.push(...driftSpecProblems(spec.drift, 'spec.drift'));
  return problems;
}

/**
 * The manager's own namespace is never an install or watched namespace: a bundle's namespaced
 * permissions land as a Role there, and an operator that may create Pods or Secrets in it could run
 * as the manager (which may impersonate every installer) or read and forge the trusted release
 * records kept there (docs/trust-model.md, "The manager's own identity"). Each as `field: reason`.
 */
export function managerNamespaceProblems(written: unknown, managerNamespace: string): string[] {
  const spec: Record<string, unknown> = typeof written === 'object' && written !== null && !Array.isArray(written) ? { ...written } : {};
  const cfg = spec.bundleConfig;
  const fromConfig = typeof cfg === 'object' && cfg !== null && !Array.isArray(cfg) ? (cfg as Record<string, unknown>).watchNamespace : undefined;
  const fields: [string, unknown][] = [
    ['spec.installNamespace', spec.installNamespace],
    ['spec.watchNamespace', spec.watchNamespace],
    ...(Array.isArray(spec.watchNamespaces) ? spec.watchNamespaces.map((v, i): [string, unknown] => [`spec.watchNamespaces[${i}]`, v]) : []),
    ['spec.bundleConfig.watchNamespace', fromConfig],
  ];
  return fields
    .filter(([, v]) => v === managerNamespace)
    .map(([field]) => `${field}: "${managerNamespace}" is Binnacle's own namespace (its identity and trusted release records live there); install and watch elsewhere`);
}

/** OLM v1's bundle configuration is a registry+v1 one and says where the operator watches and its overrides alone. */
function bundleConfigProblems(spec: Record<string, unknown>): string[] {
  const out: string[] = [];
  const cfg = spec.bundleConfig;
  if (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg)) out.push('spec.bundleConfig: must be an object');
  if (spec.format !== 'registry+v1') out.push('spec.bundleConfig: only for format registry+v1');
  const others = (['watchNamespace', 'watchNamespaces', 'config'] as const).filter((f) => spec[f] !== undefined);
  if (others.length > 0) out.push(`spec.bundleConfig: replaces ${others.map((f) => `spec.${f}`).join(', ')}; set one or the other`);
  return out;
}

/**
 * How a render failure is reported: a transient failure of the API server (5xx, 429, timeout,
 * conflict, unreachable) is retried with backoff; anything else is a verdict on the bundle
 * (`InvalidBundle`, `Blocked`) until its spec changes.
 */
export function renderFailure(err: unknown): { transient: boolean; message: string } {
  const transient = isTransient(err);
  return { transient, message: transient ? `rendering: ${errorMessage(err)} (retrying)` : errorMessage(err) };
}

export interface BundleDeploymentReconcilerOptions {
  client: ControllerClient;
  /** The trusted release records (the manager's namespace) and the engine's settings. */
  engine: ReleaseEngineOptions;
  /** Content-addressed cache of unpacked sources. */
  cacheDir: string;
  healthTimeoutMs?: number;
  /** How often to re-check an installed bundle's health and repair drift. */
  resyncMs?: number;
  ports?: Partial<BundleDeploymentPorts>;
  /** Told what a release applied (the objects the dependent watches follow), after each apply. */
  onApplied?: (refs: readonly ObjectRef[]) => void;
  /** An installed object as the watches of what BundleDeployments installed hold it (OperationRequest.watched). */
  watched?: (ref: ObjectRef) => KubeObject | undefined;
  /**
   * Told, after each reconcile of the BundleDeployment `name`, the objects being deleted that its
   * apply waits for (none: it waits for nothing), so that their deletion re-queues it.
   */
  waitingOn?: (name: string, refs: readonly ObjectRef[]) => void;
}

/**
 * The reconciler's ports: what it does to the world besides reading and writing its own object.
 * Defaults are the real ones (unpackSource, the renderers by format, the SubjectAccessReview
 * preflight, the shared Applier, Events, the wall clock); tests pass fakes.
 */
export interface BundleDeploymentPorts {
  unpack(source: BundleSource, opts: UnpackOptions): Promise<UnpackedSource>;
  render(format: BundleFormat, ctx: RenderContext): Promise<RenderedBundle>;
  /** The webhook serving certificates the content needs (read back or issued in memory; nothing written), before it is rendered. */
  webhookCerts(dir: string, o: Parameters<typeof bundleWebhookCerts>[1]): Promise<WebhookCerts | undefined>;
  /** What `sa` may not do of what applying `objects` takes (SubjectAccessReviews as the manager). */
  missingPermissions(client: ControllerClient, sa: ServiceAccountIdentity, objects: readonly KubeObject[], releaseNamespace: string): Promise<MissingPermission[]>;
  /** Records an Event about the BundleDeployment; never throws. */
  recordEvent(obj: KubeObject, type: EventType, reason: string, message: string, logger: Logger): Promise<void>;
  /** Milliseconds since the epoch. */
  now(): number;
}

function defaultPorts(client: ControllerClient, renderer: Renderer): BundleDeploymentPorts {
  return {
    unpack: unpackSource,
    render: (format, ctx) => renderer.bundle({ ...ctx, spec: { ...ctx.spec, format } }),
    webhookCerts: bundleWebhookCerts,
    missingPermissions,
    recordEvent: (obj, type, reason, message, logger) => new EventRecorder(client, 'binnacle', logger).record(obj, type, reason, message),
    now: () => Date.now(),
  };
}

/** The status fields a reconcile carries over from the last status unless it sets them. */
const KEPT_STATUS_FIELDS = ['resolvedSource', 'contentDigest', 'revision', 'appliedObjects', 'warnings'] as const;

/** What the steps of one reconcile share; they change it, and the status is written from it once. */
interface State {
  bd: BundleDeployment;
  conditions: Conditions;
  logger: Logger;
  /** Status fields set by this reconcile, over those kept from the last status (undefined removes one). */
  status: Record<string, unknown>;
  /** False once the BundleDeployment is on its way out with nothing left to say (its finalizer removed or not ours). */
  writeStatus: boolean;
  /** The error a step already explained in conditions before throwing it. */
  explained?: unknown;
  unpacked?: UnpackedSource;
  /** The release's trusted history and the engine's configuration, acting as the installing identity. */
  release$: OpenRelease;
  certs?: WebhookCerts;
  history?: ReleaseRevision[];
  decision?: ReleaseDecision;
  inputDigest?: string;
  rendered?: RenderedBundle;
  /** The objects being deleted that the apply waits for. */
  waitingOn?: readonly ObjectRef[];
}

export class BundleDeploymentReconciler implements Reconciler {
  private readonly ports: BundleDeploymentPorts;

  constructor(private readonly o: BundleDeploymentReconcilerOptions) {
    this.ports = { ...defaultPorts(o.client, o.engine.renderer ?? createRenderer()), ...o.ports };
  }

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let bd: BundleDeployment;
    try {
      bd = await this.o.client.get<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: req.name });
    } catch (err) {
      if (isNotFound(err)) {
        this.o.waitingOn?.(req.name, []);
        return undefined;
      }
      throw err;
    }
    const state: State = {
      bd,
      conditions: new Conditions(bd.status?.conditions, bd.metadata.generation),
      logger: ctx.logger,
      status: {},
      writeStatus: true,
      release$: openRelease(this.o.engine, this.owner(bd), this.release(bd), this.installClient(bd), ctx.logger, this.migrationCheck(bd)),
    };
    const steps = methodSteps<State, BundleDeploymentReconciler>(this, ['handleFinalizer', 'validate', 'unpack', 'certificates', 'decide', 'render', 'preflight', 'apply']);
    try {
      return await reconcileSteps(steps, state, ctx.logger, {
        write: (s) => this.writeStatus(s),
        // Anything a step did not explain: said in status, then retried with backoff.
        onError: (s, err) => {
          if (s.explained !== err) s.conditions.set('Progressing', true, 'Retrying', errorMessage(err));
        },
      });
    } finally {
      // Replaced, not cleared first: a deletion while this reconcile ran still re-queues it.
      this.o.waitingOn?.(req.name, state.waitingOn ?? []);
    }
  }

  private release(bd: BundleDeployment): { name: string; namespace: string } {
    return { name: bd.spec.releaseName ?? bd.metadata.name ?? '', namespace: bd.spec.installNamespace };
  }

  private owner(bd: BundleDeployment): RecordOwner {
    return { kind: 'BundleDeployment', name: bd.metadata.name ?? '', uid: bd.metadata.uid ?? '', apiVersion: API_VERSION };
  }

  /** The client that installs: the ServiceAccount's identity when one is named. */
  private installClient(bd: BundleDeployment): IdentityClient {
    const sa = installerOf(bd);
    return sa === undefined ? this.o.client : this.o.client.impersonate(impersonationFor(sa));
  }

  /**
   * How a release made before Binnacle kept its history apart (Helm's records in the install
   * namespace, which whoever may write Secrets there can change) moves over, once: a record must
   * name this BundleDeployment as its owner, and nothing in it may be new, so that no record can
   * make the installer create anything: every object it holds is live and this BundleDeployment's,
   * and it runs no hooks. (Its fields are not compared with what runs: an older revision
   * legitimately differs, and an autoscaler or an injected caBundle would refuse even the
   * deployed one: so nothing is ever applied from a moved-over record, apply/decide.ts.) A record
   * that fails is named; the next revision is rendered anew.
   * Moving over from OLM v1, an object operator-controller made for this bundle's ClusterExtension
   * (the take-over's own rule, `controlledBy`) counts as this BundleDeployment's too: its history
   * comes along (`binnacle olmv1 import-history`).
   */
  private migrationCheck(bd: BundleDeployment): MigrationCheck {
    const owner = this.owner(bd);
    const release = this.release(bd);
    const reader = this.o.client;
    const { adopt } = this.adoption(bd);
    const takenOver = (live: KubeObject): boolean => typeof adopt === 'object' && controlledBy(live, adopt);
    let pins: Promise<Map<number, string>> | undefined;
    return async (rev) => {
      const problems: string[] = [];
      // Objects operator-controller made count only for a record `binnacle olmv1 import-history` pinned.
      pins ??= this.importedHistoryPins(bd);
      const pinned = (await pins).get(rev.revision) === revisionDigest(rev);
      if (rev.owner?.kind !== owner.kind || rev.owner.name !== owner.name) problems.push(`its owner labels do not name BundleDeployment ${owner.name}`);
      if ((rev.content?.hooks ?? []).length > 0) problems.push('it holds hooks, which a record from before Binnacle kept its own history does not get to run');
      let objects: KubeObject[];
      try {
        objects = parseManifest(rev.manifest, `revision ${rev.revision}`);
      } catch (err) {
        return [...problems, errorMessage(err)];
      }
      for (const o of objects) {
        const desired = { ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? release.namespace } };
        const ref = refOf(desired);
        // A read that failed for a while (a timeout, a busy API server) fails the reconcile, which is
        // retried: read as "not live", it would refuse a legitimate record for good (a history
        // moves over once), as does a refused credential (a refreshed one may pass). Anything else
        // (forbidden, a kind that cannot be read, an answer that is not an object) is the record's
        // problem, named: rethrown, a planted record naming such an object would fail every reconcile.
        let live: KubeObject | undefined;
        try {
          live = await reader.find(ref);
        } catch (err) {
          if (isTransient(err) || isUnauthorized(err)) throw err;
          problems.push(`${ref.kind} ${ref.name} cannot be read to check it: ${errorMessage(err)}`);
          continue;
        }
        if (live === undefined || !(isOwnedBy(live, owner, release) || (pinned && takenOver(live)))) {
          problems.push(`${ref.kind} ${ref.name} is not a live object of this BundleDeployment`);
        }
      }
      return problems;
    };
  }

  /**
   * The revisions `binnacle olmv1 import-history` brought over for this bundle's OLM v1
   * ClusterExtension, by revision, as pinned on it (none for any other bundle, or when it is gone
   * or is not the one the twin recorded). Read once per migration, which happens once.
   */
  private async importedHistoryPins(bd: BundleDeployment): Promise<Map<number, string>> {
    const name = bd.spec.olmv1Owner;
    if (name === undefined || bd.spec.olmv1OwnerUID === undefined) return new Map();
    // A failed read fails the reconcile (retried): read as "nothing pinned", the move would refuse
    // operator-controller's history for good, since a history moves over only once.
    const ce = await this.o.client.find({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name });
    const text = ce?.metadata.annotations?.[OLMV1_IMPORTED_HISTORY_ANNOTATION];
    if (ce?.metadata.uid !== bd.spec.olmv1OwnerUID || text === undefined || text.length > 64 * 1024) return new Map();
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return new Map();
      return new Map(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string').map(([k, v]) => [Number(k), v]));
    } catch {
      return new Map();
    }
  }

  /** The one status write of a reconcile; none when nothing in it changed. */
  private async writeStatus(s: State): Promise<void> {
    const prev = s.bd.status ?? {};
    const keep: Record<string, unknown> = {};
    for (const k of KEPT_STATUS_FIELDS) if (prev[k] !== undefined) keep[k] = prev[k];
    const status = { ...keep, ...s.status, conditions: s.conditions.toArray(), observedGeneration: s.bd.metadata.generation };
    const before = { ...keep, conditions: [...(prev.conditions ?? [])].sort((a, b) => a.type.localeCompare(b.type)), observedGeneration: prev.observedGeneration };
    if (sameStatus(status, before)) return;
    await applyStatus(this.o.client, s.bd, status);
  }

  async handleFinalizer(s: State): Promise<StepOutcome> {
    if (!isDeleting(s.bd)) {
      await ensureFinalizer(this.o.client, s.bd, FINALIZER_CLEANUP);
      return CONTINUE;
    }
    if (!(s.bd.metadata.finalizers ?? []).includes(FINALIZER_CLEANUP)) {
      s.writeStatus = false;
      return stop();
    }
    const facts = { orphan: orphansOnDelete(s.bd), serviceAccount: installerOf(s.bd), leftBehind: leftBehind(s.bd) };
    const first = decideDeletion(facts);
    if (first.action === 'orphan') {
      s.logger.warn({ leftBehind: facts.leftBehind }, first.message);
      await this.ports.recordEvent(s.bd, 'Warning', 'Orphaned', first.message, s.logger);
    } else {
      try {
        await this.uninstallAll(s);
      } catch (err) {
        return this.removalRefused(s, facts, err);
      }
    }
    await removeFinalizer(this.o.client, s.bd, FINALIZER_CLEANUP);
    s.writeStatus = false;
    return stop();
  }

  /** Removal was refused: wait while the account or its permission is missing, saying why and the ways out; anything else is thrown. */
  private async removalRefused(s: State, facts: DeletionFacts, err: unknown): Promise<StepOutcome> {
    if (!isForbidden(err)) throw err;
    const sa = facts.serviceAccount;
    const accountExists = sa === undefined ? true : (await this.o.client.find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name })) !== undefined;
    const wait = decideDeletion({ ...facts, accountExists, removalForbidden: errorMessage(err) });
    if (wait.action !== 'wait') throw err;
    s.logger.warn({ reason: wait.reason }, wait.message);
    s.conditions.set('Progressing', false, wait.reason, wait.message);
    return stop({ requeueAfterMs: 60_000 });
  }

  /**
   * Removes what the release's trusted history says this BundleDeployment installed (its webhook
   * certificates' Secret among the objects), and the history. Decided from the records, not
   * from status: a first install that crashed before status.revision was written has a (pending)
   * record and objects all the same. Removal acts as the install's ServiceAccount while it
   * exists; once the account is gone (its namespace deleted first, say), as Binnacle itself,
   * rather than leaving the finalizer stuck forever.
   */
  private async uninstallAll(s: State): Promise<void> {
    const removal = this.removalClient(s);
    const opened = openRelease(this.o.engine, this.owner(s.bd), this.release(s.bd), removal, s.logger);
    const { deleted } = await uninstallRelease(opened.cfg, { owner: this.owner(s.bd), release: this.release(s.bd), disableHooks: s.bd.spec.disableHooks === true });
    s.logger.info({ deleted: deleted.length }, 'uninstalled');
  }

  /** Who removes: the ServiceAccount while it exists, as above. */
  private removalClient(s: State): IdentityClient | ServiceAccountFallbackClient {
    const sa = installerOf(s.bd);
    return sa === undefined ? this.o.client : new ServiceAccountFallbackClient(this.o.client, sa);
  }

  validate(s: State): Promise<StepOutcome> {
    const problems = [...specProblems(s.bd.spec), ...managerNamespaceProblems(s.bd.spec, this.o.engine.records.namespace)];
    if (problems.length === 0) return Promise.resolve(CONTINUE);
    s.conditions.set('Progressing', false, 'InvalidSpec', problems.join('; '));
    // Said in the log too (once a spec change or resync): the operator of the manager sees what it refuses.
    s.logger.warn({ problems: redactText(problems.join('; ')) }, 'spec refused; nothing is done until it changes');
    return Promise.resolve(stop());
  }

  async unpack(s: State): Promise<StepOutcome> {
    const parsed = parseBundleSource(s.bd.spec.source, { field: 'spec.source' });
    if (parsed.source === undefined) return stop();
    try {
      s.unpacked = await this.ports.unpack(parsed.source, { cacheDir: this.o.cacheDir, client: this.o.client, secrets: sourceSecretReader(this.o.client, s.bd), logger: s.logger });
    } catch (err) {
      // Nothing of a refused artifact is rendered or applied: the last applied revision keeps running.
      s.conditions.set('Unpacked', false, isSignatureRefusal(err) ? 'VerificationFailed' : 'UnpackFailed', errorMessage(err));
      s.conditions.set('Progressing', true, 'Retrying', `unpacking: ${errorMessage(err)}`);
      if (failureAction(err) === 'wait-for-change') return stop();
      s.explained = err;
      throw err;
    }
    s.conditions.set('Unpacked', true, 'UnpackSucceeded', `unpacked ${s.unpacked.digest}`);
    s.status.resolvedSource = { ...s.unpacked.resolved };
    s.status.contentDigest = s.unpacked.digest;
    return CONTINUE;
  }

  /**
   * The webhook serving certificates the content needs, made before render: those its Secret
   * keeps (read as the installing account), or new ones in memory. Nothing is written here; the
   * Secret is an object of the release, and the certificates' digest one of its inputs.
   */
  async certificates(s: State): Promise<StepOutcome> {
    const unpacked = s.unpacked;
    if (unpacked === undefined) return stop();
    try {
      s.certs = await this.ports.webhookCerts(unpacked.dir, { format: s.bd.spec.format, installNamespace: s.bd.spec.installNamespace, owner: this.owner(s.bd), reader: this.installClient(s.bd) });
      return CONTINUE;
    } catch (err) {
      return this.renderFailed(s, err);
    }
  }

  /**
   * The release engine's one decision, before anything is rendered: from the trusted history and
   * the digest of what this revision would be made of, install, upgrade, repair, keep, roll back
   * or refuse. Records refused on the way and a mirror changed by hand are said in status.
   */
  async decide(s: State): Promise<StepOutcome> {
    const unpacked = s.unpacked;
    if (unpacked === undefined) return stop();
    // A failed install waits its minute before anything is rendered or read again.
    const wait = this.failedInstallWait(s);
    if (wait !== undefined) return stop({ requeueAfterMs: wait });
    const read = await s.release$.history.read();
    // Who else holds the release's name is unknown for a while: no revision is decided on that (retried).
    if (read.mirrorUnread !== undefined) throw read.mirrorUnread;
    reportHistoryRead(read, s.conditions, s.logger);
    s.history = read.revisions;
    s.inputDigest = bundleInputDigest(s.bd, unpacked.digest, s.certs?.digest);
    s.decision = decideRelease(read.revisions, { owner: this.owner(s.bd), inputDigest: s.inputDigest, autoRollback: s.bd.spec.autoRollback !== false, foreignOwner: read.foreignOwner, ...generationOf(s.bd) });
    if (s.decision.action !== 'refuse') return CONTINUE;
    s.conditions.set('Installed', false, 'Refused', s.decision.reason);
    s.conditions.set('Progressing', false, 'Blocked', s.decision.reason);
    return stop({ requeueAfterMs: 60_000 });
  }

  /** The content rendered by its format, when the decision makes a new revision. */
  async render(s: State): Promise<StepOutcome> {
    const unpacked = s.unpacked;
    if (unpacked === undefined || s.decision === undefined) return stop();
    if (!needsRender(s.decision)) return CONTINUE;
    try {
      s.rendered = await this.ports.render(s.bd.spec.format, {
        dir: unpacked.dir,
        spec: s.bd.spec,
        name: s.bd.metadata.name ?? '',
        certs: s.certs,
        digest: unpacked.digest,
        client: this.installClient(s.bd),
        actingAs: actingAs(s.bd),
        revision: (s.history?.at(-1)?.revision ?? 0) + 1,
      });
    } catch (err) {
      return this.renderFailed(s, err);
    }
    return CONTINUE;
  }

  /** A render (or its certificates) failed: retried when the API server failed us, else a verdict on the bundle until its spec changes. */
  private renderFailed(s: State, err: unknown): StepOutcome {
    const failure = renderFailure(err);
    if (failure.transient) {
      // The API server failed us (5xx, timeout, conflict) while rendering: not the bundle's fault.
      s.conditions.set('Progressing', true, 'Retrying', failure.message);
    } else {
      // A bundle that cannot be rendered will not render on retry either, until its spec changes.
      // A configuration the bundle refuses (OLM v1's rules, spec.bundleConfig) is the spec's fault, and says so.
      const config = err instanceof TerminalError && err.reason === 'InvalidConfiguration';
      s.conditions.set('Installed', false, config ? 'InvalidConfiguration' : 'InvalidBundle', failure.message);
      s.conditions.set('Progressing', false, config ? 'InvalidConfiguration' : 'Blocked', failure.message);
      if (failureAction(err) === 'wait-for-change') return stop();
    }
    s.explained = err;
    throw err; // requeued with backoff
  }

  /** A new revision's objects, checked against what the installing ServiceAccount may do; a repair re-applies what was checked when it was made. */
  async preflight(s: State): Promise<StepOutcome> {
    const sa = installerOf(s.bd);
    const objects = s.rendered?.objects;
    if (sa === undefined || objects === undefined) return CONTINUE;
    let missing;
    try {
      missing = await this.ports.missingPermissions(this.o.client, sa, objects, s.bd.spec.installNamespace);
    } catch (err) {
      // Fails closed: a permission check that could not be made is not a permission granted.
      s.conditions.set('Progressing', true, 'Retrying', `cannot check the permissions of service account ${sa.namespace}/${sa.name}; waiting: ${errorMessage(err)}`);
      s.explained = err;
      throw err; // requeued with backoff
    }
    if (missing.length === 0) return CONTINUE;
    const shown = missing.slice(0, 20).map(describeMissing);
    const more = missing.length > 20 ? ` and ${missing.length - 20} more` : '';
    const message = `service account ${sa.namespace}/${sa.name} lacks permissions: ${shown.join('; ')}${more}`;
    s.conditions.set('Installed', false, 'InsufficientPermissions', message);
    s.conditions.set('Progressing', true, 'Retrying', message);
    return stop({ requeueAfterMs: 30_000 });
  }

  /**
   * Moving over from OLM v1 without a reinstall: the bundle of an `olm.operatorframework.io/v1`
   * ClusterExtension takes over the objects operator-controller installed for that same
   * ClusterExtension (its controller ownerReference, uid included, and OLM v1's owner labels),
   * as they are; anything else that is in the way is still refused. `adoptExisting` takes anything.
   * The uid is the one the twin recorded from the OLM v1 object it checked (no read here, so an
   * apply costs nothing more); nothing for any other bundle.
   */
  private adoption(bd: BundleDeployment): { adopt?: true | AdoptControlledBy } {
    if (bd.spec.adoptExisting === true) return { adopt: true };
    const name = bd.spec.olmv1Owner;
    const uid = bd.spec.olmv1OwnerUID;
    if (name === undefined || uid === undefined || uid === '') return {};
    return { adopt: { controlledBy: { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name, uid }, ownerLabels: { [OLMV1_OWNER_KIND_LABEL]: 'ClusterExtension', [OLMV1_OWNER_NAME_LABEL]: name } } };
  }

  /**
   * How long a failed install (Installed=False, Failed, this generation) still waits before it is
   * tried again: an event (the finalizer this controller just added, say) must not turn failure
   * into a loop. Undefined when it need not wait.
   */
  private failedInstallWait(s: State): number | undefined {
    const last = s.bd.status?.conditions?.find((c) => c.type === 'Installed');
    if (last?.reason !== 'Failed' || last.observedGeneration !== s.bd.metadata.generation) return undefined;
    const since = this.ports.now() - Date.parse(last.lastTransitionTime);
    return since >= 0 && since < FAILED_INSTALL_RETRY_MS ? FAILED_INSTALL_RETRY_MS - since : undefined;
  }

  async apply(s: State): Promise<StepOutcome> {
    const decision = s.decision;
    if (decision === undefined) return stop();
    const rendered = s.rendered;
    let result;
    try {
      const adoption = this.adoption(s.bd);
      result = await runDecision(
        s.release$.cfg,
        decision,
        {
          owner: this.owner(s.bd),
          release: this.release(s.bd),
          disableHooks: s.bd.spec.disableHooks === true,
          ...adoption,
          ...(s.bd.spec.conflictPolicy === undefined ? {} : { conflictPolicy: s.bd.spec.conflictPolicy }),
          ...(s.bd.spec.waitStrategy === undefined ? {} : { waitStrategy: s.bd.spec.waitStrategy }),
          ...(s.bd.spec.crdUpgradeSafety === 'None' ? { crdUpgradeSafety: 'None' as const } : {}),
          autoRollback: s.bd.spec.autoRollback !== false,
          ...generationOf(s.bd),
          keepFailedInstall: s.bd.spec.keepFailedInstall === true,
          ...(s.bd.spec.drift === undefined ? {} : { drift: s.bd.spec.drift }),
          ...(this.o.watched === undefined ? {} : { watched: this.o.watched }),
          healthTimeoutMs: this.o.healthTimeoutMs ?? 120_000,
        },
        s.history ?? [],
        rendered === undefined
          ? undefined
          : {
              objects: rendered.objects,
              chart: rendered.chart,
              values: rendered.helm?.values ?? s.bd.spec.config ?? {},
              inputDigest: s.inputDigest,
              ...(rendered.helm === undefined ? {} : { content: rendered.helm.content }),
            },
      );
    } catch (err) {
      if (err instanceof ObjectTerminatingError) {
        // An object of the release is still being deleted (an earlier owner's uninstall, a CRD's
        // custom resources being cleaned up): applied once it is gone. Its deletion re-queues this
        // owner (waitingOn); should that event be missed (not watched, a restart), the same capped
        // backoff as a refusal looks again within a minute, never after the queue's 1000 s.
        s.conditions.set('Progressing', true, 'Retrying', errorMessage(err));
        s.waitingOn = err.refs;
        return stop({ failed: true, retryCapMs: REFUSED_RETRY_CAP_MS });
      }
      // Anything else (the API server failing us) is thrown: Progressing=Retrying, with backoff.
      if (!(err instanceof ApplyRefusedError || err instanceof ValidationError)) throw err;
      s.conditions.set('Installed', false, 'Refused', errorMessage(err));
      s.conditions.set('Progressing', false, 'Blocked', errorMessage(err));
      // What refused it is often mended by hand (the object in the way deleted, the namespace
      // created) with no event that reaches this owner: looked at again from 1 s, backing off to a minute.
      return stop({ failed: true, retryCapMs: REFUSED_RETRY_CAP_MS });
    }
    return this.applied(s, rendered?.chart ?? chartOf(decision), result);
  }

  /** What an apply that ran says: conditions, revision, applied objects, warnings and Events; when to look again. */
  private async applied(s: State, chart: { name: string; version: string }, result: ApplyResult): Promise<StepOutcome> {
    this.o.onApplied?.(result.applied);
    const unhealthy = result.health.objects.filter((o) => !o.healthy).map((o) => `${o.ref.kind} ${o.ref.name}: ${o.reason}`);
    if (result.status === 'deployed') {
      s.conditions.set('Installed', true, 'Succeeded', `revision ${result.revision} of ${chart.name} ${chart.version} installed`);
      s.conditions.set('Healthy', result.health.healthy, result.health.healthy ? 'Healthy' : 'Unhealthy', result.health.healthy ? 'every object is healthy' : unhealthy.join('; '));
      // Said as a state, not as what this reconcile did: a repair that finds nothing to do writes no status.
      s.conditions.set('Progressing', false, 'Succeeded', `revision ${result.revision} is deployed`);
    } else {
      s.conditions.set('Installed', result.status === 'rolled-back', result.status === 'rolled-back' ? 'RolledBack' : 'Failed', result.message);
      s.conditions.set('Healthy', false, 'Unhealthy', unhealthy.join('; ') || result.message);
      s.conditions.set('Progressing', true, 'Retrying', result.message);
    }
    const report = revisionReport(result, s.bd.status, s.conditions.get(SKIPPED_CONDITION)?.message);
    if (report.skipped === undefined) s.conditions.remove(SKIPPED_CONDITION);
    else s.conditions.set(SKIPPED_CONDITION, true, report.skipped.reason, report.skipped.message);
    // A failed first install that was removed leaves no revision behind.
    s.status.revision = result.removed === undefined ? result.revision : undefined;
    s.status.appliedObjects = result.removed === undefined ? result.applied.map((r) => ({ ...r })) : [];
    s.status.warnings = report.warnings;
    const drift = driftOutcome(result, s.bd.spec.drift, s.conditions.get(DRIFT_CONDITION)?.message);
    if (drift.condition === undefined) s.conditions.remove(DRIFT_CONDITION);
    else s.conditions.set(DRIFT_CONDITION, drift.condition.status, drift.condition.reason, drift.condition.message);
    for (const e of [...report.events, ...drift.events]) await this.ports.recordEvent(s.bd, e.type, e.reason, e.message, s.logger);
    // Skipped objects are applied once their API appears: look again soon.
    const recheck = report.skipped === undefined ? Infinity : SKIPPED_RECHECK_MS;
    if (result.status !== 'deployed') return stop({ requeueAfterMs: Math.min(60_000, recheck) });
    return stop({ requeueAfterMs: Math.min(result.health.healthy ? (this.o.resyncMs ?? 10 * 60_000) : 10_000, recheck) });
  }
}

/**
 * The lenient report of an apply. A repair re-applies the revision as it was recorded, after its
 * fields were dropped: it finds none to drop, and the revision's warnings stay what its rollout said.
 */
function revisionReport(result: ApplyResult, previous: BundleDeployment['status'], skippedMessage: string | undefined): LenientReport {
  const sameRevision = result.removed === undefined && result.revision === previous?.revision && (result.droppedFields ?? []).length === 0;
  const report = lenientReport(result, { warnings: previous?.warnings, skippedMessage });
  return sameRevision ? { ...report, warnings: [...(previous?.warnings ?? [])] } : report;
}

/** The chart a decision that renders nothing re-applies (a repair's, a rollback's record). */
function chartOf(d: ReleaseDecision): { name: string; version: string } {
  if (d.action === 'repair' || d.action === 'keep') return d.revision.chart;
  if (d.action === 'rollback') return d.to.chart;
  return { name: '', version: '' };
}

/**
 * The digest of everything a BundleDeployment's revision is made of: the unpacked content, the
 * spec's render options and the webhook certificates. The same digest as the deployed revision's
 * is a repair (nothing rendered); any change is an upgrade.
 */
export function bundleInputDigest(bd: BundleDeployment, contentDigest: string, certsDigest: string | undefined): string {
  const { format, installNamespace, watchNamespace, watchNamespaces, config, bundleConfig, olmv1Owner, values, releaseName, crdPolicy, postRenderers } = bd.spec;
  const inputs = {
    contentDigest,
    format,
    installNamespace,
    watchNamespace,
    watchNamespaces,
    config,
    values,
    releaseName,
    crdPolicy,
    certsDigest,
    ...(bundleConfig === undefined ? {} : { bundleConfig }),
    ...(olmv1Owner === undefined ? {} : { olmv1Owner }),
    ...(postRenderers === undefined || postRenderers.length === 0 ? {} : { postRenderers }),
  };
  return inputDigestOf(inputs);
}

/** Who `installClient(bd)` acts as, by name. */
function actingAs(bd: BundleDeployment): string {
  const sa = installerOf(bd);
  return sa === undefined ? 'manager' : impersonationFor(sa).user;
}

/** The ServiceAccount that installs, if one is named: in its own namespace, else the install namespace. */
export function installerOf(bd: BundleDeployment): { namespace: string; name: string } | undefined {
  const sa = bd.spec.serviceAccount;
  if (sa === undefined) return undefined;
  return { namespace: sa.namespace !== undefined && sa.namespace !== '' ? sa.namespace : bd.spec.installNamespace, name: sa.name };
}

/**
 * Who reads the Secrets the source names (an image's pull secret, an http or git source's
 * credentials): the installing ServiceAccount, impersonated, so a BundleDeployment can use only
 * Secrets that account may read. Without one, Binnacle reads as itself, and its own role grants
 * no Secrets: such a source must name a ServiceAccount that may read its Secret.
 */
/** A source refused by its verification policy (unsigned, wrongly signed, bad or missing keys). */
function isSignatureRefusal(err: unknown): boolean {
  return err instanceof BinnacleError && err.code.startsWith('SIGNATURE_');
}

export function sourceSecretReader(client: ControllerClient, bd: BundleDeployment): SecretReader {
  const sa = installerOf(bd);
  if (sa === undefined) return secretReader(client, "Binnacle's own service account (the BundleDeployment names no spec.serviceAccount)");
  return secretReader(client.impersonate(impersonationFor(sa)), `service account ${sa.namespace}/${sa.name}`);
}

/**
 * Set to "true" on a BundleDeployment, its deletion removes nothing it installed: the finalizer
 * goes, the objects stay (listed in a Warning event `Orphaned` and the log), as Flux's
 * `spec.suspend` + deletion or kubectl's `--cascade=orphan`. The way out when the installing
 * ServiceAccount is gone and Binnacle's own role may not remove what that account installed.
 */
export const ANNOTATION_ORPHAN_ON_DELETE = 'binnacle.dev/orphan-on-delete';

function orphansOnDelete(bd: BundleDeployment): boolean {
  return bd.metadata.annotations?.[ANNOTATION_ORPHAN_ON_DELETE] === 'true';
}

/** What a deletion leaves in place when it orphans: the applied objects and the release records. */
function leftBehind(bd: BundleDeployment): string[] {
  const objects = (bd.status?.appliedObjects ?? []).map((r) => `${r.kind} ${r.namespace === undefined || r.namespace === '' ? '' : `${r.namespace}/`}${r.name}`);
  const release = bd.spec.releaseName ?? bd.metadata.name ?? '';
  return [...objects, `release records (Secrets ${bd.spec.installNamespace}/sh.helm.release.v1.${release}.v*)`];
}

export interface DeletionFacts {
  /** The orphan-on-delete annotation is "true". */
  orphan: boolean;
  serviceAccount: { namespace: string; name: string } | undefined;
  /** What an orphaning deletion leaves, one line each. */
  leftBehind: string[];
  /** Set once removal was tried and refused (403): the API server's message. */
  removalForbidden?: string;
  /** Whether the ServiceAccount still exists (asked once removal was refused). */
  accountExists?: boolean;
}

export type DeletionDecision =
  | { action: 'orphan'; message: string }
  | { action: 'uninstall' }
  | { action: 'wait'; reason: 'ServiceAccountGone' | 'RemovalForbidden'; message: string };

const HOW_TO_ORPHAN = `or set the annotation ${ANNOTATION_ORPHAN_ON_DELETE}: "true" to let the BundleDeployment go and leave what it installed in place`;

/**
 * How a deleting BundleDeployment proceeds: orphan when annotated; otherwise uninstall, and when
 * removal is refused, wait, saying why (the account is gone, or lacks a permission) and the two
 * ways out: give the permission back, or orphan.
 */
export function decideDeletion(f: DeletionFacts): DeletionDecision {
  if (f.orphan) {
    const shown = f.leftBehind.slice(0, 20).join('; ');
    const more = f.leftBehind.length > 20 ? `; and ${f.leftBehind.length - 20} more` : '';
    return { action: 'orphan', message: `${ANNOTATION_ORPHAN_ON_DELETE} is "true": deleted without removing what it installed; left in place: ${shown}${more}` };
  }
  if (f.removalForbidden === undefined) return { action: 'uninstall' };
  const sa = f.serviceAccount;
  if (sa !== undefined && f.accountExists === false) {
    return {
      action: 'wait',
      reason: 'ServiceAccountGone',
      message: `cannot remove what this BundleDeployment installed: its service account ${sa.name} in namespace ${sa.namespace} is gone, and Binnacle's own role may not remove it (${f.removalForbidden}). Recreate the service account with the permissions it installed with, ${HOW_TO_ORPHAN}`,
    };
  }
  const who = sa === undefined ? "Binnacle's own service account" : `service account ${sa.namespace}/${sa.name}`;
  return {
    action: 'wait',
    reason: 'RemovalForbidden',
    message: `cannot remove what this BundleDeployment installed: ${who} is not allowed (${f.removalForbidden}). Give it back the permissions it installed with, ${HOW_TO_ORPHAN}`,
  };
}
