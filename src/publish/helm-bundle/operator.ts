/**
 * The operator itself, with no image of its own: Binnacle's image runs
 * `binnacle helm-operator run --watches /opt/helm/watches.yaml`, and the charts and the
 * watches.yaml come in one ConfigMap of the bundle (charts as `binaryData`), mounted at
 * /opt/helm. Chart paths in watches.yaml are relative (`charts/<name>.tgz`), so they resolve
 * against the file's folder: the same file serves in the Pod and anywhere it is extracted.
 *
 * The Deployment follows what OLM expects of an operator: WATCH_NAMESPACE from the
 * `olm.targetNamespaces` annotation OLM sets, leader election with a Lease in the operator's
 * own namespace, a restricted security context.
 */
import { stringify } from 'yaml';
import type { KubeObject } from '../../kube/types.js';

/** A 1 MiB young generation: 7 MiB less of the small heap a controller keeps (bench/helm-operator-memory.ts --node-options). */
export const HELM_OPERATOR_NODE_OPTIONS = '--max-semi-space-size=1';

/** Where Binnacle's image keeps itself; its CLI is `bin/binnacle.js` there (src/self/image.ts builds it). */
export const BINNACLE_IMAGE_ROOT = '/opt/binnacle';

/**
 * V8's flags for a `helm-operator run` process, given to `node` itself (NODE_OPTIONS refuses V8
 * flags; set once V8 runs they are undefined behaviour). `--no-opt` turns V8's optimizing compiler
 * off: its compile zones, not the JavaScript heap, made most of the peak while many CRs reconcile.
 * Measured with bench/helm-operator.ts (2026-11-27, Binnacle's whole process tree, one run each,
 * with --optimize-for-size alone → with --no-opt too): loki-distributed at 1 CR 128 → 108 MiB and
 * at 10 CRs 169 → 149 MiB, memcached at 100 CRs 140 → 123 MiB, its converge time and CPU within
 * the runs' noise (the work is Helm's engine, JSON, gzip and TLS, none of it JavaScript V8
 * optimizes). `--no-sparkplug` turns the baseline compiler off too: its machine code is never
 * flushed (V8's --flush-baseline-code is off). Measured the same way (2026-11-27, medians of 3
 * rounds at loki-distributed 10 CRs): 127 → 120 MiB peak, converge CPU 2.3 → 2.7 s, time within
 * noise; memcached at 100 CRs (one round) 109 → 104 MiB, CPU 3.1 → 3.2 s. WebAssembly stays (the
 * fallback engine): `--jitless` (121 MiB) and `--lite-mode` lose it and print a warning. The
 * manager keeps both compilers: its resolver and catalogs are JavaScript that does benefit.
 * `--no-maglev` turns off the mid-tier compiler Node 22's V8 added and `--no-opt` does not cover:
 * on Node 24.22.3, idle RSS 79 → 74 MiB (two runs each, the memcached sample, /proc smaps_rollup;
 * Node 24's own binary touches ~10 MiB more file pages than Node 20's, which no flag removes).
 * `--optimize-for-size` also caps V8's old-generation growth at 1.3 times what survived a full
 * collection; collectLikeGo (src/cli/heap.ts) leaves that cap alone, as it did not before (it set
 * 2): at 10 loki-distributed CRs on Node 24.22.3, V8's heap peak 44-50 → 31 MB, the Node process's
 * 116-123 → 103-105 MiB.
 */
export const HELM_OPERATOR_NODE_FLAGS: readonly string[] = ['--optimize-for-size', '--no-opt', '--no-sparkplug', '--no-maglev'];

/** How Binnacle's image runs `helm-operator run`: node with the flags above, then the CLI. */
export const HELM_OPERATOR_COMMAND: readonly string[] = ['node', ...HELM_OPERATOR_NODE_FLAGS, `${BINNACLE_IMAGE_ROOT}/bin/binnacle.js`];

/** Where the ConfigMap is mounted in the operator's Pod. */
export const MOUNT_PATH = '/opt/helm';
export const WATCHES_KEY = 'watches.yaml';

/**
 * The manager's memory. Measured (bench/helm-operator-memory.ts --only binnacle --rounds 3,
 * 2026-11-27, the whole process tree): `helm-operator run` serving one CR of operator-sdk's
 * memcached sample peaks at 109 MiB with Helm's native engine (the helm-engine child process,
 * ~30 MiB; Node and the client the rest), within operator-sdk's scaffolded 128 MiB, which is the
 * request. With the WebAssembly engine it peaks at 168 MiB (V8's copy of the 31 MiB module, Go's
 * heap from 18 MiB up, compiled code, a worker thread). The limit is what the engine's own bounds
 * need, so that a render past them fails alone (HELM_MEMORY_LIMIT) rather than the kernel killing
 * the Pod: ONE engine process, its memory stopping at the default 256 MiB (--helm-render-memory),
 * over the ~110 MiB of the rest, with room: 512 MiB.
 */
const MANAGER_MEMORY = { request: '128Mi', limit: '512Mi' } as const;
const ENGINE_THREADS = 1;

/** One kind the operator serves, and the archive (a ConfigMap key) of the chart serving it. */
export interface ServedKind {
  group: string;
  version: string;
  kind: string;
  /** ConfigMap key and file name under charts/, e.g. `pelorus.tgz`. */
  archive: string;
}

export interface OperatorInput {
  packageName: string;
  image: string;
  kinds: readonly ServedKind[];
  /** Archive name → bytes. */
  archives: ReadonlyMap<string, Buffer>;
}

export interface OperatorObjects {
  deployment: KubeObject;
  configMap: KubeObject;
  serviceAccountName: string;
  watchesYaml: string;
}

/** operator-sdk's watches.yaml, one entry per kind. */
export function watchesFile(kinds: readonly ServedKind[]): string {
  return stringify(
    kinds.map((k) => ({ group: k.group, version: k.version, kind: k.kind, chart: `charts/${k.archive}` })),
    { lineWidth: 0 },
  );
}

export function operatorObjects(o: OperatorInput): OperatorObjects {
  const name = `${o.packageName}-controller-manager`;
  const configMapName = `${o.packageName}-helm-charts`;
  const labels = { 'app.kubernetes.io/name': o.packageName, 'app.kubernetes.io/component': 'helm-operator', 'app.kubernetes.io/managed-by': 'binnacle' };
  const watchesYaml = watchesFile(o.kinds);
  const archives = [...o.archives.keys()].sort();
  const configMap: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: configMapName, labels },
    data: { [WATCHES_KEY]: watchesYaml },
    binaryData: Object.fromEntries(archives.map((a) => [a, o.archives.get(a)?.toString('base64') ?? ''])),
  };
  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': o.packageName, 'app.kubernetes.io/component': 'helm-operator' } },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: name,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          terminationGracePeriodSeconds: 10,
          containers: [
            {
              name: 'manager',
              image: o.image,
              // binnacle is not on the image's PATH; node runs it with the helm-operator's V8 flags.
              command: [...HELM_OPERATOR_COMMAND],
              args: ['helm-operator', 'run', '--watches', `${MOUNT_PATH}/${WATCHES_KEY}`, '--leader-elect', '--leader-election-namespace', '$(POD_NAMESPACE)', '--helm-engine-threads', String(ENGINE_THREADS)],
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'WATCH_NAMESPACE', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } },
                { name: 'NODE_OPTIONS', value: HELM_OPERATOR_NODE_OPTIONS },
              ],
              // helm-operator run's probe address (:8081) answers as operator-sdk's scaffold probes it.
              ports: [{ name: 'probes', containerPort: 8081, protocol: 'TCP' }],
              livenessProbe: { httpGet: { path: '/healthz', port: 'probes' }, initialDelaySeconds: 15, periodSeconds: 20 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, initialDelaySeconds: 5, periodSeconds: 10 },
              resources: { requests: { cpu: '100m', memory: MANAGER_MEMORY.request }, limits: { memory: MANAGER_MEMORY.limit } },
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'helm-charts', mountPath: MOUNT_PATH, readOnly: true }],
            },
          ],
          volumes: [
            {
              name: 'helm-charts',
              configMap: {
                name: configMapName,
                items: [{ key: WATCHES_KEY, path: WATCHES_KEY }, ...archives.map((a) => ({ key: a, path: `charts/${a}` }))],
              },
            },
          ],
        },
      },
    },
  };
  return { deployment, configMap, serviceAccountName: name, watchesYaml };
}

/** watches.yaml and the chart archives from the bundle's ConfigMap, as files relative to /opt/helm. */
export function filesOfConfigMap(cm: KubeObject): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const data = typeof cm.data === 'object' && cm.data !== null ? (cm.data as Record<string, unknown>) : {};
  const binary = typeof cm.binaryData === 'object' && cm.binaryData !== null ? (cm.binaryData as Record<string, unknown>) : {};
  const w = data[WATCHES_KEY];
  if (typeof w === 'string') out.set(WATCHES_KEY, Buffer.from(w, 'utf8'));
  for (const [k, v] of Object.entries(binary)) if (typeof v === 'string') out.set(`charts/${k}`, Buffer.from(v, 'base64'));
  return out;
}
