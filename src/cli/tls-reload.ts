/**
 * A served certificate read again when its files change, as controller-runtime's certwatcher
 * does: a Secret mounted as a directory is swapped by the kubelet when it changes (install-self
 * renewing it, or cert-manager), and the server takes the new pair for new connections without a
 * restart. The files are polled (two small reads every interval): file events do not follow the
 * kubelet's symlink swap reliably. A pair that cannot be read or used is logged and the one in use
 * kept, so a half-written Secret never stops the server.
 */
import type { Logger } from 'pino';
import { errorMessage } from '../util/errors.js';
import { readTlsPair } from './flags.js';

export type TlsPair = { certPem: string; keyPem: string };

export interface TlsWatch {
  files: { cert: string; key: string };
  /** The flags the files came from, for messages. */
  flags: { cert: string; key: string };
  /** The pair in use now (read at start). */
  current: TlsPair;
  logger: Logger;
  intervalMs?: number;
}

/** Starts polling `w.files`; each changed, readable pair goes to `use` (which may throw to refuse it). Answers what stops polling. */
export function watchTlsPair(w: TlsWatch, use: (pair: TlsPair) => void): () => void {
  let current = w.current;
  // What was refused last: said once, not at every poll.
  let refused = '';
  let reading = false;
  const check = async (): Promise<void> => {
    if (reading) return;
    reading = true;
    try {
      const pair = await readTlsPair(w.files, w.flags);
      if (pair === undefined || (pair.certPem === current.certPem && pair.keyPem === current.keyPem)) return;
      try {
        use(pair);
      } catch (err) {
        if (refused !== pair.certPem + pair.keyPem) w.logger.warn({ cert: w.files.cert, err: errorMessage(err) }, 'the certificate files changed but cannot be used; still serving the previous certificate');
        refused = pair.certPem + pair.keyPem;
        return;
      }
      current = pair;
      w.logger.info({ cert: w.files.cert }, 'serving the renewed certificate');
    } catch (err) {
      if (refused !== errorMessage(err)) w.logger.warn({ cert: w.files.cert, err: errorMessage(err) }, 'the certificate files cannot be read; still serving the previous certificate');
      refused = errorMessage(err);
    } finally {
      reading = false;
    }
  };
  const timer = setInterval(() => void check(), w.intervalMs ?? 10_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * A metrics server's certificate read again when it was mounted (`--metrics-cert-dir`, or
 * controller-runtime's default folder): a pair read once expires under a manager that runs longer
 * than the certificate lives. Answers what stops it; nothing to stop for a self-signed pair.
 */
export function watchMetricsCertificate(cert: TlsPair & { mountedFrom?: { cert: string; key: string } }, use: (pair: TlsPair) => void, logger: Logger, intervalMs?: number): () => void {
  if (cert.mountedFrom === undefined) return () => {};
  return watchTlsPair({ files: cert.mountedFrom, flags: { cert: '--metrics-cert-dir tls.crt', key: '--metrics-cert-dir tls.key' }, current: cert, logger, ...(intervalMs === undefined ? {} : { intervalMs }) }, use);
}
