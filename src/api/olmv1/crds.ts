/**
 * OLM v1's CustomResourceDefinitions (`olm.operatorframework.io/v1` ClusterExtension and
 * ClusterCatalog), exactly as operator-controller v1.11.0 ships them: vendored data files in
 * ./crds/ (see its README: provenance, and why Binnacle serves the experimental variant), read
 * here, never rewritten. Binnacle's own CRDs are built in ../crds.ts; these are not, so that a
 * cluster that moves between OLM v1 and Binnacle sees the same schema.
 *
 * The files sit beside this module in the sources; `npm run build` copies them beside the
 * compiled module (dist/api/olmv1/crds/), and the bundled CLI, which runs from
 * dist/cli-bundle/, finds them there through the project root.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../../kube/types.js';
import { BinnacleError } from '../../util/errors.js';
import { readYaml } from '../../util/yaml.js';
import { OLMV1_GROUP, OLMV1_VERSION } from './types.js';

/** operator-controller's `options.featureSet`; experimental is a superset of standard (README). */
export type Olmv1CrdVariant = 'standard' | 'experimental';
export const OLMV1_CRD_VARIANT: Olmv1CrdVariant = 'experimental';

/** The kinds, each with its vendored file (the module's name for it). */
export const OLMV1_CRD_FILES = {
  ClusterExtension: 'olm.operatorframework.io_clusterextensions.yaml',
  ClusterCatalog: 'olm.operatorframework.io_clustercatalogs.yaml',
  /** In the experimental variant only (the BoxcutterRuntime gate's kind); served on request (`--olmv1-object-sets`). */
  ClusterObjectSet: 'olm.operatorframework.io_clusterobjectsets.yaml',
} as const;

export type Olmv1Kind = keyof typeof OLMV1_CRD_FILES;

/** Where this file's data lives relative to the compiled module's folder. */
const DATA = join('api', 'olmv1', 'crds');

/**
 * The folder holding the vendored CRDs: beside this module (sources, or tsc's dist/), else
 * under the project root's dist/ or src/ (the bundled CLI's chunks sit in dist/cli-bundle/).
 */
export function olmv1CrdDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'crds')];
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      candidates.push(join(dir, 'dist', DATA), join(dir, 'src', DATA));
      break;
    }
    if (dirname(dir) === dir) break;
  }
  const found = candidates.find((c) => existsSync(join(c, OLMV1_CRD_VARIANT, OLMV1_CRD_FILES.ClusterExtension)));
  if (found === undefined) throw new BinnacleError('internal', 'OLMV1_CRDS_MISSING', `OLM v1's CRDs are not installed with Binnacle: looked in ${candidates.join(', ')}`);
  return found;
}

/** The CRD of one OLM v1 kind, in the given variant (default: the one Binnacle serves), checked to be that kind's. */
export function loadOlmv1Crd(kind: Olmv1Kind, variant: Olmv1CrdVariant = OLMV1_CRD_VARIANT, dir = olmv1CrdDir()): KubeObject {
  const file = join(dir, variant, OLMV1_CRD_FILES[kind]);
  const value = readYaml(readFileSync(file, 'utf8'), file);
  const problem = crdProblem(value, kind);
  if (problem !== undefined) throw new BinnacleError('internal', 'OLMV1_CRD_INVALID', `${file}: ${problem}`);
  return value as KubeObject;
}

/** Both OLM v1 CRDs, ClusterCatalog first (a ClusterExtension resolves from catalogs). */
export function loadOlmv1Crds(variant: Olmv1CrdVariant = OLMV1_CRD_VARIANT): KubeObject[] {
  const dir = olmv1CrdDir();
  return [loadOlmv1Crd('ClusterCatalog', variant, dir), loadOlmv1Crd('ClusterExtension', variant, dir)];
}

function crdProblem(value: unknown, kind: Olmv1Kind): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const o = value as Record<string, unknown>;
  if (o.apiVersion !== 'apiextensions.k8s.io/v1' || o.kind !== 'CustomResourceDefinition') return 'not an apiextensions.k8s.io/v1 CustomResourceDefinition';
  if (typeof o.metadata !== 'object' || o.metadata === null) return 'no metadata';
  const spec = o.spec as Record<string, unknown> | undefined;
  const names = spec?.names as Record<string, unknown> | undefined;
  if (spec?.group !== OLMV1_GROUP || names?.kind !== kind) return `not the CRD of ${kind}.${OLMV1_GROUP}`;
  const versions = Array.isArray(spec.versions) ? (spec.versions as Record<string, unknown>[]) : [];
  if (!versions.some((v) => v.name === OLMV1_VERSION && v.served === true && v.storage === true)) return `${OLMV1_VERSION} is not its served storage version`;
  return undefined;
}
