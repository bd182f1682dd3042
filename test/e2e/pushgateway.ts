/**
 * The chart the HelmOperator e2e files serve as a kind: the corpus's prometheus-pushgateway,
 * packaged at a chosen version and pushed to the e2e registry with the real `helm`, and the
 * HelmOperator that serves it as `Pushgateway` of a group of the file's own.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { binDir } from '../../src/cluster/layout.js';
import { API_VERSION } from '../../src/api/types.js';
import type { KubeClient } from '../../src/kube/client.js';
import { corpusChartsDir } from '../corpus/corpus.test-helper.js';

const run = promisify(execFile);

export const PUSHGATEWAY_CHART = join(corpusChartsDir(), 'prometheus-community__prometheus-pushgateway');
/** The real helm, from the tools' folder (BINNACLE_BIN_DIR, else .cache/bin). */
export const HELM = join(binDir(), 'helm');

/** Packages the chart at `version` under `dir` and pushes it to `repo` (`oci://…`), helm's own homes under `dir`. */
export async function pushPushgateway(dir: string, version: string, repo: string): Promise<void> {
  const out = join(dir, 'charts', version);
  await run(HELM, ['package', PUSHGATEWAY_CHART, '--version', version, '-d', out]);
  await run(HELM, ['push', join(out, `prometheus-pushgateway-${version}.tgz`), repo, '--plain-http'], {
    env: { ...process.env, HELM_CACHE_HOME: join(dir, 'helm-cache'), HELM_CONFIG_HOME: join(dir, 'helm-config') },
  });
}

export interface PushgatewayOperator {
  name: string;
  /** `oci://…` the chart was pushed to. */
  repo: string;
  group: string;
  /** The installer ServiceAccount's namespace (named `installer`). */
  namespace: string;
  /** Fields of the kind beside group/version/kind (reconcilePeriod 5s unless given). */
  kind?: Record<string, unknown>;
  /** Fields of the spec beside chart, kinds and serviceAccount. */
  spec?: Record<string, unknown>;
}

/** Applies the HelmOperator serving the chart (semver range ~3.8.0) as `Pushgateway`. */
export async function applyPushgatewayOperator(client: KubeClient, o: PushgatewayOperator): Promise<void> {
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'HelmOperator',
    metadata: { name: o.name },
    spec: {
      chart: { oci: { ref: `${o.repo}/prometheus-pushgateway`, insecure: true }, version: '~3.8.0' },
      kinds: [{ group: o.group, version: 'v1alpha1', kind: 'Pushgateway', reconcilePeriod: '5s', ...o.kind }],
      serviceAccount: { namespace: o.namespace, name: 'installer' },
      ...o.spec,
    },
  });
}
