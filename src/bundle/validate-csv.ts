/**
 * ClusterServiceVersion checks (operator-framework/api `internal/csv.go`): name format,
 * `replaces` format, example annotations against provided APIs, install modes, minKubeVersion,
 * required fields, case of OLM annotation keys, webhook definitions.
 */
import type { ValidationResult } from '../util/errors.js';
import { isRecord } from '../util/object.js';
import { isStrictSemver } from '../util/semver.js';
import { dns1123SubdomainErrors } from './names.js';
import type { RegistryV1Bundle } from './types.js';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function csvNameErrors(name: string): string[] {
  const errs = dns1123SubdomainErrors(name);
  if (name.length > 63) errs.push('must be no more than 63 characters (it is used as a label value)');
  else if (!LABEL_VALUE.test(name)) errs.push('must be a valid label value');
  return errs;
}

const CASE_SENSITIVE = ['olm.operatorGroup', 'olm.operatorNamespace', 'olm.targetNamespaces', 'olm.providedAPIs', 'olm.skipRange'];
const INSTALL_MODES = new Set(['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces']);
const WEBHOOK_TYPES = new Set(['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook', 'ConversionWebhook']);

export function validateCsv(bundle: RegistryV1Bundle, r: ValidationResult): void {
  const { csv } = bundle;
  const at = (field: string): { file: string; field: string } => ({ file: csv.file, field });
  for (const e of csvNameErrors(csv.name)) r.error('csv.name', `"${csv.name}" ${e}`, at('metadata.name'));
  if (csv.replaces !== undefined) for (const e of csvNameErrors(csv.replaces)) r.error('csv.replaces', `"${csv.replaces}" ${e}`, at('spec.replaces'));
  if (csv.version === '') r.error('csv.version', 'is required', at('spec.version'));
  else if (!isStrictSemver(csv.version)) r.error('csv.version', `"${csv.version}" is not a semantic version (MAJOR.MINOR.PATCH)`, at('spec.version'));

  validateExamples(bundle, r);
  validateInstallModes(bundle, r);

  if (csv.minKubeVersion === undefined || csv.minKubeVersion.trim() === '') {
    r.warning('csv.min-kube-version', 'is not set; set it to the oldest Kubernetes version the operator supports', at('spec.minKubeVersion'));
  } else if (!isStrictSemver(csv.minKubeVersion)) {
    r.error('csv.min-kube-version', `"${csv.minKubeVersion}" is not a semantic version (e.g. 1.21.0)`, at('spec.minKubeVersion'));
  }

  requiredFields(bundle, r);
  for (const key of Object.keys(csv.annotations)) {
    const want = CASE_SENSITIVE.find((k) => k.toLowerCase() === key.toLowerCase());
    if (want !== undefined && want !== key) r.error('csv.annotation-case', `annotation "${key}" must be spelled "${want}"`, at(`metadata.annotations.${key}`));
    if (key === 'olm.properties') {
      r.warning('csv.olm-properties', 'properties belong in metadata/properties.yaml rather than this annotation', at('metadata.annotations.olm.properties'));
    }
  }
  validateWebhooks(bundle, r);
}

/** Fields the CSV type requires (operator-framework/api's checkEmptyFields), and its apiVersion. */
function requiredFields(bundle: RegistryV1Bundle, r: ValidationResult): void {
  const { csv } = bundle;
  const at = (field: string): { file: string; field: string } => ({ file: csv.file, field });
  const spec = isRecord(csv.raw.spec) ? csv.raw.spec : {};
  const install = isRecord(spec.install) ? spec.install : {};
  if (csv.strategy === '') r.error('csv.required-field', 'is required', at('spec.install.strategy'));
  else if (csv.strategy !== 'deployment') r.error('csv.install-strategy', `"${csv.strategy}" is not a known install strategy; use "deployment"`, at('spec.install.strategy'));
  if (isRecord(install.spec) && Object.keys(install.spec).length > 0 && csv.deployments.length === 0) {
    r.error('csv.required-field', 'is required: the CSV installs no deployment', at('spec.install.spec.deployments'));
  }
  if (typeof spec.displayName !== 'string' || spec.displayName === '') r.error('csv.required-field', 'is required', at('spec.displayName'));
  if (isRecord(spec.provider) && Object.keys(spec.provider).length > 0 && (typeof spec.provider.name !== 'string' || spec.provider.name === '')) {
    r.error('csv.required-field', 'is required when spec.provider is set', at('spec.provider.name'));
  }
  if (csv.raw.apiVersion !== 'operators.coreos.com/v1alpha1') {
    r.warning('csv.api-version', `should be operators.coreos.com/v1alpha1, got "${String(csv.raw.apiVersion)}" (OLM ignores it, tools may not)`, at('apiVersion'));
  }
}

function validateExamples(bundle: RegistryV1Bundle, r: ValidationResult): void {
  const { csv } = bundle;
  const at = (field: string): { file: string; field: string } => ({ file: csv.file, field });
  const alm = csv.annotations['alm-examples'];
  const olm = csv.annotations['olm.examples'];
  if (Object.keys(csv.annotations).length === 0) {
    r.warning('csv.examples', 'the CSV has no annotations, so no examples', at('metadata.annotations'));
    return;
  }
  if (alm === undefined && olm === undefined) {
    r.warning('csv.examples', 'no example custom resources (alm-examples annotation)', at('metadata.annotations.alm-examples'));
    return;
  }
  if (alm !== undefined && olm !== undefined) r.warning('csv.examples', 'both alm-examples and olm.examples are set; only alm-examples is used', at('metadata.annotations'));
  const key = alm !== undefined ? 'alm-examples' : 'olm.examples';
  const text = alm ?? olm ?? '';
  let parsed: unknown = [];
  // An empty annotation is no examples at all: each owned API is then reported without one.
  if (text.trim() === '') r.warning('csv.examples', `${key} is present but empty`, at(`metadata.annotations.${key}`));
  else {
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      r.error('csv.examples', `invalid example: is not valid JSON: ${e instanceof Error ? e.message : String(e)}`, at(`metadata.annotations.${key}`));
      return;
    }
  }
  if (!Array.isArray(parsed)) {
    r.error('csv.examples', 'must be a JSON list of example objects', at(`metadata.annotations.${key}`));
    return;
  }
  const provided = new Set<string>();
  for (const o of csv.ownedCRDs) {
    const dot = o.name.indexOf('.');
    if (dot < 0) {
      r.error('csv.owned-crd-name', `"${o.name}" is not of the form <plural>.<group>`, at(`${o.field}.name`));
      continue;
    }
    provided.add(`${o.name.slice(dot + 1)}/${o.version}/${o.kind}`);
  }
  for (const a of csv.ownedAPIServices) provided.add(`${a.group}/${a.version}/${a.kind}`);
  const examples = new Set<string>();
  parsed.forEach((ex, i) => {
    if (!isRecord(ex) || typeof ex.apiVersion !== 'string' || typeof ex.kind !== 'string') {
      r.error('csv.examples', 'each example needs apiVersion and kind', at(`metadata.annotations.${key}[${i}]`));
      return;
    }
    const slash = ex.apiVersion.indexOf('/');
    const gvk = slash < 0 ? `/${ex.apiVersion}/${ex.kind}` : `${ex.apiVersion.slice(0, slash)}/${ex.apiVersion.slice(slash + 1)}/${ex.kind}`;
    examples.add(gvk);
  });
  for (const gvk of [...examples].sort()) {
    if (!provided.has(gvk)) r.error('csv.examples', `example must have a provided API: example ${gvk} is not an API the CSV owns`, at(`metadata.annotations.${key}`));
  }
  for (const gvk of [...provided].sort()) {
    if (!examples.has(gvk)) r.warning('csv.examples', `provided API should have an example annotation: owned API ${gvk} has no example`, at(`metadata.annotations.${key}`));
  }
}

function validateInstallModes(bundle: RegistryV1Bundle, r: ValidationResult): void {
  const { csv } = bundle;
  const at = { file: csv.file, field: 'spec.installModes' };
  if (csv.installModes.length === 0) {
    r.error('csv.install-modes', 'no install modes: list which of OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces are supported', at);
    return;
  }
  const seen = new Set<string>();
  csv.installModes.forEach((m, i) => {
    if (!INSTALL_MODES.has(m.type)) r.error('csv.install-modes', `"${m.type}" is not an install mode`, { file: csv.file, field: `spec.installModes[${i}].type` });
    if (seen.has(m.type)) r.warning('csv.install-modes', `install mode ${m.type} is listed twice`, { file: csv.file, field: `spec.installModes[${i}]` });
    seen.add(m.type);
  });
  const supported = csv.installModes.filter((m) => m.supported).map((m) => m.type);
  if (supported.length === 0) r.error('csv.install-modes', 'no install mode is supported', at);
  if (csv.webhooks.some((w) => w.conversionCRDs.length > 0) && (supported.length !== 1 || supported[0] !== 'AllNamespaces')) {
    r.error('csv.install-modes', 'a CSV with conversion webhooks (conversionCRDs) must support only AllNamespaces', at);
  }
}

function validateWebhooks(bundle: RegistryV1Bundle, r: ValidationResult): void {
  const { csv } = bundle;
  const deployments = new Set(csv.deployments.map((d) => d.name));
  for (const w of csv.webhooks) {
    const at = (f: string): { file: string; field: string } => ({ file: csv.file, field: `${w.field}.${f}` });
    if (!WEBHOOK_TYPES.has(w.type)) r.error('csv.webhook', `"${w.type}" is not a webhook type (ValidatingAdmissionWebhook, MutatingAdmissionWebhook, ConversionWebhook)`, at('type'));
    if (w.deploymentName === '' ) r.error('csv.webhook', 'is required', at('deploymentName'));
    else if (!deployments.has(w.deploymentName)) r.error('csv.webhook', `deployment "${w.deploymentName}" is not defined in spec.install.spec.deployments`, at('deploymentName'));
    const arv = w.raw.admissionReviewVersions;
    if (!Array.isArray(arv) || arv.length === 0) r.error('csv.webhook', 'must list at least one version (e.g. v1)', at('admissionReviewVersions'));
    if (w.containerPort < 1 || w.containerPort > 65535) r.error('csv.webhook', `${w.containerPort} is not a valid port`, at('containerPort'));
    if (w.type === 'ConversionWebhook') {
      if (w.conversionCRDs.length === 0) r.error('csv.webhook', 'a conversion webhook must name the CRDs it converts', at('conversionCRDs'));
    } else if (WEBHOOK_TYPES.has(w.type)) {
      const se = w.raw.sideEffects;
      if (se !== 'None' && se !== 'NoneOnDryRun') r.error('csv.webhook', `must be None or NoneOnDryRun for admissionregistration.k8s.io/v1, got ${JSON.stringify(se) ?? 'nothing'}`, at('sideEffects'));
      const fp = w.raw.failurePolicy;
      if (fp !== undefined && fp !== 'Ignore' && fp !== 'Fail') r.error('csv.webhook', `must be Ignore or Fail, got ${JSON.stringify(fp)}`, at('failurePolicy'));
      if (!Array.isArray(w.raw.rules) || w.raw.rules.length === 0) r.warning('csv.webhook', 'an admission webhook without rules never runs', at('rules'));
    }
  }
}
