/**
 * A BundleDeployment's `spec.bundleConfig` (OLM v1's `config.inline`) at render: checked against
 * the bundle's install modes with OLM v1's rules (bundle/bundle-config.ts), refused as a terminal
 * `InvalidConfiguration` in OLM v1's words, and, when accepted, the namespaces the operator watches.
 * Without it the renderer keeps Binnacle's own defaults.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { TerminalError } from '../util/errors.js';
import { createRenderer } from './index.js';
import type { BundleDeploymentSpec } from '../api/types.js';

const NS = 'ops';

/** A registry+v1 bundle (manifests/ and metadata/) of one Deployment whose CSV supports `modes`. */
async function bundleDir(modes: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bundle-config-'));
  await mkdir(join(dir, 'manifests'));
  await mkdir(join(dir, 'metadata'));
  const all = ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'];
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'op.v1.0.0' },
    spec: {
      version: '1.0.0',
      installModes: all.map((type) => ({ type, supported: modes.includes(type) })),
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [
            {
              name: 'op',
              spec: {
                selector: { matchLabels: { app: 'op' } },
                template: { metadata: { labels: { app: 'op' } }, spec: { containers: [{ name: 'manager', image: 'example.com/op:1' }] } },
              },
            },
          ],
        },
      },
    },
  };
  await writeFile(join(dir, 'manifests', 'op.clusterserviceversion.yaml'), stringify(csv));
  await writeFile(
    join(dir, 'metadata', 'annotations.yaml'),
    stringify({ annotations: { 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1', 'operators.operatorframework.io.bundle.manifests.v1': 'manifests/', 'operators.operatorframework.io.bundle.metadata.v1': 'metadata/', 'operators.operatorframework.io.bundle.package.v1': 'op' } }),
  );
  return dir;
}

async function render(modes: string[], extra: Partial<BundleDeploymentSpec>): Promise<{ targets: string | undefined }> {
  const dir = await bundleDir(modes);
  try {
    const rendered = await createRenderer().bundle({ dir, name: 'op', spec: { source: { type: 'local', local: { path: dir } }, format: 'registry+v1', installNamespace: NS, ...extra }, digest: '', revision: 1 });
    const deployment = rendered.objects.find((o) => o.kind === 'Deployment');
    const annotations = (deployment?.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template?.metadata?.annotations;
    return { targets: annotations?.['olm.targetNamespaces'] };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const refusal = (message: string) => (e: unknown) => {
  assert.ok(e instanceof TerminalError, String(e));
  assert.equal(e.reason, 'InvalidConfiguration');
  assert.equal(e.message, message);
  return true;
};

describe('render: OLM v1 bundle configuration', () => {
  test('an OwnNamespace-only bundle with an empty bundleConfig: watchNamespace is required, no default picked', async () => {
    await assert.rejects(render(['OwnNamespace'], { bundleConfig: {} }), refusal('invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing'));
  });

  test('OwnNamespace only: another namespace is refused, the install namespace watched', async () => {
    await assert.rejects(
      render(['OwnNamespace'], { bundleConfig: { watchNamespace: 'some-ns' } }),
      refusal(`invalid ClusterExtension configuration: invalid configuration: invalid format for field "watchNamespace": 'some-ns' is not valid ownNamespaceInstallMode: invalid value "some-ns": must be "${NS}" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`),
    );
    assert.deepEqual(await render(['OwnNamespace'], { bundleConfig: { watchNamespace: NS } }), { targets: NS });
  });

  test('SingleNamespace only: a DNS-1123 label, watched', async () => {
    await assert.rejects(render(['SingleNamespace'], { bundleConfig: { watchNamespace: 'invalid-namespace-' } }), refusal('invalid ClusterExtension configuration: invalid configuration: field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"'));
    assert.deepEqual(await render(['SingleNamespace'], { bundleConfig: { watchNamespace: 'target' } }), { targets: 'target' });
  });

  test('AllNamespaces only: watchNamespace is an unknown field; none watches all namespaces', async () => {
    await assert.rejects(render(['AllNamespaces'], { bundleConfig: { watchNamespace: NS } }), refusal('invalid ClusterExtension configuration: invalid configuration: unknown field "watchNamespace"'));
    assert.deepEqual(await render(['AllNamespaces'], { bundleConfig: {} }), { targets: '' });
  });

  test("without bundleConfig Binnacle's own default stays (an OwnNamespace-only bundle watches its install namespace)", async () => {
    assert.deepEqual(await render(['OwnNamespace'], {}), { targets: NS });
  });
});

describe("render: OLM v1's owner labels (spec.olmv1Owner)", () => {
  async function labelsOf(extra: Partial<BundleDeploymentSpec>): Promise<(Record<string, string> | undefined)[]> {
    const dir = await bundleDir(['AllNamespaces']);
    try {
      const rendered = await createRenderer().bundle({ dir, name: 'op', spec: { source: { type: 'local', local: { path: dir } }, format: 'registry+v1', installNamespace: NS, ...extra }, digest: '', revision: 1 });
      assert.ok(rendered.objects.length > 1);
      return rendered.objects.map((o) => o.metadata.labels);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  test('every object of an OLM v1 ClusterExtension\'s bundle carries owner-kind and owner-name', async () => {
    for (const labels of await labelsOf({ olmv1Owner: 'my-ext' })) {
      assert.equal(labels?.['olm.operatorframework.io/owner-kind'], 'ClusterExtension');
      assert.equal(labels['olm.operatorframework.io/owner-name'], 'my-ext');
    }
  });

  test('without it, no OLM v1 label', async () => {
    for (const labels of await labelsOf({})) assert.equal(labels?.['olm.operatorframework.io/owner-name'], undefined);
  });
});
