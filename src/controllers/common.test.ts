import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { MAX_CONDITION_MESSAGE } from '../kube/types.js';
import { Conditions, CONTINUE, methodSteps, reconcileSteps, runSteps, stop, type StepOutcome } from './common.js';

const logger = pino({ level: 'silent' });

interface State {
  seen: string[];
  writeStatus: boolean;
  said?: string;
}

class Pipeline {
  readonly prefix = 'p:';
  constructor(private readonly failAt?: string) {}

  handleFinalizer(s: State): Promise<StepOutcome> {
    return this.step(s, 'handleFinalizer');
  }
  validate(s: State): Promise<StepOutcome> {
    return this.step(s, 'validate');
  }
  apply(s: State): Promise<StepOutcome> {
    if (this.failAt === 'stop') return Promise.resolve(stop({ requeueAfterMs: 5 }));
    return this.step(s, 'apply');
  }

  private step(s: State, name: string): Promise<StepOutcome> {
    if (this.failAt === name) return Promise.reject(new Error(`${name} broke`));
    s.seen.push(this.prefix + name); // `this` is the reconciler: the step is called as its method
    return Promise.resolve(CONTINUE);
  }
}

describe('methodSteps', () => {
  test('each step is named after its method and runs as that method of its owner, in order', async () => {
    const steps = methodSteps<State, Pipeline>(new Pipeline(), ['handleFinalizer', 'validate', 'apply']);
    assert.deepEqual(steps.map((s) => s.name), ['HandleFinalizer', 'Validate', 'Apply']);
    const state: State = { seen: [], writeStatus: true };
    for (const step of steps) await step.run(state);
    assert.deepEqual(state.seen, ['p:handleFinalizer', 'p:validate', 'p:apply']);
  });
});

describe('reconcileSteps', () => {
  const run = (failAt: string | undefined, writeStatus = true) => {
    const state: State = { seen: [], writeStatus };
    const writes: State[] = [];
    const steps = methodSteps<State, Pipeline>(new Pipeline(failAt), ['handleFinalizer', 'validate', 'apply']);
    const outcome = reconcileSteps(steps, state, logger, {
      write: (s) => Promise.resolve(writes.push(structuredClone(s))),
      onError: (s, err) => (s.said = err instanceof Error ? err.message : String(err)),
    });
    return { state, writes, outcome };
  };

  test('success: every step runs, then status is written once', async () => {
    const { state, writes, outcome } = run(undefined);
    assert.equal(await outcome, undefined);
    assert.equal(writes.length, 1);
    assert.deepEqual(state.seen, ['p:handleFinalizer', 'p:validate', 'p:apply']);
  });

  test('a step that stops ends the pipeline with its result; status is written once', async () => {
    const { writes, outcome } = run('stop');
    assert.deepEqual(await outcome, { requeueAfterMs: 5 });
    assert.equal(writes.length, 1);
  });

  test('a step that throws: later steps do not run, onError says it, status is written once, the error is rethrown', async () => {
    const { state, writes, outcome } = run('validate');
    await assert.rejects(outcome, /validate broke/);
    assert.deepEqual(state.seen, ['p:handleFinalizer']);
    assert.equal(writes.length, 1);
    assert.equal(writes[0]?.said, 'validate broke');
  });

  test('a state that no longer wants status (the object is going) is not written, on success or failure', async () => {
    const ok = run(undefined, false);
    await ok.outcome;
    assert.equal(ok.writes.length, 0);
    const failed = run('apply', false);
    await assert.rejects(failed.outcome, /apply broke/);
    assert.equal(failed.writes.length, 0);
  });
});

describe('runSteps', () => {
  test('a step slower than the bound is logged at info with its name and time, ended or failed; quick ones are not', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const steps = [
      { name: 'Quick', run: () => Promise.resolve(CONTINUE) },
      { name: 'Render', run: async () => (await wait(40), CONTINUE) },
      { name: 'Apply', run: async () => (await wait(40), Promise.reject(new Error('broke'))) },
    ];
    await assert.rejects(runSteps(steps, {}, log, 30), /broke/);
    const slow = lines.filter((l) => l.msg === 'slow step').map((l) => ({ step: l.step, ended: l.ended, timed: typeof l.seconds === 'number' }));
    assert.deepEqual(slow, [{ step: 'Render', ended: true, timed: true }, { step: 'Apply', ended: false, timed: true }]);
  });
});

describe('Conditions', () => {
  test("a message longer than a condition holds (32,768 characters: the API server refuses the whole status write over it) is cut, saying how much", () => {
    // A catalog's 1,000 problems, or a render's error, run to about 185 KB.
    const problems = Array.from({ length: 1000 }, (_, i) => `error [fbc.field] catalog.json:${i}: a problem naming its file and field`).join('\n');
    const c = new Conditions(undefined, 1).set('Progressing', true, 'Retrying', problems).get('Progressing');
    assert.ok((c?.message.length ?? 0) <= MAX_CONDITION_MESSAGE, String(c?.message.length));
    assert.ok(c?.message.startsWith(problems.slice(0, 1000)));
    assert.match(c?.message ?? '', /… \(\d+ more characters\)$/);
    const cut = Number(/\((\d+) more/.exec(c?.message ?? '')?.[1]);
    assert.equal(c?.message.indexOf('…'), problems.length - cut);
    // Never half a surrogate pair at the cut.
    const emoji = '😀'.repeat(20_000); // the cut falls inside a pair
    const e = new Conditions(undefined, 1).set('Ready', false, 'Bad', emoji).get('Ready')?.message ?? '';
    assert.ok(e.length <= MAX_CONDITION_MESSAGE);
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(e), 'no lone high surrogate');
    assert.equal(new Conditions(undefined, 1).set('Ready', true, 'Ok', 'short').get('Ready')?.message, 'short');
  });
});
