/**
 * Hostile releases on the local control plane, against the manager as a real process (issue 43,
 * section 6). The manager runs leader-elected (`--leader-elect`, its Lease in a namespace of this
 * test's own) under the memory ceiling install-self's Deployment gives it
 * (MANAGER_MEMORY_LIMIT_MIB, 1 GiB): in a cgroup of its own with that limit when this process may
 * make one (cgroup v2 `memory.max`, or cgroup v1 `memory.limit_in_bytes`, as root), else with
 * no ceiling but the measurement below; the test says which. Every SAMPLE_MS it scrapes the
 * manager's /metrics (the event loop's longest hold since the last scrape,
 * `binnacle_process_event_loop_lag_max_seconds`, sampled every 50 ms), its peak RSS (VmHWM of
 * /proc/<pid>/status) and the Lease's holder.
 *
 * A HelmOperator serves the corpus prometheus-pushgateway chart (the tenant test's). Through it:
 * (a) a Helm release record planted in a tenant namespace whose `data.release` is a gzip bomb
 * (zeros, ~770 KB compressed, ~770 MB inflated) beside a CR of that release; (b) a CR whose
 * `extraManifests` render 100,000 ConfigMaps; (c) a legitimate tenant's CR in another namespace,
 * changed while the hostile ones are being refused. The manager must never exit, stay under
 * 1 GiB, keep its lease (one holder over the run), keep its event loop's lag under 250 ms; the
 * hostile CRs fail by name (the record by its Secret's name, the render by the limit) with
 * nothing applied; the legitimate change converges within 30 s. The lag is measured too on the
 * largest render the default limits accept (2,000 objects, several MiB).
 *
 * real-node.test.ts does the same to the manager as install-self runs it, a Pod on the real node
 * (its container's cgroup and limit). BINNACLE_HOSTILE_MANY=1 adds twenty hostile CRs at once (ten of each kind), on demand.
 * BINNACLE_HOSTILE_WIDE=1 adds the largest accepted render (its ~2,000 applies take minutes on a
 * shared machine: on demand, not in CI).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSION } from '../../src/api/types.js';
import { freePort } from '../../src/util/ports.js';
import { DEFAULT_RELEASE_LIMITS, countDocuments } from '../../src/apply/limits.js';
import { MANAGER_MEMORY_LIMIT_MIB } from '../../src/self/manifests.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { e2eClient, e2eKubeconfig, e2eRegistry, eventually, uniqueName } from './env.js';
import { assertHostileRefused, gzipBomb, lagSecondsOf, hostileHelmOperator, hugeRenderSpec, plantBombRecord, pushHostileChart, tenantNamespaces, type HostileCr as Cr, type PlantedRecord } from './hostile.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** A group of this run's own: a CRD an interrupted run left belongs to its HelmOperator. */
const GROUP = `${uniqueName('hostile')}.e2e.binnacle.dev`;
const KIND = 'Gateway';
const API = `${GROUP}/v1alpha1`;
const LIMIT_BYTES = MANAGER_MEMORY_LIMIT_MIB * 1024 * 1024;
const MAX_LAG_SECONDS = 0.25;
const CONVERGE_MS = 30_000;
const SAMPLE_MS = 2_000;
const MANY = process.env.BINNACLE_HOSTILE_MANY === '1';
/** The largest render the default limits accept, applied and measured: ~2,000 server-side applies, minutes on a busy machine, so on demand. */
const WIDE = process.env.BINNACLE_HOSTILE_WIDE === '1';


interface Sample {
  at: number;
  lagSeconds: number | undefined;
  hwmBytes: number | undefined;
  holder: string | undefined;
}

/** A cgroup with install-self's memory limit, when this process may make one; undefined when not. */
async function memoryCgroup(name: string): Promise<{ dir: string; how: string } | undefined> {
  const v2 = '/sys/fs/cgroup/cgroup.controllers';
  const tries: { dir: string; file: string; how: string }[] = existsSync(v2)
    ? [{ dir: join('/sys/fs/cgroup', name), file: 'memory.max', how: 'cgroup v2 memory.max' }]
    : [{ dir: join('/sys/fs/cgroup/memory', name), file: 'memory.limit_in_bytes', how: 'cgroup v1 memory.limit_in_bytes' }];
  for (const t of tries) {
    try {
      await mkdir(t.dir);
      await writeFile(join(t.dir, t.file), String(LIMIT_BYTES));
      // No swap to hide in, where the kernel allows saying so.
      await writeFile(join(t.dir, 'memory.memsw.limit_in_bytes'), String(LIMIT_BYTES)).catch(() => undefined);
      await writeFile(join(t.dir, 'memory.swap.max'), '0').catch(() => undefined);
      return { dir: t.dir, how: `${t.how} = ${LIMIT_BYTES}` };
    } catch {
      await rmdir(t.dir).catch(() => undefined);
    }
  }
  return undefined;
}


describe('hostile releases against the manager process: it keeps its lease, its memory and its event loop', () => {
  let admin: KubeClient;
  let work = '';
  let child: ChildProcess | undefined;
  let cgroup: { dir: string; how: string } | undefined;
  let metricsPort = 0;
  let sampler: NodeJS.Timeout | undefined;
  let exited: string | undefined;
  let stderr = '';
  const samples: Sample[] = [];
  let ready = 0;
  const hostileNs = uniqueName('hostile');
  const legitNs = uniqueName('legit');
  const systemNs = uniqueName('hostile-sys');
  const hopName = uniqueName('hostile-gw');

  const crRef = (namespace: string, name: string) => ({ apiVersion: API, kind: KIND, namespace, name });
  const getCr = (namespace: string, name: string) => admin.get<Cr>(crRef(namespace, name));
  const applyCr = (namespace: string, name: string, spec: Record<string, unknown>) =>
    admin.apply({ apiVersion: API, kind: KIND, metadata: { name, namespace }, spec }, { force: true, fieldManager: 'tenant' });

  async function conditionOf(namespace: string, name: string, type: string, match: (c: { status: string; reason: string; message: string }) => boolean, timeoutMs = 120_000) {
    return eventually(
      `${namespace}/${name} ${type}`,
      async () => {
        if (exited !== undefined) throw new Error(`the manager exited (${exited}): ${stderr.slice(-3000)}`);
        const c = findCondition((await getCr(namespace, name)).status?.conditions, type);
        return c !== undefined && match(c) ? c : undefined;
      },
      timeoutMs,
      250,
    );
  }

  async function sample(): Promise<void> {
    const pid = child?.pid;
    const s: Sample = { at: Date.now(), lagSeconds: undefined, hwmBytes: undefined, holder: undefined };
    const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()).catch(() => '');
    s.lagSeconds = lagSecondsOf(text);
    if (pid !== undefined) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      const hwm = /^VmHWM:\s+(\d+) kB/m.exec(status);
      if (hwm?.[1] !== undefined) s.hwmBytes = Number(hwm[1]) * 1024;
    }
    const lease = await admin.find<KubeObject & { spec?: { holderIdentity?: string } }>({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: systemNs, name: 'binnacle-manager' }).catch(() => undefined);
    s.holder = lease?.spec?.holderIdentity;
    samples.push(s);
  }

  const maxLag = (from = 0, to = Infinity): number => Math.max(0, ...samples.filter((s) => s.at >= from && s.at <= to && s.lagSeconds !== undefined).map((s) => s.lagSeconds ?? 0));
  const peakRss = (): number => Math.max(0, ...samples.map((s) => s.hwmBytes ?? 0));
  const holders = (): string[] => [...new Set(samples.map((s) => s.holder).filter((h): h is string => h !== undefined && h !== ''))];


  /** The largest render the default limits accept (the chart's objects and ConfigMaps up to maxObjects, ~3 KiB each): applied, and the lag over it. */
  async function largestAccepted(t: { diagnostic(m: string): void }, chartObjects: number): Promise<number> {
    // The largest render the default limits accept: the chart's objects and ConfigMaps up to
    // maxObjects, each ConfigMap ~3 KiB, several MiB in all.
    const wideCount = DEFAULT_RELEASE_LIMITS.maxObjects - chartObjects;
    const wideStart = Date.now();
    await applyCr(hostileNs, 'wide', { extraManifests: [`{{- range $i := until ${wideCount} }}\n{{- if $i }}\n---\n{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide-{{ $i }}\ndata:\n  pad: {{ repeat 3000 "w" | quote }}\n{{- end }}\n`] });
    await conditionOf(hostileNs, 'wide', 'Deployed', (c) => c.status === 'True', 600_000);
    const wideMs = Date.now() - wideStart;
    const wideManifest = (await getCr(hostileNs, 'wide')).status?.deployedRelease?.manifest ?? '';
    await new Promise((r) => setTimeout(r, SAMPLE_MS + 500));
    const wideLag = maxLag(wideStart);
    const wideLive = (await admin.list('v1', 'ConfigMap', { namespace: hostileNs })).items.filter((c) => c.metadata.name?.startsWith('wide-') === true).length;
    assert.equal(wideLive, wideCount, 'every ConfigMap of the largest accepted render is applied');
    // Several MiB: more than a CR's status holds (deployed-release.ts); status names where to read it.
    assert.match(wideManifest, /^# The manifest is \d+ bytes, more than status holds .*helm get manifest wide/);
    t.diagnostic(`largest accepted render: ${wideCount} ConfigMaps + ${chartObjects} chart objects (${DEFAULT_RELEASE_LIMITS.maxObjects}), status.deployedRelease.manifest: ${wideManifest.trim()}, Deployed in ${wideMs} ms, max event-loop lag ${(wideLag * 1000).toFixed(0)} ms`);
    return wideLag;
  }

  before(async () => {
    admin = await e2eClient();
    work = await mkdtemp(join(tmpdir(), 'hostile-e2e-'));
    const chartRef = await pushHostileChart(work, e2eRegistry(), 'hostile-charts', e2eKubeconfig());
    await tenantNamespaces(admin, [hostileNs, legitNs]);

    cgroup = await memoryCgroup(`binnacle-hostile-${process.pid}`);
    metricsPort = await freePort();
    // BINNACLE_HOSTILE_CPU_PROF=<dir>: the manager's CPU profile there (written as it exits), to see what holds its loop.
    const prof = process.env.BINNACLE_HOSTILE_CPU_PROF;
    const argv = [
      ...(prof === undefined || prof === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${prof}`]),
      '--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'manager',
      '--kubeconfig', e2eKubeconfig(), '--data-dir', join(work, 'manager'),
      '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--catalog-bind-address', '127.0.0.1:0',
      '--leader-elect', '--leader-election-namespace', systemNs, '--health-timeout', '60s',
    ];
    // In the cgroup from its first instruction: the shell joins it, then becomes node.
    child = cgroup === undefined
      ? spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn('/bin/sh', ['-c', `echo $$ > ${join(cgroup.dir, 'cgroup.procs')} && exec "$0" "$@"`, process.execPath, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-4 * 1024 * 1024);
    });
    child.once('exit', (code, signal) => {
      exited = `code ${String(code)}, signal ${String(signal)}`;
    });
    process.stdout.write(`# manager pid ${String(child.pid)}, memory ceiling: ${cgroup?.how ?? 'none could be set (not root): RSS measured only'}\n`);
    await eventually('the manager ready', async () => {
      if (exited !== undefined) throw new Error(`the manager exited (${exited}): ${stderr.slice(-2000)}`);
      const res = await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    }, 120_000, 200);
    sampler = setInterval(() => void sample(), SAMPLE_MS);
    await hostileHelmOperator(admin, hopName, chartRef, GROUP, KIND);
    ready = Date.now();
  });

  after(async () => {
    if (sampler !== undefined) clearInterval(sampler);
    await admin.delete({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName }).catch(() => undefined);
    await eventually('HelmOperator gone', async () => ((await admin.find({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName })) === undefined ? true : undefined), 180_000).catch(() => undefined);
    if (child !== undefined && exited === undefined) {
      const gone = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      if (exited === undefined) child.kill('SIGKILL');
    }
    for (const ns of [hostileNs, legitNs, systemNs]) await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
    if (cgroup !== undefined) await eventually('cgroup empty', async () => ((await rmdir(cgroup?.dir ?? '').then(() => true, () => undefined))), 20_000, 500).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
    admin.close();
  });

  test('a planted gzip-bomb record, a 100,000-object render (and on demand twenty at once) fail by name; a legitimate tenant converges; the manager keeps lease, memory and event loop', async (t) => {
    const started = Date.now();
    // The legitimate tenant, Deployed first.
    await applyCr(legitNs, 'gw', { replicaCount: 1 });
    await conditionOf(legitNs, 'gw', 'Deployed', (c) => c.status === 'True');
    const chartObjects = countDocuments((await getCr(legitNs, 'gw')).status?.deployedRelease?.manifest ?? '');
    assert.ok(chartObjects > 0, 'the chart renders objects of its own');

    let wideLag: number | undefined;
    if (WIDE) wideLag = await largestAccepted(t, chartObjects);

    // (a) The planted record: Helm's Secret of a release about to be made, its data.release a gzip bomb.
    const bomb = gzipBomb(760 * 1024);
    const plant = (name: string): Promise<PlantedRecord> => plantBombRecord(admin, hostileNs, name, bomb.data);
    const planted = await plant('bombed');
    t.diagnostic(`planted ${planted.secret}: ${bomb.data.length} bytes of gzip inflating to ${Math.round(bomb.inflatedBytes / 2 ** 20)} MiB`);
    const hostileStart = Date.now();
    await applyCr(hostileNs, 'bombed', { replicaCount: 1 });
    // (b) A render of 100,000 objects.
    await applyCr(hostileNs, 'huge', hugeRenderSpec('huge'));
    const many: { name: string; kind: 'bomb' | 'huge'; planted?: PlantedRecord }[] = [];
    if (MANY) {
      for (let i = 0; i < 10; i++) many.push({ name: `bombed-${i}`, kind: 'bomb', planted: await plant(`bombed-${i}`) });
      for (let i = 0; i < 10; i++) many.push({ name: `huge-${i}`, kind: 'huge' });
      await Promise.all(many.map((m) => applyCr(hostileNs, m.name, m.kind === 'bomb' ? { replicaCount: 1 } : hugeRenderSpec(m.name))));
    }

    // (c) Meanwhile the legitimate tenant changes a value: it converges within 30 s.
    const changeStart = Date.now();
    await applyCr(legitNs, 'gw', { replicaCount: 2 });
    await eventually('the legitimate change applied', async () => ((((await admin.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: legitNs, name: 'gw-prometheus-pushgateway' })).spec as { replicas?: number }).replicas === 2) ? true : undefined), 120_000, 250);
    await conditionOf(legitNs, 'gw', 'Deployed', (c) => c.status === 'True');
    const convergeMs = Date.now() - changeStart;
    t.diagnostic(`the legitimate tenant's change converged in ${convergeMs} ms`);

    // The hostile CRs fail by name, nothing of them applied.
    const refused = await assertHostileRefused(admin, {
      api: API,
      kind: KIND,
      namespace: hostileNs,
      bombed: [{ name: 'bombed', ...planted }, ...many.flatMap((m) => (m.planted === undefined ? [] : [{ name: m.name, ...m.planted }]))],
      huge: ['huge', ...many.filter((m) => m.kind === 'huge').map((m) => m.name)],
      timeoutMs: MANY ? 300_000 : 240_000,
      check: () => {
        if (exited !== undefined) throw new Error(`the manager exited (${exited}): ${stderr.slice(-3000)}`);
      },
    });
    t.diagnostic(`bombed: ${refused.record}`);
    t.diagnostic(`huge: ${refused.render}`);
    const hostileMs = Date.now() - hostileStart;
    assert.equal(findCondition((await getCr(legitNs, 'gw')).status?.conditions, 'Deployed')?.status, 'True', 'the legitimate tenant stays Deployed');

    // A little longer under the hostile CRs' retries, then the verdict.
    await new Promise((r) => setTimeout(r, 3 * SAMPLE_MS));
    await sample();
    // The verdict is on the scrapes that overlap the hostile phase; the legitimate tenant's first
    // install and the manager's start before it are reported, not judged (448 ms once in a
    // loaded CI run, at start-up, before any hostile CR existed).
    const lag = maxLag(hostileStart);
    const setupLag = maxLag(started, hostileStart - 1);
    const rss = peakRss();
    const seen = holders();
    const summary = `manager ${cgroup?.how ?? 'without a cgroup'}: peak RSS (VmHWM) ${Math.round(rss / 2 ** 20)} MiB, max event-loop lag ${(lag * 1000).toFixed(0)} ms while the hostile CRs were handled (${(setupLag * 1000).toFixed(0)} ms before, at start-up and the legitimate first install) over ${samples.length} scrapes every ${SAMPLE_MS} ms, lease holders ${JSON.stringify(seen)}, legitimate change converged in ${convergeMs} ms, hostile CRs refused in ${hostileMs} ms${MANY ? ' (twenty more at once)' : ''}, largest accepted render's lag ${wideLag === undefined ? 'not measured (BINNACLE_HOSTILE_WIDE=1)' : `${(wideLag * 1000).toFixed(0)} ms`}`;
    process.stdout.write(`# ${summary}\n`);
    t.diagnostic(summary);
    // Where the loop was held: every scrape over 100 ms, by time since the HelmOperator was Ready.
    const held = samples.filter((s) => (s.lagSeconds ?? 0) > 0.1).map((s) => `${((s.at - ready) / 1000).toFixed(0)} s: ${((s.lagSeconds ?? 0) * 1000).toFixed(0)} ms`);
    t.diagnostic(`scrapes over 100 ms (legitimate CR applied at ${((started - ready) / 1000).toFixed(0)} s, hostile CRs at ${((hostileStart - ready) / 1000).toFixed(0)} s): ${held.join(', ') || 'none'}`);
    assert.equal(exited, undefined, `the manager never exited (${exited ?? ''}): ${stderr.slice(-2000)}`);
    assert.ok(rss > 0 && rss < LIMIT_BYTES, `peak RSS ${rss} under ${LIMIT_BYTES}`);
    assert.equal(seen.length, 1, `one lease holder over the run: ${JSON.stringify(seen)}`);
    assert.ok(samples.filter((s) => s.lagSeconds !== undefined).length >= 5, 'the lag was scraped');
    assert.ok(convergeMs < CONVERGE_MS, `the legitimate change converged in ${convergeMs} ms`);
    // 966-1016 ms at first; 313 ms once records inflated on the thread pool and the render cache
    // stopped cloning whole answers; 161 and 122 ms (load 12-18 on two cores) since the engine
    // checks the release limits where it renders and answers a 100,000-object render in a few
    // bytes, not ~30 MB read and parsed on the main thread.
    assert.ok(lag < MAX_LAG_SECONDS, `max event-loop lag ${(lag * 1000).toFixed(0)} ms while the hostile CRs were handled, under ${MAX_LAG_SECONDS * 1000} ms`);
  });
});
