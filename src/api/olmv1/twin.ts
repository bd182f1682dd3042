/**
 * Which OLM v1 object a `binnacle.dev` object is the twin of (controllers/cluster-olmv1-twin.ts
 * makes and keeps twins). One predicate for the controller and for the commands that must write
 * the OLM v1 object instead of its twin: the twin label and a controller reference to an OLM v1
 * object of the same kind, both naming one UID. A label alone, or an owner alone, is not a twin.
 */
import type { KubeObject } from '../../kube/types.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION } from './types.js';

/** The UID of the OLM v1 object `obj` is the twin of, or undefined when it is no twin. */
export function olmv1TwinOf(obj: Pick<KubeObject, 'kind' | 'metadata'>): string | undefined {
  const uid = obj.metadata.labels?.[LABEL_OLMV1_TWIN_OF];
  if (uid === undefined || uid === '') return undefined;
  const owned = obj.metadata.ownerReferences?.some((o) => o.apiVersion === OLMV1_API_VERSION && o.kind === obj.kind && o.controller === true && o.uid === uid) === true;
  return owned ? uid : undefined;
}
