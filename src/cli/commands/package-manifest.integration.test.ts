/**
 * Package-manifest directories through the CLI wherever a bundle directory goes (issue 28 §3):
 * `bundle validate`, `bundle render`, `bundle build --push` and `catalog publish` of a version
 * directory (`PKG/0.2.0/`) and of the package directory itself (`PKG/`: its default channel's
 * head for render and build, every version for validate and publish), against a real
 * `docker-registry` on loopback; bundle images and the catalog are read back from it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseAllDocuments } from 'yaml';
import { run } from '../main.js';
import { pullAndUnpack, startLocalRegistry, type LocalRegistry } from '../../oci/index.js';
import { render } from '../../catalog-render/render.js';
import { loadBundleDir } from '../../bundle/load.js';

const TESTDATA = join(import.meta.dirname, '..', '..', 'bundle', 'testdata', 'pkgmanifest');
const PKG = join(TESTDATA, 'tiny-operator');

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await run(args, { logger: pino({ level: 'silent' }), out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe('package-manifest directories through the CLI', { timeout: 180_000 }, () => {
  let registry: LocalRegistry;
  let base: string;

  before(async () => {
    base = await mkdtemp(join(tmpdir(), 'binnacle-pkgmanifest-cli-'));
    registry = await startLocalRegistry({ dataDir: join(base, 'registry') });
  });
  after(async () => {
    await registry.stop();
    await rm(base, { recursive: true, force: true });
  });

  it('bundle validate: a version directory, the package directory (every version and the package file), a malformed package file failing with its file and field', async () => {
    const version = await cli(['bundle', 'validate', join(PKG, '0.3.0'), '-o', 'json']);
    assert.equal(version.code, 0, version.err);
    const [v] = JSON.parse(version.out) as { subject: string; ok: boolean }[];
    assert.match(v?.subject ?? '', /^bundle tiny-operator\.v0\.3\.0 /);
    const pkg = await cli(['bundle', 'validate', PKG]);
    assert.equal(pkg.code, 0, pkg.err);
    for (const name of ['tiny-operator.v0.1.0', 'tiny-operator.v0.2.0', 'tiny-operator.v0.3.0']) assert.ok(pkg.out.includes(name), `${name} in\n${pkg.out}`);
    assert.match(pkg.out, /PASS package tiny-operator/);
    const bad = await cli(['bundle', 'validate', join(TESTDATA, 'malformed', 'tiny-operator', '0.1.0')]);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /error \[package\.manifest\] .*malformed\/tiny-operator\/tiny-operator\.package\.yaml: channels\[0\]: expected \{name: string, currentCSV: string\}/);
    const orphan = await cli(['bundle', 'validate', join(TESTDATA, 'orphan', 'tiny-operator', '0.9.0')]);
    assert.equal(orphan.code, 0, orphan.err);
    assert.match(orphan.out, /warning \[package\.no-channel\] .*tiny-operator\.package\.yaml: channels: no channel's currentCSV reaches tiny-operator\.v0\.9\.0/);
  });

  it("bundle render: a version directory renders that version; the package directory its default channel's head", async () => {
    const images = async (dir: string): Promise<string[]> => {
      const r = await cli(['bundle', 'render', dir, '--install-namespace', 'tiny']);
      assert.equal(r.code, 0, r.err);
      const objects = parseAllDocuments(r.out).map((d) => d.toJS() as { kind: string; spec?: { template?: { spec?: { containers?: { image: string }[] } } } });
      assert.ok(objects.some((o) => o.kind === 'CustomResourceDefinition'));
      return objects.filter((o) => o.kind === 'Deployment').flatMap((o) => o.spec?.template?.spec?.containers?.map((c) => c.image) ?? []);
    };
    assert.deepEqual(await images(join(PKG, '0.3.0')), ['quay.io/example/tiny-operator:v0.3.0']);
    // stable is the default channel, and its currentCSV is 0.2.0 (not the newest, 0.3.0).
    assert.deepEqual(await images(PKG), ['quay.io/example/tiny-operator:v0.2.0']);
  });

  it('bundle build --push: a version directory and the package directory become bundle images with annotations from the package file', async () => {
    const built = async (dir: string, tag: string): Promise<{ labels: Record<string, string>; dir: string }> => {
      const r = await cli(['bundle', 'build', dir, '--tag', tag, '--push', '-o', 'json']);
      assert.equal(r.code, 0, r.err);
      const pulled = await pullAndUnpack(tag, { cacheDir: join(base, 'cache') });
      const annotations = await readFile(join(pulled.dir, 'metadata', 'annotations.yaml'), 'utf8');
      // The image's labels and its metadata/annotations.yaml agree, and it loads as a bundle.
      for (const [k, v] of Object.entries(pulled.labels).filter(([k]) => k.startsWith('operators.operatorframework.io.bundle.'))) assert.ok(annotations.includes(`${k}: ${v}`), `${k}: ${v} in\n${annotations}`);
      const b = await loadBundleDir(pulled.dir);
      assert.equal(b.layout, 'bundle');
      return { labels: pulled.labels, dir: b.name };
    };
    const v3 = await built(join(PKG, '0.3.0'), `${registry.host}/tiny/bundle:v0.3.0`);
    assert.equal(v3.dir, 'tiny-operator.v0.3.0');
    assert.equal(v3.labels['operators.operatorframework.io.bundle.package.v1'], 'tiny-operator');
    assert.equal(v3.labels['operators.operatorframework.io.bundle.channels.v1'], 'fast');
    assert.equal(v3.labels['operators.operatorframework.io.bundle.channel.default.v1'], undefined);
    const head = await built(PKG, `${registry.host}/tiny/bundle:head`);
    assert.equal(head.dir, 'tiny-operator.v0.2.0');
    assert.equal(head.labels['operators.operatorframework.io.bundle.channels.v1'], 'stable,fast');
    assert.equal(head.labels['operators.operatorframework.io.bundle.channel.default.v1'], 'stable');
    const orphan = await cli(['bundle', 'build', join(TESTDATA, 'orphan', 'tiny-operator', '0.9.0'), '--tag', `${registry.host}/tiny/bundle:orphan`]);
    assert.equal(orphan.code, 1);
    assert.match(orphan.err, /orphan\/tiny-operator\/tiny-operator\.package\.yaml: channels: no channel's currentCSV reaches tiny-operator\.v0\.9\.0/);
  });

  it('catalog publish: the package directory publishes every version; a version directory that one bundle, in the channels that reach it', async () => {
    const catalogOf = async (dirs: string[], tag: string): Promise<{ channels: Record<string, string[]>; defaultChannel: string | undefined; bundles: string[] }> => {
      const r = await cli(['catalog', 'publish', ...dirs, '--registry', registry.host, '--repository', 'pm', '--tag', tag, '-o', 'json']);
      assert.equal(r.code, 0, r.err);
      const out = await render([tag], { pull: (ref, o) => pullAndUnpack(ref, o), cacheDir: join(base, 'cache') });
      assert.deepEqual(out.failures, []);
      // Every bundle points at a pushed image by digest, and that image is a loadable bundle.
      for (const b of out.config.bundles) {
        assert.match(b.image, new RegExp(`^${registry.host}/pm/tiny-operator-bundle@sha256:`));
        assert.equal((await loadBundleDir((await pullAndUnpack(b.image, { cacheDir: join(base, 'cache') })).dir)).name, b.name);
      }
      return {
        channels: Object.fromEntries(out.config.channels.map((c) => [c.name, c.entries.map((e) => e.name).sort()])),
        defaultChannel: out.config.packages[0]?.defaultChannel,
        bundles: out.config.bundles.map((b) => b.name).sort(),
      };
    };
    assert.deepEqual(await catalogOf([PKG], `${registry.host}/pm/catalog:package`), {
      channels: { fast: ['tiny-operator.v0.1.0', 'tiny-operator.v0.2.0', 'tiny-operator.v0.3.0'], stable: ['tiny-operator.v0.1.0', 'tiny-operator.v0.2.0'] },
      defaultChannel: 'stable',
      bundles: ['tiny-operator.v0.1.0', 'tiny-operator.v0.2.0', 'tiny-operator.v0.3.0'],
    });
    assert.deepEqual(await catalogOf([join(PKG, '0.2.0')], `${registry.host}/pm/catalog:version`), {
      channels: { fast: ['tiny-operator.v0.2.0'], stable: ['tiny-operator.v0.2.0'] },
      defaultChannel: 'stable',
      bundles: ['tiny-operator.v0.2.0'],
    });
    // 0.3.0 is only in fast, so fast is its package's default channel in a catalog of it alone.
    assert.deepEqual(await catalogOf([join(PKG, '0.3.0')], `${registry.host}/pm/catalog:newest`), {
      channels: { fast: ['tiny-operator.v0.3.0'] },
      defaultChannel: 'fast',
      bundles: ['tiny-operator.v0.3.0'],
    });
    const orphan = await cli(['catalog', 'publish', join(TESTDATA, 'orphan', 'tiny-operator', '0.9.0'), '--registry', registry.host, '--repository', 'pm']);
    assert.equal(orphan.code, 1);
    assert.match(orphan.err, /tiny-operator\.package\.yaml: channels: no channel's currentCSV reaches tiny-operator\.v0\.9\.0/);
  });
});
