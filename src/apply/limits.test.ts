import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRenderLimits, countDocuments, CEILING_RELEASE_LIMITS, DEFAULT_RELEASE_LIMITS, releaseLimits, ReleaseTooLargeError } from './limits.js';
import { failureAction } from '../kube/controller.js';

test('documents are counted from their markers, with text before the first; comments alone are no document; counting stops past the limit', () => {
  assert.equal(countDocuments(''), 0);
  assert.equal(countDocuments('a: 1\n'), 1);
  assert.equal(countDocuments('---\na: 1\n---\nb: 2\n'), 2);
  assert.equal(countDocuments('a: 1\n---\nb: 2\n'), 2);
  assert.equal(countDocuments('# Source: x\n---\na: 1\n'), 1);
  // A `---` inside a block scalar is indented: not a marker.
  assert.equal(countDocuments('---\ndata:\n  x: |\n    ---\n    y\n'), 1);
  assert.equal(countDocuments('---\n'.repeat(100_000), 10), 11, 'stops once past the limit');
});

test("a render past the release's limits is refused naming the limit and the field that raises it; the error waits for the object to change", () => {
  const limits = { maxObjects: 3, maxManifestBytes: 1000 };
  checkRenderLimits(['---\na: 1\n---\nb: 2\n', '---\nc: 3\n'], limits, 'release team-a/pg');
  assert.throws(() => checkRenderLimits(['---\na: 1\n---\nb: 2\n', '---\nc: 3\n---\nd: 4\n'], limits, 'release team-a/pg'), (err: unknown) => {
    assert.ok(err instanceof ReleaseTooLargeError);
    assert.match(err.message, /^release team-a\/pg: the render holds more than 3 objects, this release's limit \(spec\.limits\.maxObjects\); nothing of it is applied$/);
    assert.equal(failureAction(err), 'wait-for-change');
    return true;
  });
  assert.throws(() => checkRenderLimits(['x'.repeat(1001)], limits, 'r'), /the render is 1001 bytes, above this release's limit of 1000 \(spec\.limits\.maxManifestBytes\)/);
});

test('a spec\'s limits: the defaults where it says nothing, never past the ceilings', () => {
  assert.deepEqual(releaseLimits(undefined), DEFAULT_RELEASE_LIMITS);
  assert.deepEqual(releaseLimits({ maxObjects: 10 }), { ...DEFAULT_RELEASE_LIMITS, maxObjects: 10 });
  assert.deepEqual(releaseLimits({ maxObjects: 1e9, maxManifestBytes: 1e12 }), CEILING_RELEASE_LIMITS);
});
