import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse, KubeApiError } from '../kube/errors.js';
import { TerminalError } from '../util/errors.js';
import { MAX_NESTING } from '../util/nesting.js';
import { ANNOTATION_ORPHAN_ON_DELETE, decideDeletion, renderFailure, sourceSecretReader, specProblems } from './bundle-deployment.js';
import type { KubeClient } from '../kube/client.js';
import type { BundleDeployment } from '../api/types.js';
import { pullSecretCredentials } from '../source/index.js';

test('a render failure from the API server is retried; a bundle that is really invalid is blocked', () => {
  assert.equal(renderFailure(apiErrorFromResponse(503, '', 'list Secret ns (release history)')).transient, true);
  assert.equal(renderFailure(new KubeApiError(409, 'Conflict', 'create Secret ns/webhook-cert: the object has been modified')).transient, true);
  const invalid = renderFailure(new TerminalError('InvalidBundle', 'CRD x needs a conversion webhook'));
  assert.deepEqual(invalid, { transient: false, message: 'CRD x needs a conversion webhook' });
});

/** An object nested `depth` levels deep: {a: {a: … {}}}. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

test('a spec is refused for what is wrong in it, free-form fields nested past the limit included', () => {
  const spec = { source: { type: 'local' as const, local: { path: '/bundles/x' } }, format: 'helm' as const, installNamespace: 'ns' };
  assert.deepEqual(specProblems(spec), []);
  assert.deepEqual(specProblems({ ...spec, config: nested(MAX_NESTING), values: nested(MAX_NESTING) }), []);
  assert.deepEqual(specProblems({ ...spec, config: nested(MAX_NESTING + 1), values: nested(5000) }), [
    `spec.config: nests deeper than ${MAX_NESTING} levels`,
    `spec.values: nests deeper than ${MAX_NESTING} levels`,
  ]);
  assert.deepEqual(specProblems({ ...spec, format: 'zip', installNamespace: '' }), ['spec.format: unknown format "zip"', 'spec.installNamespace: required']);
  assert.deepEqual(specProblems({ ...spec, format: 7 }), ['spec.format: unknown format "7"']);
  assert.deepEqual(specProblems('a string'), ['spec.source: expected an object, got a undefined', 'spec.format: unknown format "undefined"', 'spec.installNamespace: required']);
  assert.deepEqual(specProblems({ ...spec, drift: { ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }] } }), []);
  assert.deepEqual(specProblems({ ...spec, drift: { ignore: [{ paths: ['spec.replicas'] }] } }), ['spec.drift.ignore[0].paths[0]: "spec.replicas" is not a JSON pointer (RFC 6901: starts with "/", "~" only as ~0 or ~1)']);
});

test("a source's pull secret is read as the installing ServiceAccount; a forbidden read names the Secret and the account", async () => {
  const asked: { who: string; ref: string }[] = [];
  const good = { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'team-a', name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { 'r.example': { auth: Buffer.from('u:p').toString('base64') } } })).toString('base64') } };
  const fake = (who: string): unknown => ({
    get: (ref: { namespace: string; name: string }) => {
      asked.push({ who, ref: `${ref.namespace}/${ref.name}` });
      if (who === 'manager') return Promise.resolve(good); // the manager could read it: it must not be the one asked
      if (ref.name === 'regcred' && ref.namespace === 'team-a') return Promise.resolve(good);
      return Promise.reject(new KubeApiError(403, 'Forbidden', `secrets "${ref.name}" is forbidden`));
    },
    impersonate: (i: { user: string }) => fake(i.user),
  });
  const client = fake('manager') as KubeClient;
  const bd = { apiVersion: 'binnacle.dev/v1alpha1', kind: 'BundleDeployment', metadata: { name: 'x' }, spec: { source: { type: 'image' as const }, format: 'plain' as const, installNamespace: 'team-a', serviceAccount: { name: 'installer' } } } as BundleDeployment;
  const reader = sourceSecretReader(client, bd);
  assert.equal(reader.identity, 'service account team-a/installer');
  const creds = await pullSecretCredentials(reader, { namespace: 'team-a', name: 'regcred' });
  assert.deepEqual(creds.get('r.example'), { username: 'u', password: 'p' });
  await assert.rejects(pullSecretCredentials(reader, { namespace: 'kube-system', name: 'cluster-admin-regcred' }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'SOURCE_SECRET_FORBIDDEN');
    assert.match(err.message, /^service account team-a\/installer may not read the pull secret Secret kube-system\/cluster-admin-regcred: grant it "get" on that Secret/);
    return true;
  });
  assert.deepEqual(asked, [
    { who: 'system:serviceaccount:team-a:installer', ref: 'team-a/regcred' },
    { who: 'system:serviceaccount:team-a:installer', ref: 'kube-system/cluster-admin-regcred' },
  ]);
  // No ServiceAccount named: Binnacle reads as itself, and says so.
  assert.match(sourceSecretReader(client, { ...bd, spec: { ...bd.spec, serviceAccount: undefined } }).identity, /^Binnacle's own service account/);
});

test('deleting a BundleDeployment whose ServiceAccount is gone waits, naming the account and the ways out; the orphan annotation lets it go, listing what stays', () => {
  const sa = { namespace: 'team-a', name: 'installer' };
  const leftBehind = ['Deployment team-a/op', 'ClusterRole op-manager', 'release records (Secrets team-a/sh.helm.release.v1.op.v*)'];
  const facts = { orphan: false, serviceAccount: sa, leftBehind };
  assert.deepEqual(decideDeletion(facts), { action: 'uninstall' });
  const gone = decideDeletion({ ...facts, removalForbidden: 'clusterroles "op-manager" is forbidden', accountExists: false });
  assert.equal(gone.action, 'wait');
  assert.ok(gone.action === 'wait' && gone.reason === 'ServiceAccountGone');
  assert.match(gone.action === 'wait' ? gone.message : '', /service account installer in namespace team-a is gone/);
  assert.match(gone.action === 'wait' ? gone.message : '', new RegExp(`Recreate the service account .* or set the annotation ${ANNOTATION_ORPHAN_ON_DELETE}: "true"`));
  const denied = decideDeletion({ ...facts, removalForbidden: 'forbidden', accountExists: true });
  assert.ok(denied.action === 'wait' && denied.reason === 'RemovalForbidden' && /service account team-a\/installer is not allowed/.test(denied.message));
  const noSa = decideDeletion({ ...facts, serviceAccount: undefined, removalForbidden: 'forbidden' });
  assert.ok(noSa.action === 'wait' && noSa.reason === 'RemovalForbidden' && /Binnacle's own service account/.test(noSa.message));
  // Orphaning wins whatever else is true, and says what it leaves.
  for (const extra of [{}, { removalForbidden: 'forbidden', accountExists: false }]) {
    const orphan = decideDeletion({ ...facts, ...extra, orphan: true });
    assert.equal(orphan.action, 'orphan');
    for (const o of leftBehind) assert.ok(orphan.action === 'orphan' && orphan.message.includes(o), o);
  }
  const many = decideDeletion({ ...facts, orphan: true, leftBehind: Array.from({ length: 25 }, (_, i) => `ConfigMap ns/c${i}`) });
  assert.ok(many.action === 'orphan' && /and 5 more$/.test(many.message));
});
