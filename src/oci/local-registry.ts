/**
 * A real OCI registry on loopback for tests, demos and local clusters: Debian's `docker-registry`
 * (distribution v2) run directly with a generated config, filesystem storage under `dataDir`,
 * listening on 127.0.0.1 only, deletes enabled. No systemd, no Docker.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { Logger } from 'pino';
import { stringify } from 'yaml';
import { BinnacleError } from '../util/errors.js';
import { freePort } from '../util/ports.js';
import { httpRequest } from '../util/http-request.js';

export interface LocalRegistryOptions {
  dataDir: string;
  /** 0 (default) picks a free loopback port. */
  port?: number;
  /** Require auth: htpasswd (bcrypt) file, or Bearer tokens signed by a key whose cert is in `rootCertBundle`. */
  auth?:
    | { htpasswd: { path: string; realm?: string } }
    | { token: { realm: string; service: string; issuer: string; rootCertBundle: string } };
  logger?: Logger;
  /** How long to wait for `/v2/` to answer (default 20 s). */
  startTimeoutMs?: number;
}

export interface LocalRegistry {
  url: string;
  /** `127.0.0.1:PORT`, usable as the registry part of an image reference. */
  host: string;
  /** Where blobs and repositories live (`<dataDir>/storage`). */
  storageDir: string;
  stop(): Promise<void>;
}

const BINARY_NAMES = ['docker-registry', 'registry'];

function findOnPath(names: readonly string[]): string | undefined {
  const dirs = (process.env.PATH ?? '').split(delimiter).concat(['/usr/bin', '/usr/local/bin']);
  for (const name of names) {
    for (const dir of dirs) {
      if (dir === '') continue;
      const candidate = join(dir, name);
      try {
        accessSync(candidate, fsConstants.X_OK);
        return candidate;
      } catch {
        // Not here; keep looking.
      }
    }
  }
  return undefined;
}

/**
 * The path of a tool that a Debian package provides; the OCI library installs nothing (machines
 * are set up by hack/lib.sh `ensure_apt_packages`, which hack/test.sh, bench.sh and demo.sh run,
 * and by `binnacle cluster up`). Missing: an error naming the package.
 */
export function findDebianTool(names: readonly string[], pkg: string): string {
  const found = findOnPath(names);
  if (found !== undefined) return found;
  throw new BinnacleError('terminal', 'OCI_MISSING_TOOL', `${names.join(' / ')} is not installed; install the Debian package ${pkg} (apt-get install -y ${pkg}, or: source hack/lib.sh && ensure_apt_packages)`);
}

/** The `docker-registry` binary (Debian's distribution v2). */
export function registryBinary(): string {
  return findDebianTool(BINARY_NAMES, 'docker-registry');
}


function registryConfig(storageDir: string, host: string, auth: LocalRegistryOptions['auth']): string {
  const config: Record<string, unknown> = {
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: storageDir }, delete: { enabled: true }, cache: { blobdescriptor: 'inmemory' } },
    http: { addr: host, headers: { 'X-Content-Type-Options': ['nosniff'] } },
  };
  if (auth !== undefined && 'htpasswd' in auth) {
    config.auth = { htpasswd: { realm: auth.htpasswd.realm ?? 'binnacle', path: auth.htpasswd.path } };
  } else if (auth !== undefined) {
    const t = auth.token;
    config.auth = { token: { realm: t.realm, service: t.service, issuer: t.issuer, rootcertbundle: t.rootCertBundle } };
  }
  return stringify(config);
}

async function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function startOnce(binary: string, opts: LocalRegistryOptions, port: number): Promise<LocalRegistry> {
  const host = `127.0.0.1:${port}`;
  const storageDir = join(opts.dataDir, 'storage');
  await mkdir(storageDir, { recursive: true });
  const configPath = join(opts.dataDir, 'config.yml');
  await writeFile(configPath, registryConfig(storageDir, host, opts.auth));

  const child = spawn(binary, ['serve', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  // Never leave a registry behind when this process exits, however it exits.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const stop = async (): Promise<void> => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 5000))) {
      child.kill('SIGKILL');
      await waitForExit(child, 5000);
    }
  };

  const url = `http://${host}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 20_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new BinnacleError('terminal', 'OCI_REGISTRY_START', `docker-registry exited (${child.exitCode ?? child.signalCode ?? '?'}) while starting: ${stderr.trim().slice(-800)}`);
    }
    try {
      const res = await httpRequest(`${url}/v2/`, { signal: AbortSignal.timeout(1000) });
      res.discard();
      if (res.status === 200 || res.status === 401) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new BinnacleError('transient', 'OCI_REGISTRY_START', `docker-registry did not answer on ${url}/v2/ in time: ${stderr.trim().slice(-800)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  opts.logger?.debug({ url, pid: child.pid }, 'local registry started');
  return { url, host, storageDir, stop };
}

export async function startLocalRegistry(opts: LocalRegistryOptions): Promise<LocalRegistry> {
  const binary = registryBinary();
  await mkdir(opts.dataDir, { recursive: true });
  // A port picked by freePort can be taken before the registry binds it; try a few times.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = opts.port !== undefined && opts.port !== 0 ? opts.port : await freePort();
    try {
      return await startOnce(binary, opts, port);
    } catch (err) {
      lastError = err;
      if (opts.port !== undefined && opts.port !== 0) break;
    }
  }
  throw lastError instanceof Error ? lastError : new BinnacleError('terminal', 'OCI_REGISTRY_START', String(lastError));
}
