/**
 * Checks a bundle must pass before it can be turned into objects (operator-controller's
 * registry+v1 render validators): unique deployment and CRD names, owned CRDs present, webhook
 * definitions that point at real deployments and owned CRDs, no forbidden webhook rules, only
 * supported object kinds. Every failure is returned; none stops the others.
 */
import type { Problem } from '../util/errors.js';
import { isRecord } from '../util/object.js';
import { dns1123SubdomainErrors } from './names.js';
import { kindSupport } from './supported-kinds.js';
import type { RegistryV1Bundle } from './types.js';

const FORBIDDEN_GROUPS = new Set(['olm.operatorframework.io', '*']);
const FORBIDDEN_ADMISSION_RESOURCES = new Set([
  '*',
  'mutatingwebhookconfiguration',
  'mutatingwebhookconfigurations',
  'validatingwebhookconfiguration',
  'validatingwebhookconfigurations',
]);

export function crdName(obj: Record<string, unknown>): string {
  return isRecord(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : '';
}

export function renderChecks(bundle: RegistryV1Bundle): Problem[] {
  const { csv } = bundle;
  const out: Problem[] = [];
  const err = (rule: string, message: string, field?: string, file = csv.file): void => {
    out.push({ severity: 'error', rule, message, file, ...(field === undefined ? {} : { field }) });
  };

  const seenDeps = deploymentChecks(bundle, err);
  crdPresenceChecks(bundle, err);
  if (bundle.packageName === '') err('render.package-name', 'package name is empty', undefined, 'metadata/annotations.yaml');
  conversionWebhookChecks(bundle, err);
  webhookChecks(bundle, seenDeps, err);
  apiServiceChecks(bundle, seenDeps, err);
  crdSchemaChecks(bundle, err);
  for (const o of bundle.others) {
    if (!kindSupport(o.kind).supported) {
      err('render.object-kind', `kind "${o.kind}" (object "${o.name}") is not supported in registry+v1 bundles`, 'kind', o.file);
    }
  }
  return out;
}

type Report = (rule: string, message: string, field?: string, file?: string) => void;

/** Strategy deployments have unique, DNS-valid names; answers the names. */
function deploymentChecks(bundle: RegistryV1Bundle, err: Report): Set<string> {
  const seenDeps = new Set<string>();
  for (const dep of bundle.csv.deployments) {
    if (seenDeps.has(dep.name)) err('render.deployment-unique', `duplicate strategy deployment "${dep.name}"`, `${dep.field}.name`);
    seenDeps.add(dep.name);
    const dns = dns1123SubdomainErrors(dep.name);
    if (dns.length > 0) err('render.deployment-name', `deployment name "${dep.name}" ${dns.join(', ')}`, `${dep.field}.name`);
  }
  return seenDeps;
}

/** Each CRD once, and each CRD the CSV owns in the bundle. */
function crdPresenceChecks(bundle: RegistryV1Bundle, err: Report): void {
  const crdNames = new Set<string>();
  for (const crd of bundle.crds) {
    const name = crd.name;
    if (crdNames.has(name)) err('render.crd-unique', `duplicate CustomResourceDefinition "${name}"`, 'metadata.name', crd.file);
    crdNames.add(name);
  }
  for (const owned of bundle.csv.ownedCRDs) {
    if (!crdNames.has(owned.name)) {
      err('render.owned-crd-present', `owned CRD "${owned.name}" is not in the bundle`, `${owned.field}.name`);
    }
  }
}

/** A conversion webhook serves every namespace's objects: its bundle must support AllNamespaces only. */
function conversionWebhookChecks(bundle: RegistryV1Bundle, err: Report): void {
  const { csv } = bundle;
  const supported = new Set(csv.installModes.filter((m) => m.supported).map((m) => m.type));
  const conversion = csv.webhooks.filter((w) => w.type === 'ConversionWebhook');
  if (conversion.length === 0 || (supported.size === 1 && supported.has('AllNamespaces'))) return;
  for (const w of conversion) {
    err(
      'render.conversion-webhook-all-namespaces',
      `conversion webhook "${w.generateName}" needs a bundle that supports only AllNamespaces; it supports [${[...supported].sort().join(', ')}]`,
      w.field,
    );
  }
}

/** An owned API service names a deployment of the CSV to serve it. */
function apiServiceChecks(bundle: RegistryV1Bundle, seenDeps: ReadonlySet<string>, err: Report): void {
  for (const a of bundle.csv.ownedAPIServices) {
    if (a.deploymentName === undefined || a.deploymentName === '') {
      err('render.apiservice-deployment', `owned API service ${a.version}.${a.group} names no deployment to serve it`, `${a.field}.deploymentName`);
    } else if (!seenDeps.has(a.deploymentName)) {
      err('render.apiservice-deployment', `owned API service ${a.version}.${a.group} refers to deployment "${a.deploymentName}", which the CSV does not define`, `${a.field}.deploymentName`);
    }
  }
}

/** Each version of a v1 CRD has a schema. */
function crdSchemaChecks(bundle: RegistryV1Bundle, err: Report): void {
  for (const crd of bundle.crds) {
    if (crd.apiVersion !== 'apiextensions.k8s.io/v1') continue;
    const spec = isRecord(crd.object.spec) ? crd.object.spec : {};
    const versions = Array.isArray(spec.versions) ? spec.versions : [];
    versions.forEach((v, i) => {
      // Installed without one, the CRD would prune every field of its objects (or be refused).
      if (isRecord(v) && !isRecord(v.schema)) err('render.crd-schema', `CRD "${crd.name}" version ${String(v.name)} has no schema; apiextensions.k8s.io/v1 requires one`, `spec.versions[${i}].schema`, crd.file);
    });
  }
}

function webhookChecks(bundle: RegistryV1Bundle, seenDeps: ReadonlySet<string>, err: Report): void {
  const { csv } = bundle;
  const ownedNames = new Set(csv.ownedCRDs.map((c) => c.name));
  const crdToWebhook = new Map<string, string[]>();
  const namesByType = new Map<string, Set<string>>();
  for (const w of csv.webhooks) {
    if (!seenDeps.has(w.deploymentName)) {
      err('render.webhook-deployment', `webhook "${w.generateName}" (${w.type}) refers to deployment "${w.deploymentName}", which the CSV does not define`, `${w.field}.deploymentName`);
    }
    const names = namesByType.get(w.type) ?? new Set<string>();
    if (names.has(w.generateName)) err('render.webhook-unique', `duplicate ${w.type} "${w.generateName}"`, `${w.field}.generateName`);
    names.add(w.generateName);
    namesByType.set(w.type, names);
    const dns = dns1123SubdomainErrors(w.generateName);
    if (dns.length > 0) err('render.webhook-name', `webhook name "${w.generateName}" ${dns.join(', ')}`, `${w.field}.generateName`);
    if (w.type === 'ConversionWebhook') {
      for (const crd of w.conversionCRDs) {
        if (!ownedNames.has(crd)) err('render.conversion-webhook-owned-crd', `conversion webhook "${w.generateName}" names CRD "${crd}", which the CSV does not own`, `${w.field}.conversionCRDs`);
        crdToWebhook.set(crd, [...(crdToWebhook.get(crd) ?? []), w.generateName]);
      }
      continue;
    }
    const rules = Array.isArray(w.raw.rules) ? w.raw.rules : [];
    rules.forEach((rule, i) => {
      if (!isRecord(rule)) return;
      const groups = Array.isArray(rule.apiGroups) ? rule.apiGroups.filter((g): g is string => typeof g === 'string') : [];
      const resources = Array.isArray(rule.resources) ? rule.resources.filter((r): r is string => typeof r === 'string') : [];
      for (const g of groups) {
        if (FORBIDDEN_GROUPS.has(g)) err('render.webhook-rules', `webhook "${w.generateName}" may not match API group "${g}"`, `${w.field}.rules[${i}].apiGroups`);
        if (g === 'admissionregistration.k8s.io') {
          for (const r of resources) {
            if (FORBIDDEN_ADMISSION_RESOURCES.has(r.toLowerCase())) {
              err('render.webhook-rules', `webhook "${w.generateName}" may not match resource "${r}" of ${g}`, `${w.field}.rules[${i}].resources`);
            }
          }
        }
      }
    });
  }
  for (const [crd, hooks] of [...crdToWebhook].sort(([a], [b]) => a.localeCompare(b))) {
    if (hooks.length > 1) err('render.conversion-webhook-unique-crd', `conversion webhooks [${hooks.sort().join(', ')}] all name CRD "${crd}"`, 'spec.webhookdefinitions');
  }
}
