/**
 * Leader safety with two real `binnacle manager` processes on one cluster: the leader is paused
 * with SIGSTOP for longer than the lease while its controllers have work in flight, the other
 * manager takes over, and the old one is resumed. Each manager reaches the API server through a
 * recording proxy of its own (started here), so the test sees every request each one sends, with
 * the time it arrived. It shows: the old leader wrote nothing after the new one took over, the
 * new leader did write, and the old leader exited non-zero saying `leader election lost`. And a
 * replica that does not lead serves the catalogs the leader resolved (catalogd's answer 404),
 * ready and writing nothing, and takes over with them warm when the leader is killed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { API_VERSION, type ClusterCatalog, type ClusterExtension } from '../../src/api/types.js';
import { findCondition } from '../../src/kube/types.js';
import { buildCatalogImage } from '../../src/publish/catalog-image.js';
import { e2eClient, e2eKubeconfig, e2eRegistry, eventually, uniqueName } from './env.js';

const ROOT = join(import.meta.dirname, '..', '..');
const LEASE = { duration: '4s', renew: '2s', retry: '500ms' };

interface Seen {
  at: number;
  method: string;
  path: string;
  status?: number;
}

/** An HTTP proxy in front of the API server that records every request (a stand-in for the audit log). */
async function recordingProxy(): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const kc = loadKubeConfig({ kubeconfig: e2eKubeconfig() });
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const upstream = new URL(kc.getCurrentCluster()?.server ?? '');
  const agent = new https.Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: tls.rejectUnauthorized ?? true });
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const entry: Seen = { at: Date.now(), method: req.method ?? 'GET', path: req.url ?? '/' };
    seen.push(entry);
    const headers: http.OutgoingHttpHeaders = { ...req.headers, host: upstream.host };
    for (const [k, v] of Object.entries(tls.headers ?? {})) if (typeof v === 'string') headers[k.toLowerCase()] = v;
    const out = https.request({ protocol: 'https:', hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (up) => {
      entry.status = up.statusCode ?? 0;
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    // The client went away (a watch it stopped, a process that exited): stop the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

interface Manager {
  id: string;
  proc: ChildProcess;
  stderr: string;
  exit: Promise<number | null>;
  proxy: Awaited<ReturnType<typeof recordingProxy>>;
}

let client: KubeClient;
let work: string;
const leaseNs = uniqueName('leader');
const ceName = uniqueName('busy');
const managers: Manager[] = [];

async function startManager(id: string, logLevel = 'info'): Promise<Manager> {
  const proxy = await recordingProxy();
  const kubeconfig = join(work, `${id}.kubeconfig`);
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // The client library refuses http:// unless TLS checks are off (there is no TLS to check).
      clusters: [{ name: 'proxy', cluster: { server: proxy.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'proxy', user: {} }],
      contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy' } }],
      'current-context': 'proxy',
    }),
  );
  const proc = spawn(
    process.execPath,
    [
      '--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'manager',
      '--kubeconfig', kubeconfig,
      '--data-dir', join(work, id),
      '--metrics-bind-address', '127.0.0.1:0',
      '--catalog-bind-address', '127.0.0.1:0',
      '--leader-elect', '--leader-election-namespace', leaseNs,
      '--leader-elect-lease-duration', LEASE.duration,
      '--leader-elect-renew-deadline', LEASE.renew,
      '--leader-elect-retry-period', LEASE.retry,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, BINNACLE_LOG_LEVEL: logLevel } },
  );
  const m: Manager = { id, proc, stderr: '', proxy, exit: new Promise((resolve) => proc.once('exit', (code) => resolve(code))) };
  proc.stderr?.on('data', (d: Buffer) => (m.stderr += d.toString()));
  managers.push(m);
  return m;
}

/** The managers' last log lines and exit codes, for a failure message. */
function diagnose(): string {
  return managers.map((m) => `manager ${m.id} (exit ${String(m.proc.exitCode)}), ${m.proxy.seen.length} requests:\n${m.stderr.split('\n').slice(-15).join('\n')}`).join('\n');
}

const isWrite = (s: Seen): boolean => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(s.method);
const isLeaseWrite = (s: Seen): boolean => isWrite(s) && s.path.includes(`/namespaces/${leaseNs}/leases/binnacle-manager`);
const ok = (s: Seen): boolean => s.status !== undefined && s.status < 300;

async function holder(): Promise<string | undefined> {
  const lease = await client.find({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: leaseNs, name: 'binnacle-manager' });
  return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
}

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-leader-'));
});

after(async () => {
  for (const m of managers) {
    if (m.proc.exitCode === null && m.proc.signalCode === null) {
      m.proc.kill('SIGCONT');
      m.proc.kill('SIGKILL');
    }
    await m.proxy.close();
  }
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName }).catch(() => undefined);
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: leaseNs }).catch(() => undefined);
  client.close();
  await rm(work, { recursive: true, force: true });
});

test('a leader paused past its lease writes nothing once another has taken over, and exits non-zero', async () => {
  const a = await startManager('a');
  const b = await startManager('b');
  const leaderId = await eventually('a leader', async () => {
    const h = await holder();
    return h === undefined || h === '' ? undefined : h;
  }, 120_000, 200).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${diagnose()}`);
  });
  // Identities are host_pid: tell the managers apart by pid.
  const old = leaderId.endsWith(`_${a.proc.pid}`) ? a : b;
  const next = old === a ? b : a;
  assert.ok(leaderId.endsWith(`_${old.proc.pid}`), `the Lease names one of the two managers (${leaderId})`);
  await eventually('the leader to start its controllers', () => Promise.resolve(old.stderr.includes('controllers started') ? true : undefined), 120_000, 200);
  // The follower, once it campaigns (its start-up writes of CRDs and the like are behind it), must write nothing.
  await eventually('the follower to campaign', () => Promise.resolve(next.proxy.seen.some((x) => x.method === 'GET' && x.path.includes(`/namespaces/${leaseNs}/leases/binnacle-manager`)) ? true : undefined), 120_000, 200);
  const followerWrites = (): number => next.proxy.seen.filter((x) => isWrite(x) && ok(x) && !isLeaseWrite(x)).length;
  const followerBaseline = followerWrites();

  // Keep the controllers busy: the spec of a ClusterExtension changes every 200 ms, and each
  // change is a reconcile that takes the installed-state Lease and writes status.
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: ceName },
    spec: { namespace: 'default', serviceAccount: { name: 'nobody' }, source: { sourceType: 'Catalog', catalog: { packageName: 'no-such-package', version: '1.0.0' } } },
  });
  let busy = true;
  let bumps = 0;
  const churn = (async () => {
    while (busy) {
      bumps++;
      await client
        .patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName }, { spec: { source: { catalog: { version: `1.0.${bumps}` } } } })
        .catch(() => undefined);
      await sleep(200);
    }
  })();
  await eventually('the leader to write the extension\'s status', async () => {
    const ce = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName });
    return ce.status?.observedGeneration !== undefined ? true : undefined;
  }, 120_000, 200);
  await sleep(2_000);
  const oldWritesBefore = old.proxy.seen.filter((s) => isWrite(s) && ok(s) && !isLeaseWrite(s)).length;
  assert.ok(oldWritesBefore > 0, 'the leader was writing before it was paused');
  assert.equal(followerWrites(), followerBaseline, 'the follower wrote nothing while the other led');

  const pausedAt = Date.now();
  old.proc.kill('SIGSTOP');
  await eventually('the other manager to take the Lease', async () => ((await holder())?.endsWith(`_${next.proc.pid}`) === true ? true : undefined), 60_000, 100);
  // The moment it took over: the arrival of its first successful Lease write after the pause
  // (before the API server committed it, so this errs on the strict side).
  // The API server may commit that write (which the Lease read above sees) before its answer is back through the proxy, which records its status then.
  const takeover = await eventually('the new leader\'s Lease write to come back through its proxy', () => Promise.resolve(next.proxy.seen.find((s) => s.at >= pausedAt && isLeaseWrite(s) && ok(s))), 10_000, 50).catch(() => undefined);
  assert.ok(takeover !== undefined, 'the new leader\'s Lease write went through its proxy');
  await eventually('the new leader to write the extension\'s status', () =>
    Promise.resolve(next.proxy.seen.some((s) => s.at > takeover.at && isWrite(s) && ok(s) && !isLeaseWrite(s)) ? true : undefined), 120_000, 200);
  await sleep(1_000);

  const resumedAt = Date.now();
  old.proc.kill('SIGCONT');
  const code = await Promise.race([old.exit, sleep(60_000).then(() => 'still running' as const)]);
  const exitedAfterMs = Date.now() - resumedAt;
  busy = false;
  await churn;

  const oldAfter = old.proxy.seen.filter((s) => s.at >= takeover.at);
  const oldWritesAfter = oldAfter.filter((s) => isWrite(s) && ok(s));
  const oldWriteRequestsAfter = oldAfter.filter(isWrite);
  const newWritesAfter = next.proxy.seen.filter((s) => s.at >= takeover.at && isWrite(s) && ok(s) && !isLeaseWrite(s)).length;
  const refused = (old.stderr.match(/LEADERSHIP_LOST|no longer holds the leader Lease/g) ?? []).length;
  process.stdout.write(
    `# leader safety: lease ${LEASE.duration}, renew deadline ${LEASE.renew}, retry ${LEASE.retry}; extension spec changed ${bumps} times\n` +
      `#   old leader paused for ${resumedAt - pausedAt} ms; takeover ${takeover.at - pausedAt} ms after the pause\n` +
      `#   writes by the old leader before the pause: ${oldWritesBefore}; by the new leader after takeover: ${newWritesAfter}\n` +
      `#   old leader after takeover: ${oldAfter.length} requests, ${oldWriteRequestsAfter.length} mutating requests, ${oldWritesAfter.length} writes accepted; ${refused} log lines of refused writes\n` +
      `#   old leader exited with code ${String(code)} ${exitedAfterMs} ms after SIGCONT\n`,
  );
  assert.deepEqual(oldWriteRequestsAfter.map((s) => `${s.method} ${s.path} -> ${String(s.status)}`), [], 'the old leader sent no mutating request after the takeover');
  assert.notEqual(code, 'still running', 'the old leader exited after it was resumed');
  assert.notEqual(code, 0, 'the old leader exited non-zero');
  assert.match(old.stderr, /leader election lost/);
  assert.ok(next.proc.exitCode === null, 'the new leader keeps running');
});

/** A URL a manager logged (pino's JSON lines on stderr) with message `msg`. */
function loggedUrl(m: Manager, msg: string): string | undefined {
  for (const line of m.stderr.split('\n')) {
    if (!line.includes(msg)) continue;
    try {
      const rec = JSON.parse(line) as { msg?: string; url?: string };
      if (rec.msg === msg && typeof rec.url === 'string') return rec.url;
    } catch {
      // not a log record
    }
  }
  return undefined;
}

async function fetchText(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

test('the replica that does not lead serves the catalogs the leader resolved, is ready and writes nothing; killed, the leader is replaced by it with the catalog warm', async () => {
  // The first test's survivor leads: it goes (releasing the Lease on SIGTERM), and these two campaign.
  for (const m of managers.filter((x) => x.proc.exitCode === null && x.proc.signalCode === null)) {
    m.proc.kill('SIGTERM');
    await m.exit;
  }
  const catalogName = uniqueName('ha');
  const tag = `${e2eRegistry()}/${catalogName}/catalog:1`;
  const built = await buildCatalogImage(join(ROOT, 'src', 'catalog', 'testdata', 'fbc', 'valid'), { tag, push: true });
  // At debug level: the controllers log each reconcile's end.
  const c = await startManager('c', 'debug');
  const d = await startManager('d', 'debug');
  try {
    const leaderId = await eventually('c or d to lead', async () => {
      const h = await holder();
      return h !== undefined && (h.endsWith(`_${c.proc.pid}`) || h.endsWith(`_${d.proc.pid}`)) ? h : undefined;
    }, 120_000, 200).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${diagnose()}`);
    });
    const leader = leaderId.endsWith(`_${c.proc.pid}`) ? c : d;
    const follower = leader === c ? d : c;
    await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: tag } } } });
    const served = await eventually('the catalog Serving', async () => {
      const cat = await client.get<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName });
      return findCondition(cat.status?.conditions, 'Serving')?.status === 'True' ? cat : undefined;
    }, 120_000, 200);
    assert.equal(served.status?.resolvedSource?.image.ref, built.pushed, 'the leader resolved the pushed digest');
    // Its start-up writes (CRDs and the like) come before it campaigns: counted from then, as in the first test.
    await eventually('the follower to campaign', () => Promise.resolve(follower.proxy.seen.some((x) => x.method === 'GET' && x.path.includes(`/namespaces/${leaseNs}/leases/binnacle-manager`)) ? true : undefined), 120_000, 200);
    const followerBaseline = follower.proxy.seen.filter((x) => isWrite(x) && ok(x) && !isLeaseWrite(x)).length;
    const path = `/catalogs/${catalogName}/api/v1/all`;
    const urlOf = (m: Manager): string => {
      const u = loggedUrl(m, 'serving catalogs');
      assert.ok(u !== undefined, `manager ${m.id} logged its catalog URL`);
      return u;
    };
    const fromLeader = await fetchText(`${urlOf(leader)}${path}`);
    assert.equal(fromLeader.status, 200, 'the leader serves the catalog');
    // catalogd's replicas that do not lead answer 404: this one serves the same bytes.
    const fromFollower = await eventually('the follower to serve the catalog', async () => {
      const r = await fetchText(`${urlOf(follower)}${path}`);
      return r.status === 200 ? r : undefined;
    }, 60_000, 200);
    assert.equal(fromFollower.body, fromLeader.body, 'the follower serves what the leader serves');
    assert.ok(fromFollower.body.includes('"schema":"olm.package"'), 'the body is the catalog');
    const probes = loggedUrl(follower, 'serving metrics and probes');
    assert.ok(probes !== undefined, 'the follower logged its probes URL');
    assert.equal((await fetchText(`${probes}/readyz`)).status, 200, 'the follower is ready while it follows');
    assert.equal(follower.proxy.seen.filter((x) => isWrite(x) && ok(x) && !isLeaseWrite(x)).length, followerBaseline, 'the follower wrote nothing');
    // (Its start-up applies the CRDs, clustercatalogs' among them: not a write to a catalog.)
    const catalogWrites = follower.proxy.seen.filter((x) => isWrite(x) && /^\/apis\/(binnacle\.dev|olm\.operatorframework\.io)\/[^/]+\/clustercatalogs/.test(x.path));
    assert.deepEqual(catalogWrites.map((x) => `${x.method} ${x.path}`), [], 'the follower sent no write to a catalog');

    // The leader dies without giving the Lease back: the follower takes over with the catalog it holds.
    const unpackedBefore = (follower.stderr.match(/catalog unpacked and served/g) ?? []).length;
    assert.equal(unpackedBefore, 1, 'the follower unpacked the catalog once');
    leader.proc.kill('SIGKILL');
    await eventually('the follower to take the Lease', async () => ((await holder())?.endsWith(`_${follower.proc.pid}`) === true ? true : undefined), 60_000, 200);
    await eventually('the new leader to start its controllers', () => Promise.resolve(follower.stderr.includes('controllers started') ? true : undefined), 60_000, 200);
    // Its ClusterCatalog controller has reconciled the catalog (the tag resolves to the same digest): Serving, the same content, not unpacked again.
    const reconciledAsLeader = (): boolean =>
      follower.stderr
        .slice(follower.stderr.indexOf('controllers started'))
        .split('\n')
        .some((l) => l.includes('"controller":"clustercatalog"') && l.includes(`"key":"${catalogName}"`) && l.includes('"msg":"reconciled"'));
    await eventually('the new leader to reconcile the catalog', () => Promise.resolve(reconciledAsLeader() ? true : undefined), 60_000, 200);
    const after = await client.get<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName });
    assert.equal(findCondition(after.status?.conditions, 'Serving')?.status, 'True');
    assert.equal(after.status?.resolvedSource?.image.ref, built.pushed);
    assert.equal((await fetchText(`${urlOf(follower)}${path}`)).body, fromLeader.body, 'the new leader serves the same content');
    assert.equal((follower.stderr.match(/catalog unpacked and served/g) ?? []).length, 1, 'the new leader did not unpack it again');
  } finally {
    await client.delete({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName }).catch(() => undefined);
  }
});
