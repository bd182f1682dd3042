import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { warmEngine } from './helm-operator.js';

describe('helm-operator run: the engine warmed before the first CR', () => {
  it('loads each watched chart once, in order; a chart that cannot be read does not stop the others or throw', async () => {
    const inspected: string[] = [];
    const engine = {
      inspect: (chart: string) => {
        inspected.push(chart);
        return chart === '/charts/broken' ? Promise.reject(new Error('Chart.yaml: apiVersion is required')) : Promise.resolve([]);
      },
    };
    let started = 0;
    await warmEngine(['/charts/a', '/charts/broken', '/charts/a', '/charts/b'], () => {
      started++;
      return Promise.resolve(engine);
    }, pino({ level: 'silent' }));
    assert.deepEqual(inspected, ['/charts/a', '/charts/broken', '/charts/b']);
    assert.equal(started, 3);
  });
});
