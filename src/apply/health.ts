/**
 * Health: pure rules that read an object's live status and say whether it is ready and why not,
 * plus a probe loop that re-reads the objects until all are healthy or a deadline passes.
 * Services that back webhooks or APIServices must have ready endpoints (EndpointSlices), since
 * the API server routes calls to them.
 *
 * Two rule sets, as Helm 4's wait strategies (`helm --wait=watcher|legacy|hookOnly`):
 * - `watcher` (the default, Helm 4's): kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status). Any
 *   object: being deleted, a status.observedGeneration behind metadata.generation, a `Stalled` or
 *   `Reconciling` condition that is True are not ready, so custom resources that follow the
 *   convention are waited for; a PersistentVolumeClaim until Bound, a LoadBalancer Service until
 *   it has an ingress, a PodDisruptionBudget until enough pods are healthy, a ReplicaSet until its
 *   replicas are ready. Binnacle's rules stay where stricter than kstatus: webhook Services need
 *   ready endpoints, an APIService Available, a Deployment whose pods the API server refuses
 *   (ReplicaFailure) says so.
 * - `legacy`: Binnacle's rules before Helm 4 (the workloads, CRDs, APIServices, Jobs, Pods and
 *   webhook Services above; no claim, LoadBalancer, budget or custom resource is waited for).
 * - `hookOnly`: nothing is waited for but the hooks (rollout.ts).
 */
import type { Logger } from 'pino';
import type { ObjectReader } from '../kube/ports.js';
import { describeRef, refOf, type KubeObject } from '../kube/types.js';
import { crdEstablishment } from '../kube/crd-established.js';
import { sleepWithoutWorker } from '../kube/reconcile-context.js';
import { errorMessage } from '../util/errors.js';
import type { HealthReport, ObjectHealth, WaitStrategy } from './types.js';

type Json = Record<string, unknown>;

export interface Verdict {
  healthy: boolean;
  reason: string;
}

function rec(v: unknown): Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
}

function n(v: unknown, fallback = 0): number {
  return typeof v === 'number' ? v : fallback;
}

function condition(obj: KubeObject, type: string): Json | undefined {
  const conds = rec(obj.status).conditions;
  if (!Array.isArray(conds)) return undefined;
  return conds.map(rec).find((c) => c.type === type);
}

function conditionText(c: Json | undefined): string {
  if (c === undefined) return '';
  const reason = typeof c.reason === 'string' ? c.reason : '';
  const message = typeof c.message === 'string' ? c.message : '';
  return [reason, message].filter((x) => x !== '').join(': ');
}

const ok = (reason: string): Verdict => ({ healthy: true, reason });
const notYet = (reason: string): Verdict => ({ healthy: false, reason });

/** The controller has seen the latest spec. */
function observed(obj: KubeObject): Verdict | undefined {
  const generation = obj.metadata.generation ?? 0;
  const seen = n(rec(obj.status).observedGeneration, -1);
  if (seen < generation) return notYet(`waiting for the controller to observe generation ${generation} (observed ${seen < 0 ? 'none' : seen})`);
  return undefined;
}

export function deploymentHealth(obj: KubeObject): Verdict {
  const wait = observed(obj);
  if (wait !== undefined) return wait;
  const status = rec(obj.status);
  const want = n(rec(obj.spec).replicas, 1);
  const progressing = condition(obj, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return notYet(`rollout stuck: ${conditionText(progressing)}`);
  // The API server refuses the Pods (a missing PriorityClass, a quota, admission): say so, since
  // no wait will help and the replica counts alone would hide it.
  const replicaFailure = condition(obj, 'ReplicaFailure');
  if (replicaFailure?.status === 'True') return notYet(`pods cannot be created: ${conditionText(replicaFailure)}`);
  const updated = n(status.updatedReplicas);
  const available = n(status.availableReplicas);
  const total = n(status.replicas);
  if (updated < want) return notYet(`${updated} of ${want} replicas updated`);
  if (total > updated) return notYet(`${total - updated} old replicas pending termination`);
  if (available < want) return notYet(`${available} of ${want} replicas available`);
  const cond = condition(obj, 'Available');
  if (cond !== undefined && cond.status !== 'True') return notYet(`not Available: ${conditionText(cond)}`);
  return ok(`${available} of ${want} replicas available`);
}

export function statefulSetHealth(obj: KubeObject): Verdict {
  const wait = observed(obj);
  if (wait !== undefined) return wait;
  const status = rec(obj.status);
  const want = n(rec(obj.spec).replicas, 1);
  const ready = n(status.readyReplicas);
  const strategy = rec(rec(obj.spec).updateStrategy).type;
  if (strategy !== 'OnDelete') {
    if (n(status.updatedReplicas) < want) return notYet(`${n(status.updatedReplicas)} of ${want} replicas updated`);
    const current = status.currentRevision;
    const update = status.updateRevision;
    if (typeof update === 'string' && current !== update) return notYet(`rolling out revision ${update}`);
  }
  if (ready < want) return notYet(`${ready} of ${want} replicas ready`);
  return ok(`${ready} of ${want} replicas ready`);
}

export function daemonSetHealth(obj: KubeObject): Verdict {
  const wait = observed(obj);
  if (wait !== undefined) return wait;
  const status = rec(obj.status);
  const desired = n(status.desiredNumberScheduled);
  const updated = n(status.updatedNumberScheduled);
  const available = n(status.numberAvailable);
  if (updated < desired) return notYet(`${updated} of ${desired} pods updated`);
  if (available < desired) return notYet(`${available} of ${desired} pods available`);
  return ok(`${available} of ${desired} pods available`);
}

export function crdHealth(obj: KubeObject): Verdict {
  const e = crdEstablishment(obj);
  return e.established ? ok(e.reason) : notYet(e.reason);
}

export function apiServiceHealth(obj: KubeObject): Verdict {
  const c = condition(obj, 'Available');
  if (c?.status === 'True') return ok('Available');
  return notYet(c === undefined ? 'not yet Available' : `not Available: ${conditionText(c)}`);
}

export function jobHealth(obj: KubeObject): Verdict {
  const failed = condition(obj, 'Failed');
  if (failed?.status === 'True') return notYet(`failed: ${conditionText(failed)}`);
  const complete = condition(obj, 'Complete');
  if (complete?.status === 'True') return ok('Complete');
  return notYet(`running: ${n(rec(obj.status).succeeded)} succeeded`);
}

export function podHealth(obj: KubeObject): Verdict {
  const phase = rec(obj.status).phase;
  if (phase === 'Succeeded') return ok('Succeeded');
  if (phase === 'Failed') return notYet('pod failed');
  const ready = condition(obj, 'Ready');
  if (ready?.status === 'True') return ok('Ready');
  return notYet(`not Ready${ready === undefined ? '' : `: ${conditionText(ready)}`} (phase ${typeof phase === 'string' ? phase : 'unknown'})`);
}

/** Ready endpoints over a Service's EndpointSlices (discovery.k8s.io/v1). */
export function endpointsHealth(slices: readonly KubeObject[]): Verdict {
  let ready = 0;
  for (const s of slices) {
    const endpoints = s.endpoints;
    if (!Array.isArray(endpoints)) continue;
    for (const e of endpoints) {
      // Per the EndpointSlice API, a nil `ready` means ready.
      if (rec(rec(e).conditions).ready !== false) ready++;
    }
  }
  return ready > 0 ? ok(`${ready} ready endpoints`) : notYet('no ready endpoints behind this Service, which a webhook or APIService calls');
}

/** kstatus's PersistentVolumeClaim: Bound. */
export function claimHealth(obj: KubeObject): Verdict {
  const phase = rec(obj.status).phase;
  return phase === 'Bound' ? ok('Bound') : notYet(`not Bound (phase ${typeof phase === 'string' ? phase : 'unknown'})`);
}

/** kstatus's Service: a LoadBalancer once it has an ingress; any other type at once. */
export function serviceHealth(obj: KubeObject): Verdict {
  if (rec(obj.spec).type !== 'LoadBalancer') return ok('applied');
  const ingress = rec(rec(obj.status).loadBalancer).ingress;
  return Array.isArray(ingress) && ingress.length > 0 ? ok('load balancer ready') : notYet('waiting for the load balancer to get an address');
}

/** kstatus's PodDisruptionBudget: as many healthy pods as it wants. */
export function budgetHealth(obj: KubeObject): Verdict {
  const status = rec(obj.status);
  const healthy = n(status.currentHealthy);
  const desired = n(status.desiredHealthy);
  return healthy >= desired ? ok(`${healthy} of ${desired} pods healthy`) : notYet(`${healthy} of ${desired} pods healthy`);
}

/** kstatus's ReplicaSet: every replica labelled, available and ready. */
export function replicaSetHealth(obj: KubeObject): Verdict {
  const status = rec(obj.status);
  const want = n(rec(obj.spec).replicas, 1);
  for (const [field, what] of [['fullyLabeledReplicas', 'labelled'], ['availableReplicas', 'available'], ['readyReplicas', 'ready']] as const) {
    if (n(status[field]) < want) return notYet(`${n(status[field])} of ${want} replicas ${what}`);
  }
  return ok(`${want} replicas ready`);
}

/** kstatus's rules for any object, before its kind's: deleted, not yet observed, stalled or reconciling. */
export function genericHealth(obj: KubeObject): Verdict | undefined {
  if (obj.metadata.deletionTimestamp !== undefined) return notYet('being deleted');
  const seen = rec(obj.status).observedGeneration;
  if (typeof seen === 'number' && seen < (obj.metadata.generation ?? 0)) return notYet(`waiting for the controller to observe generation ${obj.metadata.generation ?? 0} (observed ${seen})`);
  const stalled = condition(obj, 'Stalled');
  if (stalled?.status === 'True') return notYet(`stalled: ${conditionText(stalled)}`);
  const reconciling = condition(obj, 'Reconciling');
  if (reconciling?.status === 'True') return notYet(`reconciling: ${conditionText(reconciling)}`);
  return undefined;
}

/** Helm 4's wait strategies (see the top of this file); `watcher` is the default. */
export const WAIT_STRATEGIES: readonly WaitStrategy[] = ['watcher', 'legacy', 'hookOnly'];

/** The kinds with a rule under `legacy`; any other kind is healthy once applied. */
const LEGACY_RULES: Readonly<Record<string, (obj: KubeObject) => Verdict>> = {
  Deployment: deploymentHealth,
  StatefulSet: statefulSetHealth,
  DaemonSet: daemonSetHealth,
  CustomResourceDefinition: crdHealth,
  APIService: apiServiceHealth,
  Job: jobHealth,
  Pod: podHealth,
};

/** `watcher`: kstatus's kinds beside them. */
const WATCHER_RULES: Readonly<Record<string, (obj: KubeObject) => Verdict>> = {
  ...LEGACY_RULES,
  PersistentVolumeClaim: claimHealth,
  Service: serviceHealth,
  PodDisruptionBudget: budgetHealth,
  ReplicaSet: replicaSetHealth,
};

/** The health of a live object under `strategy`; kinds without a rule are healthy once applied (under `watcher`, once kstatus's generic rules hold). */
export function objectHealth(obj: KubeObject, strategy: WaitStrategy = 'watcher'): Verdict {
  if (strategy === 'hookOnly') return ok('not waited for (hookOnly)');
  const rules = strategy === 'watcher' ? WATCHER_RULES : LEGACY_RULES;
  if (strategy === 'watcher') {
    const generic = genericHealth(obj);
    if (generic !== undefined) return generic;
  }
  const rule = Object.hasOwn(rules, obj.kind) ? rules[obj.kind] : undefined;
  return rule === undefined ? ok('applied') : rule(obj);
}

/** `namespace/name` of every Service a webhook configuration or APIService in `objects` calls. */
export function webhookServices(objects: readonly KubeObject[]): Set<string> {
  const out = new Set<string>();
  const add = (svc: unknown): void => {
    const s = rec(svc);
    if (typeof s.name === 'string' && typeof s.namespace === 'string') out.add(`${s.namespace}/${s.name}`);
  };
  for (const o of objects) {
    if (o.kind === 'ValidatingWebhookConfiguration' || o.kind === 'MutatingWebhookConfiguration') {
      const hooks = o.webhooks;
      if (Array.isArray(hooks)) for (const h of hooks) add(rec(rec(h).clientConfig).service);
    } else if (o.kind === 'APIService') {
      add(rec(o.spec).service);
    } else if (o.kind === 'CustomResourceDefinition') {
      add(rec(rec(rec(rec(o.spec).conversion).webhook).clientConfig).service);
    }
  }
  return out;
}

export interface ProbeOptions {
  timeoutMs: number;
  /** Which rules judge the objects (default `watcher`). */
  strategy?: WaitStrategy;
  intervalMs?: number;
  logger: Logger;
  /** Only for tests: a clock. */
  now?: () => number;
}

type ProbeClient = Pick<ObjectReader, 'find' | 'list'>;

/**
 * Reads every object once and judges it. `release`: all the release's objects, when `objects` is
 * a part of them (which Services back a webhook is read from the whole release).
 */
export async function probeOnce(client: ProbeClient, objects: readonly KubeObject[], release: readonly KubeObject[] = objects, strategy: WaitStrategy = 'watcher'): Promise<HealthReport> {
  const backing = webhookServices(release);
  const results: ObjectHealth[] = [];
  for (const o of objects) {
    const ref = refOf(o);
    let verdict: Verdict;
    try {
      const live = await client.find(ref);
      if (live === undefined) verdict = notYet('not found');
      else if (o.kind === 'Service' && o.apiVersion === 'v1' && backing.has(`${ref.namespace ?? ''}/${ref.name}`)) {
        const slices = await client.list('discovery.k8s.io/v1', 'EndpointSlice', { namespace: ref.namespace, labelSelector: `kubernetes.io/service-name=${ref.name}` });
        verdict = endpointsHealth(slices.items);
      } else verdict = objectHealth(live, strategy);
    } catch (err) {
      verdict = notYet(`cannot read: ${errorMessage(err)}`);
    }
    results.push({ ref, healthy: verdict.healthy, reason: verdict.reason });
  }
  return { healthy: results.every((r) => r.healthy), objects: results };
}

/**
 * Probes until every object is healthy or `timeoutMs` passes; answers the last report. Between
 * polls only the objects not healthy yet are read again (a release of 40 objects waiting on one
 * Deployment is one read a poll, not 40: with many releases waiting at once that load is what
 * slows the API server they wait on). Once each has been healthy, one read of them all says
 * whether they are healthy at once; whatever is not is waited for again.
 */
export async function waitForHealthy(client: ProbeClient, objects: readonly KubeObject[], opts: ProbeOptions): Promise<HealthReport> {
  const now = opts.now ?? Date.now;
  const deadline = now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 1000;
  const latest = new Map<KubeObject, ObjectHealth>();
  const reportOf = (): HealthReport => {
    const all = objects.map((o) => latest.get(o) ?? { ref: refOf(o), healthy: false, reason: 'not read yet' });
    return { healthy: all.every((h) => h.healthy), objects: all };
  };
  let pending: readonly KubeObject[] = objects;
  for (;;) {
    const report = await probeOnce(client, pending, objects, opts.strategy);
    pending.forEach((o, i) => {
      const h = report.objects[i];
      if (h !== undefined) latest.set(o, h);
    });
    const notYet = pending.filter((o) => latest.get(o)?.healthy !== true);
    if (notYet.length === 0) {
      if (pending.length === objects.length) return reportOf();
      pending = objects; // each was healthy once: read them all together before saying so
      continue;
    }
    if (now() >= deadline) return reportOf();
    opts.logger.debug({ waiting: notYet.map((o) => `${describeRef(refOf(o))}: ${latest.get(o)?.reason ?? ''}`) }, 'waiting for health');
    pending = notYet;
    // Waiting for another's work (a rollout): the reconcile's worker is free meanwhile.
    const left = Math.max(0, deadline - now());
    await sleepWithoutWorker(Math.min(interval, left), left);
  }
}

/** One line naming what is not healthy, for messages. */
export function unhealthySummary(report: HealthReport): string {
  return report.objects
    .filter((o) => !o.healthy)
    .map((o) => `${describeRef(o.ref)}: ${o.reason}`)
    .join('; ');
}
