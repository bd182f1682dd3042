/**
 * The Helm-operator reconciler: one custom resource is one Helm release of a chart. Its spec
 * becomes the chart's values (under `valuesFrom` ConfigMaps/Secrets, below `overrideValues`),
 * Helm's engine renders them, and the shared applier installs or upgrades the release in the
 * CR's namespace, owned by the CR, with Helm release records `helm` reads. A finalizer
 * uninstalls on delete. Status has helm-operator's shape (`Initialized`, `Deployed`,
 * `ReleaseFailed`, `Irreconcilable`, `deployedRelease`), and its annotations are honoured.
 *
 * Steps: Get → Finalize (deleting) → Pause → Values → Render → Apply → Status.
 * An unchanged chart digest and values make no new revision, whatever the templates do
 * (`randAlphaNum`, `now`, generated certificates): the applier re-applies the recorded
 * revision instead, which also repairs drift.
 */
import { parse as parseYaml } from 'yaml';
import { Applier, ApplyRefusedError } from '../apply/index.js';
import type { KubeClient } from '../kube/client.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, InputError, errorMessage } from '../util/errors.js';
import { applyStatus, Conditions, ensureFinalizer, isDeleting, removeFinalizer } from './common.js';
import { impersonationFor } from './preflight-permissions.js';

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
  /** The ServiceAccount whose permissions install releases; Binnacle's own identity when absent. */
  serviceAccount?: { namespace: string; name: string };
  crdPolicy?: 'Skip' | 'Create' | 'CreateReplace';
}

export interface HelmReleaseReconcilerOptions {
  client: KubeClient;
  kind: HelmKind;
  healthTimeoutMs?: number;
  /** Environment for `${ENV}` in overrideValues; default process.env. */
  env?: Record<string, string | undefined>;
}

const DEFAULT_RECONCILE_PERIOD_MS = 60_000;

/** `$VAR` and `${VAR}` from env (Go's os.ExpandEnv; unset is empty). */
export function expandEnv(s: string, env: Record<string, string | undefined>): string {
  return s.replace(/\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced: string | undefined, bare: string | undefined) => env[braced ?? bare ?? ''] ?? '');
}

/** A Go duration (`1m30s`, `45s`, `2h`) in milliseconds; undefined when it is not one. */
export function parseDuration(s: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(re)) {
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    total += Number(m[1]) * unit;
    consumed += m[0].length;
  }
  return consumed === s.length && consumed > 0 ? total : undefined;
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

export class HelmReleaseReconciler implements Reconciler {
  constructor(private readonly o: HelmReleaseReconcilerOptions) {}

  private get apiVersion(): string {
    return this.o.kind.group === '' ? this.o.kind.version : `${this.o.kind.group}/${this.o.kind.version}`;
  }

  private installClient(): KubeClient {
    const sa = this.o.kind.serviceAccount;
    return sa === undefined ? this.o.client : this.o.client.impersonate(impersonationFor(sa));
  }

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let cr: HelmCr;
    try {
      cr = await this.o.client.get<HelmCr>({ apiVersion: this.apiVersion, kind: this.o.kind.kind, namespace: req.namespace, name: req.name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const log = ctx.logger.child({ [this.o.kind.kind]: `${req.namespace ?? ''}/${req.name}` });
    const annotations = cr.metadata.annotations ?? {};
    const period = parseDuration(annotations[ANNOTATIONS.reconcilePeriod] ?? '') ?? this.o.kind.reconcilePeriodMs ?? DEFAULT_RECONCILE_PERIOD_MS;
    const conditions = new Conditions(cr.status?.conditions, cr.metadata.generation);
    const release = { name: cr.metadata.name ?? req.name, namespace: cr.metadata.namespace ?? req.namespace ?? 'default' };
    const owner = { kind: this.o.kind.kind, name: release.name };
    const applier = new Applier({ client: this.installClient(), logger: log });
    const writeStatus = (extra: Record<string, unknown> = {}): Promise<void> =>
      applyStatus(this.o.client, cr, { ...(cr.status?.deployedRelease === undefined ? {} : { deployedRelease: cr.status.deployedRelease }), ...extra, conditions: conditions.toArray() });

    if (isDeleting(cr)) {
      if (!(cr.metadata.finalizers ?? []).includes(UNINSTALL_FINALIZER)) return undefined;
      const { deleted } = await applier.uninstall({ owner, release, disableHooks: annotations[ANNOTATIONS.uninstallDisableHooks] === 'true' });
      if (annotations[ANNOTATIONS.uninstallWait] === 'true') {
        const left = (await Promise.all(deleted.map((ref) => this.o.client.find(ref).catch(() => undefined)))).filter((x) => x !== undefined);
        if (left.length > 0) {
          conditions.set('Deployed', false, 'UninstallSuccessful', `waiting for ${left.length} objects to be deleted`);
          await writeStatus();
          return { requeueAfterMs: 2000 };
        }
      }
      await removeFinalizer(this.o.client, cr, UNINSTALL_FINALIZER);
      log.info({ deleted: deleted.length }, 'release uninstalled');
      return undefined;
    }
    if (annotations[ANNOTATIONS.paused] === 'true') {
      conditions.set('Paused', true, 'ReconcilePaused', `${ANNOTATIONS.paused} is "true": nothing is reconciled until it is removed`);
      await writeStatus();
      return undefined;
    }
    conditions.remove('Paused');
    await ensureFinalizer(this.o.client, cr, UNINSTALL_FINALIZER);
    conditions.set('Initialized', true, 'Initialized', '');

    const chart = this.o.kind.chart();
    if (chart === undefined) {
      conditions.set('Irreconcilable', true, 'ErrorGettingChart', 'the chart for this kind is not available yet');
      await writeStatus();
      return { requeueAfterMs: 10_000 };
    }
    const deployed = await applier.currentRevision(release);
    const upgrading = deployed !== undefined;
    const failReason = upgrading ? 'UpgradeError' : 'InstallError';

    let values: Record<string, unknown>;
    let set: string[];
    try {
      values = mergeInto(await this.valuesFrom(release.namespace), cr.spec ?? {});
      const env = this.o.env ?? process.env;
      set = Object.entries(this.o.kind.overrideValues ?? {}).map(([k, v]) => `${k}=${expandEnv(v, env)}`);
    } catch (err) {
      conditions.set('Irreconcilable', true, 'ErrorGettingValues', errorMessage(err));
      await writeStatus();
      if (err instanceof BinnacleError) return { requeueAfterMs: period };
      throw err;
    }

    const { renderChartRelease, HelmError } = await import('../helm/index.js');
    let rendered;
    try {
      rendered = await renderChartRelease({
        chart: chart.path,
        ...(chart.subchart === undefined ? {} : { subchart: chart.subchart }),
        chartDigest: chart.digest,
        release,
        values,
        set,
        revision: ((await applier.history(release)).at(-1)?.revision ?? 0) + 1,
        client: this.installClient(),
        ...(this.o.kind.crdPolicy === undefined ? {} : { crdPolicy: this.o.kind.crdPolicy }),
      });
    } catch (err) {
      if (!(err instanceof HelmError) || err.phase === 'internal') throw err;
      // Helm refused the values or templates: the deployed release (if any) keeps running.
      conditions.set('ReleaseFailed', true, failReason, err.message);
      conditions.set('Irreconcilable', false, 'ReconcileError', '');
      await writeStatus();
      return { requeueAfterMs: period };
    }

    const disableHooks = annotations[upgrading ? ANNOTATIONS.upgradeDisableHooks : ANNOTATIONS.installDisableHooks] === 'true';
    let result;
    try {
      result = await applier.apply({
        owner,
        release,
        objects: rendered.objects,
        chart: rendered.chart,
        values: rendered.values,
        content: rendered.content,
        inputDigest: rendered.inputDigest,
        disableHooks,
        ownerReference: { apiVersion: this.apiVersion, kind: this.o.kind.kind, name: release.name, uid: cr.metadata.uid ?? '' },
        healthTimeoutMs: this.o.healthTimeoutMs ?? 5 * 60_000,
      });
    } catch (err) {
      if (err instanceof ApplyRefusedError || err instanceof InputError) {
        conditions.set('ReleaseFailed', true, failReason, errorMessage(err));
        conditions.set('Irreconcilable', true, 'ReconcileError', errorMessage(err));
        await writeStatus();
        return { requeueAfterMs: period };
      }
      conditions.set('Irreconcilable', true, 'ReconcileError', errorMessage(err));
      await writeStatus();
      throw err;
    }
    conditions.set('Irreconcilable', false, 'ReconcileError', '');
    if (result.status === 'deployed') {
      const current = await applier.currentRevision(release);
      conditions.set('ReleaseFailed', false, failReason, '');
      conditions.set('Deployed', true, result.revision === 1 ? 'InstallSuccessful' : 'UpgradeSuccessful', current?.content?.notes ?? rendered.notes);
      await writeStatus({ deployedRelease: { name: release.name, manifest: current?.manifest ?? rendered.content.manifest } });
      return { requeueAfterMs: result.health.healthy ? period : Math.min(period, 10_000) };
    }
    conditions.set('ReleaseFailed', true, failReason, result.message);
    await writeStatus();
    return { requeueAfterMs: period };
  }

  /** Values from the kind's ConfigMaps and Secrets, in order, each merged over the last. */
  private async valuesFrom(namespace: string): Promise<Record<string, unknown>> {
    let out: Record<string, unknown> = {};
    for (const ref of this.o.kind.valuesFrom ?? []) {
      const key = ref.valuesKey ?? 'values.yaml';
      const obj = await this.o.client.find<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: ref.kind, namespace, name: ref.name });
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
      let parsed: unknown;
      try {
        parsed = parseYaml(text);
      } catch (err) {
        throw new InputError('HELM_VALUES_FROM', `${ref.kind} ${namespace}/${ref.name} key ${key}: not YAML: ${errorMessage(err)}`, { field: 'valuesFrom' });
      }
      if (parsed === null || parsed === undefined) continue;
      if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new InputError('HELM_VALUES_FROM', `${ref.kind} ${namespace}/${ref.name} key ${key}: not a map of values`, { field: 'valuesFrom' });
      out = mergeInto(out, parsed as Record<string, unknown>);
    }
    return out;
  }
}
