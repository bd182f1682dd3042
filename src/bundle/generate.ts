/**
 * Authoring a registry+v1 bundle, like `operator-sdk generate bundle`: from a directory of CRDs,
 * RBAC, a Deployment (and optionally a base CSV and sample custom resources) write
 * `manifests/` (a ClusterServiceVersion, the CRDs, other supported objects) and
 * `metadata/annotations.yaml`. RBAC bound to the Deployment's service account becomes the CSV's
 * permissions / clusterPermissions, as OLM expects.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { InputError, type Problem } from '../util/errors.js';
import type { JsonObject } from './decode.js';
import { isRecord } from '../util/object.js';
import { csvNameErrors } from './validate-csv.js';
import { isStrictSemver } from '../util/semver.js';
import { kindSupport } from './supported-kinds.js';
import {
  registryV1Annotations,
} from './types.js';
import { parseYamlDocuments } from './yaml-docs.js';

export interface GenerateOptions {
  inputDir: string;
  outputDir: string;
  packageName: string;
  version: string;
  channels: string[];
  defaultChannel?: string;
}

export interface GenerateResult {
  csvName: string;
  files: string[];
  /** Input objects left out, with the reason. */
  skipped: { file: string; kind: string; name: string; reason: string }[];
}

interface Input {
  file: string;
  obj: JsonObject;
  kind: string;
  name: string;
}

const yaml = (v: unknown): string => stringify(v, { lineWidth: 0, aliasDuplicateObjects: false });

function nameOf(o: JsonObject): string {
  return isRecord(o.metadata) && typeof o.metadata.name === 'string' ? o.metadata.name : '';
}

async function readInputs(dir: string): Promise<Input[]> {
  const out: Input[] = [];
  const problems: Problem[] = [];
  const walk = async (d: string, rel: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => {
      throw new InputError('BUNDLE_GENERATE_INPUT', 'cannot read the input directory', { file: d });
    });
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) await walk(join(d, e.name), `${rel}${e.name}/`);
      else if (/\.(ya?ml|json)$/i.test(e.name)) {
        const file = `${rel}${e.name}`;
        const parsed = parseYamlDocuments(await readFile(join(d, e.name), 'utf8'), file);
        problems.push(...parsed.problems.filter((p) => p.severity === 'error'));
        for (const doc of parsed.documents) {
          if (!isRecord(doc.value) || typeof doc.value.kind !== 'string') {
            problems.push({ severity: 'error', rule: 'manifest.object', message: 'not a Kubernetes object (no kind)', file });
            continue;
          }
          out.push({ file, obj: doc.value, kind: doc.value.kind, name: nameOf(doc.value) });
        }
      }
    }
  };
  await walk(dir, '');
  const first = problems[0];
  if (first !== undefined) {
    throw new InputError('BUNDLE_GENERATE_INPUT', problems.map((p) => `${p.file ?? ''}: ${p.message}`).join('; '), { file: first.file });
  }
  return out;
}

function podSpecOf(dep: JsonObject): JsonObject {
  const spec = isRecord(dep.spec) ? dep.spec : {};
  const t = isRecord(spec.template) ? spec.template : {};
  return isRecord(t.spec) ? t.spec : {};
}

/** A bad option: named by its GenerateOptions field (`field`); the CLI says it as its flag. */
const badOption = (field: keyof GenerateOptions, reason: string): InputError => new InputError('BUNDLE_GENERATE_OPTION', reason, { field });

function checkOptions(opts: GenerateOptions): { csvName: string; defaultChannel: string } {
  if (opts.packageName === '') throw badOption('packageName', 'is required');
  if (!isStrictSemver(opts.version)) throw badOption('version', `${opts.version}: expected a semantic version such as 0.1.0`);
  if (opts.channels.length === 0) throw badOption('channels', 'needs at least one channel');
  const defaultChannel = opts.defaultChannel ?? opts.channels[0] ?? '';
  if (!opts.channels.includes(defaultChannel)) throw badOption('defaultChannel', `${defaultChannel} is not one of the channels (${opts.channels.join(', ')})`);
  const csvName = `${opts.packageName}.v${opts.version}`;
  const nameErrs = csvNameErrors(csvName);
  if (nameErrs.length > 0) throw badOption('packageName', `${opts.packageName}: CSV name "${csvName}" ${nameErrs.join(', ')}`);
  return { csvName, defaultChannel };
}

function serviceAccountOf(d: Input): string {
  const sa = podSpecOf(d.obj).serviceAccountName;
  return typeof sa === 'string' && sa !== '' ? sa : 'default';
}

interface Permissions {
  perms: Map<string, JsonObject[]>;
  clusterPerms: Map<string, JsonObject[]>;
  /** Roles and bindings folded into the CSV (not written as manifests). */
  used: Set<Input>;
}

/** RBAC bound to the operator's service accounts becomes CSV permissions. */
function collectPermissions(inputs: Input[], operatorSAs: ReadonlySet<string>): Permissions {
  const roles = new Map(inputs.filter((i) => i.kind === 'Role').map((i) => [i.name, i]));
  const clusterRoles = new Map(inputs.filter((i) => i.kind === 'ClusterRole').map((i) => [i.name, i]));
  const out: Permissions = { perms: new Map(), clusterPerms: new Map(), used: new Set() };
  for (const b of inputs.filter((i) => i.kind === 'RoleBinding' || i.kind === 'ClusterRoleBinding')) {
    const ref = isRecord(b.obj.roleRef) ? b.obj.roleRef : {};
    const subjects = Array.isArray(b.obj.subjects) ? b.obj.subjects.filter(isRecord) : [];
    const sas = subjects.filter((s) => s.kind === 'ServiceAccount' && typeof s.name === 'string' && operatorSAs.has(s.name)).map((s) => String(s.name));
    const role = ref.kind === 'ClusterRole' ? clusterRoles.get(String(ref.name)) : roles.get(String(ref.name));
    if (sas.length === 0 || role === undefined) continue;
    const rules = Array.isArray(role.obj.rules) ? role.obj.rules.filter(isRecord) : [];
    // A ClusterRole bound by a RoleBinding grants namespaced rights, so it is a permission.
    const target = b.kind === 'ClusterRoleBinding' ? out.clusterPerms : out.perms;
    for (const sa of sas) target.set(sa, [...(target.get(sa) ?? []), ...rules]);
    out.used.add(b);
    out.used.add(role);
  }
  return out;
}

/** `spec.customresourcedefinitions.owned` entries, and the GVKs samples may have. */
function ownedCrds(crds: Input[]): { owned: JsonObject[]; gvks: Set<string> } {
  const owned: JsonObject[] = [];
  const gvks = new Set<string>();
  for (const c of crds) {
    const spec = isRecord(c.obj.spec) ? c.obj.spec : {};
    const group = typeof spec.group === 'string' ? spec.group : '';
    const kind = isRecord(spec.names) && typeof spec.names.kind === 'string' ? spec.names.kind : '';
    for (const v of Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : []) {
      const vn = typeof v.name === 'string' ? v.name : '';
      const schema = isRecord(v.schema) && isRecord(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : {};
      const description = typeof schema.description === 'string' ? (schema.description.split('\n')[0] ?? '') : `${kind} is the Schema for the ${c.name} API`;
      owned.push({ name: c.name, version: vn, kind, displayName: kind, description });
      gvks.add(`${group}/${vn}/${kind}`);
    }
  }
  return { owned, gvks };
}

function str(o: JsonObject, key: string, fallback: string): string {
  const v = o[key];
  return typeof v === 'string' ? v : fallback;
}

const DEFAULT_INSTALL_MODES = [
  { type: 'OwnNamespace', supported: true },
  { type: 'SingleNamespace', supported: true },
  { type: 'MultiNamespace', supported: false },
  { type: 'AllNamespaces', supported: true },
];

interface CsvParts {
  csvName: string;
  opts: GenerateOptions;
  base: Input | undefined;
  deployments: Input[];
  samples: Input[];
  owned: JsonObject[];
  permissions: Permissions;
}

function buildCsv(p: CsvParts): JsonObject {
  const baseMeta = p.base !== undefined && isRecord(p.base.obj.metadata) ? p.base.obj.metadata : {};
  const baseSpec = p.base !== undefined && isRecord(p.base.obj.spec) ? p.base.obj.spec : {};
  const baseAnnotations = isRecord(baseMeta.annotations) ? baseMeta.annotations : {};
  const title = titleCase(p.opts.packageName);
  const annotations: JsonObject = {
    ...baseAnnotations,
    'alm-examples': JSON.stringify(p.samples.map((s) => s.obj), null, 2),
    capabilities: str(baseAnnotations, 'capabilities', 'Basic Install'),
    'operators.operatorframework.io/builder': 'binnacle',
  };
  const deploymentSpecs = p.deployments.map((d) => {
    const labels = isRecord(d.obj.metadata) && isRecord(d.obj.metadata.labels) ? d.obj.metadata.labels : undefined;
    return { name: d.name, ...(labels === undefined ? {} : { label: labels }), spec: d.obj.spec };
  });
  const toPerm = (m: Map<string, JsonObject[]>): JsonObject[] => [...m].sort(([a], [b]) => a.localeCompare(b)).map(([serviceAccountName, rules]) => ({ serviceAccountName, rules }));
  const baseCrds = isRecord(baseSpec.customresourcedefinitions) ? baseSpec.customresourcedefinitions : {};
  const { perms, clusterPerms } = p.permissions;
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: p.csvName, annotations },
    spec: {
      displayName: str(baseSpec, 'displayName', title),
      description: str(baseSpec, 'description', `${title} operator`),
      version: p.opts.version,
      minKubeVersion: str(baseSpec, 'minKubeVersion', '1.21.0'),
      maturity: str(baseSpec, 'maturity', 'alpha'),
      provider: isRecord(baseSpec.provider) ? baseSpec.provider : { name: p.opts.packageName },
      ...pick(baseSpec, ['keywords', 'links', 'maintainers', 'icon', 'replaces', 'skips', 'relatedImages', 'nativeAPIs', 'webhookdefinitions']),
      installModes: Array.isArray(baseSpec.installModes) ? baseSpec.installModes : DEFAULT_INSTALL_MODES,
      customresourcedefinitions: { owned: p.owned, ...(Array.isArray(baseCrds.required) ? { required: baseCrds.required } : {}) },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: deploymentSpecs,
          ...(perms.size > 0 ? { permissions: toPerm(perms) } : {}),
          ...(clusterPerms.size > 0 ? { clusterPermissions: toPerm(clusterPerms) } : {}),
        },
      },
    },
  };
}

export async function generateBundle(opts: GenerateOptions): Promise<GenerateResult> {
  const { csvName, defaultChannel } = checkOptions(opts);
  const inputs = await readInputs(opts.inputDir);
  const deployments = inputs.filter((i) => i.kind === 'Deployment');
  if (deployments.length === 0) throw new InputError('BUNDLE_GENERATE_INPUT', 'no Deployment found: the operator needs one', { file: opts.inputDir });
  const crds = inputs.filter((i) => i.kind === 'CustomResourceDefinition');
  const operatorSAs = new Set(deployments.map(serviceAccountOf));
  const permissions = collectPermissions(inputs, operatorSAs);
  const { owned, gvks } = ownedCrds(crds);
  const samples = inputs.filter((i) => {
    const av = typeof i.obj.apiVersion === 'string' ? i.obj.apiVersion : '';
    return gvks.has(`${av.includes('/') ? av : `/${av}`}/${i.kind}`);
  });
  const csv = buildCsv({ csvName, opts, base: inputs.find((i) => i.kind === 'ClusterServiceVersion'), deployments, samples, owned, permissions });

  await mkdir(join(opts.outputDir, 'manifests'), { recursive: true });
  await mkdir(join(opts.outputDir, 'metadata'), { recursive: true });
  const files: string[] = [];
  const skipped: GenerateResult['skipped'] = [];
  const write = async (rel: string, text: string): Promise<void> => {
    await writeFile(join(opts.outputDir, rel), text);
    files.push(rel);
  };
  await write(`manifests/${opts.packageName}.clusterserviceversion.yaml`, yaml(csv));
  for (const c of crds) await write(`manifests/${c.name}.crd.yaml`, yaml(stripNamespace(c.obj)));
  const folded = new Set(['CustomResourceDefinition', 'Deployment', 'ClusterServiceVersion']);
  for (const i of inputs) {
    if (folded.has(i.kind) || permissions.used.has(i) || samples.includes(i)) continue;
    if (i.kind === 'ServiceAccount' && operatorSAs.has(i.name)) continue; // the CSV creates it
    if (!kindSupport(i.kind).supported) {
      skipped.push({ file: i.file, kind: i.kind, name: i.name, reason: `kind ${i.kind} cannot be shipped in a registry+v1 bundle` });
      continue;
    }
    await write(`manifests/${i.name}_${String(i.obj.apiVersion).replaceAll('/', '_')}_${i.kind.toLowerCase()}.yaml`, yaml(stripNamespace(i.obj)));
  }
  const annotations = registryV1Annotations({ packageName: opts.packageName, channels: opts.channels, defaultChannel });
  await write('metadata/annotations.yaml', yaml({ annotations }));
  return { csvName, files, skipped };
}

function stripNamespace(o: JsonObject): JsonObject {
  const c = structuredClone(o);
  if (isRecord(c.metadata)) {
    delete c.metadata.namespace;
    delete c.metadata.creationTimestamp;
  }
  delete c.status;
  return c;
}

function pick(o: JsonObject, keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

function titleCase(s: string): string {
  return s.split(/[-_.]/).filter((w) => w !== '').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}
