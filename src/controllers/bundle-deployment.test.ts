import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse, KubeApiError } from '../kube/errors.js';
import { TerminalError } from '../util/errors.js';
import { renderFailure } from './bundle-deployment.js';

test('a render failure from the API server is retried; a bundle that is really invalid is blocked', () => {
  assert.equal(renderFailure(apiErrorFromResponse(503, '', 'list Secret ns (release history)')).transient, true);
  assert.equal(renderFailure(new KubeApiError(409, 'Conflict', 'create Secret ns/webhook-cert: the object has been modified')).transient, true);
  const invalid = renderFailure(new TerminalError('InvalidBundle', 'CRD x needs a conversion webhook'));
  assert.deepEqual(invalid, { transient: false, message: 'CRD x needs a conversion webhook' });
});
