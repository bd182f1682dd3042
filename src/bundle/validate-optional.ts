/**
 * Optional validators (operator-framework/api): operatorhub (v2), capabilities, categories,
 * good-practices and deprecated/removed Kubernetes APIs. Selected with
 * `--select-optional suite=operatorframework` or `name=<validator>`.
 */
import type { ValidationResult } from '../util/errors.js';
import type { JsonObject } from './decode.js';
import { isRecord } from '../util/object.js';
import { compareVersions, isStrictSemver, parseTolerant } from '../util/semver.js';
import type { RegistryV1Bundle } from './types.js';
import { allowedCategories, communityValidator, objectValidator, operatorGroupValidator, REMOVED_1_22 } from './validate-community.js';

/** The `operatorframework` suite (operator-sdk's `--select-optional suite=operatorframework`). */
export const OPTIONAL_VALIDATORS = ['operatorhub', 'capabilities', 'categories', 'good-practices', 'alpha-deprecated-apis'] as const;
/** Every optional validator, each selectable with `name=`. */
export const ALL_OPTIONAL_VALIDATORS = [...OPTIONAL_VALIDATORS, 'operatorhubv2', 'community', 'object', 'operatorgroup'] as const;
export type OptionalValidator = (typeof ALL_OPTIONAL_VALIDATORS)[number];

const CATEGORIES = new Set([
  'AI/Machine Learning', 'Application Runtime', 'Big Data', 'Cloud Provider', 'Developer Tools', 'Database',
  'Integration & Delivery', 'Logging & Tracing', 'Monitoring', 'Modernization & Migration', 'Networking',
  'OpenShift Optional', 'Security', 'Storage', 'Streaming & Messaging', 'Observability',
]);
const CAPABILITIES = new Set(['Basic Install', 'Seamless Upgrades', 'Full Lifecycle', 'Deep Insights', 'Auto Pilot']);
const ICON_TYPES = new Set(['image/gif', 'image/jpeg', 'image/png', 'image/svg+xml']);
// An RFC 5322 addr-spec (dot-atom or quoted local part), as Go's net/mail reads it.
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const ADDR_SPEC = `(?:${ATOM}(?:\\.${ATOM})*|"(?:[^"\\\\]|\\\\.)*")@${ATOM}(?:\\.${ATOM})*`;
const MAIL_ADDRESS = new RegExp(`^\\s*(?:${ADDR_SPEC}|(?:[^<>@]*|"[^"]*")\\s*<${ADDR_SPEC}>)\\s*$`);

/** Go's `mail.ParseAddress`: `a@b.c`, or `Name <a@b.c>`. */
export function isMailAddress(s: string): boolean {
  return MAIL_ADDRESS.test(s);
}

function specOf(b: RegistryV1Bundle): JsonObject {
  return isRecord(b.csv.raw.spec) ? b.csv.raw.spec : {};
}

/** Optional key values (operator-sdk's `--optional-values`). */
export interface OptionalValues {
  k8sVersion?: string;
  indexPath?: string;
}

export function runOptional(name: OptionalValidator, b: RegistryV1Bundle, r: ValidationResult, values: OptionalValues = {}): void {
  switch (name) {
    case 'operatorhub':
      // The first operatorhub validator also checks capabilities and categories.
      operatorHub(b, r);
      capabilities(b, r);
      categories(b, r);
      return;
    case 'operatorhubv2':
      operatorHub(b, r);
      return;
    case 'capabilities':
      capabilities(b, r);
      return;
    case 'categories':
      categories(b, r);
      return;
    case 'community':
      communityValidator(b, r, values.indexPath);
      return;
    case 'object':
      objectValidator(b, r);
      return;
    case 'operatorgroup':
      operatorGroupValidator(b, r);
      return;
    case 'good-practices':
      goodPractices(b, r);
      return;
    case 'alpha-deprecated-apis':
      deprecatedApis(b, r, values.k8sVersion);
      return;
  }
}

function capabilities(b: RegistryV1Bundle, r: ValidationResult): void {
  const c = b.csv.annotations.capabilities;
  if (c !== undefined && !CAPABILITIES.has(c)) {
    r.error('capabilities', `csv.Metadata.Annotations.Capabilities "${c}" is not a valid capabilities level (${[...CAPABILITIES].join(', ')})`, { file: b.csv.file, field: 'metadata.annotations.capabilities' });
  }
}

/** Each comma-separated category must be a standard one, or one of `OPERATOR_BUNDLE_CATEGORIES`'s. */
function categories(b: RegistryV1Bundle, r: ValidationResult): void {
  const c = b.csv.annotations.categories;
  if (c === undefined) return;
  const at = { file: b.csv.file, field: 'metadata.annotations.categories' };
  const allowed = allowedCategories(CATEGORIES);
  if (allowed.problem !== undefined) {
    r.error('categories', allowed.problem, at);
    return;
  }
  for (const cat of c.split(',')) {
    if (!allowed.set.has(cat.trim())) {
      r.error('categories', `csv.Metadata.Annotations["categories"] value ${JSON.stringify(cat)} is not in the set of ${allowed.custom ? 'custom' : 'standard'} categories`, at);
    }
  }
}

function operatorHub(b: RegistryV1Bundle, r: ValidationResult): void {
  const spec = specOf(b);
  const at = (field: string): { file: string; field: string } => ({ file: b.csv.file, field });
  const provider = isRecord(spec.provider) ? spec.provider : {};
  if (typeof provider.name !== 'string' || provider.name === '') r.error('operatorhub.provider', 'is required', at('spec.provider.name'));
  (Array.isArray(spec.maintainers) ? spec.maintainers : []).forEach((m, i) => {
    const name = isRecord(m) ? m.name : undefined;
    const email = isRecord(m) ? m.email : undefined;
    if (typeof name !== 'string' || name === '' || typeof email !== 'string' || email === '') {
      r.error('operatorhub.maintainers', 'csv.Spec.Maintainers elements should contain both name and email', at(`spec.maintainers[${i}]`));
    }
    // The address is checked whether or not a name is given.
    if (typeof email === 'string' && email !== '' && !isMailAddress(email)) {
      r.error('operatorhub.maintainers', `csv.Spec.Maintainers email ${email} is invalid: not an RFC 5322 address`, at(`spec.maintainers[${i}].email`));
    }
  });
  (Array.isArray(spec.links) ? spec.links : []).forEach((l, i) => {
    const name = isRecord(l) ? l.name : undefined;
    const url = isRecord(l) ? l.url : undefined;
    if (typeof name !== 'string' || name === '' || typeof url !== 'string' || url === '') {
      r.error('operatorhub.links', 'each link needs a name and a url', at(`spec.links[${i}]`));
    }
    if (typeof url === 'string' && url !== '' && !isRequestUri(url)) r.error('operatorhub.links', `"${url}" is not a valid URL`, at(`spec.links[${i}].url`));
  });
  if (b.csv.version === '') r.error('operatorhub.version', 'is required', at('spec.version'));
  if (Array.isArray(spec.icon)) {
    if (spec.icon.length !== 1) r.error('operatorhub.icon', `must have exactly one icon, has ${spec.icon.length}`, at('spec.icon'));
    const icon: unknown = spec.icon[0];
    const data = isRecord(icon) ? icon.base64data : undefined;
    const mt = isRecord(icon) ? icon.mediatype : undefined;
    if (typeof data !== 'string' || data === '' || typeof mt !== 'string' || mt === '') r.error('operatorhub.icon', 'needs base64data and mediatype', at('spec.icon[0]'));
    if (typeof mt === 'string' && mt !== '' && !ICON_TYPES.has(mt)) r.error('operatorhub.icon', `"${mt}" is not an image media type (${[...ICON_TYPES].join(', ')})`, at('spec.icon[0].mediatype'));
  } else r.warning('operatorhub.icon', 'no icon', at('spec.icon'));
  if (b.csv.minKubeVersion !== undefined && !isStrictSemver(b.csv.minKubeVersion)) {
    r.error('operatorhub.min-kube-version', `"${b.csv.minKubeVersion}" is not a semantic version`, at('spec.minKubeVersion'));
  }
}

/** Go's url.ParseRequestURI: an absolute URL or an absolute path. */
function isRequestUri(s: string): boolean {
  if (s.startsWith('/')) return true;
  try {
    return new URL(s).protocol !== '';
  } catch {
    return false;
  }
}

function goodPractices(b: RegistryV1Bundle, r: ValidationResult): void {
  const { csv } = b;
  const at = (field: string): { file: string; field: string } => ({ file: csv.file, field });
  if (csv.deployments.length === 0) r.error('good-practices.deployments', 'the CSV installs no deployment', at('spec.install.spec.deployments'));
  for (const d of csv.deployments) {
    const t = d.spec.template;
    const pod = isRecord(t) && isRecord(t.spec) ? t.spec : {};
    (Array.isArray(pod.containers) ? pod.containers : []).forEach((c, i) => {
      if (!isRecord(c)) return;
      const req = isRecord(c.resources) && isRecord(c.resources.requests) ? c.resources.requests : {};
      if (req.cpu === undefined || req.memory === undefined) {
        r.warning('good-practices.resource-requests', `container "${String(c.name)}" does not request CPU and memory`, at(`${d.field}.spec.template.spec.containers[${i}].resources.requests`));
      }
    });
  }
  const m = /([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+)?$/.exec(csv.name);
  if (m === null || !isStrictSemver(m[0])) r.warning('good-practices.csv-name', `"${csv.name}" does not end in a MAJOR.MINOR.PATCH version`, at('metadata.name'));
  if (csv.name.split('.v').length !== 2) r.warning('good-practices.csv-name', `"${csv.name}" does not follow <operator-name>.v<semver>`, at('metadata.name'));
  const channels = [...new Set([...(b.annotations?.channels ?? []), b.annotations?.defaultChannel ?? ''])];
  const odd = channels.filter((c) => c !== '' && !['candidate', 'stable', 'fast'].some((p) => c.startsWith(p)));
  if (odd.length > 0) r.warning('good-practices.channel-names', `channels [${odd.join(', ')}] do not follow the candidate/stable/fast naming convention`, { file: 'metadata/annotations.yaml' });
  const createsCrds = [...csv.permissions, ...csv.clusterPermissions].some((p) =>
    p.rules.some((rule) => {
      const groups = strings(rule.apiGroups);
      const res = strings(rule.resources);
      const verbs = strings(rule.verbs);
      return groups.includes('apiextensions.k8s.io') && res.some((x) => ['customresourcedefinitions', '*', '[*]'].includes(x)) && verbs.some((v) => ['create', '*', '[*]', 'patch'].includes(v));
    }),
  );
  if (createsCrds) r.warning('good-practices.rbac-crd', 'the operator may create CRDs; an operator should not install other operators or CRDs itself', at('spec.install.spec'));
  for (const [list, rel] of [[csv.ownedCRDs, 'owned'], [csv.requiredCRDs, 'required']] as const) {
    for (const c of list) if (c.description === undefined || c.description === '') r.warning('good-practices.crd-description', `${rel} CRD "${c.name}" has no description`, at(`${c.field}.description`));
  }
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

const REMOVED_1_25: Record<string, string[]> = {
  'batch/v1beta1': ['CronJob'],
  'discovery.k8s.io/v1beta1': ['EndpointSlice'],
  'events.k8s.io/v1beta1': ['Event'],
  'autoscaling/v2beta1': ['HorizontalPodAutoscaler'],
  'policy/v1beta1': ['PodDisruptionBudget', 'PodSecurityPolicy'],
  'node.k8s.io/v1beta1': ['RuntimeClass'],
};
const REMOVED_1_26: Record<string, string[]> = {
  'flowcontrol.apiserver.k8s.io/v1beta1': ['FlowSchema', 'PriorityLevelConfiguration'],
  'autoscaling/v2beta2': ['HorizontalPodAutoscaler'],
};

function deprecatedApis(b: RegistryV1Bundle, r: ValidationResult, k8sVersion?: string): void {
  const at = { file: b.csv.file, field: 'spec.minKubeVersion' };
  let provided: [number, number, number] | undefined;
  if (k8sVersion !== undefined && k8sVersion !== '') {
    provided = parseTolerant(k8sVersion);
    if (provided === undefined) r.error('deprecated-apis', `--k8s-version "${k8sVersion}" is not a version`, {});
  }
  let minKube: [number, number, number] | undefined;
  if (b.csv.minKubeVersion !== undefined) {
    minKube = parseTolerant(b.csv.minKubeVersion);
    if (minKube === undefined) r.error('deprecated-apis', `cannot check removed APIs: "${b.csv.minKubeVersion}" is not a version`, at);
  }
  const checks: [[number, number, number], Record<string, string[]>][] = [
    [[1, 22, 0], REMOVED_1_22],
    [[1, 25, 0], REMOVED_1_25],
    [[1, 26, 0], REMOVED_1_26],
  ];
  for (const [ver, table] of checks) {
    const found: string[] = [];
    if (ver[1] === 22) for (const crd of b.crds) if (crd.apiVersion === 'apiextensions.k8s.io/v1beta1') found.push(`CRD ${crd.name} (${crd.file})`);
    for (const o of b.others) if (table[o.apiVersion]?.includes(o.kind) === true) found.push(`${o.kind} ${o.name} (${o.file})`);
    if (found.length === 0) continue;
    const removedIn = `${ver[0]}.${ver[1]}`;
    const msg = `uses APIs removed in Kubernetes ${removedIn}: ${found.join(', ')}; migrate them before installing on ${removedIn}+`;
    const hard = (provided !== undefined && compareVersions(provided, ver) >= 0) || (minKube !== undefined && compareVersions(minKube, ver) >= 0);
    if (hard) r.error('deprecated-apis', msg, { file: b.dir });
    else r.warning('deprecated-apis', msg, { file: b.dir });
  }
}
