/**
 * The harness itself: a failing input is shrunk in an on-demand run and not in CI's sample, the
 * shrinking budget holds, refusals answered count as specific errors, a generator that hardly
 * reaches invalid input fails the run, and `corrupt` changes one place of a document. Loaders
 * here are small functions of numbers; their figures go to no report.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { BinnacleError } from '../../src/util/errors.js';
import { corrupt, fc, fuzz } from './harness.js';

const ENV = ['BINNACLE_FUZZ_RUNS', 'BINNACLE_FUZZ_SHRINK', 'BINNACLE_FUZZ_SHRINK_SECONDS', 'BINNACLE_FUZZ_REPORT', 'BINNACLE_FUZZ_SEED'];
beforeEach(() => {
  for (const k of ENV) Reflect.deleteProperty(process.env, k);
});

/** Fails (a TypeError, as a bug would) on a number over 50, whose smallest failing input is [51]; refuses odd sums, accepts even ones. */
const numbers = fc.array(fc.nat({ max: 1000 }), { maxLength: 8 });
function sumLoader(xs: number[]): number {
  const big = xs.find((x) => x > 50);
  if (big !== undefined) throw new TypeError(`${big} is over 50`);
  const sum = xs.reduce((a, b) => a + b, 0);
  if (sum % 2 === 1) throw new BinnacleError('input', 'ODD', `sum ${sum} is odd`);
  return sum;
}

async function failure(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  assert.fail('the run passed');
}

describe('fuzz: shrinking', () => {
  it('an on-demand run (BINNACLE_FUZZ_RUNS set, as hack/fuzz.sh sets it) shrinks the failing input to the smallest', async () => {
    process.env.BINNACLE_FUZZ_RUNS = '300';
    const message = await failure(fuzz('harness-sum', numbers, sumLoader, { ciRuns: 10 }));
    assert.match(message, /was shrunk in [1-9]\d* smaller failing inputs/);
    assert.match(message, /Counterexample: \[\[51\]\]/);
    assert.match(message, /--- the smallest failing input's failure\nthrew TypeError: 51 is over 50/);
  });

  it("CI's sample (no BINNACLE_FUZZ_RUNS) reports the input as generated, with the command that replays and shrinks it", async () => {
    const message = await failure(fuzz('harness-sum', numbers, sumLoader, { ciRuns: 300 }));
    assert.match(message, /was not shrunk .*replay and shrink: BINNACLE_FUZZ_SEED=\d+ BINNACLE_FUZZ_RUNS=300 bash hack\/fuzz\.sh/);
    assert.match(message, /Shrunk 0 time\(s\)/);
  });

  it('BINNACLE_FUZZ_SHRINK=0 turns shrinking off in an on-demand run, and =1 on in the CI sample', async () => {
    process.env.BINNACLE_FUZZ_RUNS = '300';
    process.env.BINNACLE_FUZZ_SHRINK = '0';
    assert.match(await failure(fuzz('harness-sum', numbers, sumLoader, { ciRuns: 10 })), /was not shrunk/);
    Reflect.deleteProperty(process.env, 'BINNACLE_FUZZ_RUNS');
    process.env.BINNACLE_FUZZ_SHRINK = '1';
    assert.match(await failure(fuzz('harness-sum', numbers, sumLoader, { ciRuns: 300 })), /Counterexample: \[\[51\]\]/);
  });

  it('past BINNACLE_FUZZ_SHRINK_SECONDS the smallest failing input found so far is reported', async () => {
    process.env.BINNACLE_FUZZ_RUNS = '300';
    process.env.BINNACLE_FUZZ_SHRINK_SECONDS = '0.000001';
    const message = await failure(fuzz('harness-sum', numbers, sumLoader, { ciRuns: 10 }));
    assert.match(message, /was shrunk in 0 smaller failing inputs/);
    assert.doesNotMatch(message, /Counterexample: \[\[51\]\]/);
  });
});

describe('fuzz: the share of specific errors', () => {
  const small = fc.array(fc.nat({ max: 10 }), { maxLength: 8 });

  it('counts thrown Binnacle errors and refusals answered; a run at a third or more passes', async () => {
    const thrown = await fuzz('harness-thrown', small, sumLoader, { ciRuns: 200 });
    assert.equal(thrown.errors + thrown.answers, 200);
    assert.ok(thrown.errorShare >= 1 / 3 && thrown.answers > 0, JSON.stringify(thrown));
    const answered = await fuzz('harness-answered', small, (xs) => ({ sum: xs.reduce((a, b) => a + b, 0) }), {
      ciRuns: 200,
      refusal: (a) => ((a as { sum: number }).sum % 2 === 1 ? { code: 'ODD', message: 'odd' } : undefined),
    });
    assert.deepEqual([answered.errors, answered.codes.ODD], [thrown.errors, thrown.errors]);
  });

  it('a loader that accepts nearly every input fails the run, as one that refuses every input does', async () => {
    const rare = await failure(fuzz('harness-rare', small, (xs) => (xs.length === 8 ? sumLoader([1]) : xs.length), { ciRuns: 200 }));
    assert.match(rare, /harness-rare: only \d+ of 200 inputs \(\d+\.\d%\) ended in a specific error, under 33\.3%/);
    const never = await failure(fuzz('harness-never', small, () => sumLoader([1]), { ciRuns: 50 }));
    assert.match(never, /harness-never: no input was accepted/);
  });

  it('a refusal without a message is a failure', async () => {
    const message = await failure(fuzz('harness-empty', small, () => 'x', { ciRuns: 5, refusal: () => ({ code: 'EMPTY', message: ' ' }) }));
    assert.match(message, /refusal EMPTY with an empty message/);
  });
});

describe('corrupt', () => {
  const doc = { name: 'etcd', version: '0.9.2', entries: [{ name: 'a' }, { name: 'b' }], n: 3 };
  // Places, depth first: 0 root, 1 name, 2 version, 3 entries, 4 entries[0], 5 entries[0].name, 6 entries[1], 7 entries[1].name, 8 n.

  it('changes one place of a copy, by the kind of value there', () => {
    assert.deepEqual(corrupt(doc, { at: 2, op: 'near-miss', pick: 0 }), { ...doc, version: '1.0' });
    assert.deepEqual(corrupt(doc, { at: 1, op: 'null', pick: 0 }), { ...doc, name: null });
    assert.deepEqual(corrupt(doc, { at: 8, op: 'wrong-type', pick: 0 }), { ...doc, n: '3' });
    assert.deepEqual(corrupt(doc, { at: 1, op: 'delete', pick: 0 }), { version: '0.9.2', entries: doc.entries, n: 3 });
    assert.equal((corrupt(doc, { at: 1, op: 'oversized', pick: 1 }) as { name: string }).name.length, 300);
    assert.deepEqual(doc, { name: 'etcd', version: '0.9.2', entries: [{ name: 'a' }, { name: 'b' }], n: 3 });
  });

  it('duplicate repeats the list element the place is in (a duplicate name), or an element of a list', () => {
    assert.deepEqual((corrupt(doc, { at: 7, op: 'duplicate', pick: 0 }) as typeof doc).entries, [{ name: 'a' }, { name: 'b' }, { name: 'b' }]);
    assert.deepEqual((corrupt(doc, { at: 3, op: 'duplicate', pick: 0 }) as typeof doc).entries, [{ name: 'a' }, { name: 'b' }, { name: 'a' }]);
    assert.deepEqual(corrupt([{ schema: 'olm.package' }], { at: 1, op: 'duplicate', pick: 0 }), [{ schema: 'olm.package' }, { schema: 'olm.package' }]);
  });

  it('the place is picked modulo the number of places: any `at` is a place', () => {
    assert.deepEqual(corrupt(doc, { at: 9 + 2, op: 'near-miss', pick: 0 }), { ...doc, version: '1.0' });
  });
});
