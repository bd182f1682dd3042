import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BINNACLE_VERSION } from './version.js';

// `helm bundle`'s default operator image is tagged with BINNACLE_VERSION (it read package.json's
// version before, through the local cluster's paths): the two stay one version.
test("Binnacle's version is package.json's", () => {
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  assert.equal(BINNACLE_VERSION, pkg.version);
});
