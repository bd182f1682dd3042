import { test } from 'node:test';
import assert from 'node:assert/strict';
import { carriesCredential, credentialInReferenceMessage, hasUserinfo, redactReference, redactText, redactUrl, splitUserinfo } from './redact.js';

test('userinfo is masked in URLs and in any text quoting them; query parameters stay', () => {
  assert.equal(redactUrl('https://user:t0ken@git.example.com/org/repo.git'), 'https://***@git.example.com/org/repo.git');
  assert.equal(redactUrl('https://ghp_abc123@github.com/org/repo'), 'https://***@github.com/org/repo');
  assert.equal(redactUrl('http://127.0.0.1:8080/x.tgz?token=abc'), 'http://127.0.0.1:8080/x.tgz?token=abc');
  assert.equal(redactUrl('ssh://git:pw@host/repo'), 'ssh://git:***@host/repo');
  assert.equal(redactUrl('ssh://git@host/repo'), 'ssh://git@host/repo');
  assert.equal(
    redactText(`fatal: unable to access 'https://u:p@h/r.git/': Could not resolve host; TypeError: Request cannot be constructed from a URL that includes credentials: http://a:b@c/d`),
    `fatal: unable to access 'https://***@h/r.git/': Could not resolve host; TypeError: Request cannot be constructed from a URL that includes credentials: http://***@c/d`,
  );
  assert.equal(redactText('Authorization: Basic dXNlcjpwdw== sent'), 'Authorization: Basic *** sent');
  assert.equal(redactText('no urls here, user@example.com'), 'no urls here, user@example.com');
});

test('splitUserinfo gives the bare URL and the decoded credentials', () => {
  assert.deepEqual(splitUserinfo('https://us%40er:p%3Ass@h:1/x?y=1'), { url: 'https://h:1/x?y=1', credentials: { username: 'us@er', password: 'p:ss' } });
  assert.deepEqual(splitUserinfo('https://h/x'), { url: 'https://h/x' });
  assert.equal(hasUserinfo('https://a@h/'), true);
  assert.equal(hasUserinfo('https://h/'), false);
});

test('carriesCredential: any userinfo over http(s) and oci, a password elsewhere, user:password@ before a bare host', () => {
  for (const yes of ['https://user:pw@h/x', 'https://ghp_token@h/x', 'http://u:@h/x', 'oci://u:p@r.example/c', 'ssh://git:pw@h/r', 'git://u:p@h/r', 'u:p@quay.io/x/y:1', 'git:pw@host:org/repo']) {
    assert.equal(carriesCredential(yes), true, yes);
  }
  for (const no of ['https://h/x?token=a', 'ssh://git@h/r', 'git@github.com:o/r.git', 'quay.io/x/y@sha256:' + 'a'.repeat(64), 'busybox@sha256:' + 'a'.repeat(64), 'oci://r.example/c:1']) {
    assert.equal(carriesCredential(no), false, no);
  }
  assert.equal(redactReference('u:s3cret@quay.io/x:1'), '***@quay.io/x:1');
  const msg = credentialInReferenceMessage('https://u:s3cret@h/x.tgz', 'a Secret named in spec.source.http.secret');
  assert.equal(msg, 'must not carry credentials (https://***@h/x.tgz): put them in a Secret named in spec.source.http.secret');
});
