import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedSerial } from './keyed-serial.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('KeyedSerial', () => {
  it('runs calls with one key one after another, in order, and other keys alongside', async () => {
    const serial = new KeyedSerial();
    const log: string[] = [];
    let releaseFirst!: () => void;
    const first = serial.run('a', async () => {
      log.push('a1 start');
      await new Promise<void>((r) => (releaseFirst = r));
      log.push('a1 end');
      return 1;
    });
    const second = serial.run('a', () => {
      log.push('a2 start');
      return Promise.resolve(2);
    });
    const other = serial.run('b', () => {
      log.push('b start');
      return Promise.resolve(3);
    });
    await tick();
    assert.deepEqual(log, ['a1 start', 'b start']);
    releaseFirst();
    assert.deepEqual(await Promise.all([first, second, other]), [1, 2, 3]);
    assert.deepEqual(log, ['a1 start', 'b start', 'a1 end', 'a2 start']);
  });

  it('runs the next call after one that failed, and the failure reaches its own caller only', async () => {
    const serial = new KeyedSerial();
    const failed = serial.run('a', () => Promise.reject(new Error('boom')));
    const next = serial.run('a', () => Promise.resolve('ran'));
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'ran');
  });

  it('forgets a key once its last call has settled', async () => {
    const serial = new KeyedSerial();
    await serial.run('a', () => Promise.resolve());
    await tick();
    assert.equal(serial.size, 0);
  });
});
