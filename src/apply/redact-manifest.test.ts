import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactSecrets } from './redact-manifest.js';

const manifest = `---
# Source: pg/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: creds
data:
  password: c2VjcmV0
stringData:
  token: "plain-secret"
---
# Source: pg/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  password: not-a-secret   # a ConfigMap's data is kept
`;

test('Secret values in a manifest are redacted; other documents are kept byte for byte', () => {
  const out = redactSecrets(manifest);
  assert.doesNotMatch(out, /c2VjcmV0|plain-secret/);
  assert.match(out, /# Source: pg\/templates\/secret.yaml\napiVersion: v1\nkind: Secret/);
  assert.match(out, /password: "\*\*\*"|password: '\*\*\*'|password: \*\*\*/);
  assert.ok(out.endsWith(manifest.slice(manifest.indexOf('---\n# Source: pg/templates/cm.yaml'))), 'the ConfigMap document is unchanged');
});

test('a Secret whose kind is quoted, whose data is not a map, or that does not parse shows none of its data', () => {
  assert.doesNotMatch(redactSecrets(`---\napiVersion: v1\n"kind": "Secret"\nmetadata: {name: x}\ndata: {a: c2VjcmV0}\n`), /c2VjcmV0/);
  assert.doesNotMatch(redactSecrets(`---\nkind: Secret\ndata: c2VjcmV0\n`), /c2VjcmV0/);
  assert.equal(redactSecrets(`---\nkind: Secret\ndata: {a: c2VjcmV0\n`), '---\n# a Secret that could not be read: not shown\n');
  assert.doesNotMatch(redactSecrets(`---\n{apiVersion: v1, kind: Secret, data: {a: c2VjcmV0}}\n`), /c2VjcmV0/);
  assert.equal(redactSecrets(''), '');
});
