/**
 * operator-sdk's memcached Helm sample (test/vendor/operator-sdk-v1.42.3/memcached-operator) as its
 * project deploys it, for the real-node e2e: the project's image (its Dockerfile: watches.yaml and
 * helm-charts/ copied into /opt/helm of the helm-operator base, here Binnacle's drop-in), the CRD,
 * config/rbac with config/default's namePrefix and namespace, and config/manager's Deployment with
 * config/default's metrics patch (the scaffold's arguments, probes and limits), its image swapped.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/types.js';
import { buildImage, parseReference, pushImage, type RegistryClient } from '../../src/oci/index.js';

export const SAMPLE = join(import.meta.dirname, '..', 'vendor', 'operator-sdk-v1.42.3', 'memcached-operator');
export const SAMPLE_PREFIX = 'memcached-operator';
export const SAMPLE_NS = `${SAMPLE_PREFIX}-system`;
export const SAMPLE_DEPLOYMENT = `${SAMPLE_PREFIX}-controller-manager`;
export const SAMPLE_METRICS_SERVICE = `${SAMPLE_PREFIX}-controller-manager-metrics-service`;

export interface SampleDeployment extends KubeObject {
  spec: {
    template: {
      metadata?: { labels?: Record<string, string> };
      spec: {
        containers: { name: string; image: string; args: string[]; resources?: { limits?: Record<string, string> }; readinessProbe?: unknown; livenessProbe?: unknown }[];
        serviceAccountName: string;
        tolerations?: unknown[];
        nodeSelector?: Record<string, string>;
      };
    };
  };
}

function docs(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

/** The project's image: its Dockerfile's two COPYs on `operatorImage` (Binnacle's helm-operator variant). */
export async function buildSampleImage(client: RegistryClient, operatorImage: string, target: string): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'binnacle-e2e-sample-'));
  try {
    cpSync(join(SAMPLE, 'watches.yaml'), join(work, 'tree', 'watches.yaml'));
    cpSync(join(SAMPLE, 'helm-charts'), join(work, 'tree', 'helm-charts'), { recursive: true });
    const base = await client.resolveImage(operatorImage);
    const baseRef = parseReference(operatorImage);
    const config = JSON.parse((await client.getBlobBytes(baseRef, base.manifest.config.digest, base.manifest.config.size)).toString('utf8')) as Record<string, unknown>;
    const built = await buildImage({ layers: [{ dir: join(work, 'tree'), prefix: '/opt/helm' }], labels: {}, outputDir: join(work, 'layout'), base: { manifest: base.manifest, config } });
    // The base's layers are in the same registry: mounted into the project's repository.
    for (const l of base.manifest.layers) {
      const open = (): PassThrough => {
        const out = new PassThrough();
        client.getBlob(baseRef, l.digest, l.size).then(
          (r) => r.pipe(out),
          (err: unknown) => out.destroy(err instanceof Error ? err : new Error(String(err))),
        );
        return out;
      };
      await client.uploadBlob(parseReference(target), { digest: l.digest, size: l.size, open }, { mountFrom: baseRef.repository });
    }
    return (await pushImage(built, target, client)).ref;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** config/manager's Deployment with config/default's patch (its JSON patches insert before the first argument). */
export function scaffoldDeployment(): SampleDeployment {
  const dep = docs(join(SAMPLE, 'config', 'manager', 'manager.yaml')).find((o) => o.kind === 'Deployment') as SampleDeployment | undefined;
  if (dep === undefined) throw new Error('config/manager/manager.yaml has no Deployment');
  const container = dep.spec.template.spec.containers[0];
  if (container === undefined) throw new Error('the scaffold Deployment has no container');
  const patch = parseYaml(readFileSync(join(SAMPLE, 'config', 'default', 'manager_metrics_patch.yaml'), 'utf8')) as { op: string; path: string; value: string }[];
  for (const p of patch) container.args.unshift(p.value);
  dep.metadata = { ...dep.metadata, name: SAMPLE_DEPLOYMENT, namespace: SAMPLE_NS };
  dep.spec.template.spec.serviceAccountName = `${SAMPLE_PREFIX}-${dep.spec.template.spec.serviceAccountName}`;
  return dep;
}

/** The project's namespace (restricted, as the scaffold's Pods meet it), CRD and RBAC, kustomized as config/default names them. */
export async function applySampleBase(kc: KubeClient): Promise<void> {
  await kc.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SAMPLE_NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } });
  for (const o of docs(join(SAMPLE, 'config', 'crd', 'bases', 'cache.example.com_memcacheds.yaml'))) await kc.apply(o);
  const files = ['service_account', 'role', 'role_binding', 'leader_election_role', 'leader_election_role_binding', 'metrics_auth_role', 'metrics_auth_role_binding', 'metrics_reader_role'];
  for (const src of files.flatMap((f) => docs(join(SAMPLE, 'config', 'rbac', `${f}.yaml`)))) {
    const o = { ...src, metadata: { ...src.metadata, name: `${SAMPLE_PREFIX}-${src.metadata.name ?? ''}` } } as KubeObject & { roleRef?: { name: string }; subjects?: { kind: string; name: string; namespace?: string }[] };
    if (o.kind.startsWith('Cluster')) delete o.metadata.namespace;
    else o.metadata.namespace = SAMPLE_NS;
    if (o.roleRef !== undefined) o.roleRef = { ...o.roleRef, name: `${SAMPLE_PREFIX}-${o.roleRef.name}` };
    if (o.subjects !== undefined) o.subjects = o.subjects.map((s) => (s.kind === 'ServiceAccount' ? { ...s, name: `${SAMPLE_PREFIX}-${s.name}`, namespace: SAMPLE_NS } : s));
    await kc.apply(o);
  }
  // kubebuilder's config/default/metrics_service.yaml (not vendored): port 8443, the manager's Pods.
  await kc.apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: SAMPLE_METRICS_SERVICE, namespace: SAMPLE_NS, labels: { 'control-plane': 'controller-manager' } },
    spec: { ports: [{ name: 'https', port: 8443, protocol: 'TCP', targetPort: 8443 }], selector: { 'control-plane': 'controller-manager', 'app.kubernetes.io/name': SAMPLE_PREFIX } },
  });
}

export function sampleCr(): KubeObject {
  const cr = docs(join(SAMPLE, 'config', 'samples', 'cache_v1alpha1_memcached.yaml'))[0];
  if (cr === undefined) throw new Error('no sample CR');
  return { ...cr, metadata: { ...cr.metadata, namespace: SAMPLE_NS } };
}
