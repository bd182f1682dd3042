/**
 * Parity with the real `opm` (built by hack/bench-tools/opm/build.sh into .cache/bench-bin/opm);
 * skipped when it is not there. Same FBC in → same bytes out; what we call valid, opm calls valid.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { TESTDATA } from './golden.test-helper.js';
import { render } from './render.js';
import { toFbcJson } from './write.js';

const OPM = path.resolve(import.meta.dirname, '../../.cache/bench-bin/opm');
const skip = existsSync(OPM) ? false : 'opm not built (bash hack/bench-tools/opm/build.sh)';

function opm(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(OPM, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status ?? 1, out: r.stdout, err: r.stderr };
}

describe('opm parity', { skip }, () => {
  it('renders an FBC directory to the same bytes as opm render', async () => {
    const ours = toFbcJson((await render([path.join(TESTDATA, 'fbc/valid')])).config);
    const theirs = opm('render', path.join(TESTDATA, 'fbc/valid'), '-o', 'json');
    assert.equal(theirs.code, 0, theirs.err);
    assert.equal(ours, theirs.out);
  });

  it('opm validate accepts every catalog our goldens hold, and rejects what we reject', async () => {
    for (const golden of ['render-fbc.json', 'render-package-replaces.json', 'render-package-semver.json', 'template-basic.json', 'template-semver.json', 'template-semver-major.json']) {
      const dir = await mkdtemp(path.join(tmpdir(), 'opm-parity-'));
      await writeFile(path.join(dir, 'catalog.json'), toFbcJson((await render([path.join(TESTDATA, 'golden', golden)])).config));
      const r = opm('validate', dir);
      assert.equal(r.code, 0, `${golden}: ${r.err}`);
    }
    for (const bad of ['invalid-model', 'bad/wrong-types', 'bad/broken-yaml']) assert.notEqual(opm('validate', path.join(TESTDATA, bad)).code, 0, bad);
  });
});
