/**
 * The ClusterObjectSet reconciler under random histories (fast-check's model-based testing), as
 * the release engine's model does: the real reconciler over the one fake cluster, driven by
 * random sequences of crashes at the n-th write of a reconcile (before or after it lands), leader
 * changes, the probed object made ready or not by someone else, the revision's objects edited or
 * deleted by someone else, its referenced Secret deleted and made again with the same or other
 * content, the revision archived, and a second revision of the same owner that takes one of its
 * objects over and, once rolled out, archives it.
 *
 * Checked along the way: no reconcile throws anything but the injected crash; the manager writes
 * nothing but the revisions themselves; the installer writes nothing but the revisions' objects
 * (and archives the older revision); what the newer revision took over is never taken back or
 * deleted by the older.
 * Checked once settled (reconciled without faults until nothing changes): an active revision whose
 * Secret content is unchanged has every object of its first phase as the spec says, controlled by
 * it; the second phase is there exactly when the probe passed at some point; Available and
 * Progressing say which; a revision whose Secret changed under it is Blocked and wrote none of the
 * changed content; an archived revision left none of its objects and let go of its finalizer.
 *
 * CI runs a fixed seed (BINNACLE_MODEL_SEED, default 20261202) and BINNACLE_MODEL_RUNS sequences (default 300).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { loadOlmv1Crd } from '../api/olmv1/crds.js';
import { OBJECT_SET_FINALIZER, type ClusterObjectSet } from '../api/olmv1/object-set.js';
import { OLMV1_API_VERSION } from '../api/olmv1/types.js';
import { Crash, FakeCluster, WRITE_VERBS } from '../kube/fake-cluster.test-helper.js';
import type { Condition, KubeObject } from '../kube/types.js';
import { ClusterObjectSetReconciler } from './cluster-object-set.js';

const SEED = Number(process.env.BINNACLE_MODEL_SEED ?? '20261202');
const RUNS = Number(process.env.BINNACLE_MODEL_RUNS ?? '300');
const logger = pino({ level: 'silent' });
const NS = 'team';
const INSTALLER = 'system:serviceaccount:olmv1-system:installer';
const COS = { apiVersion: OLMV1_API_VERSION, kind: 'ClusterObjectSet', name: 'rev' };
const REV2 = { apiVersion: OLMV1_API_VERSION, kind: 'ClusterObjectSet', name: 'rev-2' };
/** Both revisions are the same owner's: the second takes `inline` over and, once it has rolled out, archives the first. */
const OWNER = { 'olm.operatorframework.io/owner-name': 'ext' };
const ref = (name: string, kind = 'ConfigMap'): { apiVersion: string; kind: string; namespace: string; name: string } => ({ apiVersion: 'v1', kind, namespace: NS, name });
/** The objects of the two phases: the gate (probed: its `ready` annotation, set by someone else), one inline, one from a Secret; then one more. */
const PHASE_1 = ['gate', 'inline', 'from-secret'];
const PHASE_2 = ['after'];
const cm = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data });
/** The probed object: ready when someone has annotated it so. */
const GATE: KubeObject = { ...cm('gate', { g: '1' }), metadata: { name: 'gate', namespace: NS, labels: { probed: 'yes' } } };
const PROBES: ClusterObjectSet['spec']['progressionProbes'] = [{ selector: { type: 'Label', label: { matchLabels: { probed: 'yes' } } }, assertions: [{ type: 'FieldValue', fieldValue: { fieldPath: 'metadata.annotations.ready', value: 'yes' } }] }];
const secretContent = (v: string): string => Buffer.from(JSON.stringify(cm('from-secret', { v }))).toString('base64');

interface World {
  cluster: FakeCluster;
  reconciler: ClusterObjectSetReconciler;
  violations: string[];
  crashes: Map<string, number>;
  /** The probe passed at some point (the second phase may then be there). */
  everReady: boolean;
  /** The Secret's content now, and what the revision first resolved. */
  secret: string;
  pinned: string | undefined;
  archived: boolean;
  /** Whether the second revision was made. */
  second: boolean;
  /** Objects someone else deleted since the last reconcile. */
  deletedByHand: Set<string>;
}

function newWorld(): World {
  const cluster = new FakeCluster({ objects: [loadOlmv1Crd('ClusterObjectSet')] });
  cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  cluster.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'content', namespace: NS }, immutable: true, data: { obj: secretContent('one') } });
  const cos: ClusterObjectSet = {
    apiVersion: OLMV1_API_VERSION,
    kind: 'ClusterObjectSet',
    metadata: { name: 'rev', uid: 'rev-uid', generation: 1, creationTimestamp: '2026-12-04T00:00:00Z', labels: OWNER },
    spec: {
      lifecycleState: 'Active',
      revision: 1,
      collisionProtection: 'Prevent',
      progressionProbes: PROBES,
      phases: [
        { name: 'one', objects: [{ object: GATE }, { object: cm('inline', { i: '1' }) }, { ref: { name: 'content', namespace: NS, key: 'obj' } }] },
        { name: 'two', objects: [{ object: cm('after', { a: '1' }) }] },
      ],
    },
  };
  cluster.put(cos);
  const w: World = { cluster, reconciler: newReconciler(cluster), violations: [], crashes: new Map(), everReady: false, secret: 'one', pinned: undefined, archived: false, second: false, deletedByHand: new Set() };
  return w;
}

function newReconciler(cluster: FakeCluster): ClusterObjectSetReconciler {
  return new ClusterObjectSetReconciler({ client: cluster.client({ user: 'manager' }), installer: { namespace: 'olmv1-system', name: 'installer' } });
}

/** What the installer may write: the revisions' objects, and the first revision (archived by the second). */
const ALLOWED = new Set([...[...PHASE_1, ...PHASE_2].map((n) => `ConfigMap/${NS}/${n}`), 'ClusterObjectSet//rev']);
const controllerOf = (w: World, name: string): string | undefined => w.cluster.get(ref(name))?.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;

async function reconcileOnce(w: World): Promise<void> {
  const from = w.cluster.log.length;
  // A reconcile that starts while the gate passes may go on to the second phase.
  if (w.cluster.get(ref('gate'))?.metadata.annotations?.ready === 'yes') w.everReady = true;
  const heldBySecond = ['inline', 'gate'].filter((n) => controllerOf(w, n) === 'rev-2-uid');
  for (const name of w.second ? ['rev', 'rev-2'] : ['rev']) {
    try {
      await w.reconciler.reconcile({ key: name, name }, { logger, signal: new AbortController().signal });
    } catch (err) {
      if (!(err instanceof Crash)) w.violations.push(`a reconcile of ${name} threw ${err instanceof Error ? err.message : String(err)}`);
    }
    w.cluster.restart();
  }
  // What the newer revision took over is never taken back by the older one, nor deleted by it.
  for (const n of heldBySecond) {
    const now = controllerOf(w, n);
    // Someone else may delete it (then it is made again); the older revision may neither take it back nor delete it.
    if (now !== 'rev-2-uid' && !(now === undefined && w.deletedByHand.has(n))) w.violations.push(`${n}, which the newer revision controlled, is now ${now === undefined ? 'gone' : `controlled by ${now}`}`);
  }
  w.deletedByHand.clear();
  checkWrites(w, from);
}

/** Who wrote what since `from`, and whether content the first revision did not pin reached the cluster. */
function checkWrites(w: World, from: number): void {
  for (const r of w.cluster.log.slice(from)) {
    if (!WRITE_VERBS.has(r.verb)) continue;
    const id = `${r.kind}/${r.namespace}/${r.name}`;
    if (r.identity === 'manager' && r.kind !== 'ClusterObjectSet') w.violations.push(`the manager itself wrote ${r.verb} ${id}`);
    if (r.identity === INSTALLER && !ALLOWED.has(id)) w.violations.push(`the installer wrote ${r.verb} ${id}, which is not the revision's`);
  }
  // The revision's first resolution pins the Secret's content of that moment.
  const observed = (w.cluster.get(COS)?.status as { observedPhases?: unknown[] } | undefined)?.observedPhases;
  if (w.pinned === undefined && observed !== undefined && observed.length > 0) w.pinned = w.secret;
  if (w.pinned !== undefined && w.pinned !== w.secret) {
    const v = (w.cluster.get(ref('from-secret'))?.data as Record<string, string> | undefined)?.v;
    if (v !== undefined && v !== w.pinned) w.violations.push(`content the revision did not pin was applied: ${v}`);
  }
}

type Cmd = fc.AsyncCommand<object, World>;

class CrashAt implements Cmd {
  constructor(
    private readonly nth: number,
    private readonly when: 'before' | 'after',
  ) {}
  check = (): boolean => true;
  run(_m: object, w: World): Promise<void> {
    w.cluster.crashAtWrite(this.nth, this.when, (r) => {
      const site = `${this.when} ${r.verb} ${r.kind}`;
      w.crashes.set(site, (w.crashes.get(site) ?? 0) + 1);
    });
    return Promise.resolve();
  }
  toString = (): string => `crash ${this.when} write ${this.nth}`;
}

class Act implements Cmd {
  constructor(
    private readonly what: string,
    private readonly act: (w: World) => void,
  ) {}
  check = (): boolean => true;
  async run(_m: object, w: World): Promise<void> {
    this.act(w);
    await reconcileOnce(w);
  }
  toString = (): string => this.what;
}

function commands(): fc.Arbitrary<Cmd>[] {
  const crash = fc.tuple(fc.integer({ min: 1, max: 8 }), fc.constantFrom<'before' | 'after'>('before', 'after')).map(([n, when]) => new CrashAt(n, when));
  return [
    crash,
    crash,
    fc.constant(new Act('reconcile', () => undefined)),
    fc.constant(new Act('leader change', (w) => (w.reconciler = newReconciler(w.cluster)))),
    fc.boolean().map(
      (ready) =>
        new Act(`gate ${ready ? 'ready' : 'not ready'}`, (w) => {
          const gate = w.cluster.get(ref('gate'));
          if (gate === undefined) return;
          w.cluster.put({ ...gate, metadata: { ...gate.metadata, annotations: ready ? { ready: 'yes' } : {} } });
        }),
    ),
    fc.tuple(fc.constantFrom(...PHASE_1, ...PHASE_2), fc.constantFrom<'edit' | 'delete'>('edit', 'delete')).map(
      ([name, how]) =>
        new Act(`${how} ${name}`, (w) => {
          if (w.cluster.get(ref(name)) === undefined) return;
          if (how === 'delete') {
            w.cluster.remove(ref(name));
            w.deletedByHand.add(name);
          }
          else w.cluster.put({ ...(w.cluster.get(ref(name)) as KubeObject), data: { edited: 'yes' } });
        }),
    ),
    fc.constantFrom('one', 'two').map(
      (v) =>
        new Act(`secret made again with content ${v}`, (w) => {
          w.cluster.remove(ref('content', 'Secret'));
          w.cluster.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'content', namespace: NS }, immutable: true, data: { obj: secretContent(v) } });
          w.secret = v;
        }),
    ),
    fc.constant(
      new Act('second revision', (w) => {
        if (w.second) return;
        w.second = true;
        // It takes `inline` over in its first phase, then the gate in its second, and rolls out only once the gate is ready:
        // until then both revisions are active, and the older one is reconciled beside it.
        const rev2: ClusterObjectSet = {
          apiVersion: OLMV1_API_VERSION,
          kind: 'ClusterObjectSet',
          metadata: { name: 'rev-2', uid: 'rev-2-uid', generation: 1, creationTimestamp: '2026-12-04T00:00:00Z', labels: OWNER },
          spec: { lifecycleState: 'Active', revision: 2, collisionProtection: 'Prevent', progressionProbes: PROBES, phases: [{ name: 'one', objects: [{ object: cm('inline', { i: '2' }) }] }, { name: 'two', objects: [{ object: GATE }] }] },
        };
        w.cluster.put(rev2);
      }),
    ),
    fc.constant(
      new Act('archive', (w) => {
        const live = w.cluster.get(COS) as ClusterObjectSet;
        w.cluster.put({ ...live, spec: { ...live.spec, lifecycleState: 'Archived' } });
        w.archived = true;
      }),
    ),
  ];
}

function condition(w: World, type: string): Condition | undefined {
  return ((w.cluster.get(COS)?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}

async function settle(w: World): Promise<void> {
  w.cluster.clearFaults();
  w.cluster.restart();
  for (let i = 0; i < 10; i++) {
    const before = JSON.stringify(w.cluster.countWrites());
    await reconcileOnce(w);
    if (JSON.stringify(w.cluster.countWrites()) === before) return;
  }
  w.violations.push('did not settle within 10 reconciles');
}

function controlled(w: World, name: string): boolean {
  return w.cluster.get(ref(name))?.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === 'rev-uid') === true;
}

/** Archived: none of its objects, Progressing Archived, no finalizer (unless it was Blocked before it could be torn down). */
function checkArchived(w: World): void {
  if (condition(w, 'Progressing')?.reason === 'Blocked') return;
  const left = [...PHASE_1, ...PHASE_2].filter((n) => w.cluster.get(ref(n)) !== undefined && !(w.second && (n === 'inline' || n === 'gate')));
  if (left.length > 0) w.violations.push(`archived, but its objects stay: ${left.join(', ')}`);
  if (condition(w, 'Progressing')?.reason !== 'Archived') w.violations.push(`archived, but Progressing says ${JSON.stringify(condition(w, 'Progressing'))}`);
  if (w.cluster.get(COS)?.metadata.finalizers?.includes(OBJECT_SET_FINALIZER) === true) w.violations.push('archived, but the finalizer stays');
}

/** Active: the first phase as the spec says and controlled by the revision; the second exactly as the probe allowed; conditions that say which. */
function checkActive(w: World): void {
  const want: Record<string, Record<string, string>> = { gate: { g: '1' }, inline: { i: '1' }, 'from-secret': { v: w.secret } };
  for (const name of PHASE_1) {
    const live = w.cluster.get(ref(name));
    if (live === undefined || !controlled(w, name)) {
      w.violations.push(`${name} of the first phase is ${live === undefined ? 'missing' : 'not controlled by the revision'}`);
      continue;
    }
    const data = (live.data ?? {}) as Record<string, string>;
    for (const [k, v] of Object.entries(want[name] ?? {})) if (data[k] !== v) w.violations.push(`${name}: data.${k} is ${JSON.stringify(data[k])}, the spec says ${v}`);
  }
  const ready = w.cluster.get(ref('gate'))?.metadata.annotations?.ready === 'yes';
  const after = w.cluster.get(ref('after'));
  if (ready && (after === undefined || !controlled(w, 'after'))) w.violations.push('the probe passes, but the second phase is not there');
  if (!w.everReady && after !== undefined) w.violations.push('the second phase was applied though the probe never passed');
  const expect = ready ? ['True', 'ProbesSucceeded', 'Succeeded'] : ['False', 'ProbeFailure', 'RollingOut'];
  const got = [condition(w, 'Available')?.status, condition(w, 'Available')?.reason, condition(w, 'Progressing')?.reason];
  if (JSON.stringify(got) !== JSON.stringify(expect)) w.violations.push(`conditions ${JSON.stringify(got)}, expected ${JSON.stringify(expect)}`);
}

/**
 * Two revisions: the newer controls what it took over (inline, the gate), as it says; once the
 * gate is ready it has rolled out and archived the older, which then let go of the rest.
 */
function checkSecond(w: World): void {
  for (const [n, data] of [['inline', { i: '2' }], ['gate', { g: '1' }]] as const) {
    const live = w.cluster.get(ref(n));
    const got = (live?.data ?? {}) as Record<string, string>;
    if (controllerOf(w, n) !== 'rev-2-uid' || !Object.entries(data).every(([k, v]) => got[k] === v)) w.violations.push(`${n} is ${JSON.stringify({ controller: controllerOf(w, n), data: live?.data })}, the newer revision's says ${JSON.stringify(data)}`);
  }
  const second = ((w.cluster.get(REV2)?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Progressing');
  const ready = w.cluster.get(ref('gate'))?.metadata.annotations?.ready === 'yes';
  if (second?.reason !== (ready ? 'Succeeded' : 'RollingOut')) w.violations.push(`the gate is ${ready ? '' : 'not '}ready, and the newer revision is ${JSON.stringify(second)}`);
  const first = w.cluster.get(COS) as ClusterObjectSet;
  if (ready && first.spec.lifecycleState !== 'Archived') w.violations.push('the newer revision rolled out, but the older is not archived');
  if (first.spec.lifecycleState === 'Archived') w.archived = true;
}

function checkSettled(w: World): void {
  if (w.second) {
    checkSecond(w);
    // The older revision, still active beside a newer one that has not rolled out, is judged no further (its gate is the newer's).
    if (!w.archived) return;
  }
  if (w.archived) return checkArchived(w);
  if (w.pinned !== undefined && w.pinned !== w.secret) {
    if (condition(w, 'Progressing')?.reason !== 'Blocked') w.violations.push(`the Secret changed under the revision, but Progressing says ${JSON.stringify(condition(w, 'Progressing'))}`);
    return;
  }
  checkActive(w);
}

async function play(cmds: Iterable<Cmd>): Promise<World> {
  const w = newWorld();
  await reconcileOnce(w);
  await fc.asyncModelRun(() => ({ model: {}, real: w }), cmds);
  await settle(w);
  checkSettled(w);
  return w;
}

test(`ClusterObjectSet under random crashes, probes, edits, Secret changes and archiving keeps its invariants (seed ${SEED}, ${RUNS} sequences)`, { timeout: Math.max(600_000, RUNS * 2_000) }, async () => {
  const crashes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(fc.commands(commands(), { maxCommands: 25, size: 'large' }), async (cmds) => {
      const w = await play(cmds);
      for (const [site, n] of w.crashes) crashes.set(site, (crashes.get(site) ?? 0) + n);
      assert.deepEqual(w.violations, [], `sequence ${[...cmds].map(String).join(', ')}`);
    }),
    { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
  );
  const sites = [...crashes].sort((a, b) => b[1] - a[1]);
  console.log(`ClusterObjectSet: ${RUNS} sequences; crashes injected by write site: ${sites.map(([s, n]) => `${s} ×${n}`).join(', ')}`);
  assert.ok(sites.length >= 4, `crashes reached ${sites.length} write sites`);
});

