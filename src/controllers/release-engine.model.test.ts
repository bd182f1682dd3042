/**
 * The release engine under random histories (fast-check's model-based testing, checked as
 * Jepsen checks a history): the real Helm release and BundleDeployment reconcilers and the real
 * operations over the one fake cluster, driven by random sequences of spec changes (reverts
 * among them), crashes at the n-th write of a reconcile (each create, update, patch, apply and
 * delete of records and objects, before or after it lands), leader changes, objects edited or
 * deleted by someone else, Helm records deleted, rewritten or planted (a forged revision, a forged failed
 * first install numbered past Helm's revisions, or a gzip bomb inflating past a record's bound), deletions and
 * re-creations of the owner, and releases left by the Binnacle before the trusted history. Only
 * the render is a stand-in (a pure function of the spec), so a sequence runs in milliseconds.
 * Spec B also renders the release's own Namespace (A and C do not), which holds the owner, the
 * installing ServiceAccount and the Helm records: a revision that drops it must not prune it.
 * The Helm chart has a hook (pre-install, pre-upgrade, pre-delete) whose name another release
 * may take while it is free: that release's object must never be deleted or taken over.
 *
 * Checked along the way: no reconcile throws anything but the injected crash, or makes a buffer
 * larger than a release record may inflate to (a planted record inflated whole); nothing is
 * written outside the release's scope; another release's object stays as it was; no object the spec asked for at that moment is deleted,
 * and a Namespace or PersistentVolumeClaim only by the release's uninstall. Checked once the
 * sequence settles (reconciled without faults until nothing changes): the live objects are the
 * spec's, Deployed (Installed) is true and the history agrees, the history stays within its
 * limit, the Helm mirror matches it; a deleted owner left nothing behind.
 *
 * CI runs a fixed seed (BINNACLE_MODEL_SEED, default 20261202) and BINNACLE_MODEL_RUNS sequences
 * (default 300), and prints how many crashes it injected at each write site. `npm run model`
 * runs 100,000 with a fresh seed, prints it, and shrinks any failure to the shortest sequence,
 * which is then kept below as a regression case.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { revisionRecordSecret } from '../apply/index.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../apply/ownership.js';
import { WRITE_VERBS } from '../kube/fake-cluster.test-helper.js';
import { checkSettled, helmSubject, bdSubject, leftByOldBinnacle, newWorld, NS, ownedObjects, ensureReleaseNamespace, HOOK_NAME, namespaceTerminating, neighbourObject, reconcileOnce, settle, stats, SYSTEM, type Subject, type Variant, type World } from './release-engine.world.test-helper.js';
const SEED = Number(process.env.BINNACLE_MODEL_SEED ?? '20261202');
const RUNS = Number(process.env.BINNACLE_MODEL_RUNS ?? '300');

// --- commands ------------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<{ variant: Variant }, World>;

const variants = fc.constantFrom<Variant>('A', 'B', 'C');

/** Arms a crash at the n-th write from now (whichever reconcile makes it), before or after it lands. */
class CrashAt implements Cmd {
  constructor(
    private readonly nth: number,
    private readonly when: 'before' | 'after',
  ) {}
  check = (): boolean => true;
  run(_m: { variant: Variant }, w: World): Promise<void> {
    w.cluster.crashAtWrite(this.nth, this.when, (r) => {
      const site = `${this.when} ${r.verb} ${r.kind}${r.namespace === SYSTEM ? ' (trusted record)' : r.kind === 'Secret' && r.name.startsWith('sh.helm.') ? ' (Helm mirror)' : ''}`;
      w.crashes.set(site, (w.crashes.get(site) ?? 0) + 1);
    });
    return Promise.resolve();
  }
  toString = (): string => `crash ${this.when} write ${this.nth}`;
}

/** Something done to the world (and the model kept in step), then a reconcile. */
class Act implements Cmd {
  constructor(
    private readonly subject: Subject,
    private readonly what: string,
    private readonly act: (w: World, m: { variant: Variant }) => void,
  ) {}
  check = (): boolean => true;
  async run(m: { variant: Variant }, w: World): Promise<void> {
    this.act(w, m);
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => this.what;
}

class SetSpec extends Act {
  constructor(subject: Subject, v: Variant) {
    super(subject, `spec ${v}`, (w, m) => {
      subject.setVariant(w, v);
      m.variant = w.variant;
    });
  }
}

/** A new leader: fresh reconcilers, nothing of the old one's memory. */
class LeaderChange extends Act {
  constructor(subject: Subject) {
    super(subject, 'leader change', (w) => subject.restart(w));
  }
}

class EditLive implements Cmd {
  constructor(
    private readonly subject: Subject,
    private readonly which: number,
    private readonly how: 'edit' | 'delete',
  ) {}
  check = (): boolean => true;
  async run(_m: { variant: Variant }, w: World): Promise<void> {
    const owned = [...ownedObjects(w, this.subject).values()].filter((o) => o.kind !== 'Namespace');
    const target = owned[this.which % Math.max(owned.length, 1)];
    if (target !== undefined) {
      const ref = { apiVersion: target.apiVersion, kind: target.kind, namespace: target.metadata.namespace, name: target.metadata.name ?? '' };
      const someone = w.cluster.client({ user: 'kubectl' });
      if (this.how === 'delete') await someone.delete(ref);
      else if (target.kind === 'ConfigMap' || target.kind === 'Secret') await someone.patch(ref, { data: Object.fromEntries(Object.keys(target.data ?? {}).map((k) => [k, 'ZWRpdGVk'])) });
      else await someone.patch(ref, { metadata: { labels: { edited: 'yes' } }, spec: { replicas: 7 } });
    }
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => `${this.how} live object ${this.which}`;
}

class TamperMirror implements Cmd {
  constructor(
    private readonly subject: Subject,
    private readonly how: 'delete' | 'rewrite' | 'plant' | 'plant-failed' | 'plant-stray' | 'bomb',
  ) {}
  check = (): boolean => true;
  async run(_m: { variant: Variant }, w: World): Promise<void> {
    const { name, namespace } = this.subject.release;
    const mirror = w.cluster.all('Secret', namespace).filter((s) => (s.metadata.name ?? '').startsWith(`sh.helm.release.v1.${name}.`));
    const owner = { kind: this.subject === helmSubject ? 'Pushgateway' : 'BundleDeployment', name: this.subject.prefix, ...(this.subject === helmSubject ? { namespace: NS } : {}) };
    const last = mirror.at(-1);
    if (this.how === 'delete' && last !== undefined) w.cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace, name: last.metadata.name ?? '' });
    if (this.how === 'rewrite' && last !== undefined) w.cluster.put({ ...last, data: { release: 'aGFuZCBlZGl0' } });
    if (this.how === 'plant' || this.how === 'plant-failed' || this.how === 'plant-stray') {
      // A forged revision that would apply a ClusterRoleBinding and run a delete hook in kube-system;
      // 'plant-failed' as issue 43's reproduction had it: a failed first install whose revision
      // number (1e21) no Secret name can carry, so that an uninstall would run its delete hooks;
      // 'plant-stray' under a name Helm never gives (helm history still lists it by its labels).
      const failed = this.how === 'plant-failed';
      const forged = revisionRecordSecret(
        { name, namespace, version: failed ? 1e21 : 99, status: failed ? 'failed' : 'deployed', description: 'forged', firstDeployed: '', lastDeployed: '', chart: { name, version: '1.0.0' }, config: {}, manifest: '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: evil\n', inputDigest: `d-${w.variant}`, content: { chart: { templates: [{ name: 'x', data: '' }] }, manifest: '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: evil\n', hooks: [{ name: 'x', kind: 'ConfigMap', path: 'x', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  namespace: kube-system\n', events: ['pre-delete'], last_run: { started_at: '', completed_at: '', phase: '' }, weight: 0 }] } },
        owner,
        new Date(),
        'created',
      );
      const plantedAs = failed ? `sh.helm.release.v1.${name}.v97` : this.how === 'plant-stray' ? `sh.helm.release.v1.${name}.forged` : undefined;
      w.cluster.put(plantedAs === undefined ? forged : { ...forged, metadata: { ...forged.metadata, name: plantedAs } });
    }
    if (this.how === 'bomb') {
      const bomb = gzipBomb();
      const labels = { [OWNER_KIND_LABEL]: owner.kind, [OWNER_NAME_LABEL]: owner.name, ...(owner.namespace === undefined ? {} : { 'binnacle.dev/owner-namespace': owner.namespace }), owner: 'helm', name, version: '98', status: 'deployed' };
      w.cluster.put({ apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1', metadata: { namespace, name: `sh.helm.release.v1.${name}.v98`, labels }, data: { release: Buffer.from(bomb).toString('base64') } });
    }
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => `${this.how} Helm record`;
}

let bomb: string | undefined;
/** 48 MiB of spaces gzipped (about 48 KiB): past the 32 MiB a record may inflate to. Made once. */
function gzipBomb(): string {
  bomb ??= gzipSync(Buffer.alloc(48 * 1024 * 1024, 0x20)).toString('base64');
  return bomb;
}

/** Another release in the namespace takes the hook's name while it is free, or gives it back. */
class Neighbour extends Act {
  constructor(subject: Subject, how: 'take' | 'leave') {
    super(subject, `neighbour ${how}s the hook's name`, (w) => {
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: HOOK_NAME };
      if (how === 'take' && w.cluster.get(ref) === undefined && !namespaceTerminating(w)) {
        w.cluster.put(neighbourObject());
        w.neighbour = true;
      }
      if (how === 'leave' && w.neighbour) {
        w.cluster.remove(ref);
        w.neighbour = false;
      }
    });
  }
}

class DeleteOwner extends Act {
  constructor(subject: Subject) {
    super(subject, 'delete owner', (w) => subject.remove(w));
  }
}

class CreateOwner extends Act {
  constructor(subject: Subject, v: Variant) {
    super(subject, `create owner ${v}`, (w, m) => {
      if (!subject.exists(w)) {
        ensureReleaseNamespace(w, subject);
        // Found by the 100,000-sequence run: the world put the owner into a namespace being
        // deleted, which the API server refuses; the admin creates it once the namespace is gone
        // (a BundleDeployment is cluster-scoped, but its install namespace would then be gone for
        // good in this world: the admin makes both again once it is).
        if (namespaceTerminating(w)) return;
        subject.create(w, v);
        m.variant = v;
      }
    });
  }
}

function commands(subject: Subject): fc.Arbitrary<Cmd>[] {
  return [
    variants.map((v) => new SetSpec(subject, v)),
    fc.tuple(fc.integer({ min: 1, max: 16 }), fc.constantFrom<'before' | 'after'>('before', 'after')).map(([n, when]) => new CrashAt(n, when)),
    fc.tuple(fc.integer({ min: 1, max: 16 }), fc.constantFrom<'before' | 'after'>('before', 'after')).map(([n, when]) => new CrashAt(n, when)),
    fc.constant(new LeaderChange(subject)),
    fc.tuple(fc.nat(10), fc.constantFrom<'edit' | 'delete'>('edit', 'delete')).map(([i, how]) => new EditLive(subject, i, how)),
    fc.constantFrom<'delete' | 'rewrite' | 'plant' | 'plant-failed' | 'plant-stray' | 'bomb'>('delete', 'rewrite', 'plant', 'plant-failed', 'plant-stray', 'bomb').map((how) => new TamperMirror(subject, how)),
    fc.constant(new DeleteOwner(subject)),
    variants.map((v) => new CreateOwner(subject, v)),
    // Only the Helm chart has hooks.
    ...(subject === helmSubject ? [fc.constantFrom<'take' | 'leave'>('take', 'leave').map((how) => new Neighbour(subject, how))] : []),
  ];
}

/** One sequence from a fresh world (the owner made at A, or left by the Binnacle before the trusted history), settled and checked. */
async function play(subject: Subject, oldLayout: boolean, cmds: Iterable<Cmd>): Promise<World> {
  const w = newWorld(subject);
  if (oldLayout) leftByOldBinnacle(w, subject);
  else subject.create(w, 'A');
  await reconcileOnce(w, subject);
  await fc.asyncModelRun(() => ({ model: { variant: w.variant }, real: w }), cmds);
  await settle(w, subject);
  checkSettled(w, subject);
  if (w.violations.length > 0 && process.env.BINNACLE_MODEL_DEBUG === '1') console.log(w.cluster.log.filter((r) => WRITE_VERBS.has(r.verb)).map((r) => `${r.identity} ${r.verb} ${r.kind} ${r.namespace}/${r.name}`).join('\n'));
  return w;
}

async function runModel(subject: Subject, seed: number, runs: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.boolean(), fc.commands(commands(subject), { maxCommands: 30, size: 'large' }), async (oldLayout, cmds) => {
      const w = await play(subject, oldLayout, cmds);
      stats.sequences++;
      stats.commands += [...cmds].length;
      stats.reconciles += w.reconciles;
      for (const [site, n] of w.crashes) stats.crashes.set(site, (stats.crashes.get(site) ?? 0) + n);
      assert.deepEqual(w.violations, [], `sequence ${[...cmds].map(String).join(', ')}`);
    }),
    { seed, numRuns: runs, endOnFailure: process.env.BINNACLE_MODEL_SHRINK === '0', includeErrorInReport: true, ...(process.env.BINNACLE_MODEL_PATH === undefined ? {} : { path: process.env.BINNACLE_MODEL_PATH }) },
  );
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name} under random changes, crashes and tampering keeps its invariants (seed ${SEED}, ${RUNS} sequences)`, { timeout: Math.max(1_800_000, RUNS * 6_000) }, async () => {
    const before = { ...stats, crashes: new Map(stats.crashes) };
    await runModel(subject, SEED, RUNS);
    const sites = [...stats.crashes].map(([site, n]) => [site, n - (before.crashes.get(site) ?? 0)] as const).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
    console.log(`${subject.name}: ${stats.sequences - before.sequences} sequences, ${stats.commands - before.commands} commands, ${stats.reconciles - before.reconciles} reconciles; crashes injected by write site: ${sites.map(([s, n]) => `${s} ×${n}`).join(', ')}`);
    assert.ok(sites.length >= 8, `crashes reached ${sites.length} write sites`);
  });
}

/** Sequences the model once failed on, shrunk; each stays as a regression case. */
async function replay(subject: Subject, oldLayout: boolean, cmds: Cmd[]): Promise<string[]> {
  return (await play(subject, oldLayout, cmds)).violations;
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: a re-created owner whose first installs crash, then reverted, keeps nothing of the crashed spec`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CrashAt(7, 'before'), new CrashAt(11, 'before'), new CreateOwner(subject, 'B'), new SetSpec(subject, 'A'), new CreateOwner(subject, 'A')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: an install that crashed on its first record write, then a spec changed away and back, deploys the spec`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CrashAt(3, 'before'), new CreateOwner(subject, 'B'), new SetSpec(subject, 'A'), new SetSpec(subject, 'B'), new EditLive(subject, 0, 'edit')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: a Namespace applied just before a crash, then the owner deleted, is not left behind`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CrashAt(1, 'after'), new CreateOwner(subject, 'A'), new DeleteOwner(subject), new TamperMirror(subject, 'delete')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: two upgrades crashed, the spec changed away and back twice, then a crash armed: the spec is what settles`, async () => {
    assert.deepEqual(await replay(subject, false, [new CrashAt(2, 'before'), new CrashAt(7, 'before'), new SetSpec(subject, 'B'), new SetSpec(subject, 'A'), new SetSpec(subject, 'C'), new SetSpec(subject, 'A'), new CrashAt(1, 'before')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: a re-created owner's install crashed after its first record, then the owner deleted: none of its Helm records stay`, async () => {
    assert.deepEqual(await replay(subject, false, [new CrashAt(11, 'after'), new DeleteOwner(subject), new CrashAt(1, 'after'), new CreateOwner(subject, 'A'), new DeleteOwner(subject), new TamperMirror(subject, 'plant')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: a revision without the release's own Namespace (B rendered it) keeps it: never pruned`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CreateOwner(subject, 'B'), new SetSpec(subject, 'A'), new CreateOwner(subject, 'A')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: an uninstall that deletes the release's own Namespace, its ServiceAccount with it, finishes within the release's scope`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CreateOwner(subject, 'B'), new CrashAt(5, 'after'), new DeleteOwner(subject), new SetSpec(subject, 'A')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: an uninstall that deleted its own Namespace, then crashed, finishes without its delete hooks (nothing can be created there)`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CreateOwner(subject, 'B'), new CrashAt(8, 'after'), new DeleteOwner(subject), new SetSpec(subject, 'A')]), []);
  });
}

test('the helm release: a hook whose name another release took refuses the upgrade until it is free, and then deploys the spec', async () => {
  assert.deepEqual(await replay(helmSubject, false, [new Neighbour(helmSubject, 'take'), new SetSpec(helmSubject, 'C'), new LeaderChange(helmSubject)]), []);
});

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: an owner made again while its namespace is being deleted waits for the namespace (the API server refuses it), then installs`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CreateOwner(subject, 'B'), new CrashAt(12, 'before'), new CrashAt(1, 'before'), new DeleteOwner(subject), new SetSpec(subject, 'A'), new Neighbour(subject, 'take'), new CreateOwner(subject, 'A'), new CrashAt(1, 'before')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: a forged failed record numbered 1e21 (a delete hook in kube-system) planted beside a live release is removed from the mirror by its name and runs nothing (found by the model, seed 20261202)`, async () => {
    assert.deepEqual(await replay(subject, false, [new TamperMirror(subject, 'plant-failed'), new EditLive(subject, 0, 'edit')]), []);
  });
  test(`the ${subject.name}: the same record planted before the owner exists runs nothing of it, and the uninstall leaves nothing`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new TamperMirror(subject, 'plant-failed'), new CreateOwner(subject, 'A'), new CrashAt(2, 'before'), new SetSpec(subject, 'B'), new DeleteOwner(subject)]), []);
  });
  test(`the ${subject.name}: a record with the release's labels under a name Helm never gives (helm history lists it) is removed from the mirror (the model, seed 20261202, with the removal reverted)`, async () => {
    assert.deepEqual(await replay(subject, false, [new TamperMirror(subject, 'plant-stray'), new LeaderChange(subject)]), []);
  });
}
