/**
 * Where the manager's Pod can really run. kwok's nodes are fake: a Pod placed there is marked
 * Ready without running. On a cluster with only such nodes install-self says so; on a cluster
 * with a real node beside them (`cluster up --real-node`) the manager is placed on real nodes
 * only, tolerating the taint that keeps other Pods off the real node.
 */
import type { KubeObject } from '../kube/types.js';
import { REAL_NODE_TAINT } from '../cluster/real-node.js';

/** kwok's own mark of a node it fakes, and the label kwok clusters give them. */
export function isFakeNode(node: KubeObject): boolean {
  return node.metadata.annotations?.['kwok.x-k8s.io/node'] === 'fake' || node.metadata.labels?.type === 'kwok';
}

export interface NodeKinds {
  real: number;
  fake: number;
}

export function nodeKinds(nodes: readonly KubeObject[]): NodeKinds {
  const fake = nodes.filter(isFakeNode).length;
  return { real: nodes.length - fake, fake };
}

/** Why the manager will not really run here, or undefined when some node is real. */
export function fakeNodesWarning(kinds: NodeKinds): string | undefined {
  if (kinds.real > 0) return undefined;
  return kinds.fake === 0
    ? 'this cluster has no nodes: the manager Pod will not run until one joins'
    : `every node of this cluster (${kinds.fake}) is faked by kwok: the manager Pod will be marked Ready without running, so nothing reconciles in the cluster (run a manager locally with \`binnacle manager\`, or use a cluster with a real node: \`binnacle cluster up --real-node\`)`;
}

/**
 * Deployments of `objects` placed on real nodes: not on kwok's (required node affinity on its
 * `type` label) and tolerating the real node's taint. Used only when both kinds are present.
 */
export function placeOnRealNodes(objects: readonly KubeObject[]): KubeObject[] {
  return objects.map((o) => {
    if (o.kind !== 'Deployment') return o;
    const spec = (o.spec ?? {}) as { template?: { spec?: Record<string, unknown> } };
    const podSpec = spec.template?.spec ?? {};
    const tolerations = [...((podSpec.tolerations as unknown[] | undefined) ?? []), { key: REAL_NODE_TAINT.key, operator: 'Exists', effect: REAL_NODE_TAINT.effect }];
    const affinity = {
      ...((podSpec.affinity as Record<string, unknown> | undefined) ?? {}),
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'type', operator: 'NotIn', values: ['kwok'] }] }] } },
    };
    return { ...o, spec: { ...spec, template: { ...spec.template, spec: { ...podSpec, tolerations, affinity } } } };
  });
}
