import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';
import { formatReference, parseReference } from './reference.js';
import { insecureByConf, parseRegistriesConf, pullSources, registriesConf, REGISTRIES_CONF_ENV } from './registries-conf.js';

const FILE = '/etc/containers/registries.conf';
const sourcesOf = (conf: string, ref: string): string[] => {
  const parsed = parseRegistriesConf(conf, FILE);
  return pullSources(parsed, parseReference(ref)).map((s) => `${s.role} ${formatReference(s.ref)}${insecureByConf(parsed, s.ref.registry) ? ' (http)' : ''}`);
};

test("OLM v1's e2e mirror (a prefix moved to another location): the reference is rewritten, tag and digest kept", () => {
  const conf = '[[registry]]\nprefix = "mirrored-registry.operator-controller-e2e.svc.cluster.local:5000"\nlocation = "docker-registry.operator-controller-e2e.svc.cluster.local:5000"\n';
  assert.deepEqual(sourcesOf(conf, 'mirrored-registry.operator-controller-e2e.svc.cluster.local:5000/bundles/test:v1.2.0'), ['primary docker-registry.operator-controller-e2e.svc.cluster.local:5000/bundles/test:v1.2.0']);
  assert.deepEqual(sourcesOf(conf, 'quay.io/other/image@sha256:' + 'a'.repeat(64)), ['primary quay.io/other/image@sha256:' + 'a'.repeat(64)], 'no rule: as written');
});

test('mirrors come first, in order, then the location; pull-from-mirror and mirror-by-digest-only choose which references use them; the longest prefix wins', () => {
  const conf = [
    '[[registry]]',
    'prefix = "quay.io"',
    'location = "quay.io"',
    '[[registry.mirror]]',
    'location = "mirror.local:5000/quay"',
    'insecure = true',
    '[[registry.mirror]]',
    'location = "tags.local/quay"',
    'pull-from-mirror = "tag-only"',
    '[[registry]]',
    'prefix = "quay.io/pinned"',
    'location = "quay.io/pinned"',
    'mirror-by-digest-only = true',
    '[[registry.mirror]]',
    'location = "digests.local/pinned"',
  ].join('\n');
  assert.deepEqual(sourcesOf(conf, 'quay.io/team/op:v1'), ['mirror mirror.local:5000/quay/team/op:v1 (http)', 'mirror tags.local/quay/team/op:v1', 'primary quay.io/team/op:v1']);
  const digest = `sha256:${'b'.repeat(64)}`;
  assert.deepEqual(sourcesOf(conf, `quay.io/team/op@${digest}`), [`mirror mirror.local:5000/quay/team/op@${digest} (http)`, `primary quay.io/team/op@${digest}`]);
  assert.deepEqual(sourcesOf(conf, 'quay.io/pinned/op:v1'), ['primary quay.io/pinned/op:v1'], 'digest-only mirror not used for a tag');
  assert.deepEqual(sourcesOf(conf, `quay.io/pinned/op@${digest}`), [`mirror digests.local/pinned/op@${digest}`, `primary quay.io/pinned/op@${digest}`]);
  assert.deepEqual(sourcesOf(conf, 'quay.io/pinnedother/op:v1')[0], 'mirror mirror.local:5000/quay/pinnedother/op:v1 (http)', 'a prefix matches whole path components only');
  assert.equal(insecureByConf(parseRegistriesConf(conf, FILE), 'mirror.local:5000'), true);
  assert.equal(insecureByConf(parseRegistriesConf(conf, FILE), 'quay.io'), false);
});

test('a wildcard prefix matches every subdomain (insecure, blocked); a blocked registry refuses, naming the file and the rule', () => {
  const conf = '[[registry]]\nprefix = "*.example.com"\ninsecure = true\n[[registry]]\nprefix = "docker.io"\nblocked = true\n';
  assert.deepEqual(sourcesOf(conf, 'a.b.example.com:5000/x/y:1'), ['primary a.b.example.com:5000/x/y:1 (http)']);
  assert.deepEqual(sourcesOf(conf, 'example.org/x/y:1'), ['primary example.org/x/y:1']);
  assert.equal(insecureByConf(parseRegistriesConf(conf, FILE), 'a.b.example.com:5000'), true, 'the client speaks http to it');
  assert.equal(insecureByConf(parseRegistriesConf(conf, FILE), 'example.org'), false);
  assert.throws(
    () => pullSources(parseRegistriesConf(conf, FILE), parseReference('busybox:1.36')),
    (err: unknown) => err instanceof InputError && err.code === 'REGISTRY_BLOCKED' && /\/etc\/containers\/registries.conf: registry\[1\]\.blocked: pulling docker\.io\/library\/busybox:1\.36 is refused/.test(err.message),
  );
});

test('a bad file is refused naming the file, the field and why', () => {
  const bad: [string, RegExp][] = [
    ['[[registry]\n', /registries\.conf: not valid TOML/],
    ['[registries.insecure]\nregistries = ["a.local"]\n[[registry]]\nprefix = "b.local"\n', /registries\.conf: registries: mixes the v1 format/],
    ['[registries.block]\nregistries = "docker.io"\n', /registries\.block\.registries: must be a list of registry hosts/],
    ['[[registry]]\nprefix = "quay.io"\ninsecure = "yes"\n', /registry\[0\]\.insecure: must be true or false, not "yes"/],
    ['[[registry]]\ninsecure = true\n', /registry\[0\]: needs a prefix or a location/],
    ['[[registry]]\nprefix = "quay.io"\n[[registry.mirror]]\nlocation = "UPPER CASE"\n', /registry\[0\]\.mirror\[0\]\.location: "UPPER CASE" is not a host\[:port\]\[\/path\]/],
    ['[[registry]]\nprefix = "quay.io"\n[[registry.mirror]]\nlocation = "m.local"\npull-from-mirror = "sometimes"\n', /registry\[0\]\.mirror\[0\]\.pull-from-mirror: "sometimes" is not one of all, digest-only, tag-only/],
    ['[[registry]]\nprefix = "*.example.com"\nlocation = "elsewhere.local"\n', /registry\[0\]\.location: a wildcard prefix cannot have a location/],
    ['[[registry]]\nprefix = "team"\n', /registry\[0\]\.prefix: "team" must name a registry host/],
    ['[[registry]]\nprefix = "*.example.com"\n[[registry.mirror]]\nlocation = "m.local"\n', /registry\[0\]\.mirror: a wildcard prefix takes no mirrors here/],
  ];
  for (const [text, want] of bad) assert.throws(() => parseRegistriesConf(text, FILE), (err: unknown) => err instanceof InputError && want.test(err.message), text);
});

test('the file in effect: BINNACLE_REGISTRIES_CONF, read again when it changes; one named but missing is an error; none at all is no rule', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'regconf-'));
  try {
    const path = join(dir, 'registries.conf');
    await writeFile(path, '[[registry]]\nprefix = "a.local"\nlocation = "b.local"\n');
    const env = { [REGISTRIES_CONF_ENV]: path };
    assert.equal(registriesConf(env).registries[0]?.location, 'b.local');
    await writeFile(path, '[[registry]]\nprefix = "a.local"\nlocation = "c.local:5000"\n');
    assert.equal(registriesConf(env).registries[0]?.location, 'c.local:5000', 'the changed file is read again');
    assert.throws(() => registriesConf({ [REGISTRIES_CONF_ENV]: join(dir, 'missing.conf') }), /missing\.conf: cannot be read/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the v1 format reads as containers/image converts it: insecure hosts plain http, blocked hosts refused, search registries unused', () => {
  const conf = parseRegistriesConf('[registries.search]\nregistries = ["docker.io", "quay.io"]\n[registries.insecure]\nregistries = ["lab.local:5000"]\n[registries.block]\nregistries = ["evil.example.com"]\n', FILE);
  assert.equal(insecureByConf(conf, 'lab.local:5000'), true);
  assert.deepEqual(pullSources(conf, parseReference('quay.io/a/b:1')).map((x) => formatReference(x.ref)), ['quay.io/a/b:1']);
  assert.throws(() => pullSources(conf, parseReference('evil.example.com/a/b:1')), /registry\[1\]\.blocked: pulling evil\.example\.com\/a\/b:1 is refused/);
});
