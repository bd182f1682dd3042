/**
 * The native engine and the WebAssembly engine are the same Go source: on charts of the corpus
 * (../shared/corpus/charts, as test/corpus/helm-template-corpus.test.ts finds it) they answer
 * byte for byte the same, templates, CRDs and the release's manifest, hooks and notes alike.
 * Charts that draw random values (passwords, keys) are not among them.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createHelmEngine, type TemplateRequest } from './index.js';

const CHARTS = process.env.BINNACLE_CHARTS_CORPUS ?? path.resolve(import.meta.dirname, '../../../shared/corpus/charts');
const SAMPLE = ['cert-manager__cert-manager', 'ingress-nginx__ingress-nginx', 'kwok__kwok', 'metrics-server__metrics-server', 'prometheus-community__kube-state-metrics', 'argo__argo-rollouts', 'pelorus__pelorus'];

describe('native and WebAssembly engines answer alike', () => {
  const wasm = createHelmEngine(undefined, { engine: 'wasm' });
  const native = createHelmEngine(undefined, { engine: 'native' });
  after(() => Promise.all([wasm.close(), native.close()]));

  for (const name of SAMPLE) {
    test(name, { timeout: 120_000 }, async () => {
      const chart = path.join(CHARTS, name);
      assert.ok(existsSync(chart), `the charts corpus has ${name} (at ${CHARTS}; BINNACLE_CHARTS_CORPUS to move it)`);
      const req: TemplateRequest = { chart, releaseName: 'parity', namespace: 'parity-ns', kubeVersion: '1.33.0', includeCrds: true };
      const [a, b] = [await wasm.render(req), await native.render(req)];
      assert.ok(a.output.length > 1000, `${name} renders something (${a.output.length} bytes)`);
      assert.equal(b.output, a.output);
      assert.deepEqual(b.crds, a.crds);
      assert.equal(b.release.manifest, a.release.manifest);
      assert.deepEqual(b.release.hooks, a.release.hooks);
      assert.equal(b.release.info?.notes, a.release.info?.notes);
    });
  }
});
