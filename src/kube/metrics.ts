/** Prometheus metrics of controllers, registered on a registry the caller owns. */
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RequestTarget } from './client.js';
import type { ThrottleEvent } from './rate-limit.js';

/**
 * Which names the metrics carry: Binnacle's own (`binnacle_reconcile_total`, …) for the manager,
 * or controller-runtime's (`controller_runtime_reconcile_total`, `workqueue_depth`, …) for
 * `helm-operator run`, whose users' dashboards and alerts read those.
 */
export type MetricNaming = 'binnacle' | 'controller-runtime';

/** controller-runtime's result label for Binnacle's outcomes (a terminal error is an error there too). */
const CONTROLLER_RUNTIME_RESULT: Record<string, string> = { success: 'success', error: 'error', terminal: 'error', requeue: 'requeue_after' };

export class ControllerMetrics {
  private readonly total: Counter<'controller' | 'result'>;
  private readonly errors: Counter<'controller'>;
  private readonly terminal: Counter<'controller'> | undefined;
  private readonly duration: Histogram<'controller'>;
  private readonly depth: Gauge<'controller'> | Gauge<'name' | 'controller'>;
  private readonly naming: MetricNaming;
  /** controller-runtime's alone (Binnacle's manager never served them). */
  private readonly runtime: { adds: Counter<'name' | 'controller'>; retries: Counter<'name' | 'controller'>; maxWorkers: Gauge<'controller'>; active: Gauge<'controller'> } | undefined;

  constructor(registry: Registry, naming: MetricNaming = 'binnacle') {
    this.naming = naming;
    const cr = naming === 'controller-runtime';
    const registers = [registry];
    this.total = new Counter({ name: cr ? 'controller_runtime_reconcile_total' : 'binnacle_reconcile_total', help: 'Reconciles by controller and result.', labelNames: ['controller', 'result'], registers });
    this.errors = new Counter({ name: cr ? 'controller_runtime_reconcile_errors_total' : 'binnacle_reconcile_errors_total', help: 'Reconciles that returned an error.', labelNames: ['controller'], registers });
    this.terminal = cr ? new Counter({ name: 'controller_runtime_terminal_reconcile_errors_total', help: 'Reconciles that returned a terminal error.', labelNames: ['controller'], registers }) : undefined;
    this.duration = new Histogram({
      name: cr ? 'controller_runtime_reconcile_time_seconds' : 'binnacle_reconcile_duration_seconds',
      help: 'Time spent in one reconcile.',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.depth = cr
      ? new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue.', labelNames: ['name', 'controller'], registers })
      : new Gauge({ name: 'binnacle_workqueue_depth', help: 'Keys waiting in the work queue.', labelNames: ['controller'], registers });
    this.runtime = cr
      ? {
          adds: new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue.', labelNames: ['name', 'controller'], registers }),
          retries: new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue.', labelNames: ['name', 'controller'], registers }),
          maxWorkers: new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller.', labelNames: ['controller'], registers }),
          active: new Gauge({ name: 'controller_runtime_active_workers', help: 'Number of currently used workers per controller.', labelNames: ['controller'], registers }),
        }
      : undefined;
  }

  added(controller: string): void {
    this.runtime?.adds.inc({ name: controller, controller });
  }

  retried(controller: string): void {
    this.runtime?.retries.inc({ name: controller, controller });
  }

  setMaxWorkers(controller: string, n: number): void {
    this.runtime?.maxWorkers.set({ controller }, n);
  }

  activeWorkers(controller: string, delta: number): void {
    this.runtime?.active.inc({ controller }, delta);
  }

  observe(controller: string, result: string, seconds: number): void {
    this.total.inc({ controller, result: this.naming === 'controller-runtime' ? (CONTROLLER_RUNTIME_RESULT[result] ?? result) : result });
    if (result === 'error' || result === 'terminal') this.errors.inc({ controller });
    if (result === 'terminal') this.terminal?.inc({ controller });
    this.duration.observe({ controller }, seconds);
  }

  setDepth(controller: string, depth: number): void {
    if (this.naming === 'controller-runtime') (this.depth as Gauge<'name' | 'controller'>).set({ name: controller, controller }, depth);
    else (this.depth as Gauge<'controller'>).set({ controller }, depth);
  }
}

/** One custom resource as the gauge sees it. */
interface ResourceRef {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; creationTimestamp?: string };
}

/**
 * operator-lib's `resource_created_at_seconds{group,kind,name,namespace,version}` (its
 * InstrumentedEnqueueRequestForObject): each served custom resource's creation time, in Unix
 * seconds, set when the resource is seen and removed when it is deleted.
 */
export class ResourceCreatedMetric {
  private readonly gauge: Gauge<'group' | 'kind' | 'name' | 'namespace' | 'version'>;

  constructor(registry: Registry) {
    this.gauge = new Gauge({ name: 'resource_created_at_seconds', help: 'Timestamp at which a resource was created', labelNames: ['group', 'kind', 'name', 'namespace', 'version'], registers: [registry] });
  }

  // Labels in name order, as Go's client prints them (prom-client prints insertion order):
  // operator-sdk's e2e greps for the exact series text.
  private static labels(obj: ResourceRef): Record<'group' | 'kind' | 'name' | 'namespace' | 'version', string> {
    const slash = obj.apiVersion.lastIndexOf('/');
    return {
      group: slash < 0 ? '' : obj.apiVersion.slice(0, slash),
      kind: obj.kind,
      name: obj.metadata.name ?? '',
      namespace: obj.metadata.namespace ?? '',
      version: obj.apiVersion.slice(slash + 1),
    };
  }

  set(obj: ResourceRef): void {
    const at = Date.parse(obj.metadata.creationTimestamp ?? '');
    if (Number.isFinite(at)) this.gauge.set(ResourceCreatedMetric.labels(obj), at / 1000);
  }

  delete(obj: ResourceRef): void {
    this.gauge.remove(ResourceCreatedMetric.labels(obj));
  }
}

/**
 * API requests by method and status code, as controller-runtime's `rest_client_requests_total`:
 * the figure that shows a reconcile storm (requests per object far above a handful). With them,
 * how the client held itself back: the requests that waited for the client-side limiter and how
 * long (a limit too low for the work shows here), and the requests sent again because the API
 * server asked (429 of API Priority and Fairness, 5xx with Retry-After), as client-go's
 * `rest_client_request_retries_total`.
 */
export function countApiRequests(
  registry: Registry,
  client: { observeResponses(fn: (method: string, status: number, target: RequestTarget) => void): void; observeThrottling?(fn: (event: ThrottleEvent) => void): void },
): void {
  const requests = new Counter({ name: 'binnacle_rest_client_requests_total', help: 'API server requests by method and HTTP status code.', labelNames: ['method', 'code'], registers: [registry] });
  // The same requests by what they asked for: which reads or writes make up a storm.
  const byResource = new Counter({
    name: 'binnacle_rest_client_requests_by_resource_total',
    help: 'API server requests by verb (get, list, watch, create, patch, …) and resource.',
    labelNames: ['verb', 'resource'],
    registers: [registry],
  });
  client.observeResponses((method, status, target) => {
    requests.inc({ method, code: String(status) });
    byResource.inc({ verb: target.verb, resource: target.resource });
  });
  if (client.observeThrottling === undefined) return;
  const retries = new Counter({
    name: 'binnacle_rest_client_request_retries_total',
    help: 'API server requests sent again because the answer asked for it (429 of API Priority and Fairness, or 5xx with Retry-After), by method and the code that asked.',
    labelNames: ['method', 'code'],
    registers: [registry],
  });
  const throttled = new Counter({ name: 'binnacle_rest_client_rate_limiter_throttled_total', help: 'API server requests that waited for the client-side rate limiter, by verb.', labelNames: ['verb'], registers: [registry] });
  const waited = new Counter({ name: 'binnacle_rest_client_rate_limiter_wait_seconds_total', help: 'Time API server requests spent waiting for the client-side rate limiter, by verb.', labelNames: ['verb'], registers: [registry] });
  client.observeThrottling((e) => {
    if (e.type === 'retry') {
      retries.inc({ method: e.method, code: String(e.status) });
    } else {
      throttled.inc({ verb: e.verb });
      waited.inc({ verb: e.verb }, e.ms / 1000);
    }
  });
}

/**
 * How often the event loop's delay is sampled for the process metrics. prom-client's default (10 ms)
 * keeps a 10 ms timer running for good: a hundred wake-ups a second, about 0.7 CPU-seconds a
 * minute of an otherwise idle operator (measured with strace and /proc, issue 29's idle-CPU goal).
 */
export const EVENT_LOOP_SAMPLE_MS = 250;

/**
 * How often the event loop's lag is sampled for `…event_loop_lag_max_seconds`. Node's delay
 * histogram records the whole interval between its timer's ticks, so prom-client's
 * `nodejs_eventloop_lag_*` read the sampling interval plus the lag (250 ms on an idle loop), and a
 * loop held for less than one interval can go unseen. This one samples finer and reports only what
 * is past the interval: a loop held for X ms shows at least X - 50 ms. Twenty wake-ups a second.
 */
export const EVENT_LOOP_LAG_SAMPLE_MS = 50;

/** The process's own metrics (CPU, memory, event loop, handles), as Go's process collector gives a Go operator. */
export function collectProcessMetrics(registry: Registry, prefix?: string): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS, ...(prefix === undefined ? {} : { prefix }) });
  // A timer of its own rather than Node's delay histogram: the histogram skips the first sample
  // after a reset, so a block that starts just after a scrape would go unseen.
  let held = 0;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    held = Math.max(held, now - last - EVENT_LOOP_LAG_SAMPLE_MS);
    last = now;
  }, EVENT_LOOP_LAG_SAMPLE_MS).unref();
  new Gauge({
    name: `${prefix ?? ''}event_loop_lag_max_seconds`,
    help: `The longest the event loop was held past its ${EVENT_LOOP_LAG_SAMPLE_MS} ms sampling interval since the last scrape (0 when it never was).`,
    registers: [registry],
    collect() {
      // The interval under way counts too: a loop held right now shows now.
      this.set(Math.max(0, held, performance.now() - last - EVENT_LOOP_LAG_SAMPLE_MS) / 1000);
      held = 0;
    },
  });
}
