/**
 * OLM v1's objects onto Binnacle's twins and back: every spec field to its twin's, the identity
 * rule (named ServiceAccount, else the configured installer, else refused with how to set one),
 * the extras read from annotations, and the twin's status in OLM v1's reasons.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterCatalog, ClusterExtension } from '../types.js';
import { catalogStatusFromTwin, catalogTwinSpec, extensionStatusFromTwin, extensionTwinSpec, OLMV1_INSTALLER_FLAG, olmv1ResolutionMessage, parseInstaller, twinCaughtUp, type ConditionSpec } from './convert.js';
import { OLMV1_API_VERSION, type Olmv1ClusterCatalog, type Olmv1ClusterExtension } from './types.js';

function v1Extension(spec: Partial<Olmv1ClusterExtension['spec']> = {}, annotations?: Record<string, string>): Olmv1ClusterExtension {
  return {
    apiVersion: OLMV1_API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: 'argocd', uid: 'u1', generation: 3, ...(annotations === undefined ? {} : { annotations }) },
    spec: { namespace: 'argocd', source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator' } }, ...spec },
  };
}

function twin(conditions: { type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message?: string; lastTransitionTime?: string }[], install?: boolean): ClusterExtension {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'ClusterExtension',
    metadata: { name: 'argocd', generation: 2 },
    spec: { namespace: 'argocd', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator' } } },
    status: {
      observedGeneration: 2,
      conditions: conditions.map((c) => ({ message: '', lastTransitionTime: '2026-01-01T00:00:00Z', ...c })),
      ...(install === true ? { install: { bundle: { name: 'argocd-operator.v0.6.0', version: '0.6.0', package: 'argocd-operator', image: 'quay.io/x/argocd@sha256:1', catalog: 'ops' }, bundleDeployment: 'argocd-argocd-operator' } } : {}),
    },
  };
}

function find(conditions: ConditionSpec[], type: string): ConditionSpec | undefined {
  return conditions.find((c) => c.type === type);
}

describe('extensionTwinSpec', () => {
  test('every OLM v1 field reaches the twin field that means the same', () => {
    const r = extensionTwinSpec(
      v1Extension({
        serviceAccount: { name: 'installer' },
        source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator', version: '>=0.6.0 <0.7.0', channels: ['alpha'], selector: { matchLabels: { team: 'a' } }, upgradeConstraintPolicy: 'SelfCertified' } },
        config: { configType: 'Inline', inline: { watchNamespace: 'apps', deploymentConfig: { nodeSelector: { a: 'b' } } } },
        install: { preflight: { crdUpgradeSafety: { enforcement: 'Strict' } } },
      }),
      undefined,
    );
    assert.ok(r.ok);
    assert.deepEqual(r.spec, {
      namespace: 'argocd',
      serviceAccount: { name: 'installer' },
      source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator', version: '>=0.6.0 <0.7.0', channels: ['alpha'], selector: { matchLabels: { team: 'a' } }, upgradeConstraintPolicy: 'SelfCertified' } },
      // config.inline goes whole: the BundleDeployment checks it against the bundle's install modes (bundle/bundle-config.ts).
      install: { bundleConfig: { watchNamespace: 'apps', deploymentConfig: { nodeSelector: { a: 'b' } } } },
    });
  });

  test('no config.inline is an empty bundleConfig: OLM v1 rules (no default watch namespace) still apply', () => {
    const r = extensionTwinSpec(v1Extension(), { namespace: 'ns', name: 'sa' });
    assert.ok(r.ok);
    assert.deepEqual(r.spec.install, { bundleConfig: {} });
  });

  test('identity: the named ServiceAccount wins over the configured installer', () => {
    const r = extensionTwinSpec(v1Extension({ serviceAccount: { name: 'mine' } }), { namespace: 'olmv1-system', name: 'installer' });
    assert.ok(r.ok);
    assert.deepEqual(r.spec.serviceAccount, { name: 'mine' });
  });

  test('identity: none named, the configured installer (in its own namespace)', () => {
    const r = extensionTwinSpec(v1Extension(), { namespace: 'olmv1-system', name: 'installer' });
    assert.ok(r.ok);
    assert.deepEqual(r.spec.serviceAccount, { namespace: 'olmv1-system', name: 'installer' });
  });

  test('identity: none named and none configured is refused, saying how to set one (never the manager, never cluster-admin)', () => {
    const r = extensionTwinSpec(v1Extension(), undefined);
    assert.ok(!r.ok);
    assert.equal(r.reason, 'Blocked');
    assert.ok(r.message.includes(OLMV1_INSTALLER_FLAG), r.message);
    assert.match(r.message, /spec\.serviceAccount\.name/);
  });

  test("Binnacle's extras come from annotations; a bad one is refused with every problem", () => {
    const ok = extensionTwinSpec(
      v1Extension({}, { 'binnacle.dev/upgrade-approval': 'Manual', 'binnacle.dev/install-approval': 'Manual', 'binnacle.dev/drift': 'Warn', 'binnacle.dev/verify-secret': 'keys/cosign', 'binnacle.dev/resolution-history-limit': '3', 'binnacle.dev/approved-plan': 'sha256:ab' }),
      { namespace: 'ns', name: 'sa' },
    );
    assert.ok(ok.ok);
    assert.equal(ok.spec.upgradeApproval, 'Manual');
    assert.equal(ok.spec.install?.approval, 'Manual');
    assert.deepEqual(ok.spec.drift, { mode: 'Warn' });
    assert.deepEqual(ok.spec.verify, { provider: 'cosign', secretRef: { namespace: 'keys', name: 'cosign' } });
    assert.equal(ok.spec.resolutionHistoryLimit, 3);
    assert.deepEqual(ok.annotations, { 'binnacle.dev/approved-plan': 'sha256:ab' });
    const bad = extensionTwinSpec(v1Extension({}, { 'binnacle.dev/drift': 'Sometimes', 'binnacle.dev/resolution-history-limit': 'many' }), { namespace: 'ns', name: 'sa' });
    assert.ok(!bad.ok);
    assert.match(bad.message, /binnacle\.dev\/drift.*Sometimes.*binnacle\.dev\/resolution-history-limit.*many/);
  });

  test('config.inline: any key reaches the twin (the bundle decides; bundle-config.test.ts); a selector with matchExpressions is carried over whole', () => {
    const r = extensionTwinSpec(v1Extension({ config: { configType: 'Inline', inline: { replicas: 2 } } }), { namespace: 'ns', name: 'sa' });
    assert.ok(r.ok);
    assert.deepEqual(r.spec.install?.bundleConfig, { replicas: 2 });
    const selector = { matchLabels: { tier: 'gold' }, matchExpressions: [{ key: 'a', operator: 'Exists' as const }, { key: 'b', operator: 'NotIn' as const, values: ['x'] }] };
    const m = extensionTwinSpec(v1Extension({ source: { sourceType: 'Catalog', catalog: { packageName: 'p', selector } } }), { namespace: 'ns', name: 'sa' });
    assert.ok(m.ok, m.ok ? '' : m.message);
    assert.deepEqual(m.spec.source.catalog.selector, selector);
  });

  test("install.preflight.crdUpgradeSafety.enforcement None reaches the twin's install (Strict, the default, adds nothing)", () => {
    const none = extensionTwinSpec(v1Extension({ install: { preflight: { crdUpgradeSafety: { enforcement: 'None' } } } }), { namespace: 'ns', name: 'sa' });
    assert.ok(none.ok);
    assert.equal(none.spec.install?.crdUpgradeSafety, 'None');
    const strict = extensionTwinSpec(v1Extension({ install: { preflight: { crdUpgradeSafety: { enforcement: 'Strict' } } } }), { namespace: 'ns', name: 'sa' });
    assert.ok(strict.ok);
    assert.equal(strict.spec.install?.crdUpgradeSafety, undefined);
  });

  test('parseInstaller takes <namespace>/<name> only', () => {
    assert.deepEqual(parseInstaller('olmv1-system/installer'), { namespace: 'olmv1-system', name: 'installer' });
    assert.equal(parseInstaller('installer'), undefined);
    assert.equal(parseInstaller('A/b'), undefined);
  });
});

describe('extensionStatusFromTwin', () => {
  test('installed and settled: Installed=True/Succeeded, Progressing=True/Succeeded, the bundle, the revision, deprecations', () => {
    const t = twin(
      [
        { type: 'Installed', status: 'True', reason: 'Succeeded' },
        { type: 'Progressing', status: 'False', reason: 'Succeeded' },
        { type: 'Deprecated', status: 'True', reason: 'Deprecated', message: 'use another' },
        { type: 'PackageDeprecated', status: 'True', reason: 'Deprecated', message: 'use another' },
        { type: 'ChannelDeprecated', status: 'False', reason: 'NotDeprecated' },
        { type: 'BundleDeprecated', status: 'False', reason: 'NotDeprecated' },
      ],
      true,
    );
    const out = extensionStatusFromTwin({ twin: t, now: new Date(), revision: 4 });
    assert.deepEqual(find(out.conditions, 'Installed'), { type: 'Installed', status: true, reason: 'Succeeded', message: 'Installed bundle quay.io/x/argocd@sha256:1 successfully' });
    assert.deepEqual(find(out.conditions, 'Progressing'), { type: 'Progressing', status: true, reason: 'Succeeded', message: 'Desired state reached' });
    assert.deepEqual(out.install, { bundle: { name: 'argocd-operator.v0.6.0', version: '0.6.0' } });
    assert.deepEqual(out.activeRevisions, [{ name: 'argocd-4' }]);
    assert.equal(find(out.conditions, 'PackageDeprecated')?.reason, 'Deprecated');
    assert.deepEqual(find(out.conditions, 'ChannelDeprecated'), { type: 'ChannelDeprecated', status: false, reason: 'NotDeprecated', message: 'channel not deprecated' });
  });

  test("Binnacle's reasons in api/v1's: Retrying, RollingOut, Blocked; Installed Failed or Absent; deprecation unknown", () => {
    const retrying = extensionStatusFromTwin({ twin: twin([{ type: 'Installed', status: 'False', reason: 'Failed', message: 'no bundle' }, { type: 'Progressing', status: 'True', reason: 'Retrying', message: 'resolution failed: x' }]), now: new Date() });
    assert.deepEqual(find(retrying.conditions, 'Progressing'), { type: 'Progressing', status: true, reason: 'Retrying', message: 'resolution failed: x' });
    assert.equal(find(retrying.conditions, 'Installed')?.reason, 'Failed');
    assert.equal(find(retrying.conditions, 'BundleDeprecated')?.reason, 'DeprecationStatusUnknown');
    assert.equal(retrying.install, undefined);
    const rolling = extensionStatusFromTwin({ twin: twin([{ type: 'Installed', status: 'False', reason: 'Installing' }, { type: 'Progressing', status: 'True', reason: 'Installing', message: 'waiting' }]), now: new Date() });
    assert.equal(find(rolling.conditions, 'Progressing')?.reason, 'RollingOut');
    assert.equal(find(rolling.conditions, 'Installed')?.reason, 'Absent');
    const blocked = extensionStatusFromTwin({ twin: twin([{ type: 'Progressing', status: 'False', reason: 'InvalidSpec', message: 'bad' }]), now: new Date() });
    assert.deepEqual(find(blocked.conditions, 'Progressing'), { type: 'Progressing', status: false, reason: 'Blocked', message: 'bad' });
  });

  test('a configuration the bundle refuses stays InvalidConfiguration (terminal), with the message as the BundleDeployment words it', () => {
    const message = 'invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing';
    const out = extensionStatusFromTwin({ twin: twin([{ type: 'Installed', status: 'False', reason: 'Failed', message: `op.v1: ${message}` }, { type: 'Progressing', status: 'False', reason: 'InvalidConfiguration', message }]), now: new Date() });
    assert.deepEqual(find(out.conditions, 'Progressing'), { type: 'Progressing', status: false, reason: 'InvalidConfiguration', message });
  });

  test("a resolution that found no bundle for the request is worded as operator-controller's resolver (resolve/catalog.go); Binnacle's explanation stays on the twin", () => {
    const failed = (install: boolean, catalog: ClusterExtension['spec']['source']['catalog']): ClusterExtension => {
      const t = twin([{ type: 'Installed', status: install ? 'True' : 'False', reason: install ? 'Succeeded' : 'Failed' }, { type: 'Progressing', status: 'True', reason: 'Retrying', message: 'resolution failed: no set of bundles satisfies the request:\n  - …' }], install);
      t.spec.source.catalog = catalog;
      t.status = { ...t.status, resolution: { bundles: [], explanation: 'no set of bundles satisfies the request: …', requestUnmatched: true } };
      return t;
    };
    const upgrade = extensionStatusFromTwin({ twin: failed(true, { packageName: 'test', version: '1.2.0' }), now: new Date() });
    // update.feature:44, exactly.
    assert.deepEqual(find(upgrade.conditions, 'Progressing'), { type: 'Progressing', status: true, reason: 'Retrying', message: 'error upgrading from currently installed version "0.6.0": no bundles found for package "test" matching version "1.2.0"' });
    const fresh = extensionStatusFromTwin({ twin: failed(false, { packageName: 'test', version: '>=2.0.0', channels: ['alpha', 'beta'] }), now: new Date() });
    assert.equal(find(fresh.conditions, 'Progressing')?.message, 'no bundles found for package "test" matching version ">=2.0.0" in channels [alpha beta]');
    assert.equal(olmv1ResolutionMessage(failed(false, { packageName: 'test' })), 'no bundles found for package "test"');
    // install.feature:67: two catalogs of the same priority offer the bundle.
    const ambiguous = failed(false, { packageName: 'test' });
    ambiguous.status = { ...ambiguous.status, resolution: { bundles: [], explanation: 'x', ambiguousCatalogs: ['test', 'extra'] } };
    assert.equal(olmv1ResolutionMessage(ambiguous), 'found bundles for package "test" in multiple catalogs with the same priority [extra test]');
    // Any other resolution failure (a dependency, a cluster constraint) keeps Binnacle's words.
    const other = failed(true, { packageName: 'test' });
    other.status = { ...other.status, resolution: { bundles: [], explanation: 'x' } };
    assert.equal(find(extensionStatusFromTwin({ twin: other, now: new Date() }).conditions, 'Progressing')?.message, 'resolution failed: no set of bundles satisfies the request:\n  - …');
  });

  test('progressDeadlineMinutes: still progressing past it is Progressing=False/ProgressDeadlineExceeded; before it, a requeue at its end', () => {
    const t = twin([{ type: 'Progressing', status: 'True', reason: 'Retrying', message: 'image pull failed', lastTransitionTime: '2026-01-01T00:00:00Z' }]);
    const late = extensionStatusFromTwin({ twin: t, progressDeadlineMinutes: 10, now: new Date('2026-01-01T00:11:00Z') });
    assert.deepEqual(find(late.conditions, 'Progressing'), { type: 'Progressing', status: false, reason: 'ProgressDeadlineExceeded', message: 'Revision has not rolled out for 10 minute(s). Last status: image pull failed' });
    const early = extensionStatusFromTwin({ twin: t, progressDeadlineMinutes: 10, now: new Date('2026-01-01T00:04:00Z') });
    assert.equal(find(early.conditions, 'Progressing')?.reason, 'Retrying');
    assert.equal(early.requeueAfterMs, 6 * 60_000);
  });

  test('twinCaughtUp: only a status of the current generation speaks for the spec', () => {
    assert.equal(twinCaughtUp(undefined), false);
    assert.equal(twinCaughtUp({ metadata: { generation: 2 }, status: { observedGeneration: 1 } }), false);
    assert.equal(twinCaughtUp({ metadata: { generation: 2 }, status: { observedGeneration: 2 } }), true);
  });
});

describe('ClusterCatalog', () => {
  const v1: Olmv1ClusterCatalog = { apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'ops' }, spec: { source: { type: 'Image', image: { ref: 'r/c:latest', pollIntervalMinutes: 5 } }, priority: -10 } };

  test('the twin has the same source, poll interval, priority and availability', () => {
    const r = catalogTwinSpec({ ...v1, spec: { ...v1.spec, availabilityMode: 'Available' } });
    assert.ok(r.ok);
    assert.deepEqual(r.spec, { source: { type: 'Image', image: { ref: 'r/c:latest', pollIntervalMinutes: 5 } }, priority: -10, availabilityMode: 'Available' });
  });

  test("status in catalogd's words: Serving/Available, Progressing=True/Succeeded, the URL, resolved source and lastUnpacked", () => {
    const t: ClusterCatalog = {
      apiVersion: 'binnacle.dev/v1alpha1',
      kind: 'ClusterCatalog',
      metadata: { name: 'ops', generation: 1 },
      spec: { source: { type: 'Image', image: { ref: 'r/c:latest' } } },
      status: {
        observedGeneration: 1,
        conditions: [
          { type: 'Serving', status: 'True', reason: 'Available', message: 'serving', lastTransitionTime: '2026-01-01T00:00:00Z' },
          { type: 'Progressing', status: 'False', reason: 'Succeeded', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' },
        ],
        resolvedSource: { type: 'Image', image: { ref: 'r/c@sha256:1' } },
        urls: { base: 'http://127.0.0.1:8083/catalogs/ops' },
        lastUnpacked: '2026-01-01T00:00:00Z',
      },
    };
    const out = catalogStatusFromTwin(v1, t);
    assert.deepEqual(
      out.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['Serving', true, 'Available'],
        ['Progressing', true, 'Succeeded'],
      ],
    );
    assert.deepEqual(out.status, { resolvedSource: { type: 'Image', image: { ref: 'r/c@sha256:1' } }, urls: { base: 'http://127.0.0.1:8083/catalogs/ops' }, lastUnpacked: '2026-01-01T00:00:00Z' });
    const failing = catalogStatusFromTwin(v1, { ...t, status: { observedGeneration: 1, conditions: [{ type: 'Progressing', status: 'True', reason: 'InvalidCatalog', message: 'bad', lastTransitionTime: '2026-01-01T00:00:00Z' }] } });
    assert.deepEqual(
      failing.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['Serving', false, 'Unavailable'],
        ['Progressing', true, 'Retrying'],
      ],
    );
    const off = catalogStatusFromTwin({ ...v1, spec: { ...v1.spec, availabilityMode: 'Unavailable' } }, t);
    assert.deepEqual(
      off.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['Serving', false, 'UserSpecifiedUnavailable'],
        ['Progressing', true, 'Succeeded'],
      ],
    );
  });
});
