/**
 * registry+v1 → plain Kubernetes objects, as OLM installs a bundle (operator-controller's
 * registry+v1 renderer, which keeps parity with OLM v0). A list of generators runs over the
 * bundle and options, in the order objects should appear:
 * ServiceAccounts, Roles/RoleBindings, ClusterRoles/ClusterRoleBindings, CRDs, other
 * manifests, Deployments, webhook configurations, webhook Services, certificate Secrets.
 * Output is deterministic: the same bundle and options give byte-identical objects.
 */
import { BinnacleError, ValidationResult, ValidationError } from '../util/errors.js';
import type { CertProvider, ServingCert } from './certs.js';
import { crdToV1 } from './crd-v1.js';
import type { JsonObject } from './decode.js';
import { isRecord } from '../util/object.js';
import { checkInstallMode, targetNamespaces, type InstallModeType } from './install-modes.js';
import { certSecretName, permissionObjectName, webhookServiceName } from './names.js';
import { applyOverrides, type DeploymentOverrides } from './overrides.js';
import { renderChecks } from './render-checks.js';
import { kindSupport } from './supported-kinds.js';
import type { RegistryV1Bundle, StrategyPermission, WebhookDescription } from './types.js';

export interface ConvertOptions {
  installNamespace: string;
  /** Namespaces the operator watches; `[]` or `['']` means all namespaces. */
  watchNamespaces: string[];
  overrides?: DeploymentOverrides;
  /** Issues webhook serving certificates; without one, no certificates are wired in. */
  certProvider?: CertProvider;
}

export interface PlainObjects {
  installMode: InstallModeType;
  targetNamespaces: string[];
  objects: JsonObject[];
}

interface Ctx {
  bundle: RegistryV1Bundle;
  ns: string;
  targets: string[];
  allNamespaces: boolean;
  opts: ConvertOptions;
  certs: Map<string, ServingCert>;
}

type Generator = (ctx: Ctx) => JsonObject[];

const CERT_VOLUMES = [
  { name: 'webhook-cert', path: '/tmp/k8s-webhook-server/serving-certs', cert: 'tls.crt', key: 'tls.key' },
  { name: 'apiservice-cert', path: '/apiserver.local.config/certificates', cert: 'apiserver.crt', key: 'apiserver.key' },
];

const GENERATORS: Generator[] = [
  serviceAccounts,
  roles,
  clusterRoles,
  crds,
  additionalObjects,
  deployments,
  (c) => webhookConfigurations(c, 'ValidatingAdmissionWebhook'),
  (c) => webhookConfigurations(c, 'MutatingAdmissionWebhook'),
  webhookServices,
  apiServices,
  certSecrets,
];

/** Deployments that serve webhooks or owned API services, and so need a serving certificate. */
export function certDeployments(bundle: RegistryV1Bundle): string[] {
  const names = [...bundle.csv.webhooks.map((w) => w.deploymentName), ...bundle.csv.ownedAPIServices.map((a) => a.deploymentName ?? '')];
  return [...new Set(names.filter((n) => n !== ''))].sort();
}

export function convertRegistryV1(bundle: RegistryV1Bundle, opts: ConvertOptions): PlainObjects {
  if (opts.installNamespace === '') throw new BinnacleError('input', 'BUNDLE_NO_NAMESPACE', 'an install namespace is required');
  const problems = renderChecks(bundle);
  if (problems.length > 0) {
    const r = new ValidationResult(`bundle ${bundle.name} cannot be installed`);
    for (const p of problems) r.add(p);
    throw new ValidationError(r);
  }
  const targets = targetNamespaces(opts.watchNamespaces);
  const installMode = checkInstallMode(bundle, opts.installNamespace, targets);
  const certs = new Map<string, ServingCert>();
  if (opts.certProvider !== undefined) {
    for (const svc of new Set(certDeployments(bundle).map(webhookServiceName))) {
      certs.set(svc, opts.certProvider.servingCert({ serviceName: svc, namespace: opts.installNamespace }));
    }
  }
  const ctx: Ctx = { bundle, ns: opts.installNamespace, targets, allNamespaces: installMode === 'AllNamespaces', opts, certs };
  return { installMode, targetNamespaces: targets, objects: GENERATORS.flatMap((g) => g(ctx)) };
}

function saName(p: StrategyPermission): string {
  return p.serviceAccountName === '' ? 'default' : p.serviceAccountName;
}

function meta(name: string, namespace?: string, extra: JsonObject = {}): JsonObject {
  return { name, ...(namespace === undefined ? {} : { namespace }), ...extra };
}

function serviceAccounts(c: Ctx): JsonObject[] {
  const names = new Set([...c.bundle.csv.permissions, ...c.bundle.csv.clusterPermissions].map(saName));
  names.delete('default');
  return [...names].sort().map((n) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(n, c.ns) }));
}

function subject(c: Pick<Ctx, 'ns'>, p: StrategyPermission): JsonObject {
  return { kind: 'ServiceAccount', name: saName(p), namespace: c.ns };
}

function roles(c: Ctx): JsonObject[] {
  if (c.allNamespaces) return [];
  return c.targets.flatMap((ns) => rolesIn(c, ns));
}

/** The CSV's namespaced permissions as a Role and RoleBinding each in `ns`. */
function rolesIn(c: Pick<Ctx, 'bundle' | 'ns'>, ns: string): JsonObject[] {
  return c.bundle.csv.permissions.flatMap((p) => {
    const name = permissionObjectName(`${c.bundle.name}-${saName(p)}`, p);
    return [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta(name, ns), rules: structuredClone(p.rules) },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: meta(name, ns),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [subject(c, p)],
      },
    ];
  });
}

/**
 * The CSV's namespaced permissions in the operator's own namespace when it watches others
 * (SingleNamespace, MultiNamespace): OLM v0 grants them there first (its install strategy) and
 * copies them to the target namespaces (OperatorGroup); OLM v1 (and convertRegistryV1, its
 * twin) only to the targets. Operators keep their leader-election lock, caches and (Binnacle's
 * Helm operators) trusted release records in their own namespace, so Binnacle's render adds them,
 * as v0. Empty when the install namespace is a target or the operator watches all namespaces.
 */
export function ownNamespaceRoles(bundle: RegistryV1Bundle, installNamespace: string, converted: Pick<PlainObjects, 'installMode' | 'targetNamespaces'>): JsonObject[] {
  if (converted.installMode === 'AllNamespaces' || converted.targetNamespaces.includes(installNamespace)) return [];
  return rolesIn({ bundle, ns: installNamespace }, installNamespace);
}

function clusterRoles(c: Ctx): JsonObject[] {
  const perms = [...c.bundle.csv.clusterPermissions];
  if (c.allNamespaces) {
    // OLM lifts namespaced permissions to cluster scope and lets the operator list namespaces.
    for (const p of c.bundle.csv.permissions) {
      perms.push({ ...p, rules: [...p.rules, { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['namespaces'] }] });
    }
  }
  return perms.flatMap((p) => {
    const name = permissionObjectName(`${c.bundle.name}-${saName(p)}`, p);
    return [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta(name), rules: structuredClone(p.rules) },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: meta(name),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [subject(c, p)],
      },
    ];
  });
}

function caBundle(c: Ctx, deploymentName: string): string | undefined {
  const cert = c.certs.get(webhookServiceName(deploymentName));
  return cert === undefined ? undefined : Buffer.from(cert.caPem).toString('base64');
}

function crds(c: Ctx): JsonObject[] {
  const byCrd = new Map<string, WebhookDescription>();
  for (const w of c.bundle.csv.webhooks) if (w.type === 'ConversionWebhook') for (const n of w.conversionCRDs) byCrd.set(n, w);
  return c.bundle.crds.map((m) => {
    const crd = crdToV1(m.object);
    const w = byCrd.get(m.name);
    if (w === undefined) return crd;
    const spec = isRecord(crd.spec) ? crd.spec : {};
    if (spec.preserveUnknownFields === true || (m.apiVersion.endsWith('v1beta1') && isRecord(m.object.spec) && m.object.spec.preserveUnknownFields !== false)) {
      throw new BinnacleError(
        'input',
        'BUNDLE_CONVERSION_WEBHOOK',
        `${m.file}: spec.preserveUnknownFields: must be false for CRD "${m.name}" to use conversion webhook "${w.generateName}"`,
      );
    }
    const ca = caBundle(c, w.deploymentName);
    spec.conversion = {
      strategy: 'Webhook',
      webhook: {
        clientConfig: {
          service: { namespace: c.ns, name: webhookServiceName(w.deploymentName), path: w.webhookPath ?? '/', port: w.containerPort },
          ...(ca === undefined ? {} : { caBundle: ca }),
        },
        conversionReviewVersions: stringList(w.raw.admissionReviewVersions),
      },
    };
    return crd;
  });
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function additionalObjects(c: Ctx): JsonObject[] {
  // A ServiceAccount the CSV already creates would be the same object twice; validation reports it.
  const generated = new Set([...c.bundle.csv.permissions, ...c.bundle.csv.clusterPermissions].map(saName));
  const others = c.bundle.others.filter((o) => !(o.kind === 'ServiceAccount' && generated.has(o.name)));
  return others.map((o) => {
    const obj = structuredClone(o.object);
    if (kindSupport(o.kind).namespaced) {
      const m = isRecord(obj.metadata) ? obj.metadata : (obj.metadata = {});
      m.namespace = c.ns;
    }
    return obj;
  });
}

function deployments(c: Ctx): JsonObject[] {
  const { csv } = c.bundle;
  const webhookDeps = new Set(certDeployments(c.bundle));
  return csv.deployments.map((d) => {
    const spec = structuredClone(d.spec);
    const template = isRecord(spec.template) ? spec.template : (spec.template = {});
    const tmeta = isRecord(template.metadata) ? template.metadata : (template.metadata = {});
    // OLM copies the CSV's annotations onto the pod template (the template's own win), plus the OperatorGroup's.
    tmeta.annotations = {
      ...csv.annotations,
      ...(isRecord(tmeta.annotations) ? tmeta.annotations : {}),
      'olm.targetNamespaces': c.targets.join(','),
      'olm.operatorNamespace': c.ns,
    };
    spec.revisionHistoryLimit = 1;
    const dep: JsonObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(d.name, c.ns, Object.keys(d.label).length > 0 ? { labels: { ...d.label } } : {}),
      spec,
    };
    if (webhookDeps.has(d.name) && c.certs.has(webhookServiceName(d.name))) mountCerts(spec, certSecretName(webhookServiceName(d.name)));
    if (c.opts.overrides !== undefined) applyOverrides(dep, c.opts.overrides);
    return dep;
  });
}

/** Replaces any volume at the certificate paths with the serving-certificate secret, as OLM does. */
function mountCerts(spec: JsonObject, secretName: string): void {
  const template = isRecord(spec.template) ? spec.template : {};
  const pod = isRecord(template.spec) ? template.spec : {};
  const remove = new Set(CERT_VOLUMES.map((v) => v.name));
  const paths = new Set(CERT_VOLUMES.map((v) => v.path));
  const containers = Array.isArray(pod.containers) ? pod.containers.filter(isRecord) : [];
  for (const ct of containers) {
    for (const m of Array.isArray(ct.volumeMounts) ? ct.volumeMounts.filter(isRecord) : []) {
      if (typeof m.mountPath === 'string' && paths.has(m.mountPath) && typeof m.name === 'string') remove.add(m.name);
    }
  }
  const volumes = Array.isArray(pod.volumes) ? pod.volumes.filter(isRecord) : [];
  pod.volumes = [
    ...volumes.filter((v) => !(typeof v.name === 'string' && remove.has(v.name))),
    ...CERT_VOLUMES.map((v) => ({
      name: v.name,
      secret: { secretName, items: [{ key: 'tls.crt', path: v.cert }, { key: 'tls.key', path: v.key }] },
    })),
  ];
  for (const ct of containers) {
    const mounts = Array.isArray(ct.volumeMounts) ? ct.volumeMounts.filter(isRecord) : [];
    ct.volumeMounts = [
      ...mounts.filter((m) => !(typeof m.name === 'string' && remove.has(m.name))),
      ...CERT_VOLUMES.map((v) => ({ name: v.name, mountPath: v.path })),
    ];
  }
}

const WEBHOOK_FIELDS = ['rules', 'failurePolicy', 'matchPolicy', 'objectSelector', 'sideEffects', 'timeoutSeconds', 'admissionReviewVersions'];

function webhookConfigurations(c: Ctx, type: 'ValidatingAdmissionWebhook' | 'MutatingAdmissionWebhook'): JsonObject[] {
  return c.bundle.csv.webhooks
    .filter((w) => w.type === type)
    .map((w) => {
      const name = w.generateName.replace(/-$/, '');
      const hook: JsonObject = { name };
      for (const f of WEBHOOK_FIELDS) if (w.raw[f] !== undefined && w.raw[f] !== null) hook[f] = structuredClone(w.raw[f]);
      if (type === 'MutatingAdmissionWebhook' && w.raw.reinvocationPolicy !== undefined) hook.reinvocationPolicy = w.raw.reinvocationPolicy;
      const ca = caBundle(c, w.deploymentName);
      hook.clientConfig = {
        service: {
          namespace: c.ns,
          name: webhookServiceName(w.deploymentName),
          ...(w.webhookPath === undefined ? {} : { path: w.webhookPath }),
          port: w.containerPort,
        },
        ...(ca === undefined ? {} : { caBundle: ca }),
      };
      // Limit admission to the watched namespaces; cluster-scoped objects are never skipped.
      if (!c.allNamespaces) {
        hook.namespaceSelector = { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...c.targets] }] };
      }
      const kind = type === 'ValidatingAdmissionWebhook' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration';
      return { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: meta(name), webhooks: [hook] };
    });
}

function webhookServices(c: Ctx): JsonObject[] {
  const portsByDep = new Map<string, Map<string, JsonObject>>();
  for (const w of c.bundle.csv.webhooks) {
    const port = w.containerPort > 0 ? w.containerPort : 443;
    const sp = { name: String(port), port, targetPort: w.targetPort ?? port };
    const m = portsByDep.get(w.deploymentName) ?? new Map<string, JsonObject>();
    m.set(JSON.stringify(sp), sp);
    portsByDep.set(w.deploymentName, m);
  }
  for (const a of c.bundle.csv.ownedAPIServices) {
    if (a.deploymentName === undefined || a.deploymentName === '') continue;
    // OLM serves an extension API server on 443, forwarded to the container port.
    const sp = { name: '443', port: 443, targetPort: a.containerPort ?? 443 };
    const m = portsByDep.get(a.deploymentName) ?? new Map<string, JsonObject>();
    // A Service cannot list port 443 twice: a webhook already on 443 serves both.
    if (![...m.values()].some((p) => p.port === 443)) m.set(JSON.stringify(sp), sp);
    portsByDep.set(a.deploymentName, m);
  }
  const out: JsonObject[] = [];
  for (const d of c.bundle.csv.deployments) {
    const ports = portsByDep.get(d.name);
    if (ports === undefined) continue;
    const sorted = [...ports.values()].sort((a, b) => Number(a.port) - Number(b.port) || String(a.targetPort).localeCompare(String(b.targetPort)));
    const selector = isRecord(d.spec.selector) && isRecord(d.spec.selector.matchLabels) ? d.spec.selector.matchLabels : undefined;
    out.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(webhookServiceName(d.name), c.ns),
      spec: { ports: sorted, ...(selector === undefined ? {} : { selector: structuredClone(selector) }) },
    });
  }
  return out;
}

/**
 * Owned API services, as OLM v0 installs them: an APIService pointing at the deployment's
 * service (with the CA bundle), and the RBAC an aggregated API server needs to delegate
 * authentication and authorization to the main API server.
 */
function apiServices(c: Ctx): JsonObject[] {
  const out: JsonObject[] = [];
  const rbacDone = new Set<string>();
  const saOf = new Map(c.bundle.csv.deployments.map((d) => {
    const t = d.spec.template;
    const pod = isRecord(t) && isRecord(t.spec) ? t.spec : {};
    return [d.name, typeof pod.serviceAccountName === 'string' && pod.serviceAccountName !== '' ? pod.serviceAccountName : 'default'];
  }));
  for (const a of c.bundle.csv.ownedAPIServices) {
    const dep = a.deploymentName ?? '';
    const svc = webhookServiceName(dep);
    const ca = caBundle(c, dep);
    out.push({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: meta(`${a.version}.${a.group}`),
      spec: {
        group: a.group,
        version: a.version,
        service: { namespace: c.ns, name: svc, port: 443 },
        ...(ca === undefined ? {} : { caBundle: ca }),
        groupPriorityMinimum: 2000,
        versionPriority: 15,
      },
    });
    if (rbacDone.has(dep)) continue;
    rbacDone.add(dep);
    const subject = { kind: 'ServiceAccount', name: saOf.get(dep) ?? 'default', namespace: c.ns };
    out.push(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: meta(`${svc}-system:auth-delegator`),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
        subjects: [subject],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: meta(`${svc}-auth-reader`, 'kube-system'),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extension-apiserver-authentication-reader' },
        subjects: [subject],
      },
    );
  }
  return out;
}

function certSecrets(c: Ctx): JsonObject[] {
  return [...c.certs.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([svc, cert]) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: meta(certSecretName(svc), c.ns),
      data: {
        'tls.crt': Buffer.from(cert.certPem).toString('base64'),
        'tls.key': Buffer.from(cert.keyPem).toString('base64'),
        'olmCAKey': Buffer.from(cert.caPem).toString('base64'),
      },
    }));
}

