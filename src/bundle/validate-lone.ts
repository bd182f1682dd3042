/**
 * Validation of manifests that are not a bundle: a lone file, or a directory without a
 * ClusterServiceVersion. Each object is checked by the validators for its kind, as
 * operator-framework/api's per-kind validators do (`ClusterServiceVersionValidator`,
 * `CustomResourceDefinitionValidator`, `OperatorGroupValidator`, `ObjectValidator`). A lone CSV
 * is checked on its own: its owned CRDs are not expected beside it.
 */
import { ValidationResult, type Problem } from '../util/errors.js';
import { CSV_KIND, decodeCsv } from './csv.js';
import { Decoder } from './decode.js';
import type { ManifestObject, RegistryV1Bundle } from './types.js';
import { validateCrd } from './validate-crd.js';
import { validateCsv } from './validate-csv.js';
import { validateObjects, validateOperatorGroups } from './validate-community.js';

/** Kinds the `object` checks look at. */
const OBJECT_KINDS = new Set(['PodDisruptionBudget', 'PriorityClass', 'Role', 'ClusterRole']);

export function validateLoneObjects(path: string, objects: readonly ManifestObject[], loadProblems: readonly Problem[]): ValidationResult {
  const r = new ValidationResult(`manifests ${path}`);
  for (const p of loadProblems) r.add(p);
  if (objects.length === 0 && !loadProblems.some((p) => p.severity === 'error')) {
    r.error('bundle.no-objects', 'holds no Kubernetes object to validate', { file: path });
  }
  for (const o of objects) {
    if (o.kind === CSV_KIND) validateLoneCsv(path, o, r.child(`csv ${o.file}`));
    else if (o.kind === 'CustomResourceDefinition') validateCrd(o, r.child(`crd ${o.file}`));
  }
  validateOperatorGroups(objects, r.child('operatorgroups'));
  validateObjects(objects.filter((o) => OBJECT_KINDS.has(o.kind)), r.child('objects'));
  return r;
}

/** A CSV as a bundle of one object: the CSV checks, without the bundle-level ones. */
function validateLoneCsv(path: string, o: ManifestObject, r: ValidationResult): void {
  const d = new Decoder(o.file);
  const csv = decodeCsv(o.object, d);
  for (const p of d.problems) r.add(p);
  const bundle: RegistryV1Bundle = {
    dir: path,
    layout: 'package-manifest',
    name: csv.name,
    packageName: '',
    csv,
    crds: [],
    others: [],
    objects: [o],
    dependencies: [],
    properties: [],
    ignoredFiles: [],
    loadWarnings: [],
  };
  validateCsv(bundle, r);
}
