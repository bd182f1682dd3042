/**
 * Bundle-level checks (operator-framework/api `internal/bundle.go` and operator-registry's
 * annotation checks): owned CRDs present and every bundled CRD owned, no duplicate CRD keys,
 * service accounts that clash with the CSV's, compressed size limit, related images, and the
 * metadata files (annotations, dependencies, properties).
 */
import type { ValidationResult } from '../util/errors.js';
import { decodeConstraintProperty } from '../declcfg/index.js';
import { isRecord } from '../util/object.js';
import { providedApis } from './fbc.js';
import { isValidImageReference } from '../oci/reference.js';
import {
  ANNOTATION_CHANNELS,
  ANNOTATION_DEFAULT_CHANNEL,
  ANNOTATION_MANIFESTS,
  ANNOTATION_MEDIATYPE,
  ANNOTATION_METADATA,
  ANNOTATION_PACKAGE,
  MEDIATYPE_REGISTRY_V1,
  type RegistryV1Bundle,
} from './types.js';
import semver from 'semver';

/** OLM stages a bundle in one ConfigMap, so its gzip size must stay under ~1 MiB. */
export const MAX_BUNDLE_COMPRESSED = 1 << 20;

const DEPENDENCIES_FILE = 'metadata/dependencies.yaml';

export interface BundleSize {
  bytes: number;
  compressed: number;
}

export function validateBundleLevel(bundle: RegistryV1Bundle, r: ValidationResult, size?: BundleSize): void {
  validateCrdOwnership(bundle, r);
  validateServiceAccounts(bundle, r);
  if (size !== undefined) validateSize(bundle, size, r);
  validateRelatedImages(bundle, r);
  for (const o of bundle.others) {
    if (o.name === '') r.error('bundle.object-name', `${o.kind} has no metadata.name`, { file: o.file, field: 'metadata.name' });
  }
  validateMetadata(bundle, r);
}

/** Each CRD in the bundle once, each owned CRD in the bundle, each CRD (by group and kind) owned by the CSV. */
function validateCrdOwnership(bundle: RegistryV1Bundle, r: ValidationResult): void {
  const { csv } = bundle;
  const bundleCrdKeys = new Map<string, string>();
  for (const crd of bundle.crds) {
    const keys = providedApis({ ...bundle, crds: [crd], csv: { ...csv, ownedAPIServices: [] } });
    for (const k of keys) {
      const key = `${k.group}/${k.version}/${k.kind}`;
      const prev = bundleCrdKeys.get(key);
      if (prev !== undefined) r.error('bundle.crd-duplicate', `CRD ${key} is defined twice (also in ${prev})`, { file: crd.file });
      bundleCrdKeys.set(key, crd.file);
    }
  }
  const remaining = new Map(bundleCrdKeys);
  const ownedGroupKinds = new Set<string>();
  for (const o of csv.ownedCRDs) {
    const dot = o.name.indexOf('.');
    const group = dot < 0 ? o.name : o.name.slice(dot + 1);
    const key = `${group}/${o.version}/${o.kind}`;
    if (!bundleCrdKeys.has(key)) {
      r.error('bundle.owned-crd-missing', `owned CRD ${key} (${o.name}) is not in the bundle`, { file: csv.file, field: o.field });
    } else {
      remaining.delete(key);
      ownedGroupKinds.add(`${group}/${o.kind}`);
    }
  }
  for (const [key, file] of remaining) {
    const [group, , kind] = key.split('/');
    if (ownedGroupKinds.has(`${group ?? ''}/${kind ?? ''}`)) continue;
    r.error('bundle.crd-not-owned', `CRD ${key} is in the bundle but the CSV does not list it in spec.customresourcedefinitions.owned`, { file });
  }
}

/** A ServiceAccount the CSV's deployments run as is created from the CSV, not from a manifest too. */
function validateServiceAccounts(bundle: RegistryV1Bundle, r: ValidationResult): void {
  const csvServiceAccounts = new Set<string>();
  for (const d of bundle.csv.deployments) {
    const t = d.spec.template;
    const pod = isRecord(t) && isRecord(t.spec) ? t.spec : {};
    csvServiceAccounts.add(typeof pod.serviceAccountName === 'string' ? pod.serviceAccountName : '');
  }
  for (const o of bundle.others) {
    if (o.kind === 'ServiceAccount' && o.apiVersion === 'v1' && csvServiceAccounts.has(o.name)) {
      r.error('bundle.service-account', `ServiceAccount "${o.name}" is also created from the CSV; remove this manifest or rename one of them`, { file: o.file, field: 'metadata.name' });
    }
  }
}

function validateSize(bundle: RegistryV1Bundle, size: BundleSize, r: ValidationResult): void {
  const fmt = (n: number): string => (n < 1000 ? `${n} B` : `${(n / 1000).toFixed(1)} kB`);
  if (size.compressed > MAX_BUNDLE_COMPRESSED) {
    r.error('bundle.size', `compressed size ${fmt(size.compressed)} exceeds the ${fmt(MAX_BUNDLE_COMPRESSED)} limit (uncompressed ${fmt(size.bytes)})`, { file: bundle.dir });
  } else if (size.compressed > MAX_BUNDLE_COMPRESSED * 0.85) {
    r.warning('bundle.size', `compressed size ${fmt(size.compressed)} is close to the ${fmt(MAX_BUNDLE_COMPRESSED)} limit`, { file: bundle.dir });
  }
}

function validateRelatedImages(bundle: RegistryV1Bundle, r: ValidationResult): void {
  const { csv } = bundle;
  csv.relatedImages.forEach((ri, i) => {
    const field = `spec.relatedImages[${i}].image`;
    if (ri.image === '') r.error('bundle.related-images', 'is empty', { file: csv.file, field });
    else if (!isValidImageReference(ri.image)) r.error('bundle.related-images', `"${ri.image}" is not a valid image reference`, { file: csv.file, field });
  });
}

function validateMetadata(bundle: RegistryV1Bundle, r: ValidationResult): void {
  if (bundle.layout !== 'bundle') return;
  const file = 'metadata/annotations.yaml';
  const a = bundle.annotations;
  if (a === undefined) {
    r.error('metadata.annotations', 'is missing', { file });
  } else {
    for (const key of [ANNOTATION_MEDIATYPE, ANNOTATION_MANIFESTS, ANNOTATION_METADATA, ANNOTATION_PACKAGE, ANNOTATION_CHANNELS]) {
      if (a.all[key] === undefined || a.all[key] === '') r.error('metadata.annotations', 'is required', { file, field: `annotations.${key}` });
    }
    if (a.mediatype !== undefined && a.mediatype !== MEDIATYPE_REGISTRY_V1 && a.mediatype !== 'plain+v0' && a.mediatype !== 'helm') {
      r.error('metadata.mediatype', `"${a.mediatype}" is not a known bundle media type`, { file, field: `annotations.${ANNOTATION_MEDIATYPE}` });
    }
    if (a.all[ANNOTATION_MANIFESTS] !== undefined && a.all[ANNOTATION_MANIFESTS].replace(/\/$/, '') !== 'manifests') {
      r.warning('metadata.annotations', `manifests are expected in "manifests/", not "${a.all[ANNOTATION_MANIFESTS]}"`, { file, field: `annotations.${ANNOTATION_MANIFESTS}` });
    }
    if (a.defaultChannel !== undefined && a.defaultChannel !== '' && !a.channels.includes(a.defaultChannel)) {
      r.warning('metadata.default-channel', `default channel "${a.defaultChannel}" is not one of the channels [${a.channels.join(', ')}]`, { file, field: `annotations.${ANNOTATION_DEFAULT_CHANNEL}` });
    }
    for (const [k, v] of Object.entries(a.all)) {
      if (v !== v.trim()) r.warning('metadata.whitespace', 'has leading or trailing spaces', { file, field: `annotations.${k}` });
    }
  }
  bundle.dependencies.forEach((d, i) => validateDependency(d, `dependencies[${i}]`, r));
}

/** One entry of metadata/dependencies.yaml: a package with a version range, a GVK, a constraint or a label. */
function validateDependency(d: RegistryV1Bundle['dependencies'][number], field: string, r: ValidationResult): void {
  const v = isRecord(d.value) ? d.value : undefined;
  if (d.type === 'olm.package') validatePackageDependency(v, field, r);
  else if (d.type === 'olm.gvk') validateGvkDependency(v, field, r);
  else if (d.type === 'olm.constraint') {
    if (decodeConstraintProperty(d.value) === undefined) {
      r.error('metadata.dependencies', 'must set exactly one of cel, gvk, package, all, any, not (each well formed)', { file: DEPENDENCIES_FILE, field: `${field}.value` });
    }
  } else if (d.type !== 'olm.label') {
    r.error('metadata.dependencies', `unknown dependency type "${d.type}" (olm.package, olm.gvk, olm.constraint, olm.label)`, { file: DEPENDENCIES_FILE, field: `${field}.type` });
  }
}

function validatePackageDependency(v: Record<string, unknown> | undefined, field: string, r: ValidationResult): void {
  if (v === undefined || typeof v.packageName !== 'string' || v.packageName === '') r.error('metadata.dependencies', 'is required', { file: DEPENDENCIES_FILE, field: `${field}.value.packageName` });
  if (v === undefined || typeof v.version !== 'string' || semver.validRange(v.version) === null) {
    r.error('metadata.dependencies', `${JSON.stringify(v?.version) ?? 'nothing'} is not a version range`, { file: DEPENDENCIES_FILE, field: `${field}.value.version` });
  }
}

function validateGvkDependency(v: Record<string, unknown> | undefined, field: string, r: ValidationResult): void {
  for (const k of ['group', 'version', 'kind']) {
    const x = v?.[k];
    if (typeof x !== 'string' || (x === '' && k !== 'group')) r.error('metadata.dependencies', 'is required', { file: DEPENDENCIES_FILE, field: `${field}.value.${k}` });
    else if (x !== x.trim()) r.warning('metadata.whitespace', `"${x}" has leading or trailing spaces, so it will not match`, { file: DEPENDENCIES_FILE, field: `${field}.value.${k}` });
  }
}
