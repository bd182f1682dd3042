import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InputError } from '../util/errors.js';
import { formatReference, isValidImageReference, parseReference, isRegistryHost } from './reference.js';

const D = `sha256:${'a'.repeat(64)}`;

test('parseReference: the docker grammar and Docker Hub defaults', () => {
  const table: Array<[string, string, string, string | undefined, string | undefined]> = [
    ['busybox', 'docker.io', 'library/busybox', 'latest', undefined],
    ['busybox:1.36', 'docker.io', 'library/busybox', '1.36', undefined],
    ['quay.io/operator-framework/opm:v1.30.0', 'quay.io', 'operator-framework/opm', 'v1.30.0', undefined],
    ['localhost/foo', 'localhost', 'foo', 'latest', undefined],
    ['localhost:5000/foo/bar:v1', 'localhost:5000', 'foo/bar', 'v1', undefined],
    ['127.0.0.1:5000/cat@' + D, '127.0.0.1:5000', 'cat', undefined, D],
    ['127.0.0.1:5000/cat:v2@' + D, '127.0.0.1:5000', 'cat', 'v2', D],
    ['[::1]:5000/ipv6/repo', '[::1]:5000', 'ipv6/repo', 'latest', undefined],
    ['myuser/myimage', 'docker.io', 'myuser/myimage', 'latest', undefined],
    ['index.docker.io/library/nginx', 'docker.io', 'library/nginx', 'latest', undefined],
    ['registry.example.com/a/b/c__d-e.f:tag_1.0-x', 'registry.example.com', 'a/b/c__d-e.f', 'tag_1.0-x', undefined],
    ['Registry.Example.com/lower', 'Registry.Example.com', 'lower', 'latest', undefined],
  ];
  for (const [input, registry, repository, tag, digest] of table) {
    assert.deepEqual(parseReference(input), { registry, repository, tag, digest }, input);
  }
});

test('parseReference: bad references are InputErrors that say what is wrong', () => {
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['Upper/case', /lower-case/],
    ['quay.io/Foo/bar', /lower-case/],
    ['foo:', /tag/],
    ['foo:-bad', /tag/],
    ['foo@sha256:1234', /digest/],
    [`foo@md5:${'a'.repeat(64)}`, /not supported/],
    ['quay.io/', /missing/],
    ['foo//bar', /path component/],
    ['foo/-bar', /path component/],
    ['has space', /white space/],
    ['bad_host:5000/x', /host/],
    [`quay.io/${'a'.repeat(260)}`, /longer than 255/],
  ];
  for (const [input, why] of bad) {
    assert.throws(
      () => parseReference(input),
      (err: unknown) => err instanceof InputError && err.code === 'OCI_BAD_REFERENCE' && why.test(err.message),
      input,
    );
  }
});

test('formatReference round-trips', () => {
  for (const r of ['quay.io/a/b:v1', `127.0.0.1:5000/x@${D}`, 'docker.io/library/busybox:latest']) {
    assert.equal(formatReference(parseReference(r)), r);
    assert.deepEqual(parseReference(formatReference(parseReference(r))), parseReference(r));
  }
});

test('isValidImageReference: the pull-spec grammar opm and OLM check images with', () => {
  const md5 = 'md5:0123456789abcdef0123456789abcdef';
  const sha512 = `sha512:${'ab'.repeat(64)}`;
  for (const r of ['busybox', 'quay.io/org/op:v1.2.3', `quay.io/org/op@${D}`, `localhost:5000/a/b:t@${D}`, `q.io/x@${sha512}`, `q.io/x:v1@${D}`, '[::1]:5000/a']) {
    assert.equal(isValidImageReference(r), true, r);
  }
  // Digests go through go-digest's Parse: only registered algorithms (sha256/384/512), exact
  // lower-case hex (operator-registry main's declcfg_to_model tests: md5, a misspelt ssha256).
  const bad = ['', 'Quay.io/Org/Op', 'quay.io/org/op:', 'quay.io/org/op@sha256:abc', 'a b', 'quay.io//op', `q.io/${'a'.repeat(260)}`, 'quay.io/org/op:-bad'];
  bad.push(`q.io/x@${md5}`, `q.io/x@s${D}`, `q.io/x@${D.toUpperCase().replace('SHA256', 'sha256')}`, `q.io/x@${D}00`, 'ab'.repeat(32));
  for (const r of bad) {
    assert.equal(isValidImageReference(r), false, r);
  }
});

test('isRegistryHost: a registry as references name it; a path, a scheme, an empty or out-of-range port is not', () => {
  for (const good of ['quay.io', 'registry.example:5000', '10.244.1.1:30117', '[::1]:5000', 'index.docker.io', 'registry-1.docker.io', 'localhost:1', 'localhost:65535']) assert.equal(isRegistryHost(good), true, good);
  for (const bad of ['', 'quay.io/ns', 'https://quay.io', 'quay.io:', 'quay.io:0', 'quay.io:65536', '-quay.io', 'a..b', '..']) assert.equal(isRegistryHost(bad), false, bad);
  // The same normalisation as a reference's.
  assert.equal(parseReference('registry-1.docker.io/library/busybox:1.36').registry, 'docker.io');
});
