/**
 * operator-framework/api's `community`, `object` and `operatorgroup` validators, and the
 * category list of `OPERATOR_BUNDLE_CATEGORIES`. Messages keep the reference's wording where a
 * user would search for it.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ValidationResult } from '../util/errors.js';
import { isRecord } from '../util/object.js';
import { compareVersions, parseTolerant } from '../util/semver.js';
import type { ManifestObject, RegistryV1Bundle } from './types.js';

/** Kinds per API version that Kubernetes 1.22 removed (operator-framework/api `removed_apis.go`). */
export const REMOVED_1_22: Record<string, string[]> = {
  'scheduling.k8s.io/v1beta1': ['PriorityClass'],
  'rbac.authorization.k8s.io/v1beta1': ['Role', 'ClusterRoleBinding', 'RoleBinding', 'ClusterRole'],
  'apiregistration.k8s.io/v1beta1': ['APIService'],
  'authentication.k8s.io/v1beta1': ['TokenReview'],
  'authorization.k8s.io/v1beta1': ['LocalSubjectAccessReview', 'SelfSubjectAccessReview', 'SubjectAccessReview'],
  'admissionregistration.k8s.io/v1beta1': ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
  'coordination.k8s.io/v1beta1': ['Lease'],
  'extensions/v1beta1': ['Ingress'],
  'networking.k8s.io/v1beta1': ['Ingress', 'IngressClass'],
  'storage.k8s.io/v1beta1': ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'],
  'certificates.k8s.io/v1beta1': ['CertificateSigningRequest'],
};

/** Objects of the bundle whose API Kubernetes 1.22 removed, by kind (`CRD` for v1beta1 CRDs). */
export function removedIn122(b: RegistryV1Bundle): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (k: string, n: string): void => void out.set(k, [...(out.get(k) ?? []), n]);
  for (const crd of b.crds) if (crd.apiVersion === 'apiextensions.k8s.io/v1beta1') add('CRD', crd.name);
  for (const o of b.others) if (REMOVED_1_22[o.apiVersion]?.includes(o.kind) === true) add(o.kind, o.name);
  return out;
}

export function removedApisMessage(found: Map<string, string[]>): string {
  return [...found.keys()]
    .sort()
    .map((k) => `${k}: (${JSON.stringify(found.get(k) ?? []).replace(/,/g, ' ')})`)
    .join(',');
}

const OCP_V1BETA1_UNSUPPORTED: [number, number, number] = [4, 9, 0];
const DEPRECATION = 'This bundle is using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22';

/**
 * `community`: a bundle that uses APIs removed in Kubernetes 1.22 must cap the OpenShift
 * version with `olm.maxOpenShiftVersion` < 4.9 in its `olm.properties` annotation, and the
 * `com.redhat.openshift.versions` label of its image's Dockerfile (`indexPath`, the reference's
 * `index-path` value) must stop below 4.9; without `indexPath` that label is not checked (a
 * warning says so).
 */
export function communityValidator(b: RegistryV1Bundle, r: ValidationResult, indexPath?: string): void {
  const found = removedIn122(b);
  if (found.size === 0) return;
  const apis = removedApisMessage(found);
  const at = { file: b.csv.file, field: 'metadata.annotations.olm.properties' };
  checkMaxOpenShiftVersion(b, r, apis, at);
  if (indexPath === undefined || indexPath === '') {
    r.warning('community.index-path', `please, inform the path of its index image file via the the optional key values and the key index-path to allow this validator check the labels configuration or migrate the API(s) for ${apis}. (e.g. index-path=./mypath/bundle.Dockerfile). ${DEPRECATION} `, at);
    return;
  }
  const problem = ocpLabelProblem(indexPath, apis);
  if (problem !== undefined) r.error('community.ocp-versions-label', problem, { file: indexPath, field: OCP_LABEL });
}

function checkMaxOpenShiftVersion(b: RegistryV1Bundle, r: ValidationResult, apis: string, at: { file: string; field: string }): void {
  const props = b.csv.annotations['olm.properties'];
  if (props === undefined || props === '') {
    r.error('community.max-openshift-version', `csv.Annotations not specified olm.maxOpenShiftVersion for an OCP version < 4.9. This annotation is required to prevent the user from upgrading their OCP cluster before they have installed a version of their operator which is compatible with 4.9. ${DEPRECATION} which are no longer supported on 4.9. Migrate the API(s) for ${apis} or use the annotation`, at);
    return;
  }
  let list: unknown;
  try {
    list = JSON.parse(props) as unknown;
  } catch {
    list = undefined;
  }
  const items: unknown[] | undefined = Array.isArray(list) ? (list as unknown[]) : undefined;
  // Go decodes into {Type string; Value string}: a non-string value fails the whole decode.
  if (items === undefined || items.some((p) => !isRecord(p) || (p.type !== undefined && typeof p.type !== 'string') || (p.value !== undefined && typeof p.value !== 'string'))) {
    r.error('community.max-openshift-version', `csv.Annotations has an invalid value specified for olm.properties. Please, check the value  (${props}) and ensure that it is an array such as: "olm.properties": '[{"type": "key name", "value": "key value"}]'`, at);
    return;
  }
  const max = items.find((p) => isRecord(p) && p.type === 'olm.maxOpenShiftVersion');
  if (max === undefined) {
    r.error('community.max-openshift-version', `csv.Annotations.olm.properties with the key \`olm.maxOpenShiftVersion\` and a value with an OCP version which is < 4.9 is required for any operator bundle that is using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22. Migrate the API(s) for ${apis} or use the annotation`, at);
    return;
  }
  const value = isRecord(max) && typeof max.value === 'string' ? max.value : '';
  const v = parseTolerantFull(value);
  if (v === undefined) {
    r.error('community.max-openshift-version', `csv.Annotations.olm.properties has an invalid value. Unable to parse (${value}) using semver`, at);
    return;
  }
  // Build metadata does not count in semver equality: 4.8.0+build is 4.8.0.
  if (v.patch !== 0 || v.prerelease !== '') {
    r.warning('community.max-openshift-version', `csv.Annotations.olm.properties has an invalid value. olm.maxOpenShiftVersion must specify only major.minor versions, ${value} will be truncated to ${v.core[0]}.${v.core[1]}.0`, at);
    return;
  }
  if (compareVersions(v.core, OCP_V1BETA1_UNSUPPORTED) >= 0) {
    r.error('community.max-openshift-version', `csv.Annotations.olm.properties with the key and value for olm.maxOpenShiftVersion has the OCP version value ${value} which is >= of 4.9. ${DEPRECATION}. Migrate the API(s) for ${apis} or inform in this property an OCP version which is < 4.9`, at);
  }
}

const OCP_LABEL = 'com.redhat.openshift.versions';

/**
 * The reference's reading of the Dockerfile's `com.redhat.openshift.versions` label: `=v4.8`
 * (exactly), `v4.6-v4.8` (a range, its end checked) or `v4.6` (open-ended, so 4.9+ too: refused).
 */
function ocpLabelProblem(path: string, apis: string): string | undefined {
  let text: string;
  try {
    if (statSync(path).isDirectory()) return `the index image in the path (${path}) is not file. Please, inform the path of its index image via the the optional key values and the key index-path. The value informed is a diretory and not a file`;
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return `the index image in the path (${path}) was not found. Please, inform the path of the bundle operator index image via the the optional key values and the key index-path. (e.g. index-path=./mypath/bundle.Dockerfile). Error : ${e instanceof Error ? e.message : String(e)}`;
  }
  const line = text.split('\n').find((l) => l.includes(OCP_LABEL));
  const advice = `Migrate the API(s) for ${apis} or provide compatible version(s) by using the ${OCP_LABEL} annotation in \`metadata/annotations.yaml\` to ensure that the index image will be generated with its label. (e.g. LABEL ${OCP_LABEL}='4.6-4.8')`;
  if (line === undefined) return `${DEPRECATION}. Migrate the APIs for ${apis} or provide compatible version(s) via the labels. (e.g. LABEL ${OCP_LABEL}='4.6-4.8')`;
  if (!line.includes('=')) return `invalid syntax (${line}) for (${OCP_LABEL})`;
  const parts = line.split('=');
  const clean = (s: string): string => s.replace(/['"v]/g, '');
  if (parts.length > 2 && (parts[2] ?? '') !== '') {
    const exact = clean(parts[2] ?? '');
    const v = parseTolerant(exact);
    if (v === undefined) return `unable to parse the value (${exact}) on (${OCP_LABEL})`;
    return compareVersions(v, OCP_V1BETA1_UNSUPPORTED) >= 0 ? `${DEPRECATION}. ${advice}` : undefined;
  }
  const range = clean(parts[1] ?? '');
  if (range.length <= 1) return `unable to get the range informed on ${OCP_LABEL}`;
  if (!range.includes('-')) return `${DEPRECATION} The ${range} allows to distribute it on >= 4.9. ${advice}`;
  const end = range.split('-')[1] ?? '';
  const v = parseTolerant(end);
  if (v === undefined) return `unable to parse the value (${end}) on (${OCP_LABEL})`;
  return compareVersions(v, OCP_V1BETA1_UNSUPPORTED) >= 0 ? `${DEPRECATION}. ${advice}` : undefined;
}

/** blang/semver `ParseTolerant`, keeping whether a patch or pre-release/build part was given. */
function parseTolerantFull(s: string): { core: [number, number, number]; patch: number; prerelease: string } | undefined {
  const core = parseTolerant(s);
  if (core === undefined) return undefined;
  const m = /^v?\d+(?:\.\d+)?(?:\.\d+)?(?:-([^+]*))?(?:\+.*)?$/.exec(s.trim());
  return { core, patch: core[2], prerelease: m?.[1] ?? '' };
}

const DEFAULT_SCCS = new Set(['privileged', 'restricted', 'anyuid', 'hostaccess', 'hostmount-anyuid', 'hostnetwork', 'node-exporter', 'nonroot']);

function strs(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * `object`: PodDisruptionBudgets that block every eviction, PriorityClasses that make themselves
 * the cluster default, and Roles/ClusterRoles that may change the default
 * SecurityContextConstraints (or create PodDisruptionBudgets: a warning).
 */
export function objectValidator(b: RegistryV1Bundle, r: ValidationResult): void {
  validateObjects(b.others, r);
}

/** The `object` checks on any list of objects (a bundle's, or lone manifests). */
export function validateObjects(objects: readonly ManifestObject[], r: ValidationResult): void {
  for (const o of objects) {
    const spec = isRecord(o.object.spec) ? o.object.spec : {};
    const at = (field: string): { file: string; field: string } => ({ file: o.file, field });
    if (o.kind === 'PodDisruptionBudget') {
      const mu = spec.maxUnavailable;
      if (mu === 0 || mu === '0%') r.error('object.pdb', `maxUnavailable field cannot be set to 0 or 0% (PodDisruptionBudget ${o.name})`, at('spec.maxUnavailable'));
      else if (typeof mu === 'string') {
        // operator-framework/api reads the integer part of the IntOrString, which is 0 for any
        // percentage, so it refuses every percentage here: kept for the same verdict.
        r.error('object.pdb', `maxUnavailable field cannot be set to 0 or 0%: operator-framework/api refuses any percentage ("${mu}") here; use a number (PodDisruptionBudget ${o.name})`, at('spec.maxUnavailable'));
      }
      if (spec.minAvailable === '100%') r.error('object.pdb', `minAvailable field cannot be set to 100% (PodDisruptionBudget ${o.name})`, at('spec.minAvailable'));
    } else if (o.kind === 'PriorityClass') {
      if (o.object.globalDefault === true) r.error('object.priority-class', `globalDefault field cannot be set to true (PriorityClass ${o.name})`, at('globalDefault'));
    } else if (o.kind === 'Role' || o.kind === 'ClusterRole') {
      auditRules(o, r);
    }
  }
}

function auditRules(o: ManifestObject, r: ValidationResult): void {
  const rules = Array.isArray(o.object.rules) ? o.object.rules : [];
  rules.forEach((rule, i) => {
    if (!isRecord(rule)) return;
    const groups = strs(rule.apiGroups);
    const resources = strs(rule.resources);
    const verbs = strs(rule.verbs);
    const at = { file: o.file, field: `rules[${i}]` };
    if (groups.includes('policy') && resources.includes('poddisruptionbudgets') && verbs.some((v) => ['*', 'create', 'update', 'patch'].includes(v))) {
      r.warning('object.rbac', `RBAC includes permission to create/update poddisruptionbudgets, which could impact cluster stability (${o.kind} ${o.name})`, at);
    }
    if (
      groups.includes('security.openshift.io') &&
      resources.includes('securitycontextconstraints') &&
      verbs.some((v) => ['*', 'delete', 'update', 'patch'].includes(v)) &&
      strs(rule.resourceNames).some((n) => DEFAULT_SCCS.has(n))
    ) {
      r.error('object.rbac', `RBAC includes permission to modify default securitycontextconstraints, which could impact cluster stability (${o.kind} ${o.name})`, at);
    }
  });
}

/** OLM annotation keys that are case-sensitive (operator-framework/api `annotations.go`). */
export const CASE_SENSITIVE_ANNOTATIONS = ['olm.operatorGroup', 'olm.operatorNamespace', 'olm.targetNamespaces', 'olm.providedAPIs', 'olm.skipRange'];

export function annotationCaseErrors(annotations: Record<string, unknown>): { key: string; want: string }[] {
  const out: { key: string; want: string }[] = [];
  for (const key of Object.keys(annotations)) {
    const want = CASE_SENSITIVE_ANNOTATIONS.find((k) => k.toLowerCase() === key.toLowerCase());
    if (want !== undefined && want !== key) out.push({ key, want });
  }
  return out;
}

/** `operatorgroup`: an OperatorGroup's OLM annotation keys are spelled exactly. */
export function operatorGroupValidator(b: RegistryV1Bundle, r: ValidationResult): void {
  validateOperatorGroups(b.others, r);
}

/** The `operatorgroup` checks on any list of objects. */
export function validateOperatorGroups(objects: readonly ManifestObject[], r: ValidationResult): void {
  for (const o of objects) {
    if (o.kind !== 'OperatorGroup' || !o.apiVersion.startsWith('operators.coreos.com/')) continue;
    const meta = isRecord(o.object.metadata) ? o.object.metadata : {};
    const ann = isRecord(meta.annotations) ? meta.annotations : {};
    for (const { key, want } of annotationCaseErrors(ann)) {
      r.error('operatorgroup.annotation-case', `provided annotation ${key} uses wrong case and should be ${want} instead`, { file: o.file, field: `metadata.annotations.${key}` });
    }
  }
}

/**
 * The category list: operatorhub.io's standard categories, or the `categories` list of the
 * JSON file named by `OPERATOR_BUNDLE_CATEGORIES` when that is set. A file that cannot be read
 * is a problem of its own.
 */
export function allowedCategories(standard: ReadonlySet<string>, env: NodeJS.ProcessEnv = process.env): { set: ReadonlySet<string>; custom: boolean; problem?: string } {
  const path = env.OPERATOR_BUNDLE_CATEGORIES;
  if (path === undefined || path === '') return { set: standard, custom: false };
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (e) {
    return { set: new Set(), custom: true, problem: `could not extract custom categories from OPERATOR_BUNDLE_CATEGORIES=${path}: reading category file: ${e instanceof Error ? e.message : String(e)}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { set: new Set(), custom: true, problem: `could not extract custom categories from OPERATOR_BUNDLE_CATEGORIES=${path}: unmarshaling category file: ${e instanceof Error ? e.message : String(e)}` };
  }
  const list = isRecord(parsed) ? parsed.categories : undefined;
  if (list !== undefined && list !== null && (!Array.isArray(list) || list.some((c) => typeof c !== 'string'))) {
    return { set: new Set(), custom: true, problem: `could not extract custom categories from OPERATOR_BUNDLE_CATEGORIES=${path}: unmarshaling category file: "categories" must be a list of strings` };
  }
  return { set: new Set(strs(list)), custom: true };
}
