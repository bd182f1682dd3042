/**
 * What a hostile tenant does to a Helm operator kind of the manager (issue 43), shared by the
 * manager as a local process (hostile-release.test.ts) and as a Pod on the real node
 * (real-node.test.ts): a release record planted with a gzip bomb for `data.release`, a CR whose
 * `extraManifests` render 100,000 objects, and the tenant namespaces they act in. The corpus
 * prometheus-pushgateway chart serves the kind.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { API_VERSION, type HelmOperator } from '../../src/api/types.js';
import { binDir } from '../../src/cluster/layout.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { eventually } from './env.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
export const HOSTILE_CHART = join(ROOT, '..', 'shared', 'corpus', 'charts', 'prometheus-community__prometheus-pushgateway');
export const HOSTILE_CHART_VERSION = '3.8.0';
const HELM = join(binDir(), 'helm');
/** The ServiceAccount each tenant namespace's releases act as (admin of its namespace only). */
export const RELEASER = 'releaser';

/** The lag past its sampling interval (kube/metrics.ts); prom-client's nodejs_eventloop_lag_max_seconds reads the interval itself (250 ms) idle. */
export const LAG_METRIC = 'binnacle_process_event_loop_lag_max_seconds';

/** The longest event-loop hold since the last scrape, read from a /metrics text; undefined when it is not there. */
export function lagSecondsOf(metrics: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${LAG_METRIC} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

export interface HostileCr extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: Parameters<typeof findCondition>[0]; deployedRelease?: { name: string; manifest: string } };
}

/** A gzip bomb of zeros: gzip members of 64 MiB each, concatenated (a valid gzip stream), about `compressedBytes` in all. */
export function gzipBomb(compressedBytes: number): { data: Buffer; inflatedBytes: number } {
  const member = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  const count = Math.max(1, Math.floor(compressedBytes / member.length));
  return { data: Buffer.concat(Array.from({ length: count }, () => member)), inflatedBytes: count * 64 * 1024 * 1024 };
}

/** A planted record: its Secret's name and the resourceVersion it was created with. */
export interface PlantedRecord {
  secret: string;
  resourceVersion: string;
}

/** Plants Helm's Secret of release `name` (about to be made) in `namespace`, its `data.release` `bomb`. */
export async function plantBombRecord(admin: KubeClient, namespace: string, name: string, bomb: Buffer): Promise<PlantedRecord> {
  const secret = `sh.helm.release.v1.${name}.v1`;
  const made = await admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'helm.sh/release.v1',
    metadata: { name: secret, namespace, labels: { owner: 'helm', name, status: 'deployed', version: '1' } },
    data: { release: Buffer.from(bomb.toString('base64')).toString('base64') },
  });
  return { secret, resourceVersion: made.metadata.resourceVersion ?? '' };
}

/** A CR spec whose `extraManifests` render `count` ConfigMaps named `prefix-N`: past every default limit at 100,000. */
export function hugeRenderSpec(prefix: string, count = 100_000): Record<string, unknown> {
  return { extraManifests: [`{{- range $i := until ${count} }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${prefix}-{{ $i }}\ndata:\n  i: "{{ $i }}"\n{{- end }}\n`] };
}

/** Packages the chart and pushes it to `registry` (plain http) under `repo`; answers its OCI reference. */
export async function pushHostileChart(work: string, registry: string, repo: string, kubeconfig: string): Promise<string> {
  await run(HELM, ['package', HOSTILE_CHART, '--version', HOSTILE_CHART_VERSION, '-d', work]);
  await run(HELM, ['push', join(work, `prometheus-pushgateway-${HOSTILE_CHART_VERSION}.tgz`), `oci://${registry}/${repo}`, '--plain-http', '--kubeconfig', kubeconfig], {
    env: { ...process.env, HELM_CACHE_HOME: join(work, 'helm-cache'), HELM_CONFIG_HOME: join(work, 'helm-config') },
  });
  return `oci://${registry}/${repo}/prometheus-pushgateway`;
}

/** Tenant namespaces, each with RELEASER bound to the built-in `admin` ClusterRole there. */
export async function tenantNamespaces(admin: KubeClient, namespaces: readonly string[]): Promise<void> {
  for (const ns of namespaces) {
    await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await admin.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: RELEASER, namespace: ns } });
    await admin.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `${RELEASER}-admin`, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'ServiceAccount', name: RELEASER, namespace: ns }],
    });
  }
}

/** A HelmOperator serving the chart at `chartRef` as `group`/v1alpha1 `kind`, its releases acting as RELEASER; waits until Ready. */
export async function hostileHelmOperator(admin: KubeClient, name: string, chartRef: string, group: string, kind: string): Promise<void> {
  await admin.apply({
    apiVersion: API_VERSION,
    kind: 'HelmOperator',
    metadata: { name },
    spec: {
      chart: { oci: { ref: chartRef, insecure: true }, version: HOSTILE_CHART_VERSION },
      kinds: [{ group, version: 'v1alpha1', kind }],
      serviceAccount: { name: RELEASER },
    },
  });
  await eventually('HelmOperator Ready', async () => {
    const h = await admin.get<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name });
    return findCondition(h.status?.conditions, 'Ready')?.status === 'True' ? h : undefined;
  }, 180_000);
}

/** The hostile CRs' verdicts: the record refused by its Secret's name, the render by the limit it passes, nothing of it applied. */
export async function assertHostileRefused(
  admin: KubeClient,
  o: { api: string; kind: string; namespace: string; bombed: ({ name: string } & PlantedRecord)[]; huge: string[]; timeoutMs: number; check?: () => void | Promise<void> },
): Promise<{ record: string; render: string }> {
  const condition = (name: string, type: string, match: (c: { status: string; reason: string; message: string }) => boolean) =>
    eventually(
      `${o.namespace}/${name} ${type}`,
      async () => {
        await o.check?.();
        const c = findCondition((await admin.get<HostileCr>({ apiVersion: o.api, kind: o.kind, namespace: o.namespace, name })).status?.conditions, type);
        return c !== undefined && match(c) ? c : undefined;
      },
      o.timeoutMs,
      250,
    );
  let record = '';
  let render = '';
  for (const b of o.bombed) record = (await condition(b.name, 'ReleaseRecordsRefused', (c) => c.status === 'True' && c.message.includes(b.secret))).message;
  for (const h of o.huge) {
    render = (await condition(h, 'ReleaseFailed', (c) => c.status === 'True' && c.reason === 'ReleaseTooLarge')).message;
    assert.match(render, /spec\.limits\.max(Objects|ManifestBytes)/, 'the condition names the limit');
  }
  const cms = (await admin.list('v1', 'ConfigMap', { namespace: o.namespace })).items.map((c) => c.metadata.name ?? '');
  for (const h of o.huge) {
    assert.deepEqual(cms.filter((n) => n.startsWith(`${h}-`)), [], `nothing of ${h}'s 100,000-object render is applied`);
    assert.equal(await admin.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: o.namespace, name: `${h}-prometheus-pushgateway` }), undefined, `not even ${h}'s chart objects`);
  }
  // A planted Secret is left exactly as it is: never decoded past its bound, never replaced by a revision made from it, never deleted.
  for (const b of o.bombed) {
    const still = await admin.find({ apiVersion: 'v1', kind: 'Secret', namespace: o.namespace, name: b.secret });
    assert.equal(still?.metadata.resourceVersion, b.resourceVersion, `${b.secret} is left as it was planted`);
  }
  return { record, render };
}
