import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BinnacleError } from '../util/errors.js';
import { InputError, httpErrorOf } from './errors.js';

test("the console answers by the error's class: 422 for a verdict, 503 for what may pass, a bug left to the server's 500", () => {
  assert.equal(httpErrorOf(new BinnacleError('terminal', 'APPLY_REFUSED', 'refused'))?.status, 422);
  assert.equal(httpErrorOf(new BinnacleError('input', 'RESOLUTION_FAILED', 'no bundle'))?.status, 422);
  assert.equal(httpErrorOf(new BinnacleError('transient', 'OCI_UNREACHABLE', 'registry away'))?.status, 503);
  assert.equal(httpErrorOf(new BinnacleError('internal', 'HELM_ENGINE_PROTOCOL', 'not JSON')), undefined);
  assert.equal(httpErrorOf(new InputError('spec.x', 'must be a string'))?.status, 400);
});
