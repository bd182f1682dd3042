/** Polling the components' health endpoints. */
import { nodeHttp as http } from '../util/node-http.js';
import * as https from 'node:https';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface HealthProbe {
  url: string;
  /** PEM files for a client certificate and the CA to trust; absent: no verification (self-signed component certs). */
  tls?: { ca?: string; cert?: string; key?: string };
  /** Body must contain this (e.g. `ok`, `"health":"true"`). */
  expect?: string;
}

export function probeOnce(p: HealthProbe, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const url = new URL(p.url);
    const opts: https.RequestOptions = { method: 'GET', timeout: timeoutMs };
    if (url.protocol === 'https:') {
      opts.rejectUnauthorized = p.tls?.ca !== undefined;
      if (p.tls?.ca !== undefined) opts.ca = readFileSync(p.tls.ca);
      if (p.tls?.cert !== undefined) opts.cert = readFileSync(p.tls.cert);
      if (p.tls?.key !== undefined) opts.key = readFileSync(p.tls.key);
    }
    const req = (url.protocol === 'https:' ? https : http).request(url, opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve((res.statusCode ?? 0) < 300 && (p.expect === undefined || body.includes(p.expect))));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Polls until healthy; false if `stillAlive` says the process died or the time runs out. */
export async function waitHealthy(p: HealthProbe, timeoutMs: number, stillAlive: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probeOnce(p)) return true;
    if (!stillAlive()) return false;
    await sleep(200);
  }
  return false;
}
