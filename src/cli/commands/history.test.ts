import { test } from 'node:test';
import assert from 'node:assert/strict';
import { historyTables, type ExtensionHistory } from './history.js';

test('history tables show resolutions, then each release with who needs it', () => {
  const h: ExtensionHistory = {
    name: 'nhc',
    package: 'node-healthcheck-operator',
    resolutions: [
      {
        time: '2026-01-01T00:00:00Z',
        reason: 'Initial',
        generation: 1,
        catalogs: [{ name: 'ops', digest: 'sha256:0123456789abcdef0123' }],
        bundles: [
          { package: 'poison-pill-operator', version: '0.1.0', name: 'poison-pill.v0.1.0' },
          { package: 'node-healthcheck-operator', version: '0.0.2', name: 'node-healthcheck-operator.v0.0.2' },
        ],
        outcome: 'Resolved',
      },
      { time: '2026-01-01T00:01:00Z', reason: 'SpecChanged', generation: 2, catalogs: [], bundles: [], outcome: 'Failed', message: 'no set of bundles satisfies the request:\n  - a\n  - b' },
    ],
    releases: [
      {
        bundleDeployment: 'nhc-poison-pill-operator',
        package: 'poison-pill-operator',
        release: 'nhc-poison-pill-operator',
        namespace: 'nhc',
        neededBy: 'requested by extension pp, needed by extension nhc',
        revisions: [
          {
            name: 'nhc-poison-pill-operator',
            namespace: 'nhc',
            revision: 1,
            status: 'deployed',
            description: 'Install complete',
            firstDeployed: '2026-01-01T00:00:10Z',
            lastDeployed: '2026-01-01T00:00:10Z',
            chart: { name: 'poison-pill-operator', version: '0.1.0' },
            owner: { kind: 'BundleDeployment', name: 'nhc-poison-pill-operator' },
          },
        ],
        refused: [{ secret: 'nhc/sh.helm.release.v1.nhc-poison-pill-operator.v2', reason: 'data.release inflates past 64 MiB' }],
      },
    ],
  };
  const text = historyTables(h);
  assert.match(text, /^Resolutions of nhc \(package node-healthcheck-operator\), oldest first:\n/);
  assert.match(text, /Initial\s+1\s+Resolved\s+poison-pill-operator@0\.1\.0, node-healthcheck-operator@0\.0\.2\s+ops@0123456789ab\n/);
  assert.match(text, /SpecChanged\s+2\s+Failed\s+-\s+no set of bundles satisfies the request: a; b\n/);
  assert.match(text, /Helm revisions of release nhc\/nhc-poison-pill-operator \(package poison-pill-operator; requested by extension pp, needed by extension nhc\):\n/);
  assert.match(text, /1\s+2026-01-01T00:00:10Z\s+deployed\s+poison-pill-operator-0\.1\.0\s+Install complete/);
  assert.match(text, /records not read \(not history\):\n {4}nhc\/sh\.helm\.release\.v1\.nhc-poison-pill-operator\.v2: data\.release inflates past 64 MiB\n/);
});
