import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../util/errors.js';
import { bundleSourceFrom, bundleSourceToJson, CREDENTIALS_INSTEAD, imageRefCredentialProblem, parseBundleSource } from './validate.js';

/** field → rule of every error, sorted, for exact comparison. */
function errorsOf(value: unknown): string[] {
  const { source, result } = parseBundleSource(value);
  if (!result.ok) assert.equal(source, undefined, 'no source may come back with errors');
  return result
    .errors()
    .map((p) => `${p.field ?? ''} ${p.rule}`)
    .sort();
}

const SHA = 'a'.repeat(40);

test('valid sources of every type parse to the flat form', () => {
  assert.deepEqual(bundleSourceFrom({ type: 'image', image: { ref: 'quay.io/op/bundle:v1', pullSecret: { namespace: 'ns', name: 'regcred' }, insecure: true } }), {
    type: 'image',
    ref: 'quay.io/op/bundle:v1',
    pullSecret: { namespace: 'ns', name: 'regcred' },
    insecure: true,
  });
  assert.deepEqual(bundleSourceFrom({ type: 'git', git: { repository: 'https://github.com/o/r.git', ref: { tag: 'v1.0.0' }, directory: 'bundles/v1' } }), {
    type: 'git',
    repository: 'https://github.com/o/r.git',
    ref: { tag: 'v1.0.0' },
    directory: 'bundles/v1',
  });
  assert.deepEqual(bundleSourceFrom({ type: 'git', git: { repository: 'git@github.com:o/r.git', ref: { commit: SHA } } }), {
    type: 'git',
    repository: 'git@github.com:o/r.git',
    ref: { commit: SHA },
  });
  assert.deepEqual(bundleSourceFrom({ type: 'http', http: { url: 'https://example.com/b.tgz', sha256: `sha256:${'AB'.repeat(32)}` } }), {
    type: 'http',
    url: 'https://example.com/b.tgz',
    sha256: 'ab'.repeat(32),
  });
  assert.deepEqual(bundleSourceFrom({ type: 'configMaps', configMaps: [{ namespace: 'a', name: 'b' }, { namespace: 'a', name: 'c', path: 'manifests' }] }), {
    type: 'configMaps',
    configMaps: [{ namespace: 'a', name: 'b' }, { namespace: 'a', name: 'c', path: 'manifests' }],
  });
  assert.deepEqual(bundleSourceFrom({ type: 'local', local: { path: './dir' } }), { type: 'local', path: './dir' });
});

test('bundleSourceToJson is the inverse of parsing', () => {
  const wire = [
    { type: 'image', image: { ref: 'r.io/x:1' } },
    { type: 'git', git: { repository: 'https://h/r', ref: { branch: 'main' }, directory: 'd' } },
    { type: 'http', http: { url: 'http://h/x.tar' } },
    { type: 'configMaps', configMaps: [{ namespace: 'n', name: 'm' }] },
    { type: 'local', local: { path: '/x' } },
  ];
  for (const w of wire) assert.deepEqual(bundleSourceToJson(bundleSourceFrom(w)), w);
});

test('the source itself and its type', () => {
  assert.deepEqual(errorsOf('image'), ['spec.source source.type-mismatch']);
  assert.deepEqual(errorsOf(null), ['spec.source source.type-mismatch']);
  assert.deepEqual(errorsOf({}), ['spec.source.type source.type']);
  assert.deepEqual(errorsOf({ type: 'oci' }), ['spec.source.type source.type']);
  assert.deepEqual(errorsOf({ type: 7 }), ['spec.source.type source.type']);
  assert.deepEqual(errorsOf({ type: 'image' }), ['spec.source.image source.required']);
  assert.deepEqual(errorsOf({ type: 'image', image: 'x' }), ['spec.source.image source.type-mismatch']);
  assert.deepEqual(errorsOf({ type: 'configMaps' }), ['spec.source.configMaps source.required']);
  // Every problem at once: a second member, an unknown field, and the member's own errors.
  assert.deepEqual(errorsOf({ type: 'image', image: {}, git: {}, extra: 1 }), [
    'spec.source.extra source.unknown-field',
    'spec.source.git source.one-of',
    'spec.source.image.ref source.required',
  ]);
});

test('image errors', () => {
  assert.deepEqual(errorsOf({ type: 'image', image: { ref: '' } }), ['spec.source.image.ref source.required']);
  assert.deepEqual(errorsOf({ type: 'image', image: { ref: 5 } }), ['spec.source.image.ref source.type-mismatch']);
  assert.deepEqual(errorsOf({ type: 'image', image: { ref: 'UPPER/Case::bad' } }), ['spec.source.image.ref source.image.ref']);
  assert.deepEqual(errorsOf({ type: 'image', image: { ref: 'r/x:1', pullSecret: 'regcred' } }), ['spec.source.image.pullSecret source.type-mismatch']);
  assert.deepEqual(errorsOf({ type: 'image', image: { ref: 'r/x:1', pullSecret: {} } }), [
    'spec.source.image.pullSecret.name source.required',
    'spec.source.image.pullSecret.namespace source.required',
  ]);
  assert.deepEqual(errorsOf({ type: 'image', image: { ref: 'r/x:1', pullSecret: { namespace: 'Bad_NS', name: 'Bad Name', key: 'x' } } }), [
    'spec.source.image.pullSecret.key source.unknown-field',
    'spec.source.image.pullSecret.name source.image.pull-secret',
    'spec.source.image.pullSecret.namespace source.image.pull-secret',
  ]);
  assert.deepEqual(errorsOf({ type: 'image', image: { ref: 'r/x:1', insecure: 'yes' } }), ['spec.source.image.insecure source.type-mismatch']);
});

test('git errors', () => {
  const git = (g: unknown): string[] => errorsOf({ type: 'git', git: g });
  assert.deepEqual(git({}), ['spec.source.git.ref source.required', 'spec.source.git.repository source.required']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: {} }), ['spec.source.git.ref source.git.ref']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { branch: 'main', tag: 'v1' } }), ['spec.source.git.ref source.git.ref']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: 'main' }), ['spec.source.git.ref source.type-mismatch']);
  const msg = parseBundleSource({ type: 'git', git: { repository: 'https://h/r', ref: { branch: 'a', commit: SHA } } }).result.errors()[0]?.message;
  assert.match(msg ?? '', /exactly one of branch, tag, commit \(got branch, commit\)/);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { commit: 'abc123' } }), ['spec.source.git.ref.commit source.git.ref']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { branch: 'a..b' } }), ['spec.source.git.ref.branch source.git.ref']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { branch: '-x' } }), ['spec.source.git.ref.branch source.git.ref']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { tag: 'refs/tags/v1' } }), ['spec.source.git.ref.tag source.git.ref']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { tag: 'has space' } }), ['spec.source.git.ref.tag source.git.ref']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { tag: '' } }), ['spec.source.git.ref.tag source.required']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { branh: 'main' } }), ['spec.source.git.ref source.git.ref', 'spec.source.git.ref.branh source.unknown-field']);
  assert.deepEqual(git({ repository: 'ext::sh -c touch% /tmp/pwned', ref: { branch: 'main' } }), ['spec.source.git.repository source.git.repository']);
  assert.deepEqual(git({ repository: '--upload-pack=evil', ref: { branch: 'main' } }), ['spec.source.git.repository source.git.repository']);
  assert.deepEqual(git({ repository: '/local/path', ref: { branch: 'main' } }), ['spec.source.git.repository source.git.repository']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { branch: 'main' }, directory: '../up' }), ['spec.source.git.directory source.git.directory']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { branch: 'main' }, directory: '/abs' }), ['spec.source.git.directory source.git.directory']);
  assert.deepEqual(git({ repository: 'https://h/r', ref: { branch: 'main' }, directory: 3 }), ['spec.source.git.directory source.type-mismatch']);
});

test('http errors', () => {
  const http = (h: unknown): string[] => errorsOf({ type: 'http', http: h });
  assert.deepEqual(http({}), ['spec.source.http.url source.required']);
  assert.deepEqual(http({ url: 'not a url' }), ['spec.source.http.url source.http.url']);
  assert.deepEqual(http({ url: 'ftp://h/x.tar' }), ['spec.source.http.url source.http.url']);
  assert.deepEqual(http({ url: 'https://h/x.tar', sha256: 'abc' }), ['spec.source.http.sha256 source.http.sha256']);
  assert.deepEqual(http({ url: 'https://h/x.tar', sha256: 12 }), ['spec.source.http.sha256 source.type-mismatch']);
});

test('configMaps errors', () => {
  const cms = (c: unknown): string[] => errorsOf({ type: 'configMaps', configMaps: c });
  assert.deepEqual(cms({ namespace: 'a', name: 'b' }), ['spec.source.configMaps source.type-mismatch']);
  assert.deepEqual(cms([]), ['spec.source.configMaps source.configmaps']);
  assert.deepEqual(cms(['x', { namespace: 'a' }]), ['spec.source.configMaps[0] source.type-mismatch', 'spec.source.configMaps[1].name source.required']);
  assert.deepEqual(cms([{ namespace: 'A', name: 'b_c', path: '../x' }]), [
    'spec.source.configMaps[0].name source.configmaps',
    'spec.source.configMaps[0].namespace source.configmaps',
    'spec.source.configMaps[0].path source.configmaps',
  ]);
  assert.deepEqual(cms([{ namespace: 'a', name: 'b', path: '/abs' }]), ['spec.source.configMaps[0].path source.configmaps']);
  assert.deepEqual(cms([{ namespace: 'a', name: 'b' }, { namespace: 'a', name: 'b' }]), ['spec.source.configMaps[1] source.configmaps']);
});

test('local errors', () => {
  assert.deepEqual(errorsOf({ type: 'local', local: {} }), ['spec.source.local.path source.required']);
  assert.deepEqual(errorsOf({ type: 'local', local: { path: '' } }), ['spec.source.local.path source.required']);
});

test('field prefix and file are carried into problems; bundleSourceFrom throws them all', () => {
  const { result } = parseBundleSource({ type: 'git', git: { ref: {} } }, { field: 'spec.source', file: 'bd.yaml' });
  for (const p of result.errors()) assert.equal(p.file, 'bd.yaml');
  assert.throws(
    () => bundleSourceFrom({ type: 'git', git: { ref: {} } }),
    (err: unknown) => err instanceof ValidationError && err.code === 'INVALID' && err.result.errors().length === 2 && /exactly one of branch, tag, commit/.test(err.message),
  );
});

test('credentials in a URL or reference are refused for every source type, saying which field takes the Secret, never echoing the password', () => {
  const cases: [unknown, string, RegExp][] = [
    [{ type: 'http', http: { url: 'https://reader:s3cr3t@files.example/b.tgz' } }, 'spec.source.http.url', /kubernetes\.io\/basic-auth Secret \(username, password\) named in spec\.source\.http\.secret/],
    [{ type: 'http', http: { url: 'https://ghp_s3cr3t@files.example/b.tgz' } }, 'spec.source.http.url', /spec\.source\.http\.secret/],
    [{ type: 'git', git: { repository: 'https://u:s3cr3t@git.example/o/r.git', ref: { branch: 'main' } } }, 'spec.source.git.repository', /named in spec\.source\.git\.secret/],
    [{ type: 'git', git: { repository: 'ssh://git:s3cr3t@git.example/o/r.git', ref: { branch: 'main' } } }, 'spec.source.git.repository', /spec\.source\.git\.secret/],
    [{ type: 'image', image: { ref: 'u:s3cr3t@quay.io/o/b:1' } }, 'spec.source.image.ref', /kubernetes\.io\/dockerconfigjson Secret named in spec\.source\.image\.pullSecret/],
    [{ type: 'image', image: { ref: 's3cr3t@quay.io/o/b:1' } }, 'spec.source.image.ref', /spec\.source\.image\.pullSecret/],
  ];
  for (const [source, field, where] of cases) {
    const problems = parseBundleSource(source).result.errors();
    assert.deepEqual(
      problems.map((p) => `${p.field ?? ''} ${p.rule}`),
      [`${field} source.url-credentials`],
      JSON.stringify(source),
    );
    assert.match(problems[0]?.message ?? '', where);
    assert.match(problems[0]?.message ?? '', /^must not carry credentials \(/);
    assert.doesNotMatch(JSON.stringify(problems), /s3cr3t/);
  }
  // What is not a credential stays accepted: an ssh user, scp-like git, a query, an image digest.
  for (const ok of [
    { type: 'git', git: { repository: 'ssh://git@git.example/o/r.git', ref: { branch: 'main' } } },
    { type: 'git', git: { repository: 'git@github.com:o/r.git', ref: { branch: 'main' } } },
    { type: 'http', http: { url: 'https://files.example/b.tgz?token=public' } },
    { type: 'image', image: { ref: `busybox@sha256:${'a'.repeat(64)}` } },
  ]) {
    assert.deepEqual(errorsOf(ok), [], JSON.stringify(ok));
  }
  // A URL that is not valid is quoted with its userinfo masked.
  const bad = parseBundleSource({ type: 'http', http: { url: 'ftp://u:s3cr3t@h/x' } }).result.errors();
  assert.doesNotMatch(JSON.stringify(bad), /s3cr3t/);
});

test('http and git sources take their credentials from a named Secret', () => {
  const secret = { namespace: 'team-a', name: 'repo-creds' };
  assert.deepEqual(bundleSourceFrom({ type: 'http', http: { url: 'https://h/x.tgz', secret } }), { type: 'http', url: 'https://h/x.tgz', secret });
  assert.deepEqual(bundleSourceFrom({ type: 'git', git: { repository: 'https://h/r', ref: { branch: 'main' }, secret } }), { type: 'git', repository: 'https://h/r', ref: { branch: 'main' }, secret });
  for (const w of [{ type: 'http', http: { url: 'https://h/x.tgz', secret } }, { type: 'git', git: { repository: 'https://h/r', ref: { tag: 'v1' }, secret } }]) {
    assert.deepEqual(bundleSourceToJson(bundleSourceFrom(w)), w);
  }
  assert.deepEqual(errorsOf({ type: 'http', http: { url: 'https://h/x.tgz', secret: { name: 'Bad Name' } } }), ['spec.source.http.secret.name source.secret', 'spec.source.http.secret.namespace source.required']);
  assert.deepEqual(errorsOf({ type: 'git', git: { repository: 'https://h/r', ref: { branch: 'main' }, secret: 'x' } }), ['spec.source.git.secret source.type-mismatch']);
});

test("a ClusterCatalog's image reference with credentials is refused, saying they belong in the manager's registry auth file", () => {
  const msg = imageRefCredentialProblem('u:s3cr3t@quay.io/o/catalog:latest', CREDENTIALS_INSTEAD.catalog('spec.source.image.ref'));
  assert.match(msg ?? '', /^must not carry credentials \(\*\*\*@quay\.io\/o\/catalog:latest\): put them in the manager's registry auth file/);
  assert.doesNotMatch(msg ?? '', /s3cr3t/);
  assert.match(imageRefCredentialProblem('https://tok3n@quay.io/o/catalog', 'x') ?? '', /https:\/\/\*\*\*@quay\.io/);
  assert.equal(imageRefCredentialProblem('quay.io/o/catalog:latest', 'x'), undefined);
  assert.equal(imageRefCredentialProblem(`quay.io/o/catalog@sha256:${'a'.repeat(64)}`, 'x'), undefined);
});
