import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordResolution, type ResolutionAttempt } from './resolution-history.js';

const base: ResolutionAttempt = {
  generation: 1,
  catalogs: [{ name: 'ops', digest: 'sha256:aaa' }],
  bundles: [
    { package: 'poison-pill', version: '0.1.0', name: 'poison-pill.v0.1.0' },
    { package: 'nhc', version: '0.0.2', name: 'nhc.v0.0.2' },
  ],
  outcome: 'Resolved',
};
const t = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

test('a resolution is recorded once, with why it happened', () => {
  let h = recordResolution(undefined, base, 10, t(0));
  assert.deepEqual(h, [{ time: '2026-01-01T00:00:00Z', reason: 'Initial', ...base }]);
  assert.equal(recordResolution(h, base, 10, t(1)).length, 1, 'the same resolution again is not a new entry');
  h = recordResolution(h, { ...base, catalogs: [{ name: 'ops', digest: 'sha256:bbb' }] }, 10, t(2));
  assert.equal(h.at(-1)?.reason, 'CatalogChanged');
  h = recordResolution(h, { ...base, generation: 2, catalogs: [{ name: 'ops', digest: 'sha256:bbb' }], bundles: [] , outcome: 'Failed', message: 'no bundle of package nhc matches version range >=9' }, 10, t(3));
  assert.equal(h.at(-1)?.reason, 'SpecChanged');
  assert.equal(h.at(-1)?.outcome, 'Failed');
  h = recordResolution(h, { ...base, generation: 2, catalogs: [{ name: 'ops', digest: 'sha256:bbb' }], outcome: 'Failed', bundles: [], message: 'lib 1.0.0 is installed (requested by extension x) and …' }, 10, t(4));
  assert.equal(h.at(-1)?.reason, 'DependencyChanged', 'same spec and catalogs, another outcome: the installed state changed');
  assert.deepEqual(h.map((e) => e.time), ['2026-01-01T00:00:00Z', '2026-01-01T00:00:02Z', '2026-01-01T00:00:03Z', '2026-01-01T00:00:04Z']);
});

test('only the last N are kept, and long explanations are cut', () => {
  let h = recordResolution(undefined, base);
  for (let g = 2; g <= 15; g++) h = recordResolution(h, { ...base, generation: g }, 10);
  assert.equal(h.length, 10);
  assert.deepEqual(h.map((e) => e.generation), [6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
  assert.equal(recordResolution(h, { ...base, generation: 16 }, 3).length, 3);
  const long = recordResolution(undefined, { ...base, outcome: 'Failed', message: 'x'.repeat(5000) });
  assert.equal(long[0]?.message?.length, 2000);
});
