/**
 * The record of an installation: what `install-self` applied, as Helm keeps a release record
 * and kubectl's applyset a parent object. A ConfigMap (`RECORD_NAME`, labelled `RECORD_LABEL`)
 * in the manager's namespace lists every object of the installed set by group, kind, namespace
 * and name, with the release version (if any) and image, so that
 *
 * - a later install (another release, or `--image` after a release) prunes what its set no
 *   longer has (`planPrune`),
 * - `status-self` judges the installation by the set that was installed, and
 * - `uninstall-self` removes exactly that.
 *
 * The record is written twice per install: `pending` before anything but the namespace is
 * applied, with the objects of earlier sets still to prune, then `installed` once the set is
 * applied and pruned; so an interrupted install is detected and the next one still knows what
 * to prune. Objects an install had to keep (a CRD that still has custom resources) stay in
 * `prune` until a later install may remove them.
 */
import { parseApiVersion, type KubeObject } from '../kube/types.js';
import { BinnacleError, ValidationResult } from '../util/errors.js';
import { SELF_LABELS } from './manifests.js';
import { isRecord } from '../util/object.js';

export const RECORD_NAME = 'binnacle-install-record';
export const RECORD_LABEL = 'binnacle.dev/install-record';

/** One object of an installation: enough to find it again, whatever version it is served at. */
export interface RecordedObject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export type RecordPhase = 'pending' | 'installed';

export interface InstallRecord {
  /** The manager's namespace, where the record lives. */
  namespace: string;
  /** The release installed (`install-self --version`); absent for a binary's own manifests. */
  version?: string;
  image: string;
  /** `pending` while an install runs (or when it was interrupted), `installed` once it finished. */
  phase: RecordPhase;
  /** The installed set, in the order it was applied. */
  objects: RecordedObject[];
  /** Objects of earlier sets not removed yet: pending pruning, or kept (a CRD with custom resources). */
  prune: RecordedObject[];
}

export function recordedObject(o: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): RecordedObject {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '', ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }) };
}

/** The identity of an object across versions of its API: group, kind, namespace, name. */
export function objectId(o: RecordedObject): string {
  return `${parseApiVersion(o.apiVersion).group}/${o.kind}/${o.namespace ?? ''}/${o.name}`;
}

export function recordLabel(o: Pick<RecordedObject, 'kind' | 'name' | 'namespace'>): string {
  return `${o.kind} ${o.namespace === undefined ? '' : `${o.namespace}/`}${o.name}`;
}

/** The record as the ConfigMap that holds it. */
export function recordConfigMap(r: InstallRecord): KubeObject {
  const list = (xs: readonly RecordedObject[]): string => `${xs.map((x) => JSON.stringify(x)).join('\n')}${xs.length === 0 ? '' : '\n'}`;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: RECORD_NAME, namespace: r.namespace, labels: { ...SELF_LABELS, [RECORD_LABEL]: 'true' } },
    data: {
      ...(r.version === undefined ? {} : { version: r.version }),
      image: r.image,
      phase: r.phase,
      objects: list(r.objects),
      prune: list(r.prune),
    },
  };
}

function parseList(text: unknown, field: string, res: ValidationResult): RecordedObject[] {
  if (text === undefined) return [];
  if (typeof text !== 'string') {
    res.error('record.field', 'expected a string', { field });
    return [];
  }
  const out: RecordedObject[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return void res.error('record.object', `line ${i + 1} is not JSON`, { field });
    }
    if (!isRecord(v) || typeof v.apiVersion !== 'string' || typeof v.kind !== 'string' || typeof v.name !== 'string' || v.name === '' || (v.namespace !== undefined && typeof v.namespace !== 'string')) {
      return void res.error('record.object', `line ${i + 1}: expected {"apiVersion","kind","name"[,"namespace"]}`, { field });
    }
    out.push({ apiVersion: v.apiVersion, kind: v.kind, name: v.name, ...(typeof v.namespace === 'string' ? { namespace: v.namespace } : {}) });
  });
  return out;
}

/** Reads a record ConfigMap; a damaged one is an error naming it, each problem and what to do. */
export function parseRecord(cm: KubeObject): InstallRecord {
  const namespace = cm.metadata.namespace ?? '';
  const where = `ConfigMap ${namespace}/${cm.metadata.name ?? ''}`;
  const res = new ValidationResult(`install record ${where}`);
  const data = isRecord(cm.data) ? cm.data : {};
  const image = data.image;
  if (typeof image !== 'string' || image === '') res.error('record.field', 'expected the image', { field: 'data.image' });
  const phase = data.phase;
  if (phase !== 'pending' && phase !== 'installed') res.error('record.field', `expected "pending" or "installed", found ${JSON.stringify(phase)}`, { field: 'data.phase' });
  const version = data.version;
  if (version !== undefined && (typeof version !== 'string' || version === '')) res.error('record.field', 'expected a version', { field: 'data.version' });
  const objects = parseList(data.objects, 'data.objects', res);
  if (data.objects !== undefined && objects.length === 0 && res.ok) res.error('record.field', 'lists no objects', { field: 'data.objects' });
  const prune = parseList(data.prune, 'data.prune', res);
  if (!res.ok) {
    throw new BinnacleError(
      'terminal',
      'SELF_RECORD_INVALID',
      `${where} is not a readable install record:\n${res.render()}\ndelete it (\`kubectl delete configmap -n ${namespace} ${RECORD_NAME}\`) and run install-self again: what it listed is then judged by this binary's manifests, and nothing of an earlier set is pruned`,
    );
  }
  return { namespace, ...(typeof version === 'string' ? { version } : {}), image: image as string, phase: phase as RecordPhase, objects, prune };
}

/** Kinds in the order their objects go: the manager first, what others depend on later, the namespace last. */
const DELETE_ORDER = ['Deployment', 'Service', 'RoleBinding', 'Role', 'ServiceAccount', 'ConfigMap', 'ClusterRoleBinding', 'ClusterRole', 'CustomResourceDefinition', 'Namespace'];

/** Objects in the order to delete them (stable within a kind; unknown kinds before the cluster-wide RBAC). */
export function deleteOrder<T extends Pick<RecordedObject, 'kind'>>(objects: readonly T[]): T[] {
  const rank = (kind: string): number => {
    const i = DELETE_ORDER.indexOf(kind);
    return i < 0 ? DELETE_ORDER.indexOf('ClusterRoleBinding') - 0.5 : i;
  };
  return objects.map((o, i) => ({ o, i })).sort((a, b) => rank(a.o.kind) - rank(b.o.kind) || a.i - b.i).map((x) => x.o);
}

/**
 * What an install of `next` into `namespace` must prune: every object of the earlier records'
 * sets (and what they still had to prune) that `next` lacks, in the order to delete them; never
 * the target namespace, nor a record itself. Each object once, whatever its API version.
 */
export function planPrune(previous: readonly InstallRecord[], next: readonly RecordedObject[], namespace: string): RecordedObject[] {
  const keep = new Set(next.map(objectId));
  const seen = new Set<string>();
  const out: RecordedObject[] = [];
  for (const r of previous) {
    for (const o of [...r.objects, ...r.prune]) {
      const id = objectId(o);
      if (keep.has(id) || seen.has(id)) continue;
      if (o.kind === 'Namespace' && o.name === namespace) continue;
      if (o.kind === 'ConfigMap' && o.name === RECORD_NAME) continue;
      seen.add(id);
      out.push(o);
    }
  }
  return deleteOrder(out);
}
