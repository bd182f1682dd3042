import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BinnacleError, TerminalError } from '../util/errors.js';
import { apiErrorFromResponse, isContentRefused, isTransient, isUnauthorized, KubeApiError } from './errors.js';

test('API server failures that may pass are transient: 5xx, 429, timeouts, conflicts, unreachable, aborted', () => {
  for (const code of [500, 502, 503, 504, 429, 408]) assert.equal(isTransient(apiErrorFromResponse(code, '', 'list Secret')), true, `HTTP ${code}`);
  assert.equal(isTransient(new KubeApiError(409, 'Conflict', 'the object has been modified')), true);
  assert.equal(isTransient(new BinnacleError('transient', 'KUBE_UNREACHABLE', 'cannot reach the API server')), true);
  assert.equal(isTransient(new BinnacleError('transient', 'KUBE_TIMEOUT', 'no answer in 60 s')), true);
  assert.equal(isTransient(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), true);
  assert.equal(isTransient(new DOMException('aborted', 'AbortError')), true);
  // Wrapped: a renderer that adds context keeps the API error as its cause.
  assert.equal(isTransient(new BinnacleError('input', 'HELM_RENDER', 'lookup failed', { cause: apiErrorFromResponse(503, '', 'get ConfigMap') })), true);
});

test('verdicts on the input are not transient: 4xx other than those, AlreadyExists, invalid bundles', () => {
  for (const code of [400, 401, 403, 404, 422]) assert.equal(isTransient(apiErrorFromResponse(code, '', 'create Deployment')), false, `HTTP ${code}`);
  assert.equal(isTransient(new KubeApiError(409, 'AlreadyExists', 'exists')), false);
  assert.equal(isTransient(new TerminalError('InvalidBundle', 'CRD needs a conversion webhook')), false);
  assert.equal(isTransient(new BinnacleError('input', 'INVALID', 'bundle is invalid')), false);
  assert.equal(isTransient(new Error('unexpected token in YAML')), false);
  assert.equal(isTransient(undefined), false);
});

test('isContentRefused: 400, 413 and 422, the content refused; isUnauthorized: 401; nothing else', () => {
  for (const [code, reason] of [[400, 'BadRequest'], [413, 'RequestEntityTooLarge'], [422, 'Invalid']] as const) assert.equal(isContentRefused(new KubeApiError(code, reason, 'x')), true, `${code}`);
  for (const [code, reason] of [[401, 'Unauthorized'], [403, 'Forbidden'], [404, 'NotFound'], [409, 'AlreadyExists'], [429, 'TooManyRequests'], [503, 'ServiceUnavailable']] as const) assert.equal(isContentRefused(new KubeApiError(code, reason, 'x')), false, `${code}`);
  assert.equal(isUnauthorized(new KubeApiError(401, 'Unauthorized', 'x')), true);
  assert.equal(isUnauthorized(new KubeApiError(403, 'Forbidden', 'x')), false);
  assert.equal(isContentRefused(new TypeError('a bug')), false);
});
