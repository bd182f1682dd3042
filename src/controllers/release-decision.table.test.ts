/**
 * The release decision's table, run through the real reconcilers (Helm release and
 * BundleDeployment) and the real operations over the one fake cluster: every combination of the
 * deployed revision (none, made from the inputs now asked for, made from others) and the newest
 * revision's status and inputs, the histories made by the engine itself (a real install or
 * upgrade, then the newest record's status set as an interrupted or failed run leaves it, with
 * the objects that run applied still live). Each row says what the first reconcile does (a new
 * revision and how it is described, or none), and what Helm's `pkg/action` and Flux's
 * helm-controller do in the same state; then the release settles and the model test's
 * invariants hold (nothing the spec holds deleted on the way, a Namespace or claim never deleted
 * short of an uninstall, live objects the spec's and nothing else, one deployed revision, the
 * mirror the history). decide.test.ts is the pure function's own table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReleaseStore, type TrustedHistory } from '../apply/index.js';
import type { ReleaseRevision, ReleaseStatus } from '../apply/types.js';
import { bdSubject, checkSettled, helmSubject, MAX_HISTORY, newWorld, reconcileOnce, settle, type Subject, type Variant, type World } from './release-engine.world.test-helper.js';

type Newest = 'the deployed one' | Exclude<ReleaseStatus, 'deployed' | 'unknown' | 'uninstalled'>;

interface Row {
  /** The deployed revision's inputs; none: nothing is deployed. */
  deployed: 'none' | 'same' | 'other';
  newest: Newest;
  /** The newest revision's inputs: the ones asked for now (A) or others (C). */
  newestInputs?: 'same' | 'other';
  /** What the first reconcile makes: a new revision so described, or none (a repair). */
  outcome: 'Install complete' | 'Upgrade complete' | 'Rollback to 1' | 'no new revision';
  helm: string;
  flux: string;
  /** Where Binnacle differs on purpose, why. */
  why?: string;
}

const PENDING_HELM = 'refuses: "another operation (install/upgrade/rollback) is in progress" until the record is fixed by hand';
const PENDING_FLUX = 'unlocks (marks the pending revision failed), then acts as below';
const ROLLBACK_WHY = 'the deployed revision was made from these very inputs: its record is rolled out again, with no render that could now differ or fail, and the unfinished revision\'s objects are pruned (Helm\'s upgrade makes the same objects by rendering again)';

type Newer = Exclude<Newest, 'the deployed one'>;
const NEWER: readonly Newer[] = ['failed', 'pending-install', 'pending-upgrade', 'pending-rollback', 'superseded', 'uninstalling'];
const pending = (n: Newer): boolean => n.startsWith('pending');

/** A row for each newest status of `newest` with the same and with other inputs. */
function grid(deployed: Row['deployed'], newest: readonly Newer[], row: (n: Newer, inputs: 'same' | 'other') => Pick<Row, 'outcome' | 'helm' | 'flux' | 'why'>): Row[] {
  return newest.flatMap((n) => (['same', 'other'] as const).map((newestInputs): Row => ({ deployed, newest: n, newestInputs, ...row(n, newestInputs) })));
}

const rows: Row[] = [
  // Nothing deployed.
  ...grid('none', NEWER.filter((n) => n !== 'superseded'), (n) => ({
    outcome: 'Install complete',
    helm: pending(n) ? PENDING_HELM : n === 'failed' ? 'upgrade --install upgrades from the failed first install' : 'upgrade refuses: "has no deployed releases"',
    flux: pending(n) ? `${PENDING_FLUX}: install` : n === 'failed' ? 'install remediation: uninstall, then install' : 'install',
    why: 'nothing was ever deployed, so nothing is upgraded from: a fresh install (the failed run\'s objects it does not make again are pruned)',
  })),
  { deployed: 'none', newest: 'superseded', newestInputs: 'same', outcome: 'Rollback to 1', helm: 'upgrade refuses: "has no deployed releases"', flux: 'upgrade', why: 'the superseded revision was made from these inputs: rolled out again as it was recorded' },
  { deployed: 'none', newest: 'superseded', newestInputs: 'other', outcome: 'Upgrade complete', helm: 'upgrade refuses: "has no deployed releases"', flux: 'upgrade' },
  // Deployed from the inputs asked for now.
  { deployed: 'same', newest: 'the deployed one', outcome: 'no new revision', helm: 'upgrade makes an identical new revision', flux: 'nothing, or drift correction', why: 'a repair re-applies the recorded objects: no render, no new revision, history stays short' },
  ...grid('same', NEWER, (n) => ({
    outcome: 'Rollback to 1',
    helm: pending(n) ? PENDING_HELM : 'upgrade to the same inputs (a new render)',
    flux: pending(n) ? `${PENDING_FLUX}: rollback remediation` : 'rollback remediation to the deployed revision',
    why: ROLLBACK_WHY,
  })),
  // Deployed from other inputs.
  { deployed: 'other', newest: 'the deployed one', outcome: 'Upgrade complete', helm: 'upgrade', flux: 'upgrade' },
  ...grid('other', NEWER, (n, inputs) => ({
    outcome: 'Upgrade complete',
    helm: pending(n) ? PENDING_HELM : 'upgrade from the deployed revision',
    flux: pending(n) ? `${PENDING_FLUX}: upgrade` : n === 'failed' && inputs === 'same' ? 'retry the upgrade per its remediation, then roll back' : 'upgrade',
    ...(n === 'failed' && inputs === 'same' ? { why: 'the failed inputs were not rolled back, so they are tried again (rolled back if they fail again)' } : {}),
  })),
];

const variantOf = (deployed: 'same' | 'other'): Variant => (deployed === 'same' ? 'A' : 'B');

async function history(w: World, subject: Subject): Promise<{ store: TrustedHistory; revisions: ReleaseRevision[] }> {
  const store = w.records.bind(subject.recordOwner(w), subject.release, new ReleaseStore(w.cluster.client({ user: subject.identity })));
  return { store, revisions: (await store.read()).revisions };
}

/** Reconciles spec `v` until settled, with the invariants checked (the history's start). */
async function deploy(w: World, subject: Subject, v: Variant): Promise<void> {
  subject.setVariant(w, v);
  await settle(w, subject);
  checkSettled(w, subject);
  assert.deepEqual(w.violations, [], `setting up: ${v} deployed`);
}

/** Makes the row's history with the engine itself, its newest record then left as the row says. */
async function seed(w: World, subject: Subject, row: Row): Promise<void> {
  const newestVariant: Variant = row.newestInputs === 'other' ? 'C' : 'A';
  if (row.deployed === 'none') {
    subject.create(w, newestVariant);
    await deploy(w, subject, newestVariant);
    const { store, revisions } = await history(w, subject);
    await store.setStatus(revisions[0] as ReleaseRevision, row.newest as ReleaseStatus, `left ${row.newest}`);
    return;
  }
  const deployed = variantOf(row.deployed);
  subject.create(w, deployed);
  await deploy(w, subject, deployed);
  if (row.newest === 'the deployed one') return;
  if (newestVariant === deployed) {
    // An upgrade to the same inputs that did not finish: its objects are the deployed one's.
    const { store, revisions } = await history(w, subject);
    const first = revisions[0] as ReleaseRevision;
    await store.create({ ...first, revision: 2, status: row.newest, description: `left ${row.newest}` });
    return;
  }
  // An upgrade that applied everything and was then interrupted or failed: its objects are live.
  await deploy(w, subject, newestVariant);
  const { store, revisions } = await history(w, subject);
  const [first, second] = revisions as [ReleaseRevision, ReleaseRevision];
  await store.setStatus(second, row.newest, `left ${row.newest}`);
  await store.setStatus(first, 'deployed');
}

for (const subject of [helmSubject, bdSubject]) {
  for (const row of rows) {
    const state = `deployed ${row.deployed}, newest ${row.newest}${row.newestInputs === undefined ? '' : ` (${row.newestInputs} inputs)`}`;
    test(`${subject.name}: ${state} → ${row.outcome} (Helm: ${row.helm}; Flux: ${row.flux})${row.why === undefined ? '' : `; Binnacle: ${row.why}`}`, async () => {
      const w = newWorld(subject);
      await seed(w, subject, row);
      const before = (await history(w, subject)).revisions;
      // Asked for A now.
      subject.setVariant(w, 'A');
      w.cluster.clearFaults();
      await reconcileOnce(w, subject);
      assert.deepEqual(w.violations, [], 'the first reconcile');
      const after = (await history(w, subject)).revisions;
      const made = after.filter((r) => !before.some((b) => b.revision === r.revision));
      if (row.outcome === 'no new revision') {
        assert.deepEqual(made, [], 'a repair makes no revision');
      } else {
        assert.equal(made.length, 1, `one new revision: ${JSON.stringify(after.map((r) => [r.revision, r.status, r.description]))}`);
        assert.equal(made[0]?.description, row.outcome);
        assert.equal(made[0]?.status, 'deployed');
        assert.equal(made[0]?.inputDigest, subject.digestOf(w, 'A'), 'the new revision is made from the inputs asked for');
      }
      // No revision the reconcile found stays pending: it was settled failed before acting.
      assert.deepEqual(after.filter((r) => r.status.startsWith('pending-')).map((r) => r.revision), []);
      await settle(w, subject);
      checkSettled(w, subject);
      assert.deepEqual(w.violations, []);
    });
  }

  test(`${subject.name}: inputs that failed and were rolled back are kept off until the owner's spec changes (Helm: upgrades again; Flux: no retry once remediation is exhausted, a new generation resets it)`, async () => {
    const w = newWorld(subject);
    subject.create(w, 'A');
    await deploy(w, subject, 'A');
    subject.setVariant(w, 'B');
    const generation = (): number | undefined => [...w.cluster.objects.values()].find((o) => o.metadata.uid === subject.uid(w))?.metadata.generation;
    const { store, revisions } = await history(w, subject);
    const first = revisions[0] as ReleaseRevision;
    // B failed at this generation, and A was rolled out again (as the engine leaves it).
    await store.setStatus(first, 'superseded');
    await store.create({ ...first, revision: 2, status: 'failed', description: 'Upgrade failed', inputDigest: subject.digestOf(w, 'B'), ownerGeneration: generation() });
    await store.create({ ...first, revision: 3, status: 'deployed', description: 'Rollback to 1' });
    await reconcileOnce(w, subject);
    const kept = (await history(w, subject)).revisions;
    assert.deepEqual(kept.map((r) => [r.revision, r.status]), [[1, 'superseded'], [2, 'failed'], [3, 'deployed']], 'kept: no new revision');
    assert.deepEqual(w.violations, []);
    // The spec changed away and back: a new generation, a new request.
    subject.setVariant(w, 'C');
    subject.setVariant(w, 'B');
    await reconcileOnce(w, subject);
    const retried = (await history(w, subject)).revisions;
    assert.deepEqual(retried.map((r) => [r.revision, r.status, r.description]).slice(-1), [[4, 'deployed', 'Upgrade complete']], 'tried again at the new generation');
    await settle(w, subject);
    checkSettled(w, subject);
    assert.deepEqual(w.violations, []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`${subject.name}: a run that died after deploying and before trimming left the history over its limit; the next repair trims it (found by the model, seed 165151)`, async () => {
    const w = newWorld(subject);
    subject.create(w, 'A');
    await deploy(w, subject, 'A');
    const { store, revisions } = await history(w, subject);
    const first = revisions[0] as ReleaseRevision;
    await store.setStatus(first, 'superseded');
    // Revisions 2..MAX_HISTORY superseded, and one more deployed: one over the limit, as the run left it.
    for (let n = 2; n <= MAX_HISTORY; n++) await store.create({ ...first, revision: n, status: 'superseded', description: 'Upgrade complete' });
    await store.create({ ...first, revision: MAX_HISTORY + 1, status: 'deployed', description: 'Upgrade complete' });
    assert.equal((await history(w, subject)).revisions.length, MAX_HISTORY + 1);
    await reconcileOnce(w, subject);
    const after = (await history(w, subject)).revisions;
    assert.equal(after.length, MAX_HISTORY, `trimmed to its limit: ${JSON.stringify(after.map((r) => [r.revision, r.status]))}`);
    assert.equal(after.at(-1)?.revision, MAX_HISTORY + 1, 'the deployed revision stays, no new one made');
    await settle(w, subject);
    checkSettled(w, subject);
    assert.deepEqual(w.violations, []);
  });
}
