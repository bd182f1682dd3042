import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HELM_OPERATOR_RUN_ARGS, MALLOC_ENV, mallocEnv, runtimeConfig } from './image.js';

// A Node base image's environment, as docker.io/library/node's config gives it.
const NODE_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'NODE_VERSION=20.19.0', 'YARN_VERSION=1.22.22', 'NODE_ENV=development', 'HOME=/root'];

test("the manager image runs `binnacle manager` in /opt/binnacle as 65532", () => {
  const c = runtimeConfig('manager', NODE_ENV);
  assert.deepEqual(c.Entrypoint, ['node', '--optimize-for-size', '--no-maglev', '/opt/binnacle/bin/binnacle.js']);
  assert.deepEqual(c.Cmd, ['manager']);
  assert.equal(c.WorkingDir, '/opt/binnacle');
  assert.equal(c.User, '65532:65532');
  assert.ok(c.Env.includes('NODE_ENV=production') && !c.Env.includes('NODE_ENV=development'), c.Env.join(' '));
  assert.ok(c.Env.includes('HOME=/root'), "the base's HOME is kept");
});

test("the helm-operator image is operator-sdk's: `helm-operator run --watches-file=./watches.yaml` in /opt/helm as numeric user 1001", () => {
  const c = runtimeConfig('helm-operator', NODE_ENV);
  // operator-sdk v1.42.3 images/helm-operator/Dockerfile: ENTRYPOINT ["/usr/local/bin/helm-operator", "run", "--watches-file=./watches.yaml"]
  assert.deepEqual(c.Entrypoint, ['node', '--optimize-for-size', '--no-opt', '--no-sparkplug', '--no-maglev', '/opt/binnacle/bin/binnacle.js', 'helm-operator', 'run', '--watches-file=./watches.yaml']);
  assert.deepEqual(HELM_OPERATOR_RUN_ARGS, ['helm-operator', 'run', '--watches-file=./watches.yaml']);
  // No Cmd of the base (node's is ["node"]) may land between the entry point and a Deployment's args.
  assert.deepEqual(c.Cmd, []);
  assert.equal(c.WorkingDir, '/opt/helm');
  assert.match(c.User, /^[1-9][0-9]*$/, 'numeric and not root, so a Pod with runAsNonRoot can start it');
  assert.equal(c.User, '1001');
  // Projects' Dockerfiles copy into ${HOME}: ENV HOME=/opt/helm USER_NAME=helm USER_UID=1001, as operator-sdk's.
  assert.deepEqual(c.Env.filter((e) => /^(HOME|USER_NAME|USER_UID|NODE_ENV)=/.test(e)).sort(), ['HOME=/opt/helm', 'NODE_ENV=production', 'USER_NAME=helm', 'USER_UID=1001']);
  assert.ok(c.Env.includes('BINNACLE_HELM_WASM_DIR=/opt/binnacle/.cache/helm-wasm'));
  assert.ok(c.Env.includes('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'), "the base's PATH is kept");
});

test("both images set glibc's allocator to hand freed memory back (MALLOC_ENV), once, over a base's own setting", () => {
  for (const variant of ['manager', 'helm-operator'] as const) {
    const c = runtimeConfig(variant, [...NODE_ENV, 'MALLOC_ARENA_MAX=8']);
    assert.deepEqual(
      c.Env.filter((e) => e.startsWith('MALLOC_')),
      ['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=131072', 'MALLOC_TRIM_THRESHOLD_=131072'],
      variant,
    );
  }
  assert.deepEqual(mallocEnv(), { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' });
});

test('the Dockerfile (an image built with docker) runs node with the same flags and allocator settings as build-self-image', () => {
  const dockerfile = readFileSync(join(import.meta.dirname, '..', '..', 'Dockerfile'), 'utf8');
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  assert.ok(entrypoint !== undefined, 'an ENTRYPOINT in exec form');
  assert.deepEqual(JSON.parse(entrypoint), runtimeConfig('manager', []).Entrypoint);
  const env = [...dockerfile.matchAll(/^ENV (.*)$/gm)].flatMap((m) => (m[1] ?? '').split(/\s+/));
  for (const e of MALLOC_ENV) assert.ok(env.includes(e), `ENV ${e}`);
});
