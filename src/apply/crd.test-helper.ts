/** Tests' CustomResourceDefinitions. */
import type { KubeObject } from '../kube/types.js';

/** A CRD `<plural>.<group>` (namespaced unless told) with one version (v1 unless told), served and stored, whose schema has these top-level properties. */
export function crdOf(kind: { group: string; kind: string; plural: string }, properties: Record<string, unknown>, opts: { scope?: 'Namespaced' | 'Cluster'; version?: string } = {}): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.plural}.${kind.group}` },
    spec: {
      group: kind.group,
      scope: opts.scope ?? 'Namespaced',
      names: { kind: kind.kind, plural: kind.plural },
      versions: [{ name: opts.version ?? 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties } } }],
    },
  };
}

/** The `Widget` kind of `example.com` most apply tests use. */
export const WIDGET = { group: 'example.com', kind: 'Widget', plural: 'widgets' };
