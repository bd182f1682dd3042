import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse, KubeApiError } from '../kube/errors.js';
import { TerminalError } from '../util/errors.js';
import { MAX_NESTING } from '../util/nesting.js';
import { renderFailure, specProblems } from './bundle-deployment.js';

test('a render failure from the API server is retried; a bundle that is really invalid is blocked', () => {
  assert.equal(renderFailure(apiErrorFromResponse(503, '', 'list Secret ns (release history)')).transient, true);
  assert.equal(renderFailure(new KubeApiError(409, 'Conflict', 'create Secret ns/webhook-cert: the object has been modified')).transient, true);
  const invalid = renderFailure(new TerminalError('InvalidBundle', 'CRD x needs a conversion webhook'));
  assert.deepEqual(invalid, { transient: false, message: 'CRD x needs a conversion webhook' });
});

/** An object nested `depth` levels deep: {a: {a: … {}}}. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

test('a spec is refused for what is wrong in it, free-form fields nested past the limit included', () => {
  const spec = { source: { type: 'local' as const, local: { path: '/bundles/x' } }, format: 'helm' as const, installNamespace: 'ns' };
  assert.deepEqual(specProblems(spec), []);
  assert.deepEqual(specProblems({ ...spec, config: nested(MAX_NESTING), values: nested(MAX_NESTING) }), []);
  assert.deepEqual(specProblems({ ...spec, config: nested(MAX_NESTING + 1), values: nested(5000) }), [
    `spec.config: nests deeper than ${MAX_NESTING} levels`,
    `spec.values: nests deeper than ${MAX_NESTING} levels`,
  ]);
  assert.deepEqual(specProblems({ ...spec, format: 'zip' as never, installNamespace: '' }), ['spec.format: unknown format "zip"', 'spec.installNamespace: required']);
});
