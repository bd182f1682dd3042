/**
 * The one server of health probes and Prometheus metrics, for the manager and for
 * `helm-operator run`: `/healthz` (and `/livez`) while the process lives, `/readyz` once it is
 * ready, `/metrics` from a registry, each part served where the caller asks (one address for
 * the manager; controller-runtime's two, probes and metrics, for helm-operator). Metrics may be
 * served over HTTPS (a mounted certificate, else a self-signed one made at start, as
 * controller-runtime's `SecureServing`) and behind a TokenReview/SubjectAccessReview check.
 *
 * It is built on util/http-server's safe server: bad targets get 400, other methods 405, a
 * failing handler 500; slow clients are cut off; only GET and HEAD are served, so no request
 * body is ever read; connections are capped.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { closeServer, createSafeServer, listenOn, sendPlain, type ServingTls } from '../util/http-server.js';
import type { CertificatePem } from '../util/pki.js';
import { UsageError } from '../util/errors.js';
import type { MetricsAuthorizer } from './metrics-auth.js';

/** Connections one endpoint server holds at most: probes and scrapes are few. */
const MAX_CONNECTIONS = 256;
const MAX_CONNECTIONS_PER_ADDRESS = 16;

export interface EndpointServerOptions {
  /** For logs: "metrics", "probes". */
  name: string;
  /** `host:port`; an empty host is `defaultHost`. */
  address: string;
  /** The host of `:port` (controller-runtime: every interface, undefined here). */
  defaultHost?: string | undefined;
  logger: Logger;
  /** Serve `/metrics` from this registry. */
  metrics?: Registry;
  /** Serve `/healthz`, `/livez` and `/readyz` (ready when this says so). */
  probes?: { ready: () => boolean };
  tls?: ServingTls;
  /** Who may read `/metrics` (operator-sdk's --metrics-require-rbac). */
  auth?: MetricsAuthorizer;
}

export interface EndpointServer {
  server: Server;
  /** Base URL, `http(s)://host:port`. */
  url: string;
  close(): Promise<void>;
}

/** `host:port` split; an empty host is `defaultHost` (undefined: every interface). */
export function parseBindAddress(addr: string, defaultHost?: string): { host: string | undefined; port: number } {
  const i = addr.lastIndexOf(':');
  const rawHost = i < 0 ? addr : addr.slice(0, i);
  const rawPort = i < 0 ? '0' : addr.slice(i + 1);
  const port = /^\d+$/.test(rawPort) ? Number(rawPort) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`bind address "${addr}": the port must be a number 0-65535`);
  const host = rawHost.replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? defaultHost : host, port };
}

/** Where controller-runtime's metrics server looks for a mounted certificate (its default CertDir). */
export function metricsCertDir(): string {
  return join(tmpdir(), 'k8s-metrics-server', 'serving-certs');
}

/**
 * The metrics server's certificate: `tls.crt` and `tls.key` in `dir` when mounted there, else a
 * self-signed one made now (a throwaway CA and a leaf for this host), as controller-runtime does.
 */
export async function metricsServingCertificate(dir = metricsCertDir(), logger?: Logger): Promise<CertificatePem & { source: 'mounted' | 'self-signed'; mountedFrom?: { cert: string; key: string } }> {
  const crt = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  if (existsSync(crt) || existsSync(key)) {
    logger?.info({ dir }, 'serving metrics with the mounted certificate');
    return { certPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8'), source: 'mounted', mountedFrom: { cert: crt, key } };
  }
  // Loaded only here: pki's x509 and ASN.1 libraries cost ~15 MiB resident, and a mounted certificate needs none of them.
  const { createCertificateAuthority, issueCertificate } = await import('../util/pki.js');
  const ca = await createCertificateAuthority(`binnacle-metrics-ca@${Math.floor(Date.now() / 1000)}`);
  const leaf = await issueCertificate(ca, { commonName: 'localhost', hosts: ['localhost', '127.0.0.1', '::1', hostname()], usage: 'server' });
  logger?.info('serving metrics with an in-memory self-signed certificate');
  return { certPem: leaf.certPem + ca.certPem, keyPem: leaf.keyPem, source: 'self-signed' };
}

/** Starts serving; resolves once listening. */
export async function startEndpointServer(o: EndpointServerOptions): Promise<EndpointServer> {
  const server = createSafeServer(
    async (req, res, url) => {
      const head = req.method === 'HEAD';
      const path = url.pathname;
      if (o.metrics !== undefined && path === '/metrics') {
        if (o.auth !== undefined) {
          const d = await o.auth.check(req, path);
          if (d.status !== 200) {
            sendPlain(res, d.status, `${d.message}\n`, head);
            return;
          }
        }
        const text = await o.metrics.metrics();
        res.writeHead(200, { 'Content-Type': o.metrics.contentType });
        res.end(head ? undefined : text);
      } else if (o.probes !== undefined && (path === '/healthz' || path === '/livez')) {
        sendPlain(res, 200, 'ok', head);
      } else if (o.probes !== undefined && path === '/readyz') {
        const ready = o.probes.ready();
        sendPlain(res, ready ? 200 : 503, ready ? 'ok' : 'not ready', head);
      } else {
        sendPlain(res, 404, 'not found', head);
      }
    },
    // Probes and scrapes are few per client: one Pod cannot hold every slot and shut the kubelet's probes out.
    { name: o.name, methods: ['GET', 'HEAD'], logger: o.logger, tls: o.tls, maxConnectionsPerAddress: MAX_CONNECTIONS_PER_ADDRESS },
  );
  server.maxConnections = MAX_CONNECTIONS;
  const { host, port } = parseBindAddress(o.address, o.defaultHost);
  const url = await listenOn(server, host as string, port);
  const paths = [...(o.metrics === undefined ? [] : ['/metrics']), ...(o.probes === undefined ? [] : ['/healthz', '/readyz'])];
  o.logger.info({ url, paths, auth: o.auth !== undefined }, `serving ${o.name}`);
  return { server, url, close: () => closeServer(server) };
}
