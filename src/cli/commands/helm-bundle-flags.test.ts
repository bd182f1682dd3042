/** `helm bundle` and `helm release` take the same bundle flags, from one place (addBundleFlags), parsed the same way. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from 'commander';
import { pino } from 'pino';
import { buildProgram } from '../main.js';
import { bundleOptionsOf, type BundleFlags } from './helm-bundle.js';

const SHARED = ['--group', '--crd-version', '--image', '--api-versions', '--kube-version', '--icon'];

/** The real `binnacle helm NAME` command; its action only captures the bundle options. */
async function bundleOptions(name: 'bundle' | 'release', args: string[]): Promise<ReturnType<typeof bundleOptionsOf>> {
  const ctx = { logger: pino({ level: 'silent' }), out: () => undefined, err: () => undefined };
  const program = await buildProgram(ctx, 'helm');
  const cmd = program.commands.find((c) => c.name() === 'helm')?.commands.find((c) => c.name() === name) as Command;
  cmd.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  let got: ReturnType<typeof bundleOptionsOf> | undefined;
  cmd.action((_chart: string, flags: BundleFlags) => {
    got = bundleOptionsOf(flags);
  });
  const required = name === 'bundle' ? ['--kind', 'K', '--output-dir', 'out'] : ['--kind', 'K', '--template', 't.yaml', '--bundle-repository', 'r.example/b', '--catalog-image', 'r.example/c:latest'];
  await program.parseAsync(['helm', name, 'chart', ...required, ...args], { from: 'user' });
  assert.ok(got !== undefined);
  return got;
}

describe('helm bundle and helm release: the shared bundle flags', () => {
  it('both commands declare each shared flag once, with the same description and default', async () => {
    const ctx = { logger: pino({ level: 'silent' }), out: () => undefined, err: () => undefined };
    const program = await buildProgram(ctx, 'helm');
    const helm = program.commands.find((c) => c.name() === 'helm');
    const flagsOf = (name: string): string[] => {
      const cmd = helm?.commands.find((c) => c.name() === name);
      return SHARED.map((flag) => {
        const opts = cmd?.options.filter((o) => o.long === flag) ?? [];
        assert.equal(opts.length, 1, `helm ${name} ${flag}`);
        return `${flag}: ${opts[0]?.description ?? ''} (${String(opts[0]?.defaultValue)})`;
      });
    };
    assert.deepEqual(flagsOf('release'), flagsOf('bundle'));
  });

  it('both parse them into the same options (a StringSlice --api-versions, the v1alpha1 default)', async () => {
    const args = ['--group', 'g.example', '-a', 'a/v1,b/v1', '-a', 'c/v1', '--kube-version', '1.31.0', '--image', 'r.example/binnacle:1', '--icon', 'i.png'];
    const want = { group: 'g.example', crdVersion: 'v1alpha1', image: 'r.example/binnacle:1', apiVersions: ['a/v1', 'b/v1', 'c/v1'], kubeVersion: '1.31.0', icon: 'i.png' };
    assert.deepEqual(await bundleOptions('bundle', args), want);
    assert.deepEqual(await bundleOptions('release', args), want);
  });
});
