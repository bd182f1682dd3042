import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AGGREGATE_TO_APP_TEAM, escalationProblems, helmKindsAppTeamRole, type RoleLike } from './app-team-role.js';

const role = (rules: RoleLike['rules'], extra: Partial<RoleLike> = {}): RoleLike => ({ metadata: { name: 'r' }, rules, ...extra });

test("a HelmOperator's kinds role lets a team create and edit its CRs, reads status only, and passes the check", () => {
  const r = helmKindsAppTeamRole('binnacle-helm-memcached', [{ group: 'cache.example.com', plural: 'memcacheds' }]);
  assert.equal(r.metadata?.labels?.[AGGREGATE_TO_APP_TEAM], 'true');
  assert.deepEqual(r.rules, [
    { apiGroups: ['cache.example.com'], resources: ['memcacheds'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    { apiGroups: ['cache.example.com'], resources: ['memcacheds/status'], verbs: ['get', 'list', 'watch'] },
  ]);
  assert.deepEqual(escalationProblems(r), []);
  // A HelmOperator that names an admin group for its kind is caught by the same check.
  assert.notDeepEqual(escalationProblems(helmKindsAppTeamRole('x', [{ group: 'rbac.authorization.k8s.io', plural: 'roles' }])), []);
});

test('escalationProblems fails on every way a role could escalate', () => {
  const bad: [string, RoleLike, RegExp][] = [
    ['escalate', role([{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] }]), /verb "escalate"/],
    ['bind', role([{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'] }]), /verb "bind"/],
    ['impersonate', role([{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] }]), /verb "impersonate"/],
    ['approve CSRs', role([{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], verbs: ['approve'] }]), /verb "approve"/],
    ['verb *', role([{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }]), /verb "\*"/],
    ['resource *', role([{ apiGroups: ['apps'], resources: ['*'], verbs: ['get'] }]), /resource wildcard/],
    ['subresource *', role([{ apiGroups: ['apps'], resources: ['deployments/*'], verbs: ['get'] }]), /resource wildcard/],
    ['group *', role([{ apiGroups: ['*'], resources: ['widgets'], verbs: ['get'] }]), /apiGroup "\*"/],
    ['write Roles', role([{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create'] }]), /writes \(create\) to rbac\.authorization\.k8s\.io/],
    ['write CRDs', role([{ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['patch'] }]), /to apiextensions\.k8s\.io/],
    ['write webhooks', role([{ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], verbs: ['delete'] }]), /to admissionregistration\.k8s\.io/],
    ...(['clusterextensions', 'bundledeployments', 'clustercatalogs', 'helmoperators', 'platformoperators'] as const).map(
      (r): [string, RoleLike, RegExp] => [`write ${r}`, role([{ apiGroups: ['binnacle.dev'], resources: [r], verbs: ['update'] }]), new RegExp(`${r}\\.binnacle\\.dev, a cluster admin's API`)],
    ),
    // OLM v1's kinds, served through the same engine: the same power as Binnacle's own.
    ...(['clusterextensions', 'clustercatalogs', 'clusterextensions/status'] as const).map(
      (r): [string, RoleLike, RegExp] => [`write ${r} of OLM v1`, role([{ apiGroups: ['olm.operatorframework.io'], resources: [r], verbs: ['create'] }]), new RegExp(`${r}\\.olm\\.operatorframework\\.io, a cluster admin's API`)],
    ),
    ['write every OLM v1 resource', role([{ apiGroups: ['olm.operatorframework.io'], resources: ['*'], verbs: ['patch'] }]), /\*\.olm\.operatorframework\.io, a cluster admin's API/],
    ['write HelmOperator status', role([{ apiGroups: ['binnacle.dev'], resources: ['helmoperators/status'], verbs: ['patch'] }]), /helmoperators\/status\.binnacle\.dev/],
    ['read secrets', role([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]), /secrets \(get\)/],
    ['list secrets', role([{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }]), /secrets \(list\)/],
    ['mint tokens', role([{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] }]), /mints tokens/],
    ['non-resource URLs', role([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]), /nonResourceURLs/],
    ['aggregates everything', role([], { aggregationRule: { clusterRoleSelectors: [{}] } }), /must select exactly binnacle\.dev\/aggregate-to-app-team/],
    ['aggregates admin', role([], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }] } }), /must select exactly/],
    ['aggregates with more', role([], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_TO_APP_TEAM]: 'true' }, matchExpressions: [{ key: 'x', operator: 'Exists' }] }] } }), /must select exactly/],
  ];
  for (const [what, r, why] of bad) {
    const problems = escalationProblems(r);
    assert.ok(problems.length > 0, `${what}: no problem found`);
    assert.ok(problems.some((p) => why.test(p)), `${what}: ${JSON.stringify(problems)}`);
  }
  // Reading the admin APIs and writing a namespaced kind is fine.
  assert.deepEqual(escalationProblems(role([{ apiGroups: ['binnacle.dev'], resources: ['clusterextensions'], verbs: ['get', 'list', 'watch'] }, { apiGroups: ['cache.example.com'], resources: ['memcacheds'], verbs: ['create'] }])), []);
  assert.deepEqual(escalationProblems(role([{ apiGroups: ['olm.operatorframework.io'], resources: ['clusterextensions', 'clustercatalogs'], verbs: ['get', 'list', 'watch'] }])), []);
});
