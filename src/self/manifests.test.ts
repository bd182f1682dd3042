import { test } from 'node:test';
import assert from 'node:assert/strict';
import { managerClusterRules, selfManifests } from './manifests.js';
import { AGGREGATE_TO_APP_TEAM, APP_TEAM_ROLE, escalationProblems, type RoleLike } from '../api/app-team-role.js';
import type { KubeObject } from '../kube/types.js';
import { isRecord } from '../util/object.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const stringList = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.filter((x): x is string => typeof x === 'string') : undefined);

/** A role's rules as written, checked: each names its apiGroups, resources and verbs as lists of strings, or its nonResourceURLs and verbs. */
function rulesOf(value: unknown): Rule[] {
  assert.ok(Array.isArray(value), 'rules: a list');
  return value.map((r: unknown) => {
    assert.ok(isRecord(r), 'a rule: an object');
    const urls = stringList(r.nonResourceURLs);
    if (urls !== undefined) {
      const verbs = stringList(r.verbs);
      assert.ok(verbs !== undefined && r.apiGroups === undefined && r.resources === undefined, `a non-resource rule names its URLs and verbs only: ${JSON.stringify(r)}`);
      return { apiGroups: [], resources: [], verbs, nonResourceURLs: urls };
    }
    const [apiGroups, resources, verbs, resourceNames] = [stringList(r.apiGroups), stringList(r.resources), stringList(r.verbs), stringList(r.resourceNames)];
    assert.ok(apiGroups !== undefined && resources !== undefined && verbs !== undefined, `a rule names its apiGroups, resources and verbs: ${JSON.stringify(r)}`);
    return { apiGroups, resources, verbs, ...(resourceNames === undefined ? {} : { resourceNames }) };
  });
}

/** An object of the manifests as a role, its rules checked (none when it has none). */
function roleOf(o: KubeObject): Omit<RoleLike, 'rules'> & { kind: string; rules: Rule[] } {
  return { kind: o.kind, metadata: { ...(o.metadata.name === undefined ? {} : { name: o.metadata.name }), ...(o.metadata.labels === undefined ? {} : { labels: o.metadata.labels }) }, rules: o.rules === undefined ? [] : rulesOf(o.rules) };
}

test("the manager's ClusterRole grants nothing an install needs: no Secrets, workloads, RBAC or group impersonation", () => {
  const rules = rulesOf(managerClusterRules('binnacle-system'));
  const grants = (group: string, resource: string, verb: string): boolean =>
    rules.some((r) => r.apiGroups.includes(group) && (r.resources.includes(resource) || r.resources.includes('*')) && (r.verbs.includes(verb) || r.verbs.includes('*')) && r.resourceNames === undefined);
  for (const [group, resource, verb] of [
    ['', 'secrets', 'get'],
    ['', 'secrets', 'list'],
    ['apps', 'deployments', 'create'],
    ['rbac.authorization.k8s.io', 'clusterrolebindings', 'create'],
    ['', 'groups', 'impersonate'],
    ['', 'users', 'impersonate'],
    ['', 'namespaces', 'patch'],
  ] as const) {
    assert.equal(grants(group, resource, verb), false, `${verb} ${resource}`);
  }
  assert.equal(grants('', 'serviceaccounts', 'impersonate'), true);
  assert.ok(rules.every((r) => !r.verbs.includes('*')), 'no wildcard verbs');
});

test('install-self objects: the image chosen, leader election, probes, the catalog Service, the namespace first', () => {
  const objs = selfManifests({ namespace: 'ops', image: 'registry.example/binnacle@sha256:' + 'a'.repeat(64) });
  assert.equal(objs[0]?.kind, 'Namespace');
  assert.equal(objs[0]?.metadata.name, 'ops');
  const d = objs.find((o) => o.kind === 'Deployment') as { spec: { template: { spec: { serviceAccountName: string; containers: { image: string; args: string[]; readinessProbe?: unknown; livenessProbe?: unknown }[] } } } } | undefined;
  const c = d?.spec.template.spec.containers[0];
  assert.equal(c?.image, 'registry.example/binnacle@sha256:' + 'a'.repeat(64));
  assert.ok(c?.args.includes('--leader-elect') && c.args.includes('--leader-election-namespace=ops'));
  assert.ok(c?.readinessProbe !== undefined && c.livenessProbe !== undefined);
  assert.equal(d?.spec.template.spec.serviceAccountName, 'binnacle-manager');
  assert.ok(objs.some((o) => o.kind === 'Service' && o.metadata.name === 'binnacle-catalogs' && o.metadata.namespace === 'ops'));
  assert.ok(objs.some((o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'clusterextensions.binnacle.dev'));
});

test("Binnacle's kinds are readable by whoever has the built-in view role (aggregated), and by it nothing can be changed", () => {
  const view = selfManifests().find((o) => o.kind === 'ClusterRole' && o.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-view'] === 'true') as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] } | undefined;
  assert.ok(view !== undefined, 'an aggregate-to-view ClusterRole');
  assert.deepEqual(view.rules, [{ apiGroups: ['binnacle.dev'], resources: ['*'], verbs: ['get', 'list', 'watch'] }]);
  assert.ok(!selfManifests().some((o) => o.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-edit'] === 'true' || o.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-admin'] === 'true'));
});

test('install-self ships the app-team role: aggregating only app-team roles, and every role in it passes the escalation check', () => {
  const written = selfManifests();
  const objs = written.map(roleOf);
  const team = objs.find((o) => o.kind === 'ClusterRole' && o.metadata?.name === APP_TEAM_ROLE);
  assert.ok(team !== undefined, `install-self has ClusterRole ${APP_TEAM_ROLE}`);
  assert.deepEqual(written.find((o) => o.kind === 'ClusterRole' && o.metadata.name === APP_TEAM_ROLE)?.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_TO_APP_TEAM]: 'true' } }] });
  const aggregated = objs.filter((o) => o.kind === 'ClusterRole' && o.metadata?.labels?.[AGGREGATE_TO_APP_TEAM] === 'true');
  assert.ok(aggregated.length > 0, 'base rules are aggregated in');
  for (const r of [team, ...aggregated]) assert.deepEqual(escalationProblems(r), [], r.metadata?.name);
  const granted = aggregated.flatMap((r) => r.rules);
  assert.ok(granted.some((r) => r.apiGroups?.includes('binnacle.dev') && r.resources?.includes('helmoperators') && r.verbs?.includes('list')), 'reads HelmOperators');
});

test("the manager's ClusterRole names every resource: no wildcard, and no create or delete of the cluster admin's kinds", () => {
  const rules = rulesOf(managerClusterRules('binnacle-system'));
  for (const r of rules) {
    assert.ok(!r.resources.some((x) => x === '*' || x.includes('*')), `no resource wildcard: ${JSON.stringify(r)}`);
    assert.ok(!r.apiGroups.includes('*'), `no group wildcard: ${JSON.stringify(r)}`);
    assert.ok(!r.verbs.some((v) => ['bind', 'impersonate', '*'].includes(v)) || (r.verbs.includes('impersonate') && r.resources.join() === 'serviceaccounts'), `no bind, no impersonation but of ServiceAccounts: ${JSON.stringify(r)}`);
    // escalate only to make a HelmOperator's two ClusterRoles for kinds made at run time.
    if (r.verbs.includes('escalate')) assert.deepEqual([r.apiGroups, r.resources], [['rbac.authorization.k8s.io'], ['clusterroles']], JSON.stringify(r));
  }
  const may = (resource: string, verb: string): boolean => rules.some((r) => r.apiGroups.includes('binnacle.dev') && r.resources.includes(resource) && r.verbs.includes(verb));
  for (const kind of ['helmoperators', 'platformoperators']) {
    for (const verb of ['create', 'delete']) assert.equal(may(kind, verb), false, `${verb} ${kind}`);
    assert.equal(may(kind, 'patch'), true, `patch ${kind} (its finalizer)`);
    assert.equal(may(`${kind}/status`, 'patch'), true, `patch ${kind}/status`);
  }
  // BundleDeployments and ClusterExtensions are made by the manager (an extension's, a platform
  // operator's); ClusterCatalogs as the twins of OLM v1's (cluster-olmv1-twin.ts), which an
  // in-cluster manager could not make before (the OLM v1 catalog stayed Retrying, forbidden).
  for (const kind of ['bundledeployments', 'clusterextensions', 'clustercatalogs']) for (const verb of ['create', 'delete', 'patch']) assert.equal(may(kind, verb), true, `${verb} ${kind}`);
  assert.ok(!rules.some((r) => r.apiGroups.includes('rbac.authorization.k8s.io') && r.resources.some((x) => x.includes('binding')) && r.verbs.some((v) => v !== 'get' && v !== 'list' && v !== 'watch')), 'never writes a binding');
});

test("the manager's Secret rights are in its own namespace only: verification keys (get) and its trusted release records (no watch, no patch), none cluster-wide", () => {
  const objs = selfManifests({ namespace: 'ops' });
  const roles = objs.filter((o) => o.kind === 'Role' && JSON.stringify(o).includes('"secrets"'));
  assert.deepEqual(roles.map((o) => o.metadata.namespace), ['ops', 'ops']);
  assert.deepEqual(roles.map((o) => [o.metadata.name, roleOf(o).rules]), [
    ['binnacle-manager-verification-keys', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]],
    ['binnacle-manager-release-records', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'create', 'update', 'delete'] }]],
  ]);
  for (const role of roles) {
    const binding = objs.find((o) => o.kind === 'RoleBinding' && o.metadata.name === role.metadata.name && o.metadata.namespace === 'ops');
    assert.ok(binding !== undefined, `${role.metadata.name ?? ''} is bound in its namespace`);
  }
  assert.ok(!objs.some((o) => o.kind === 'ClusterRole' && roleOf(o).rules.some((r) => r.resources.includes('secrets') && r.resourceNames === undefined)), 'no cluster-wide Secret access');
});

test("the manager's metrics as operator-controller's: HTTPS behind a token review on their own port, probes apart on plain HTTP, a reader role that grants get on /metrics and nothing else", () => {
  const objs = selfManifests({ namespace: 'ops' });
  type Container = { args: string[]; ports: { name: string; containerPort: number }[]; readinessProbe: { httpGet: { port: string } }; livenessProbe: { httpGet: { port: string } } };
  const d = objs.find((o) => o.kind === 'Deployment') as { spec: { strategy: unknown; template: { spec: { containers: Container[] } } } } | undefined;
  const c = d?.spec.template.spec.containers[0];
  assert.ok(c !== undefined);
  for (const flag of ['--metrics-bind-address=0.0.0.0:8443', '--metrics-secure', '--metrics-require-rbac', '--health-probe-bind-address=0.0.0.0:8081']) assert.ok(c.args.includes(flag), flag);
  assert.deepEqual([c.readinessProbe.httpGet.port, c.livenessProbe.httpGet.port], ['probes', 'probes']);
  assert.deepEqual(c.ports.filter((p) => p.name !== 'catalogs'), [{ name: 'metrics', containerPort: 8443 }, { name: 'probes', containerPort: 8081 }]);
  // A new version never runs beside the old one: the old Pods go first.
  assert.deepEqual(d?.spec.strategy, { type: 'Recreate' });
  const svc = objs.find((o) => o.kind === 'Service' && o.metadata.name === 'binnacle-manager-metrics') as { spec: { ports: unknown[] } } | undefined;
  assert.deepEqual(svc?.spec.ports, [{ name: 'metrics', port: 8443, targetPort: 'metrics' }]);
  const reader = objs.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'binnacle-manager-metrics-reader');
  assert.ok(reader !== undefined);
  assert.deepEqual(roleOf(reader).rules, [{ apiGroups: [], resources: [], verbs: ['get'], nonResourceURLs: ['/metrics'] }]);
  const rules = rulesOf(managerClusterRules('ops'));
  assert.ok(rules.some((r) => r.apiGroups.includes('authentication.k8s.io') && r.resources.includes('tokenreviews') && r.verbs.join() === 'create'), 'the manager may ask who a token is');
});

test("install-self --insecure-registry: the manager's environment names those registries for plain http; none, no environment", () => {
  type Dep = { spec: { template: { spec: { containers: { env?: { name: string; value: string }[] }[] } } } };
  const container = (o: Parameters<typeof selfManifests>[0]): { env?: { name: string; value: string }[] } | undefined =>
    (selfManifests(o).find((x) => x.kind === 'Deployment') as Dep | undefined)?.spec.template.spec.containers[0];
  assert.deepEqual(container({ insecureRegistries: ['10.244.7.1:5000', 'registry.lab'] })?.env, [{ name: 'BINNACLE_INSECURE_REGISTRIES', value: '10.244.7.1:5000,registry.lab' }]);
  assert.equal(container({})?.env, undefined);
  assert.equal(container({ insecureRegistries: [] })?.env, undefined);
});

test("install-self --olmv1-installer and --olmv1-object-sets: the manager's flags of the same names; neither given, neither flag", () => {
  type Dep = { spec: { template: { spec: { containers: { args: string[] }[] } } } };
  const args = (o: Parameters<typeof selfManifests>[0]): string[] => (selfManifests(o).find((x) => x.kind === 'Deployment') as Dep | undefined)?.spec.template.spec.containers[0]?.args ?? [];
  const given = args({ olmv1Installer: 'olmv1-installer/installer', olmv1ObjectSets: true });
  assert.ok(given.includes('--olmv1-installer=olmv1-installer/installer'), given.join(' '));
  assert.ok(given.includes('--olmv1-object-sets'), given.join(' '));
  assert.deepEqual(args({}).filter((a) => a.startsWith('--olmv1')), []);
  assert.deepEqual(args({ olmv1ObjectSets: false }).filter((a) => a.startsWith('--olmv1')), []);
});

test("install-self --registries-conf: a ConfigMap mounted (the directory, so an edit reaches the manager) where OLM v1's is read; none, neither", () => {
  type Dep = { spec: { template: { spec: { containers: { volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[]; volumes: { name: string; configMap?: { name: string } }[] } } } };
  const text = '[[registry]]\nprefix = "quay.io"\n[[registry.mirror]]\nlocation = "mirror.lab:5000/quay"\n';
  const objs = selfManifests({ namespace: 'ops', registriesConf: text });
  const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'binnacle-registries-conf');
  assert.equal(cm?.metadata.namespace, 'ops');
  assert.deepEqual(cm?.data, { 'registries.conf': text });
  const pod = (objs.find((o) => o.kind === 'Deployment') as Dep | undefined)?.spec.template.spec;
  assert.ok(pod !== undefined);
  assert.deepEqual(pod.containers[0]?.volumeMounts.find((m) => m.name === 'registries-conf'), { name: 'registries-conf', mountPath: '/etc/containers', readOnly: true });
  assert.deepEqual(pod.volumes.find((v) => v.name === 'registries-conf'), { name: 'registries-conf', configMap: { name: 'binnacle-registries-conf' } });
  const plain = selfManifests({ namespace: 'ops' });
  assert.ok(!plain.some((o) => o.kind === 'ConfigMap'));
  assert.ok(!JSON.stringify(plain).includes('registries-conf'));
});

test("the in-cluster manager's catalogs answer at its Service's name over HTTPS: status.urls.base is https://binnacle-catalogs.<namespace>.svc/catalogs/<name>, the Service's port 443 reaching the catalog port, the certificate from install-self's Secret (its serving pair only, not the CA key)", () => {
  type Dep = { spec: { template: { spec: { containers: { args: string[]; ports: { name: string; containerPort: number }[]; volumeMounts: { name: string; mountPath: string; subPath?: string }[] }[]; volumes: { name: string; secret?: { secretName: string; items: { key: string; path: string }[] } }[] } } } };
  const objs = selfManifests({ namespace: 'ops' });
  const pod = (objs.find((x) => x.kind === 'Deployment') as Dep | undefined)?.spec.template.spec;
  const container = pod?.containers[0];
  assert.ok(container?.args.includes('--catalog-base-url=https://binnacle-catalogs.ops.svc'), JSON.stringify(container?.args));
  assert.ok(container?.args.includes('--catalog-tls-cert=/etc/binnacle/catalogs-tls/tls.crt'), JSON.stringify(container?.args));
  assert.ok(container?.args.includes('--catalog-tls-key=/etc/binnacle/catalogs-tls/tls.key'), JSON.stringify(container?.args));
  const svc = objs.find((o) => o.kind === 'Service' && o.metadata.name === 'binnacle-catalogs') as { spec: { ports: { port: number; targetPort: string }[] } } | undefined;
  assert.deepEqual(svc?.spec.ports.map((p) => [p.port, p.targetPort]), [[443, 'catalogs']]);
  assert.ok(container?.ports.some((p) => p.name === 'catalogs'));
  const mount = container?.volumeMounts.find((m) => m.mountPath === '/etc/binnacle/catalogs-tls');
  assert.equal(mount?.subPath, undefined, 'the directory, so a renewed Secret reaches the Pod');
  const volume = pod?.volumes.find((v) => v.name === mount?.name);
  assert.deepEqual(volume?.secret, { secretName: 'binnacle-catalogs-tls', items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key' }] });
});

test('install-self --replicas: the manager Deployment runs that many Pods (one leads, the others serve catalogs), one by default', () => {
  const replicasOf = (o: Parameters<typeof selfManifests>[0]): unknown => (selfManifests(o).find((x) => x.kind === 'Deployment')?.spec as { replicas?: unknown } | undefined)?.replicas;
  assert.equal(replicasOf({ namespace: 'ops' }), 1);
  assert.equal(replicasOf({ namespace: 'ops', replicas: 3 }), 3);
});

test("install-self --log-level: the manager's BINNACLE_LOG_LEVEL, beside its plain-http registries; no environment by default", () => {
  const envOf = (o: Parameters<typeof selfManifests>[0]): unknown => (selfManifests(o).find((x) => x.kind === 'Deployment')?.spec as { template: { spec: { containers: { env?: unknown }[] } } }).template.spec.containers[0]?.env;
  assert.equal(envOf({ namespace: 'ops' }), undefined);
  assert.deepEqual(envOf({ namespace: 'ops', logLevel: 'debug' }), [{ name: 'BINNACLE_LOG_LEVEL', value: 'debug' }]);
  assert.deepEqual(envOf({ namespace: 'ops', logLevel: 'debug', insecureRegistries: ['10.0.0.1:5000'] }), [{ name: 'BINNACLE_INSECURE_REGISTRIES', value: '10.0.0.1:5000' }, { name: 'BINNACLE_LOG_LEVEL', value: 'debug' }]);
});
