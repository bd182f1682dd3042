/**
 * Catalogs at OperatorHub's size, served side by side on this machine against the local control
 * plane: Binnacle's manager, catalogd, and `opm serve`. Each figure is a ratio Binnacle / reference
 * measured in the same run.
 *
 * The catalogs: the operatorhub-2021 corpus rendered (`binnacle catalog render`, the packages
 * that validate), copied under new names (bench/lib/fbc-scale.ts) until each holds `--bundles`
 * bundles; `--catalogs` of them, each with its own names, built into catalog images (`binnacle
 * catalog build`, FBC under /configs) and pushed to the cluster's registry. The defaults, 3 of
 * 2,000 bundles, are OpenShift's three default catalogs (about 6,000 bundles together); one
 * catalog of OperatorHub's size is `--catalogs 1 --bundles 4500`. The corpus's bundles carry
 * their manifests as `olm.bundle.object` properties (about 24 KB a bundle), so these catalogs are
 * larger in bytes than today's (OpenShift's three are about 60 MB together): a heavier test.
 *
 * catalogd: operator-controller v1.11.0's `cmd/catalogd`, built from the Go module proxy by
 * hack/bench-tools/catalogd/build.sh (build tag containers_image_openpgp, as its Makefile), run
 * as a process with the admin kubeconfig, its standard ClusterCatalog CRD from the same module
 * applied before and deleted after, serving its catalog API over HTTPS with the bench's
 * certificate (`--tls-cert`, `--tls-key`, as its Deployment with cert-manager's), the
 * `APIV1MetasHandler` feature gate on (the metas queries need it; v1.11's standard Helm values
 * list it), its mutating webhook's server given a certificate in the directory controller-runtime
 * reads (no webhook configuration in the cluster: the bench sets the name label itself), plain
 * http to the cluster's registry through a registries.conf (CONTAINERS_REGISTRIES_CONF).
 *
 * Binnacle: `binnacle manager` as the image runs it (`node --optimize-for-size --no-maglev
 * bin/binnacle.js manager`, the built bundle, with the image's glibc allocator settings, MALLOC_ENV), with a fresh --data-dir, serving the catalog API over HTTPS with
 * the same certificate (`--catalog-tls-cert`, `--catalog-tls-key`, as install-self does), OLM
 * v1's API on (it installs its own copy of the same v1.11 CRDs), the same registries.conf
 * (BINNACLE_REGISTRIES_CONF). Both are given the same objects: `olm.operatorframework.io/v1`
 * ClusterCatalogs naming the images by tag.
 *
 * OLM v1 (the `olmv1` side), role for role: catalogd as above with operator-controller v1.11.0
 * beside it (hack/bench-tools/operator-controller/build.sh, the same tag), each a process; the
 * manager does what these two do. operator-controller fetches every Serving catalog's
 * `/api/v1/all` and keeps it on disk, one file a record, to resolve from (its ClusterCatalog
 * controller); it runs with the admin kubeconfig, its standard ClusterExtension CRD, catalogd's CA
 * (`--catalogd-cas-dir`), its metrics server on the bench's certificate, no leader election
 * (neither catalogd nor the manager has it here). Its memory and CPU are summed with catalogd's
 * (each process's peak: their sum bounds the pair's from above, as for opm's processes);
 * "resolvable" is until its cache holds every catalog, Binnacle's is Serving (the unpack that
 * stores a catalog builds its resolution view); its steady RSS is read 15 s after resolvable. No
 * queries: they would be catalogd's again. Not the issue's goal, which names catalogd alone:
 * judged apart, as "role for role".
 *
 * opm serve: operator-registry's opm (hack/bench-tools/opm/build.sh), one `opm serve DIR` per
 * catalog over the same FBC directories the images hold, as a catalog image's entrypoint runs it,
 * each with its cache built beforehand (`--cache-only`, as the Dockerfile opm generates does at
 * image build; that time reported apart) and its integrity checked at start. It serves the gRPC registry API, not
 * catalogd's HTTP API: its "serving" time is until its port accepts a connection (opm listens
 * only once the catalog is loaded), and the HTTP queries are not asked of it.
 *
 * Each round, each side alone (Binnacle at `--modes defaults,matched`: defaults two ClusterCatalogs
 * loaded at once, matched `--catalog-workers 1` as catalogd's ClusterCatalog controller, which
 * reconciles one at a time; runs stored before `--catalog-workers` existed passed `--workers 1`,
 * which the catalog controller did not read: both of their Binnacle rows ran with two). Measured: the time from the first ClusterCatalog created until all are Serving=True
 * (opm: from start until every port accepts), the process tree's peak RSS (VmHWM, sampled) and its
 * steady RSS (VmRSS 15 s after all served, then once more after the queries), CPU seconds to
 * Serving; then over HTTPS with one keep-alive connection: `/api/v1/all` of each catalog
 * downloaded `--downloads` times (MB/s), and `--queries` requests each of
 * `/api/v1/metas?schema=olm.package` and `/api/v1/metas?package=<one>` (p50, p99).
 * Binnacle alone: one extension resolved against all three catalogs (the resolver in process over
 * the catalogs loaded once, as the manager holds them; median of 21), and `binnacle resolve` with
 * the three as a command (its wall time, loading included).
 *
 * Goals (the issue's): less memory (peak and steady) than catalogd and than opm serve with the
 * same catalogs, Serving at least as soon as both, metas queries under 50 ms at p99, resolution
 * of one extension against all three under 1 s.
 *
 * usage: npm run bench -- catalog-scale [--bundles 2000] [--catalogs 3] [--rounds 1] [--node-flags '...']
 *        [--modes defaults,matched] [--queries 200] [--downloads 3] [--only binnacle|catalogd|olmv1|opm] [--malloc-env off]
 * The cluster: `binnacle cluster up --name BINNACLE_BENCH_CLUSTER` (default `catalog-scale`).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { parseAllDocuments } from 'yaml';
import { loadFbcDir, toFbcJson } from '../src/catalog/index.js';
import { clusterUp } from '../src/cluster/index.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfig } from '../src/kube/config.js';
import type { KubeObject } from '../src/kube/types.js';
import { CatalogIndex, resolve } from '../src/resolve/index.js';
import { loadCatalog } from '../src/resolve/catalog-source.js';
import { mallocEnv, NODE_FLAGS } from '../src/self/image.js';
import { createCertificateAuthority, issueCertificate } from '../src/util/pki.js';
import { freePort } from '../src/util/ports.js';
import { scaledCatalog, validPackages } from './lib/fbc-scale.js';
import { arg, cpuSeconds, procStatus, ROOT, run, spawnLogged, stopChild, treePeakSampler, waitHttpOk } from './lib/helm-operator.js';
import { judged, spread, startRun, type GoalVerdict, type Spread } from './lib/results.js';
import type { CatalogScaleSummary } from './lib/summaries.js';

const CORPUS = process.env.BINNACLE_CORPUS ?? path.join(ROOT, '..', 'shared', 'corpus', 'operatorhub-2021');
const WORK = path.join(ROOT, '.cache', 'bench-catalog-scale');
const CLUSTER = process.env.BINNACLE_BENCH_CLUSTER ?? 'catalog-scale';
const BUNDLES = Number(arg('--bundles') ?? 2000);
const CATALOGS = Number(arg('--catalogs') ?? 3);
const ROUNDS = Number(arg('--rounds') ?? 1);
const QUERIES = Number(arg('--queries') ?? 200);
const DOWNLOADS = Number(arg('--downloads') ?? 3);
/** The HTTP client of the queries: curl (default; see curlGets) or Node's own https. */
const CLIENT = arg('--client') ?? 'curl';
if (CLIENT !== 'curl' && CLIENT !== 'node') throw new Error(`--client ${CLIENT}: expected curl or node`);
const MODES = (arg('--modes') ?? 'defaults,matched').split(',') as ('defaults' | 'matched')[];
const ONLY = arg('--only');
/** Binnacle's Node flags: the image's (NODE_FLAGS) unless given, e.g. `--node-flags ''` to measure without them. */
const BINNACLE_NODE_FLAGS: readonly string[] = arg('--node-flags')?.split(' ').filter((f) => f !== '') ?? NODE_FLAGS;
/** The allocator settings the image gives the manager (MALLOC_ENV), unless `--malloc-env off` (to measure without them). */
const BINNACLE_ENV: Record<string, string> = arg('--malloc-env') === 'off' ? {} : mallocEnv();
const SERVE_TIMEOUT_MS = 15 * 60_000;
const STEADY_WAIT_MS = 15_000;
const BINNACLE_ENTRY = path.join(ROOT, 'bin', 'binnacle.js');
const IMAGE = 'quay.io/openshift-community-operators/{package}:v{version}';

type Side = 'binnacle-defaults' | 'binnacle-matched' | 'catalogd' | 'olmv1' | 'opm';

interface Quantiles {
  p50: number;
  p99: number;
  n: number;
}

interface Sample {
  side: Side;
  round: number;
  /** First ClusterCatalog created (opm: process started) until every catalog serves. */
  servingMs: number;
  /**
   * First ClusterCatalog created until an extension could resolve against every catalog: olmv1,
   * until operator-controller's cache holds them all; Binnacle, Serving (the unpack that stores a
   * catalog builds its resolution view). Not opm's or catalogd's alone.
   */
  resolvableMs?: number;
  cpuToResolvableS?: number;
  /** Process start until its readiness endpoint answered (opm: not applicable, 0). */
  startMs: number;
  peakMib: number;
  /** RSS once started and ready, before any ClusterCatalog (opm: not applicable, it loads its catalog as it starts). */
  idleMib?: number;
  /** Of the steady RSS: the process's own pages and file pages (its binary's, mapped files: shared, and dropped first under pressure). */
  steadyAnonMib?: number;
  steadyFileMib?: number;
  steadyMib: number;
  steadyAfterQueriesMib: number;
  cpuToServingS: number;
  /** opm: building the caches beforehand (`--cache-only`, as at image build), all catalogs, one after another. */
  cacheBuildMs?: number;
  /** `/api/v1/all` downloads: bytes of one catalog's stream and MB/s over all downloads. */
  allBytes?: number;
  allMBps?: number;
  metasPackagesMs?: Quantiles;
  metasOnePackageMs?: Quantiles;
}

function quantiles(ms: number[]): Quantiles {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN;
  return { p50: q(0.5), p99: q(0.99), n: s.length };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// --- the catalogs --------------------------------------------------------------------------------

interface Catalogs {
  dirs: string[];
  images: string[];
  bundlesEach: number;
  packagesEach: number;
  bytesEach: number[];
  /** A package of the first catalog, for the one-package query and the resolution. */
  onePackage: string;
  dropped: string[];
}

async function prepareCatalogs(registry: string): Promise<Catalogs> {
  const data = path.join(WORK, 'data');
  mkdirSync(data, { recursive: true });
  const rendered = path.join(data, 'corpus-render');
  mkdirSync(rendered, { recursive: true });
  // Exit 1 with the rest rendered: the corpus has packages that do not render (named on stderr); validPackages drops more.
  const r = spawnSync(process.execPath, [BINNACLE_ENTRY, 'catalog', 'render', CORPUS, '--bundle-image', IMAGE, '-o', 'json'], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1024 * 1024 * 1024 });
  if (r.status !== 0 && (r.status !== 1 || r.stdout.length === 0)) throw new Error(`binnacle catalog render ${CORPUS} failed (${r.status ?? r.signal}):\n${r.stderr.toString('utf8')}`);
  writeFileSync(path.join(rendered, 'catalog.json'), r.stdout);
  const { config } = await loadFbcDir(rendered);
  const { valid, dropped } = validPackages(config);
  const dirs: string[] = [];
  const images: string[] = [];
  const bytesEach: number[] = [];
  let bundlesEach = 0;
  let packagesEach = 0;
  let onePackage = '';
  for (let i = 0; i < CATALOGS; i++) {
    const tag = String.fromCharCode(97 + i); // a, b, c: each catalog its own names
    const dc = scaledCatalog(valid, BUNDLES, tag);
    bundlesEach = dc.bundles.length;
    packagesEach = dc.packages.length;
    if (i === 0) onePackage = dc.packages.find((p) => dc.bundles.some((b) => b.package === p.name))?.name ?? '';
    const dir = path.join(data, `catalog-${tag}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const json = toFbcJson(dc);
    writeFileSync(path.join(dir, 'catalog.json'), json);
    bytesEach.push(Buffer.byteLength(json));
    const image = `${registry}/bench-catalog-scale/catalog-${tag}:${BUNDLES}`;
    run(process.execPath, [BINNACLE_ENTRY, 'catalog', 'build', dir, '--tag', image, '--push']);
    dirs.push(dir);
    images.push(image);
  }
  return { dirs, images, bundlesEach, packagesEach, bytesEach, onePackage, dropped };
}

// --- TLS and queries -----------------------------------------------------------------------------

interface Tls {
  caPem: string;
  /** The CA as a file, for curl. */
  caFile: string;
  /** A directory holding only the CA, for operator-controller's --catalogd-cas-dir. */
  caDir: string;
  certFile: string;
  keyFile: string;
  /** controller-runtime's webhook certificate directory, under a TMPDIR of its own. */
  tmpDir: string;
}

async function tls(): Promise<Tls> {
  const dir = path.join(WORK, 'tls');
  mkdirSync(dir, { recursive: true });
  const ca = await createCertificateAuthority('bench-catalog-scale');
  const leaf = await issueCertificate(ca, { commonName: 'localhost', hosts: ['localhost', '127.0.0.1'], usage: 'server' });
  const certFile = path.join(dir, 'tls.crt');
  const keyFile = path.join(dir, 'tls.key');
  writeFileSync(certFile, leaf.certPem);
  writeFileSync(keyFile, leaf.keyPem, { mode: 0o600 });
  const tmpDir = path.join(dir, 'tmp');
  const webhookDir = path.join(tmpDir, 'k8s-webhook-server', 'serving-certs');
  mkdirSync(webhookDir, { recursive: true });
  writeFileSync(path.join(webhookDir, 'tls.crt'), leaf.certPem);
  writeFileSync(path.join(webhookDir, 'tls.key'), leaf.keyPem, { mode: 0o600 });
  const caFile = path.join(dir, 'ca.crt');
  writeFileSync(caFile, ca.certPem);
  const caDir = path.join(dir, 'cas');
  mkdirSync(caDir, { recursive: true });
  writeFileSync(path.join(caDir, 'ca.crt'), ca.certPem);
  return { caPem: ca.certPem, caFile, caDir, certFile, keyFile, tmpDir };
}

/** GET over HTTPS on one keep-alive connection: the status, the bytes and the time to the last byte. */
function get(agent: Agent, ca: string, url: string): Promise<{ status: number; bytes: number; ms: number }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, ca }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Each URL fetched in turn by one curl process over one keep-alive HTTP/1.1 connection (a first
 * request outside the timing opens it): status, bytes and time to the last byte, by curl's clock.
 * curl rather than Node's client: on this two-core machine Node's own HTTPS client was the
 * bottleneck (against one server, in a diagnostic run not stored: p99 145 ms with it, 35 ms with curl), so its figures measured
 * the client; one client in C, the same for every side.
 */
async function curlGets(caFile: string, urls: string[]): Promise<{ status: number; bytes: number; ms: number }[]> {
  const first = urls[0];
  if (first === undefined) return [];
  const args = ['-sS', '--http1.1', '--cacert', caFile, '-w', '%{http_code} %{size_download} %{time_total}\\n', ...[first, ...urls].flatMap((u) => ['-o', '/dev/null', u])];
  const out = await new Promise<string>((resolve, reject) => {
    execFile('curl', args, { maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`curl (the bench's HTTP client; --client node uses Node's): ${err.message} ${stderr}`));
      else resolve(stdout);
    });
  });
  const lines = out.trim().split('\n').slice(1);
  if (lines.length !== urls.length) throw new Error(`curl answered ${lines.length} of ${urls.length} requests`);
  return lines.map((line) => {
    const [status, bytes, seconds] = line.split(' ').map(Number);
    return { status: status ?? 0, bytes: bytes ?? 0, ms: (seconds ?? NaN) * 1000 };
  });
}

async function queries(tls: Tls, bases: string[], onePackage: string): Promise<Pick<Sample, 'allBytes' | 'allMBps' | 'metasPackagesMs' | 'metasOnePackageMs'>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const getAll = async (urls: string[]): Promise<{ status: number; bytes: number; ms: number }[]> => {
    if (CLIENT === 'curl') return curlGets(tls.caFile, urls);
    const out = [];
    for (const url of urls) out.push(await get(agent, tls.caPem, url));
    return out;
  };
  try {
    const alls = Array.from({ length: DOWNLOADS }, () => bases.map((base) => `${base}/api/v1/all`)).flat();
    let bytes = 0;
    let ms = 0;
    const allAnswers = await getAll(alls);
    for (const [i, r] of allAnswers.entries()) {
      if (r.status !== 200) throw new Error(`${alls[i]} answered ${r.status}`);
      bytes += r.bytes;
      ms += r.ms;
    }
    const timed = async (url: string): Promise<number[]> =>
      (await getAll(Array.from({ length: QUERIES }, () => url))).map((r) => {
        if (r.status !== 200 || r.bytes === 0) throw new Error(`${url} answered ${r.status} with ${r.bytes} bytes`);
        return r.ms;
      });
    const first = bases[0] ?? '';
    return {
      allBytes: allAnswers[0]?.bytes ?? 0,
      allMBps: bytes / 1e6 / (ms / 1000),
      metasPackagesMs: quantiles(await timed(`${first}/api/v1/metas?schema=olm.package`)),
      metasOnePackageMs: quantiles(await timed(`${first}/api/v1/metas?package=${encodeURIComponent(onePackage)}`)),
    };
  } finally {
    agent.destroy();
  }
}

// --- the sides -----------------------------------------------------------------------------------

interface Env {
  client: KubeClient;
  kubeconfig: string;
  registriesConf: string;
  tls: Tls;
  catalogs: Catalogs;
  catalogdBinary: string;
  catalogdCrd: string;
  operatorControllerBinary: string;
  operatorControllerCrd: string;
  opm: string;
}

const CATALOG_NAME = (i: number): string => `bench-scale-${String.fromCharCode(97 + i)}`;

function clusterCatalog(i: number, image: string): KubeObject {
  const name = CATALOG_NAME(i);
  return {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { name, labels: { 'olm.operatorframework.io/metadata.name': name } },
    spec: { source: { type: 'Image', image: { ref: image } } },
  };
}

async function servingBases(client: KubeClient): Promise<string[] | undefined> {
  const bases: string[] = [];
  for (let i = 0; i < CATALOGS; i++) {
    const c = await client.get({ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterCatalog', name: CATALOG_NAME(i) }).catch(() => undefined);
    const st = c?.status as { conditions?: { type: string; status: string }[]; urls?: { base?: string } } | undefined;
    if (st?.conditions?.some((x) => x.type === 'Serving' && x.status === 'True') !== true || st.urls?.base === undefined) return undefined;
    bases.push(st.urls.base);
  }
  return bases;
}

async function deleteCatalogs(client: KubeClient): Promise<void> {
  for (let i = 0; i < CATALOGS; i++) await client.delete({ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterCatalog', name: CATALOG_NAME(i) }).catch(() => undefined);
}

async function waitGone(client: KubeClient, ref: { apiVersion: string; kind: string; name: string }, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await client.get(ref).catch(() => undefined)) === undefined) return;
    await sleep(500);
  }
  throw new Error(`${ref.kind} ${ref.name} still there after ${timeoutMs / 1000} s`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

const CRD_NAMES = ['clustercatalogs.olm.operatorframework.io', 'clusterextensions.olm.operatorframework.io'];

/** No ClusterCatalog CRD left from the other side: Binnacle leaves a CRD it did not install alone. */
async function clearCrds(client: KubeClient): Promise<void> {
  for (const name of CRD_NAMES) {
    const ref = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name };
    await client.delete(ref).catch(() => undefined);
    await waitGone(client, ref);
  }
}

const commandsSeen = new Map<string, string[]>();

/** A process to start: its command, environment, readiness URL and what to call it in logs. */
interface Launch {
  name: string;
  cmd: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  readyz: string;
}

/**
 * `cmd args` under a private mount namespace whose /run/secrets holds a token of `serviceAccount`
 * in olmv1-system: catalogd and operator-controller read their ServiceAccount's name from the
 * in-Pod token file, a fixed path (internal/shared/util/sa), and refuse to start without it.
 */
async function withServiceAccountToken(e: Env, scratch: string, serviceAccount: string, binary: string): Promise<{ cmd: string; args: string[] }> {
  await e.client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olmv1-system' } });
  await e.client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount, namespace: 'olmv1-system' } });
  const token = path.join(scratch, `${serviceAccount}-token`);
  writeFileSync(token, run(path.join(ROOT, '.cache', 'bin', 'kubectl'), ['--kubeconfig', e.kubeconfig, 'create', 'token', serviceAccount, '-n', 'olmv1-system']).trim(), { mode: 0o600 });
  const saDir = '/run/secrets/kubernetes.io/serviceaccount';
  return { cmd: 'unshare', args: ['--mount', '--propagation', 'private', 'sh', '-c', `mkdir -p /run/secrets && mount -t tmpfs tmpfs /run/secrets && mkdir -p ${saDir} && cp "$0" ${saDir}/token && exec "$@"`, token, binary] };
}

async function applyCrd(e: Env, file: string): Promise<void> {
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) await e.client.apply(doc.toJS() as KubeObject);
}

async function catalogdLaunch(e: Env, scratch: string, port: number): Promise<Launch> {
  await applyCrd(e, e.catalogdCrd);
  const probe = await freePort();
  const { cmd, args } = await withServiceAccountToken(e, scratch, 'catalogd-controller-manager', e.catalogdBinary);
  args.push(
    `--catalogs-server-addr=127.0.0.1:${port}`,
    `--external-address=127.0.0.1:${port}`,
    `--cache-dir=${path.join(scratch, 'cache')}`,
    `--tls-cert=${e.tls.certFile}`,
    `--tls-key=${e.tls.keyFile}`,
    `--metrics-bind-address=127.0.0.1:${await freePort()}`,
    `--health-probe-bind-address=127.0.0.1:${probe}`,
    `--webhook-server-port=${await freePort()}`,
    '--system-namespace=olmv1-system',
    '--feature-gates=APIV1MetasHandler=true',
  );
  const env = { ...process.env, KUBECONFIG: e.kubeconfig, CONTAINERS_REGISTRIES_CONF: e.registriesConf, TMPDIR: e.tls.tmpDir, HOME: scratch };
  return { name: 'catalogd', cmd, args, env, readyz: `http://127.0.0.1:${probe}/readyz` };
}

/**
 * operator-controller as its Deployment runs it: its metrics server over HTTPS with the bench's
 * certificate (as catalogd's and the manager's serve theirs), catalogd's CA given as
 * `--catalogd-cas-dir`, its cache under the run's scratch directory; without leader election,
 * as catalogd and the manager run here. It fetches each Serving catalog's `/api/v1/all` and
 * keeps it on disk, one file a record, for resolution (its ClusterCatalog controller).
 */
async function operatorControllerLaunch(e: Env, scratch: string): Promise<Launch> {
  await applyCrd(e, e.operatorControllerCrd);
  const probe = await freePort();
  const { cmd, args } = await withServiceAccountToken(e, scratch, 'operator-controller-controller-manager', e.operatorControllerBinary);
  args.push(`--health-probe-bind-address=127.0.0.1:${probe}`, `--metrics-bind-address=127.0.0.1:${await freePort()}`, `--tls-cert=${e.tls.certFile}`, `--tls-key=${e.tls.keyFile}`, `--cache-path=${operatorControllerCache(scratch)}`, `--catalogd-cas-dir=${e.tls.caDir}`, '--system-namespace=olmv1-system');
  const env = { ...process.env, KUBECONFIG: e.kubeconfig, CONTAINERS_REGISTRIES_CONF: e.registriesConf, TMPDIR: e.tls.tmpDir, HOME: scratch };
  return { name: 'operator-controller', cmd, args, env, readyz: `http://127.0.0.1:${probe}/readyz` };
}

const operatorControllerCache = (scratch: string): string => path.join(scratch, 'operator-controller-cache');

function binnacleLaunch(e: Env, scratch: string, port: number, matched: boolean, probe: number): Launch {
  const args = [
    ...BINNACLE_NODE_FLAGS,
    BINNACLE_ENTRY,
    'manager',
    '--metrics-bind-address',
    `127.0.0.1:${probe}`,
    '--catalog-bind-address',
    `127.0.0.1:${port}`,
    '--catalog-base-url',
    `https://127.0.0.1:${port}`,
    '--catalog-tls-cert',
    e.tls.certFile,
    '--catalog-tls-key',
    e.tls.keyFile,
    '--data-dir',
    path.join(scratch, 'data'),
    ...(matched ? ['--catalog-workers', '1'] : []),
  ];
  // Off means off: no allocator setting of the shell's reaches the manager either.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MALLOC_')));
  const env = { ...inherited, KUBECONFIG: e.kubeconfig, BINNACLE_REGISTRIES_CONF: e.registriesConf, HOME: scratch, NODE_OPTIONS: '', ...BINNACLE_ENV };
  return { name: matched ? 'binnacle-matched' : 'binnacle-defaults', cmd: process.execPath, args, env, readyz: `http://127.0.0.1:${probe}/readyz` };
}

/** Until operator-controller's cache holds every catalog (a directory a catalog, renamed into place once whole). */
async function waitOperatorControllerCache(scratch: string, exited: () => string | undefined, t0: number): Promise<void> {
  for (;;) {
    const gone = exited();
    if (gone !== undefined) throw new Error(gone);
    if (Array.from({ length: CATALOGS }, (_, i) => CATALOG_NAME(i)).every((name) => existsSync(path.join(operatorControllerCache(scratch), 'catalogs', name)))) return;
    if (Date.now() - t0 > SERVE_TIMEOUT_MS) throw new Error(`operator-controller: not every catalog in its cache after ${SERVE_TIMEOUT_MS / 1000} s`);
    await sleep(250);
  }
}

async function serverSide(e: Env, side: Exclude<Side, 'opm'>, round: number): Promise<Sample> {
  const scratch = path.join(WORK, 'runs', `${side}-${round}`);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  await clearCrds(e.client);
  const port = await freePort();
  // The olmv1 side: catalogd first, operator-controller once catalogd is ready (its Deployment waits on catalogd's CA alike).
  const launches: (() => Promise<Launch>)[] =
    side === 'catalogd' ? [() => catalogdLaunch(e, scratch, port)]
    : side === 'olmv1' ? [() => catalogdLaunch(e, scratch, port), () => operatorControllerLaunch(e, scratch)]
    : [async () => binnacleLaunch(e, scratch, port, side === 'binnacle-matched', await freePort())];
  let started = 0;
  const procs: { proc: ReturnType<typeof spawnLogged>; peak: ReturnType<typeof treePeakSampler> }[] = [];
  const exited = (): string | undefined => procs.map((p) => p.proc.exited()).find((x) => x !== undefined);
  const sum = (f: (pid: number) => number): number => procs.reduce((s, p) => s + f(p.proc.pid), 0);
  try {
    for (const launch of launches) {
      const l = await launch();
      commandsSeen.set(procs.length === 0 ? side : `${side}/${l.name}`, [l.cmd, ...l.args]);
      if (procs.length === 0) started = Date.now(); // start-up from the first spawn: the objects it needs are set up before
      const proc = spawnLogged(l.name, l.cmd, l.args, { cwd: scratch, env: l.env, logFile: path.join(WORK, 'logs', `${side}-${round}-${l.name}.log`) });
      procs.push({ proc, peak: treePeakSampler(proc.pid) });
      await waitHttpOk(l.name, l.readyz, proc.exited, 180_000);
    }
    // Binnacle installs its CRDs as it starts; wait until the API server serves them.
    for (;;) {
      const ok = await e.client.list('olm.operatorframework.io/v1', 'ClusterCatalog').then(() => true, () => false);
      if (ok) break;
      const gone = exited();
      if (gone !== undefined) throw new Error(gone);
      await sleep(200);
    }
    const startMs = Date.now() - started;
    const idleMib = sum((pid) => procStatus(pid).rss);
    const cpu0 = sum(cpuSeconds);
    const t0 = Date.now();
    await Promise.all(e.catalogs.images.map((image, i) => e.client.create(clusterCatalog(i, image))));
    let bases: string[] | undefined;
    for (;;) {
      const gone = exited();
      if (gone !== undefined) throw new Error(gone);
      bases = await servingBases(e.client);
      if (bases !== undefined) break;
      if (Date.now() - t0 > SERVE_TIMEOUT_MS) throw new Error(`${side}: not every catalog Serving after ${SERVE_TIMEOUT_MS / 1000} s`);
      await sleep(250);
    }
    const servingMs = Date.now() - t0;
    const cpuToServingS = sum(cpuSeconds) - cpu0;
    // OLM v1 resolves from operator-controller's copy of the catalogs; Binnacle from what it serves, loaded in the same
    // unpack (cluster-catalog.ts stores the resolution view before it writes Serving); catalogd alone does not resolve.
    let resolvableMs = side === 'catalogd' ? undefined : servingMs;
    if (side === 'olmv1') {
      await waitOperatorControllerCache(scratch, exited, t0);
      resolvableMs = Date.now() - t0;
    }
    const cpuToResolvableS = resolvableMs === undefined ? undefined : sum(cpuSeconds) - cpu0;
    await sleep(STEADY_WAIT_MS);
    const steady = procs.map((p) => procStatus(p.proc.pid));
    const steadyMib = steady.reduce((s, m) => s + m.rss, 0);
    const steadyAnonMib = steady.reduce((s, m) => s + m.anon, 0);
    const steadyFileMib = steady.reduce((s, m) => s + m.file, 0);
    // catalogd's HTTP figures are its own row's: the olmv1 side serves from the same catalogd.
    const q = side === 'olmv1' ? {} : await queries(e.tls, bases, e.catalogs.onePackage);
    const steadyAfterQueriesMib = sum((pid) => procStatus(pid).rss);
    const peakMib = procs.reduce((s, p) => s + p.peak.peakMib(), 0);
    return { side, round, servingMs, resolvableMs, startMs, peakMib, idleMib, steadyMib, steadyAnonMib, steadyFileMib, steadyAfterQueriesMib, cpuToServingS, cpuToResolvableS, ...q };
  } finally {
    for (const p of procs) p.peak.stop();
    await deleteCatalogs(e.client);
    for (let i = 0; i < CATALOGS; i++) await waitGone(e.client, { apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterCatalog', name: CATALOG_NAME(i) }).catch(() => undefined);
    for (const p of [...procs].reverse()) await stopChild(p.proc.child);
    await clearCrds(e.client);
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function opmSide(e: Env, round: number): Promise<Sample> {
  const scratch = path.join(WORK, 'runs', `opm-${round}`);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  // As a catalog image ships: its cache built when the image is (`opm serve /configs --cache-dir
  // --cache-only` in the Dockerfile opm generates), then served with that cache, its integrity checked.
  const cacheStarted = Date.now();
  const caches = e.catalogs.dirs.map((dir, i) => {
    const cache = path.join(scratch, `cache-${i}`);
    run(e.opm, ['serve', dir, '--cache-dir', cache, '--cache-only', '--pprof-addr', '']);
    return cache;
  });
  const cacheBuildMs = Date.now() - cacheStarted;
  const ports = await Promise.all(e.catalogs.dirs.map(() => freePort()));
  const t0 = Date.now();
  const procs = e.catalogs.dirs.map((dir, i) =>
    spawnLogged(`opm serve ${path.basename(dir)}`, e.opm, ['serve', dir, '-p', String(ports[i]), '--cache-dir', caches[i] ?? '', '--pprof-addr', '', '-t', path.join(scratch, `termination-${i}.log`)], { cwd: scratch, env: { ...process.env, HOME: scratch }, logFile: path.join(WORK, 'logs', `opm-${round}-${i}.log`) }),
  );
  commandsSeen.set('opm', [e.opm, 'serve', '<catalog dir>', '-p', '<port>', '--cache-dir', '<its cache, built before with --cache-only>', '--pprof-addr', '', '-t', '<file>']);
  const peaks = procs.map((p) => treePeakSampler(p.pid));
  try {
    const pending = new Set(ports.map((_, i) => i));
    while (pending.size > 0) {
      for (const i of [...pending]) {
        const gone = procs[i]?.exited();
        if (gone !== undefined) throw new Error(gone);
        if (await accepts(ports[i] ?? 0)) pending.delete(i);
      }
      if (Date.now() - t0 > SERVE_TIMEOUT_MS) throw new Error(`opm serve: not every catalog serving after ${SERVE_TIMEOUT_MS / 1000} s`);
      if (pending.size > 0) await sleep(100);
    }
    const servingMs = Date.now() - t0;
    const cpuToServingS = procs.reduce((s, p) => s + cpuSeconds(p.pid), 0);
    await sleep(STEADY_WAIT_MS);
    const steadyMib = procs.reduce((s, p) => s + procStatus(p.pid).rss, 0);
    return { side: 'opm', round, servingMs, startMs: 0, cacheBuildMs, peakMib: peaks.reduce((s, p) => s + p.peakMib(), 0), steadyMib, steadyAfterQueriesMib: steadyMib, cpuToServingS };
  } finally {
    for (const p of peaks) p.stop();
    await Promise.all(procs.map((p) => stopChild(p.child)));
    rmSync(scratch, { recursive: true, force: true });
  }
}

// --- resolution (Binnacle alone) -------------------------------------------------------------------

async function resolution(dirs: string[], pkg: string): Promise<{ inProcessMs: Spread; cliMs: number; chosen: string[] }> {
  const loaded = await Promise.all(dirs.map((d, i) => loadCatalog(d, { name: CATALOG_NAME(i) })));
  const index = new CatalogIndex(loaded.map((l) => l.catalog));
  const times: number[] = [];
  let chosen: string[] = [];
  for (let i = 0; i < 21; i++) {
    const t = process.hrtime.bigint();
    const r = resolve({ catalogs: index, installed: [], requests: [{ package: pkg, channels: [], upgradePolicy: 'CatalogProvided' }] });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    chosen = r.bundles.map((b) => `${b.package}@${b.version}`);
  }
  const t = Date.now();
  const cli = spawnSync(process.execPath, [BINNACLE_ENTRY, 'resolve', ...dirs.flatMap((d) => ['--catalog', d]), '--package', pkg, '-o', 'json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const cliMs = Date.now() - t;
  if (cli.status !== 0) throw new Error(`binnacle resolve failed: ${cli.stderr}`);
  return { inProcessMs: spread(times), cliMs, chosen };
}

// --- main ----------------------------------------------------------------------------------------

function toolLine(out: string, key: string): string[] {
  const line = out.split('\n').find((l) => l.startsWith(`${key} `));
  if (line === undefined) throw new Error(`no "${key}" line in the build script's output:\n${out}`);
  return line.split(' ').slice(1);
}

const ratio = (a: number, b: number): number => (b > 0 ? a / b : NaN);
const fmt = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

/**
 * Where the memory goes, Binnacle's against the reference's medians (`both`): what each holds idle,
 * what the catalogs add to it, and its steady RSS's own and file pages. Empty for runs without idle figures.
 */
function memoryBreakdown(both: (f: (s: Sample) => number | undefined) => number[]): string {
  const [idleB = NaN, idleR = NaN] = both((s) => s.idleMib);
  if (Number.isNaN(idleR)) return '';
  const [steadyB = NaN, steadyR = NaN] = both((s) => s.steadyMib);
  const [anonB = NaN, anonR = NaN] = both((s) => s.steadyAnonMib);
  const [fileB = NaN, fileR = NaN] = both((s) => s.steadyFileMib);
  const mib = (a: number, b: number): string => `${fmt(a, 0)} against ${fmt(b, 0)} MiB`;
  return `; idle ${mib(idleB, idleR)}, held for the catalogs (steady − idle) ${mib(steadyB - idleB, steadyR - idleR)}; of the steady RSS, the process's own pages ${mib(anonB, anonR)} and file pages (the binary's) ${mib(fileB, fileR)}`;
}

/** The summary per side and the goals judged on the medians. */
function judge(samples: Sample[], sides: Side[], catalogs: Catalogs, res: Awaited<ReturnType<typeof resolution>>): { summary: CatalogScaleSummary; goals: GoalVerdict[] } {
  const med = (side: Side, f: (s: Sample) => number | undefined): number => {
    const xs = samples.filter((s) => s.side === side).map(f).filter((x): x is number => x !== undefined);
    return xs.length === 0 ? NaN : spread(xs).median;
  };
  const summary: CatalogScaleSummary = { catalogs: { count: CATALOGS, bundlesEach: catalogs.bundlesEach, packagesEach: catalogs.packagesEach, bytesEach: catalogs.bytesEach, onePackage: catalogs.onePackage }, resolution: res, sides: {} };
  const goals: GoalVerdict[] = [];
  for (const side of sides) {
    const xs = samples.filter((s) => s.side === side);
    summary.sides[side] = {
      rounds: xs.length,
      servingMs: spread(xs.map((s) => s.servingMs)),
      peakMib: spread(xs.map((s) => s.peakMib)),
      ...(xs.every((s) => s.idleMib !== undefined) ? { idleMib: spread(xs.map((s) => s.idleMib ?? NaN)) } : {}),
      steadyMib: spread(xs.map((s) => s.steadyMib)),
      steadyAfterQueriesMib: spread(xs.map((s) => s.steadyAfterQueriesMib)),
      cpuToServingS: spread(xs.map((s) => s.cpuToServingS)),
      ...(xs.every((s) => s.resolvableMs !== undefined) && xs.length > 0 ? { resolvableMs: spread(xs.map((s) => s.resolvableMs ?? NaN)), cpuToResolvableS: spread(xs.map((s) => s.cpuToResolvableS ?? NaN)) } : {}),
      ...(side === 'opm'
        ? { cacheBuildMs: spread(xs.map((s) => s.cacheBuildMs ?? NaN)) }
        : side === 'olmv1'
          ? {}
          : {
            allMBps: med(side, (s) => s.allMBps),
            metasPackagesP50Ms: med(side, (s) => s.metasPackagesMs?.p50),
            metasPackagesP99Ms: med(side, (s) => s.metasPackagesMs?.p99),
            metasOnePackageP50Ms: med(side, (s) => s.metasOnePackageMs?.p50),
            metasOnePackageP99Ms: med(side, (s) => s.metasOnePackageMs?.p99),
          }),
    };
  }
  console.log('\nBinnacle / reference (medians):');
  for (const mode of MODES) {
    const b: Side = `binnacle-${mode}`;
    if (!sides.includes(b)) continue;
    for (const ref of ['catalogd', 'opm'] as const) {
      if (!sides.includes(ref)) continue;
      const t = ratio(med(b, (s) => s.servingMs), med(ref, (s) => s.servingMs));
      const p = ratio(med(b, (s) => s.peakMib), med(ref, (s) => s.peakMib));
      const st = ratio(med(b, (s) => s.steadyMib), med(ref, (s) => s.steadyMib));
      const breakdown = memoryBreakdown((f) => [med(b, f), med(ref, f)]);
      console.log(`  ${mode} vs ${ref}: time to serving ${fmt(t)}x, peak RSS ${fmt(p)}x, steady RSS ${fmt(st)}x${breakdown}`);
      goals.push(judged(`${mode}: less peak and steady memory than ${ref} with the same ${CATALOGS === 1 ? 'catalog' : `${CATALOGS} catalogs`}`, p < 1 && st < 1, `peak ${fmt(p)}x, steady ${fmt(st)}x${breakdown}`));
      goals.push(judged(`${mode}: Serving at least as soon as ${ref}`, t <= 1, `${fmt(t)}x`));
    }
    // Role for role (not the issue's goal, which names catalogd alone): the manager does what OLM v1 needs two processes for.
    if (sides.includes('olmv1')) {
      const t = ratio(med(b, (s) => s.resolvableMs), med('olmv1', (s) => s.resolvableMs));
      const p = ratio(med(b, (s) => s.peakMib), med('olmv1', (s) => s.peakMib));
      const st = ratio(med(b, (s) => s.steadyMib), med('olmv1', (s) => s.steadyMib));
      const cpu = ratio(med(b, (s) => s.cpuToResolvableS), med('olmv1', (s) => s.cpuToResolvableS));
      const breakdown = memoryBreakdown((f) => [med(b, f), med('olmv1', f)]);
      console.log(`  ${mode} vs olmv1 (catalogd + operator-controller): time until resolvable ${fmt(t)}x, CPU until then ${fmt(cpu)}x, peak RSS ${fmt(p)}x, steady RSS ${fmt(st)}x${breakdown}`);
      goals.push(judged(`${mode}, role for role: less peak and steady memory than OLM v1 (catalogd + operator-controller) with the same ${CATALOGS === 1 ? 'catalog' : `${CATALOGS} catalogs`}`, p < 1 && st < 1, `peak ${fmt(p)}x, steady ${fmt(st)}x${breakdown}`));
      goals.push(judged(`${mode}, role for role: an extension resolvable against every catalog at least as soon as with OLM v1`, t <= 1, `${fmt(t)}x; CPU until then ${fmt(cpu)}x`));
    }
    const p99 = Math.max(med(b, (s) => s.metasPackagesMs?.p99), med(b, (s) => s.metasOnePackageMs?.p99));
    goals.push(judged(`${mode}: metas queries (schema=olm.package, package=<one>) under 50 ms at p99`, p99 < 50, `${fmt(p99, 1)} ms`));
  }
  goals.push(judged(`one extension resolved against ${CATALOGS === 1 ? 'the catalog' : `all ${CATALOGS} catalogs`} under 1 s`, res.inProcessMs.median < 1000, `${fmt(res.inProcessMs.median, 1)} ms in process; ${res.cliMs} ms as a command, loading included`));
  return { summary, goals };
}

/** Every round, each side alone; the order turns round by round. */
async function rounds(e: Env, sides: Side[]): Promise<Sample[]> {
  const samples: Sample[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const s = side === 'opm' ? await opmSide(e, r) : await serverSide(e, side, r);
        samples.push(s);
        const q = s.metasPackagesMs === undefined ? '' : `; all ${fmt(s.allMBps ?? NaN, 0)} MB/s; metas?schema=olm.package p50 ${fmt(s.metasPackagesMs.p50, 1)} p99 ${fmt(s.metasPackagesMs.p99, 1)} ms; metas?package p50 ${fmt(s.metasOnePackageMs?.p50 ?? NaN, 1)} p99 ${fmt(s.metasOnePackageMs?.p99 ?? NaN, 1)} ms`;
        console.log(`  round ${r + 1} ${side}: serving in ${fmt(s.servingMs / 1000, 1)} s${s.resolvableMs === undefined || s.resolvableMs === s.servingMs ? '' : ` (resolvable in ${fmt(s.resolvableMs / 1000, 1)} s)`}, idle ${s.idleMib === undefined ? '–' : `${fmt(s.idleMib, 0)} MiB`}, peak ${fmt(s.peakMib, 0)} MiB, steady ${fmt(s.steadyMib, 0)} MiB (${fmt(s.steadyAfterQueriesMib, 0)} after the queries), CPU ${fmt(s.cpuToServingS, 1)} s${q}`);
      }
    }
  } finally {
    e.client.close();
  }
  return samples;
}

async function main(): Promise<void> {
  const recorder = startRun('catalog-scale');
  mkdirSync(path.join(WORK, 'logs'), { recursive: true });
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const want = (side: string): boolean => ONLY === undefined || side.startsWith(ONLY);
  const catalogdOut = want('catalogd') || want('olmv1') ? run('bash', [path.join(ROOT, 'hack', 'bench-tools', 'catalogd', 'build.sh')]) : 'catalogd - -\ncrd -';
  const [catalogdVersion = '', catalogdBinary = ''] = toolLine(catalogdOut, 'catalogd');
  const [catalogdCrd = ''] = toolLine(catalogdOut, 'crd');
  const operatorControllerOut = want('olmv1') ? run('bash', [path.join(ROOT, 'hack', 'bench-tools', 'operator-controller', 'build.sh')]) : 'operator-controller - -\ncrd -';
  const [operatorControllerVersion = '', operatorControllerBinary = ''] = toolLine(operatorControllerOut, 'operator-controller');
  const [operatorControllerCrd = ''] = toolLine(operatorControllerOut, 'crd');
  const opm = want('opm') ? (run('bash', [path.join(ROOT, 'hack', 'bench-tools', 'opm', 'build.sh')]).trim().split('\n').pop() ?? '') : '';
  const up = await clusterUp({ name: CLUSTER, logger: pino({ level: 'warn' }), progress: () => undefined });
  const client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
  const registriesConf = path.join(WORK, 'registries.conf');
  writeFileSync(registriesConf, `[[registry]]\nlocation = "${up.registry}"\ninsecure = true\n`);
  console.log(`catalogs: ${CATALOGS} of at least ${BUNDLES} bundles each, from ${path.relative(ROOT, CORPUS)}`);
  const catalogs = await prepareCatalogs(up.registry);
  console.log(`  each ${catalogs.bundlesEach} bundles, ${catalogs.packagesEach} packages, ${catalogs.bytesEach.map((b) => `${(b / 1e6).toFixed(1)} MB`).join(' / ')} of FBC JSON; one package for the queries: ${catalogs.onePackage}`);
  const e: Env = { client, kubeconfig: up.kubeconfig, registriesConf, tls: await tls(), catalogs, catalogdBinary, catalogdCrd, operatorControllerBinary, operatorControllerCrd, opm };
  const sides = ([...MODES.map((m): Side => `binnacle-${m}`), 'catalogd', 'olmv1', 'opm'] as Side[]).filter(want);
  const samples = await rounds(e, sides);
  const res = await resolution(catalogs.dirs, catalogs.onePackage);
  console.log(`resolution of ${catalogs.onePackage} against the ${CATALOGS} catalogs: ${fmt(res.inProcessMs.median, 1)} ms in process (median of 21), ${res.cliMs} ms as \`binnacle resolve\` (loading included); chose ${res.chosen.join(', ')}`);

  const { summary, goals } = judge(samples, sides, catalogs, res);
  for (const g of goals) console.log(`goal: ${g.goal}: ${g.verdict} (${g.detail ?? ''})`);
  const file = recorder.save({
    settings: {
      bench: { bundles: BUNDLES, catalogs: CATALOGS, rounds: ROUNDS, queries: QUERIES, downloads: DOWNLOADS, modes: MODES, corpus: path.relative(ROOT, CORPUS), leftOut: catalogs.dropped, steadyWaitMs: STEADY_WAIT_MS, tls: 'both servers HTTPS with one bench certificate; one keep-alive connection for the queries', client: CLIENT === 'curl' ? 'curl --http1.1, one process and connection for each batch of queries, a first request opening the connection outside the timing' : "Node's https client, its first request (opening the connection) timed with the rest" },
      binnacle: { what: `binnacle manager (node ${BINNACLE_NODE_FLAGS.join(' ')} bin/binnacle.js, the built bundle${Object.keys(BINNACLE_ENV).length === 0 ? '' : `, with ${Object.entries(BINNACLE_ENV).map(([k, v]) => `${k}=${v}`).join(' ')}`})`, env: BINNACLE_ENV, command: commandsSeen.get('binnacle-defaults') ?? commandsSeen.get('binnacle-matched'), matched: '--catalog-workers 1', defaults: '2 ClusterCatalogs loaded at once (--catalog-workers 2)', node: process.version },
      reference: { what: `catalogd ${catalogdVersion} (operator-controller cmd/catalogd, tag containers_image_openpgp)`, command: commandsSeen.get('catalogd'), featureGates: 'APIV1MetasHandler=true', concurrency: 'its ClusterCatalog controller as shipped (one reconcile at a time)' },
      olmv1: {
        what: `catalogd ${catalogdVersion} and operator-controller ${operatorControllerVersion} (OLM v1's two processes; operator-controller built by hack/bench-tools/operator-controller, tag containers_image_openpgp)`,
        command: commandsSeen.get('olmv1/operator-controller'),
        note: "memory and CPU summed over both processes; Serving is catalogd's; resolvable once operator-controller's cache holds every catalog; no HTTP queries (catalogd's row has them)",
      },
      opm: { what: opm === '' ? 'opm serve (not run)' : `opm serve (${spawnSync(opm, ['version'], { encoding: 'utf8' }).stdout.trim()})`, command: commandsSeen.get('opm'), note: 'gRPC registry API: serving = port accepts; no HTTP queries' },
    },
    rounds: samples,
    summary,
    goals,
  });
  if (file !== undefined) console.log(`stored ${path.relative(ROOT, file)}`);
}

await main();
