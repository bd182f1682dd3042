/**
 * What `binnacle install-self` puts into a cluster so the manager runs there: its namespace,
 * Binnacle's CRDs, a ServiceAccount with a least-privilege ClusterRole, a Role for its leader
 * election Lease, a Deployment (leader election, probes, metrics) and the Services of its catalog
 * API and metrics.
 *
 * The manager's own permissions are only what it does itself: Binnacle's APIs, reading what it
 * reports on, checking permissions (SubjectAccessReviews), and acting as each extension's
 * ServiceAccount (impersonation, with the groups the API server derives for that account).
 * Everything an install creates is created as that ServiceAccount, so a bundle never gets more
 * than the account it names was given.
 */
import { basename, dirname } from 'node:path';
import { ALL_CRDS } from '../api/crds.js';
import { OPERATOR_CONDITION_CRD } from '../api/operator-condition.js';
import { GROUP } from '../api/types.js';
import { AGGREGATE_TO_MANAGER, appTeamRoles, MANAGER_HELM_KINDS_ROLE } from '../api/app-team-role.js';
import type { KubeObject } from '../kube/types.js';
import { SERVICEACCOUNT_POLICY_NAME } from '../api/olmv1/serviceaccount-policy.js';
import { TWIN_POLICY_NAME } from '../api/olmv1/twin-policy.js';
import { INSECURE_REGISTRIES_ENV } from '../oci/registry-client.js';
import { DEFAULT_REGISTRIES_CONF } from '../oci/registries-conf.js';
import { LOG_LEVEL_ENV } from '../util/log-level.js';
import { CATALOG_TLS_DIR, CATALOG_TLS_SECRET } from './catalog-tls.js';

export const DEFAULT_SELF_NAMESPACE = 'binnacle-system';
export const MANAGER_NAME = 'binnacle-manager';
export const CATALOG_SERVICE = 'binnacle-catalogs';
export const METRICS_SERVICE = 'binnacle-manager-metrics';
export const LEADER_ELECTION_ROLE = 'binnacle-manager-leader-election';
/** `get` on Secrets in the manager's own namespace only: the public keys of ClusterCatalogs' and HelmOperators' `verify` policies. */
export const VERIFICATION_KEYS_ROLE = 'binnacle-manager-verification-keys';
/** The manager's own namespace holds the release records it trusts (apply/release-records.ts). */
export const RELEASE_RECORDS_ROLE = 'binnacle-manager-release-records';
/** The aggregated read-only role: the built-in `view` ClusterRole picks it up. */
export const VIEW_ROLE = 'binnacle-view';
/** The platform-protection policy the manager installs at start-up (actions/platform-protection). */
export const PROTECTION_POLICY = 'binnacle-platform-operator-extensions';
/** HTTPS, behind a TokenReview and SubjectAccessReview: read with a token bound to METRICS_READER_ROLE (as operator-controller's :8443). */
export const METRICS_PORT = 8443;
/** Plain /healthz and /readyz for the kubelet's probes (controller-runtime's :8081). */
export const PROBES_PORT = 8081;
/** Bind it to whoever scrapes the manager's /metrics (Prometheus's ServiceAccount), as operator-controller's `operator-controller-metrics-reader`. */
export const METRICS_READER_ROLE = `${MANAGER_NAME}-metrics-reader`;
export const CATALOG_PORT = 8083;
export const DATA_DIR = '/var/lib/binnacle';
/** The manager's memory request and limit (MiB): what its Deployment is scheduled with and killed above. */
export const MANAGER_MEMORY_REQUEST_MIB = 256;
export const MANAGER_MEMORY_LIMIT_MIB = 1024;
/** On the manager Deployment of an installation from a release (`install-self --version`): that version. */
export const ANNOTATION_RELEASE_VERSION = 'binnacle.dev/release-version';

/** The image `install-self` runs unless `--image` says otherwise. */
export const DEFAULT_SELF_IMAGE = 'ghcr.io/binnacle-dev/binnacle:0.1.0';

export const SELF_LABELS = { 'app.kubernetes.io/name': 'binnacle', 'app.kubernetes.io/part-of': 'binnacle', 'app.kubernetes.io/managed-by': 'binnacle-install-self' };
export const RESTRICTED_POD_SECURITY = { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' };
const POD_LABELS = { 'app.kubernetes.io/name': 'binnacle', 'app.kubernetes.io/component': 'manager' };

export interface SelfOptions {
  namespace?: string;
  image?: string;
  /** Image pull policy; IfNotPresent by default. */
  pullPolicy?: string;
  /** Registries the manager pulls catalogs and bundles from over plain http (its INSECURE_REGISTRIES_ENV). */
  insecureRegistries?: readonly string[];
  /** `<namespace>/<name>`: the manager's `--olmv1-installer` (docs/from-olm-v1.md, identity). */
  olmv1Installer?: string;
  /** The manager's `--olmv1-object-sets`: it serves OLM v1's ClusterObjectSet kind (applied as the olmv1Installer). */
  olmv1ObjectSets?: boolean;
  /** containers-registries.conf text: a ConfigMap mounted where the manager reads it (/etc/containers), as OLM v1's is. */
  registriesConf?: string;
  /** Manager Pods (default 1): one leads; the others serve the catalogs it resolved and take over when it goes. */
  replicas?: number;
  /** The manager's log level (its BINNACLE_LOG_LEVEL; default info): debug logs each reconcile's end. */
  logLevel?: string;
}

/** The ConfigMap `install-self --registries-conf` makes. */
export const REGISTRIES_CONF_CONFIGMAP = 'binnacle-registries-conf';

const RBAC = 'rbac.authorization.k8s.io/v1';
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete'];

/** The manager container's environment: plain-http registries, a log level; none by default. */
function managerEnv(o: SelfOptions): { env?: { name: string; value: string }[] } {
  const env = [
    ...(o.insecureRegistries === undefined || o.insecureRegistries.length === 0 ? [] : [{ name: INSECURE_REGISTRIES_ENV, value: o.insecureRegistries.join(',') }]),
    ...(o.logLevel === undefined ? [] : [{ name: LOG_LEVEL_ENV, value: o.logLevel }]),
  ];
  return env.length === 0 ? {} : { env };
}

/**
 * The manager's cluster-wide permissions: only what it does as itself, each rule with the code
 * that needs it. It never needs a wildcard: everything an install creates, reads for health or
 * removes is done as the install's ServiceAccount (impersonation), and everything it writes as
 * itself is named here. Secrets are absent on purpose: pull secrets and source credentials are
 * read as the installing ServiceAccount; the trusted release records are in the manager's own
 * namespace, granted by a Role there.
 */
export function managerClusterRules(namespace: string): Record<string, unknown>[] {
  return [
    // controllers/cluster-extension.ts creates, updates and deletes each extension's
    // BundleDeployments; bundle-deployment.ts keeps their finalizer.
    { apiGroups: [GROUP], resources: ['bundledeployments'], verbs: [...READ, ...WRITE] },
    // controllers/platform-operator.ts creates and deletes the ClusterExtensions of its packages;
    // cluster-extension.ts keeps their finalizer.
    { apiGroups: [GROUP], resources: ['clusterextensions'], verbs: [...READ, ...WRITE] },
    // controllers/cluster-olmv1-twin.ts makes, and deletes with it, the binnacle.dev twin of each
    // OLM v1 ClusterCatalog: the twin is as much the cluster admin's as the OLM v1 object it is
    // converted from (only whoever may write clustercatalogs.olm.operatorframework.io decides it).
    { apiGroups: [GROUP], resources: ['clustercatalogs'], verbs: [...READ, ...WRITE] },
    // Helm operators and platform operators are the cluster admin's to create and delete; the
    // manager reads them and keeps its finalizer on them (patch), nothing more.
    { apiGroups: [GROUP], resources: ['helmoperators', 'platformoperators'], verbs: [...READ, 'update', 'patch'] },
    // Status of every Binnacle kind (controllers/common.ts applyStatus: server-side apply on /status).
    {
      apiGroups: [GROUP],
      resources: ['bundledeployments/status', 'clusterextensions/status', 'clustercatalogs/status', 'helmoperators/status', 'platformoperators/status'],
      verbs: ['get', 'update', 'patch'],
    },
    // controllers/cluster-*-olmv1.ts: OLM v1's ClusterExtensions and ClusterCatalogs, read and watched,
    // their finalizer and catalogd's metadata.name label kept, their status written (crds.ts
    // installs their CRDs unless someone else owns them; the twins are binnacle.dev objects above).
    { apiGroups: ['olm.operatorframework.io'], resources: ['clusterextensions', 'clustercatalogs', 'clusterobjectsets'], verbs: [...READ, 'update', 'patch'] },
    { apiGroups: ['olm.operatorframework.io'], resources: ['clusterextensions/status', 'clustercatalogs/status', 'clusterobjectsets/status'], verbs: ['get', 'update', 'patch'] },
    // controllers/operator-conditions.ts: OLM's OperatorCondition, which it creates per operator and whose status it reads.
    { apiGroups: ['operators.coreos.com'], resources: ['operatorconditions', 'operatorconditions/status'], verbs: [...READ, ...WRITE] },
    // controllers/crds.ts keeps its own CRDs up to date at start-up; helm-operator.ts creates each
    // HelmOperator's kinds, and deletes them (only those labelled binnacle.dev/helm-operator with
    // its name, after every CR of theirs is uninstalled) when the HelmOperator goes; apply/ reads
    // every CRD (schemas, established, ownership).
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: [...READ, 'create', 'update', 'patch', 'delete'] },
    // controllers/helm-operator/helm-operator.ts makes two ClusterRoles per HelmOperator for the kinds it serves:
    // one aggregated to app teams (checked by escalationProblems first) and one to the manager's
    // own binnacle-manager-helm-kinds. Granting rights it does not hold yet needs `escalate`: the
    // kinds are made at run time. An admin's HelmOperator is what decides them.
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: [...READ, 'create', 'update', 'patch', 'delete', 'escalate'] },
    // actions/platform-protection.ts: the policy it keeps (a name can restrict update and patch, not create).
    { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'], verbs: [...READ, 'create'] },
    // …api/olmv1/serviceaccount-policy.ts: OLM v1's spec.serviceAccount deprecation warning (its chart's name);
    // and api/olmv1/twin-policy.ts: only the manager makes OLM v1 objects' twins.
    { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'], resourceNames: [PROTECTION_POLICY, SERVICEACCOUNT_POLICY_NAME, TWIN_POLICY_NAME], verbs: ['update', 'patch'] },
    // Installs act as each extension's ServiceAccount (preflight-permissions.ts impersonationFor:
    // the user name only, so no `impersonate` on groups or users); get tells whether it still exists.
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate', ...READ] },
    // preflight-permissions.ts asks, before installing, what the ServiceAccount may do; the
    // metrics server asks who a scraper's token is and whether it may read /metrics (metrics-auth.ts).
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    // The manager's own identity at start-up (who it runs as, for its log and the console).
    { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    // Reporting: events about its objects (kube/events.ts).
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    // OpenShift only: the ClusterVersion (olm.maxOpenShiftVersion) and its ClusterOperator (cluster-operator.ts).
    { apiGroups: ['config.openshift.io'], resources: ['clusterversions'], verbs: READ },
    { apiGroups: ['config.openshift.io'], resources: ['clusteroperators', 'clusteroperators/status'], verbs: [...READ, 'create', 'update', 'patch'] },
    // manager.ts applies its own namespace (where the leader-election Lease lives) at start-up.
    { apiGroups: [''], resources: ['namespaces'], resourceNames: [namespace], verbs: ['get', 'patch', 'update'] },
    // Install namespaces: whether they exist, and their labels (watch-namespace checks, the console).
    { apiGroups: [''], resources: ['namespaces'], verbs: READ },
    // Bundles and catalogs shipped in ConfigMaps (source/configmaps.ts, cluster-catalog.ts).
    { apiGroups: [''], resources: ['configmaps'], verbs: READ },
  ];
}

function meta(name: string, namespace?: string): KubeObject['metadata'] {
  return { name, ...(namespace === undefined ? {} : { namespace }), labels: { ...SELF_LABELS } };
}

/** Every object of the installation, in the order to apply them. */
export function selfManifests(o: SelfOptions = {}): KubeObject[] {
  const ns = o.namespace ?? DEFAULT_SELF_NAMESPACE;
  const image = o.image ?? DEFAULT_SELF_IMAGE;
  const crds = [...ALL_CRDS, OPERATOR_CONDITION_CRD].map((c) => ({ ...c, metadata: { ...c.metadata, labels: { ...(c.metadata.labels ?? {}), ...SELF_LABELS } } }));
  return [
    // The manager's Pod meets the restricted Pod Security profile: the namespace enforces it.
    { apiVersion: 'v1', kind: 'Namespace', metadata: { ...meta(ns), labels: { ...SELF_LABELS, ...RESTRICTED_POD_SECURITY } } },
    ...crds,
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(MANAGER_NAME, ns) },
    ...(o.registriesConf === undefined ? [] : [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(REGISTRIES_CONF_CONFIGMAP, ns), data: { [basename(DEFAULT_REGISTRIES_CONF)]: o.registriesConf } }]),
    { apiVersion: RBAC, kind: 'ClusterRole', metadata: meta(MANAGER_NAME), rules: managerClusterRules(ns) },
    {
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: meta(MANAGER_NAME),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: MANAGER_NAME },
      subjects: [{ kind: 'ServiceAccount', name: MANAGER_NAME, namespace: ns }],
    },
    { apiVersion: RBAC, kind: 'ClusterRole', metadata: meta(METRICS_READER_ROLE), rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
    // Who may read what Binnacle installed: get/list/watch of its kinds, added to the built-in
    // `view` role (and so to `edit` and `admin`), as operators ship aggregated roles. Changing
    // them installs software with a ServiceAccount's permissions, so none is aggregated for that.
    {
      apiVersion: RBAC,
      kind: 'ClusterRole',
      metadata: { ...meta(VIEW_ROLE), labels: { ...SELF_LABELS, 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [{ apiGroups: ['binnacle.dev'], resources: ['*'], verbs: READ }],
    },
    // The manager's rights over Helm operator kinds' custom resources, aggregated from each
    // HelmOperator's own labelled ClusterRole (controllers/helm-operator/helm-operator.ts).
    { apiVersion: RBAC, kind: 'ClusterRole', metadata: meta(MANAGER_HELM_KINDS_ROLE), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_TO_MANAGER]: 'true' } }] } },
    {
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: meta(MANAGER_HELM_KINDS_ROLE),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: MANAGER_HELM_KINDS_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: MANAGER_NAME, namespace: ns }],
    },
    // What a namespace admin binds (RoleBinding) for an app team: CRs of Helm operator kinds,
    // aggregated from each HelmOperator's own labelled ClusterRole (src/api/app-team-role.ts).
    ...(appTeamRoles(SELF_LABELS) as KubeObject[]),
    {
      apiVersion: RBAC,
      kind: 'Role',
      metadata: meta(LEADER_ELECTION_ROLE, ns),
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...READ, ...WRITE] }],
    },
    {
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: meta(LEADER_ELECTION_ROLE, ns),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: LEADER_ELECTION_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: MANAGER_NAME, namespace: ns }],
    },
    // The keys a ClusterCatalog's or a HelmOperator's `verify` names, which the manager reads as
    // itself (no installing identity pulls those): get, never list, and in its own namespace only.
    { apiVersion: RBAC, kind: 'Role', metadata: meta(VERIFICATION_KEYS_ROLE, ns), rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] },
    {
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: meta(VERIFICATION_KEYS_ROLE, ns),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: VERIFICATION_KEYS_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: MANAGER_NAME, namespace: ns }],
    },
    // The trusted release history (apply/release-records.ts): Secrets of the manager's own
    // namespace, written only by the manager, listed by their owner's UID label, collected when
    // their owner is gone (controllers/records-gc.ts). Its own namespace only.
    { apiVersion: RBAC, kind: 'Role', metadata: meta(RELEASE_RECORDS_ROLE, ns), rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'create', 'update', 'delete'] }] },
    {
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: meta(RELEASE_RECORDS_ROLE, ns),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: RELEASE_RECORDS_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: MANAGER_NAME, namespace: ns }],
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(MANAGER_NAME, ns),
      spec: {
        replicas: o.replicas ?? 1,
        // Every Pod is Ready while it leads or follows (both serve catalogs: catalog-follower.ts).
        // Recreate all the same: a new version never runs beside the old one, reading the status
        // the other writes; the old Pods go first, the leader releasing its Lease on SIGTERM.
        strategy: { type: 'Recreate' },
        selector: { matchLabels: POD_LABELS },
        template: {
          metadata: { labels: { ...POD_LABELS }, annotations: { 'kubectl.kubernetes.io/default-container': 'manager' } },
          spec: {
            serviceAccountName: MANAGER_NAME,
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'manager',
                image,
                imagePullPolicy: o.pullPolicy ?? 'IfNotPresent',
                ...managerEnv(o),
                args: [
                  'manager',
                  '--leader-elect',
                  `--leader-election-namespace=${ns}`,
                  // Metrics as operator-controller's: HTTPS (a certificate made at start), only for
                  // callers whose token may get /metrics; the probes apart, plain, for the kubelet.
                  `--metrics-bind-address=0.0.0.0:${METRICS_PORT}`,
                  '--metrics-secure',
                  '--metrics-require-rbac',
                  `--health-probe-bind-address=0.0.0.0:${PROBES_PORT}`,
                  `--catalog-bind-address=0.0.0.0:${CATALOG_PORT}`,
                  // A ClusterCatalog's status.urls.base names the Service, as catalogd's names catalogd-service,
                  // over HTTPS with the certificate install-self keeps in the Secret mounted below (catalog-tls.ts).
                  `--catalog-base-url=https://${CATALOG_SERVICE}.${ns}.svc`,
                  `--catalog-tls-cert=${CATALOG_TLS_DIR}/tls.crt`,
                  `--catalog-tls-key=${CATALOG_TLS_DIR}/tls.key`,
                  `--data-dir=${DATA_DIR}`,
                  ...(o.olmv1Installer === undefined ? [] : [`--olmv1-installer=${o.olmv1Installer}`]),
                  ...(o.olmv1ObjectSets === true ? ['--olmv1-object-sets'] : []),
                ],
                ports: [
                  { name: 'metrics', containerPort: METRICS_PORT },
                  { name: 'probes', containerPort: PROBES_PORT },
                  { name: 'catalogs', containerPort: CATALOG_PORT },
                ],
                readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, periodSeconds: 10 },
                livenessProbe: { httpGet: { path: '/healthz', port: 'probes' }, initialDelaySeconds: 15, periodSeconds: 20 },
                resources: { requests: { cpu: '100m', memory: `${MANAGER_MEMORY_REQUEST_MIB}Mi` }, limits: { memory: `${MANAGER_MEMORY_LIMIT_MIB}Mi` } },
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
                volumeMounts: [
                  { name: 'data', mountPath: DATA_DIR },
                  { name: 'tmp', mountPath: '/tmp' },
                  // The directory, not files (subPath): a renewed certificate reaches the manager, which reads it again.
                  { name: 'catalogs-tls', mountPath: CATALOG_TLS_DIR, readOnly: true },
                  // The directory, not the file (subPath): an edited ConfigMap reaches the manager, which reads the file again when it changes.
                  ...(o.registriesConf === undefined ? [] : [{ name: 'registries-conf', mountPath: dirname(DEFAULT_REGISTRIES_CONF), readOnly: true }]),
                ],
              },
            ],
            volumes: [
              { name: 'data', emptyDir: {} },
              { name: 'tmp', emptyDir: {} },
              // The serving certificate and its key only: not the CA's key, which install-self alone uses.
              { name: 'catalogs-tls', secret: { secretName: CATALOG_TLS_SECRET, items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key' }] } },
              ...(o.registriesConf === undefined ? [] : [{ name: 'registries-conf', configMap: { name: REGISTRIES_CONF_CONFIGMAP } }]),
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(CATALOG_SERVICE, ns),
      spec: { selector: POD_LABELS, ports: [{ name: 'https', port: 443, targetPort: 'catalogs' }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(METRICS_SERVICE, ns),
      spec: { selector: POD_LABELS, ports: [{ name: 'metrics', port: METRICS_PORT, targetPort: 'metrics' }] },
    },
  ];
}
