/**
 * A view of a client whose every write is a server-side dry run (`dryRun=All`): the API server
 * admits, defaults and validates it and answers what it would store, and stores nothing. What
 * `binnacle plan` runs on, so that nothing it calls — renderers, certificate providers — can
 * change the cluster, whatever it tries to write.
 *
 * Every request of KubeClient goes through `request` (reads and writes alike) or
 * `rawRequest`; the view adds the dry-run parameter to the mutating ones, and wraps any client
 * a method returns (an impersonating one, say) the same way.
 */
import { KubeClient } from './client.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

type RequestFn = KubeClient['request'];
type RawRequestFn = KubeClient['rawRequest'];

export function dryRunClient(client: KubeClient): KubeClient {
  const request: RequestFn = (method, path, opts) => {
    if (!MUTATING.has(method.toUpperCase())) return client.request.call(view, method, path, opts);
    return client.request.call(view, method, path, { ...opts, query: { ...opts.query, dryRun: 'All' }, what: `${opts.what} (dry run)` });
  };
  const rawRequest: RawRequestFn = (method, path, body) => {
    const dry = MUTATING.has(method.toUpperCase()) ? `${path}${path.includes('?') ? '&' : '?'}dryRun=All` : path;
    return client.rawRequest.call(view, method, dry, body);
  };
  const view: KubeClient = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'request') return request;
      if (prop === 'rawRequest') return rawRequest;
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const out: unknown = (value as (...a: unknown[]) => unknown).apply(view, args);
        return out instanceof KubeClient ? dryRunClient(out) : out;
      };
    },
  });
  return view;
}
