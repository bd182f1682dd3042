/**
 * What this client's own identity may do, asked of the API server (SelfSubjectAccessReview, as
 * `kubectl auth can-i`). Used before starting work that would otherwise be refused again and
 * again (an informer's list and watch retried with backoff, each refusal logged).
 */
import type { KubeObject } from './types.js';
import type { ResourceInfo } from './ports.js';

export interface AccessReviewer {
  resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo>;
  create<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T>;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Whether every verb is allowed on `kind` in `namespace` (all namespaces when absent). */
export async function mayI(client: AccessReviewer, verbs: readonly string[], apiVersion: string, kind: string, namespace?: string): Promise<boolean> {
  const info = await client.resourceFor(apiVersion, kind);
  const answers = await Promise.all(
    verbs.map((verb) =>
      client.create<KubeObject & { status?: { allowed?: boolean } }>({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        metadata: {},
        spec: { resourceAttributes: { verb, group: groupOf(apiVersion), resource: info.name, ...(namespace !== undefined && namespace !== '' ? { namespace } : {}) } },
      }),
    ),
  );
  return answers.every((a) => a.status?.allowed === true);
}
