/** Prometheus metrics of controllers, registered on a registry the caller owns. */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RequestTarget } from './client.js';

export class ControllerMetrics {
  private readonly total: Counter<'controller' | 'result'>;
  private readonly errors: Counter<'controller'>;
  private readonly duration: Histogram<'controller'>;
  private readonly depth: Gauge<'controller'>;

  constructor(registry: Registry) {
    this.total = new Counter({ name: 'binnacle_reconcile_total', help: 'Reconciles by controller and result.', labelNames: ['controller', 'result'], registers: [registry] });
    this.errors = new Counter({ name: 'binnacle_reconcile_errors_total', help: 'Reconciles that returned an error.', labelNames: ['controller'], registers: [registry] });
    this.duration = new Histogram({
      name: 'binnacle_reconcile_duration_seconds',
      help: 'Time spent in one reconcile.',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.depth = new Gauge({ name: 'binnacle_workqueue_depth', help: 'Keys waiting in the work queue.', labelNames: ['controller'], registers: [registry] });
  }

  observe(controller: string, result: string, seconds: number): void {
    this.total.inc({ controller, result });
    if (result === 'error' || result === 'terminal') this.errors.inc({ controller });
    this.duration.observe({ controller }, seconds);
  }

  setDepth(controller: string, depth: number): void {
    this.depth.set({ controller }, depth);
  }
}

/**
 * API requests by method and status code, as controller-runtime's `rest_client_requests_total`:
 * the figure that shows a reconcile storm (requests per object far above a handful).
 */
export function countApiRequests(registry: Registry, client: { observeResponses(fn: (method: string, status: number, target: RequestTarget) => void): void }): void {
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
}
