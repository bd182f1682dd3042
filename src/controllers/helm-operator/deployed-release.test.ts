import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifest } from '../../apply/index.js';
import { deployedReleaseStatus, STATUS_MANIFEST_MAX_BYTES } from './deployed-release.js';

const release = { name: 'wide', namespace: 'team-a' };
const secret = '---\n# Source: c/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: aHVudGVyMg==\n';
const configMaps = (n: number, pad: number): string =>
  Array.from({ length: n }, (_, i) => `---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  pad: ${'w'.repeat(pad)}\n`).join('');

test('status.deployedRelease: a manifest that fits is shown whole, its Secrets redacted', () => {
  const manifest = `${configMaps(3, 10)}${secret}`;
  const status = deployedReleaseStatus(release, manifest);
  assert.equal(status.name, 'wide');
  assert.doesNotMatch(status.manifest, /aHVudGVyMg==/);
  assert.deepEqual(parseManifest(status.manifest, 'status').map((o) => o.metadata.name), ['cm-0', 'cm-1', 'cm-2', 's']);
});

test('status.deployedRelease: a manifest over the bound (2,000 ConfigMaps of 3 KiB, as the largest render the limits accept) gives way to a line naming its size and `helm get manifest`', () => {
  const manifest = `${configMaps(2000, 3000)}${secret}`;
  const bytes = Buffer.byteLength(manifest);
  assert.ok(bytes > STATUS_MANIFEST_MAX_BYTES);
  const status = deployedReleaseStatus(release, manifest);
  assert.equal(status.manifest, `# The manifest is ${bytes} bytes, more than status holds (${STATUS_MANIFEST_MAX_BYTES}): \`helm get manifest wide -n team-a\` shows it.\n`);
  assert.ok(Buffer.byteLength(status.manifest) < 200);
  // uninstall-wait reads it as no objects, and waits for what the uninstall deleted.
  assert.deepEqual(parseManifest(status.manifest, 'status'), []);
  // The bound is the manifest's size: one byte under it is shown.
  const exact = deployedReleaseStatus(release, 'x'.repeat(10), 10);
  assert.equal(exact.manifest, 'x'.repeat(10));
  assert.match(deployedReleaseStatus(release, 'x'.repeat(11), 10).manifest, /^# The manifest is 11 bytes/);
});
