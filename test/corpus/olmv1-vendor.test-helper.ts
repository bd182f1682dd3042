/**
 * What Binnacle vendors from OLM v1 (`github.com/operator-framework/operator-controller`), at
 * one pinned version, and where each piece lands: the single list that hack/vendor-olmv1.ts
 * copies by and test/corpus/olmv1-vendor.test.ts checks against (byte for byte, both ways).
 *
 * The module comes from the Go module proxy through `go mod download`, which checks it against
 * the checksum database; OLMV1_MODULE.sum pins the same content here, so a re-tagged version
 * cannot slip in. A machine without Go, or without the module, is an error, never a skip.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export const OLMV1_MODULE = {
  path: 'github.com/operator-framework/operator-controller',
  version: 'v1.11.0',
  /** The module zip's `h1:` hash, as go.sum and `go mod download -json` print it. */
  sum: 'h1:I1isTdEJ5mT5WHV+o3DPI3bI+eO0xls4gaVbx8kS/Mg=',
} as const;

/** Where the test data from the module lives in this repository. */
export const OLMV1_VENDOR_DIR = `test/vendor/operator-controller-${OLMV1_MODULE.version}`;

/** Where the CRDs Binnacle may serve live (data files beside src/api/olmv1/crds.ts). */
export const OLMV1_CRD_DIR = 'src/api/olmv1/crds';

/**
 * One piece copied unchanged: a file, or a directory with everything under it. `from` is
 * relative to the module's root, `to` to the repository's.
 */
export interface VendoredPiece {
  from: string;
  to: string;
  /** Why it is vendored. */
  use: string;
}

export const OLMV1_VENDORED: readonly VendoredPiece[] = [
  { from: 'LICENSE', to: `${OLMV1_VENDOR_DIR}/LICENSE`, use: 'the licence (Apache-2.0) of everything below' },
  { from: 'LICENSE', to: `${OLMV1_CRD_DIR}/LICENSE`, use: 'the licence (Apache-2.0) of the CRDs' },
  ...(['standard', 'experimental'] as const).flatMap((variant) => [
    {
      from: `helm/olmv1/base/operator-controller/crd/${variant}/olm.operatorframework.io_clusterextensions.yaml`,
      to: `${OLMV1_CRD_DIR}/${variant}/olm.operatorframework.io_clusterextensions.yaml`,
      use: `the ClusterExtension CRD, ${variant} variant`,
    },
    {
      from: `helm/olmv1/base/catalogd/crd/${variant}/olm.operatorframework.io_clustercatalogs.yaml`,
      to: `${OLMV1_CRD_DIR}/${variant}/olm.operatorframework.io_clustercatalogs.yaml`,
      use: `the ClusterCatalog CRD, ${variant} variant`,
    },
  ]),
  {
    from: 'helm/olmv1/base/operator-controller/crd/experimental/olm.operatorframework.io_clusterobjectsets.yaml',
    to: `${OLMV1_CRD_DIR}/experimental/olm.operatorframework.io_clusterobjectsets.yaml`,
    use: 'the ClusterObjectSet CRD (experimental only: the BoxcutterRuntime gate brings it)',
  },
  { from: 'test/e2e/features', to: `${OLMV1_VENDOR_DIR}/test/e2e/features`, use: "operator-controller's e2e scenarios (godog)" },
  { from: 'test/e2e/steps/testdata', to: `${OLMV1_VENDOR_DIR}/test/e2e/steps/testdata`, use: 'the namespace, ServiceAccount and RBAC templates those scenarios\' steps apply' },
  {
    from: 'testdata/images/bundles/webhook-operator/v0.0.1',
    to: `${OLMV1_VENDOR_DIR}/testdata/images/bundles/webhook-operator/v0.0.1`,
    use: 'the bundle the webhook scenarios publish (StaticBundleDir in install.feature)',
  },
  {
    from: 'test/regression/convert/testdata',
    to: `${OLMV1_VENDOR_DIR}/test/regression/convert/testdata`,
    use: 'registry+v1 bundles and the objects operator-controller renders from them (test/corpus/olmv1-convert-goldens.test.ts)',
  },
];

/** Files of ours inside vendored directories (they say where the rest came from). */
export const OLMV1_OWN_FILES: readonly string[] = [`${OLMV1_VENDOR_DIR}/README.md`, `${OLMV1_CRD_DIR}/README.md`];

/**
 * The module's directory in the Go module cache, downloaded first when missing. Throws when Go
 * is missing, the download fails, or the module is not the pinned content.
 */
export function olmv1ModuleDir(): string {
  const work = mkdtempSync(join(tmpdir(), 'binnacle-olmv1-mod-'));
  try {
    const spec = `${OLMV1_MODULE.path}@${OLMV1_MODULE.version}`;
    // Outside any module (an empty directory), so no go.mod of ours is consulted or changed.
    const r = spawnSync('go', ['mod', 'download', '-json', spec], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, GOFLAGS: '-mod=mod', GO111MODULE: 'on' },
      timeout: 10 * 60_000,
    });
    if (r.error !== undefined) throw new Error(`go mod download ${spec}: ${r.error.message} (Go must be on PATH)`);
    let info: { Dir?: string; Sum?: string; Error?: string };
    try {
      info = JSON.parse(r.stdout) as typeof info;
    } catch {
      throw new Error(`go mod download ${spec} exited ${r.status}: ${r.stderr.trim() || r.stdout.trim()}`);
    }
    if (info.Error !== undefined || r.status !== 0) throw new Error(`go mod download ${spec}: ${info.Error ?? r.stderr.trim()}`);
    if (info.Sum !== OLMV1_MODULE.sum) throw new Error(`go mod download ${spec}: sum ${info.Sum ?? '(none)'}, pinned ${OLMV1_MODULE.sum}`);
    if (info.Dir === undefined) throw new Error(`go mod download ${spec}: no Dir in its answer`);
    return info.Dir;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Every file under `path` (or `path` itself when a file), relative to `path`, sorted; [] when missing. */
export function filesUnder(path: string): string[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    return [];
  }
  if (!st.isDirectory()) return [''];
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(path, p));
    }
  };
  walk(path);
  return out.sort();
}
