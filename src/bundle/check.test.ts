import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { valueViolations } from '../helm/schema/validate-value.js';
import { BILLION_LAUGHS, bombMessage } from '../util/yaml.test-helper.js';
import { checkBundle } from './check.js';

const BUNDLE = join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'operatorhub-2021', 'poison-pill-operator', '0.0.5');
const CSV = join('manifests', 'poison-pill.clusterserviceversion.yaml');
const validateValue = (schema: unknown, value: unknown): { path: string; message: string }[] => valueViolations(schema, value);

async function copy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'binnacle-check-'));
  await cp(BUNDLE, dir, { recursive: true });
  return dir;
}

test('every static test runs without a scorecard config: missing spec and status descriptors are named by field', async () => {
  const dir = await copy();
  try {
    const res = await checkBundle(dir, { validateValue });
    assert.deepEqual(res.results.map((r) => r.name), ['basic-check-spec', 'olm-bundle-validation', 'olm-crds-have-validation', 'olm-crds-have-resources', 'olm-spec-descriptors', 'olm-status-descriptors']);
    const spec = res.results.find((r) => r.name === 'olm-spec-descriptors');
    assert.equal(spec?.state, 'fail');
    assert.ok(spec.problems.some((p) => p.includes('PoisonPillConfig') && p.includes('spec.safeTimeToAssumeNodeRebootedSeconds')), spec.problems.join('\n'));
    const status = res.results.find((r) => r.name === 'olm-status-descriptors');
    assert.ok(status?.problems.some((p) => p.includes('PoisonPillRemediation') && p.includes('no status descriptors')), status?.problems.join('\n'));
    assert.equal(res.results.find((r) => r.name === 'olm-crds-have-validation')?.state, 'pass');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('an alm-example that breaks its CRD schema fails olm-crds-have-validation; the config decides the tests and names those needing a cluster', async () => {
  const dir = await copy();
  try {
    const csv = await readFile(join(dir, CSV), 'utf8');
    await writeFile(join(dir, CSV), csv.replace('"spec": {}', '"spec": {"safeTimeToAssumeNodeRebootedSeconds": "soon"}'));
    await mkdir(join(dir, 'tests', 'scorecard'), { recursive: true });
    await writeFile(
      join(dir, 'tests', 'scorecard', 'config.yaml'),
      [
        'apiVersion: scorecard.operatorframework.io/v1alpha3',
        'kind: Configuration',
        'metadata: {name: config}',
        'stages:',
        '- parallel: true',
        '  tests:',
        '  - entrypoint: [scorecard-test, basic-check-spec]',
        '    image: quay.io/operator-framework/scorecard-test:v1.3.0',
        '    labels: {suite: basic, test: basic-check-spec-test}',
        '  - entrypoint: [scorecard-test, olm-crds-have-validation]',
        '    image: quay.io/operator-framework/scorecard-test:v1.3.0',
        '    labels: {suite: olm, test: olm-crds-have-validation-test}',
        '  - entrypoint: [scorecard-test-kuttl]',
        '    image: quay.io/operator-framework/scorecard-test-kuttl:v1.3.0',
        '    labels: {suite: kuttlsuite, test: kuttltest1}',
        '',
      ].join('\n'),
    );
    const res = await checkBundle(dir, { validateValue });
    assert.ok(res.config?.endsWith(join('tests', 'scorecard', 'config.yaml')));
    assert.deepEqual(res.results.map((r) => [r.name, r.state]), [
      ['basic-check-spec', 'pass'],
      ['olm-crds-have-validation', 'fail'],
      ['kuttltest1', 'not-run'],
    ]);
    assert.match(res.results[1]?.problems.join('\n') ?? '', /PoisonPillConfig poison-pill-config: .*safeTimeToAssumeNodeRebootedSeconds/);
    assert.match(res.results[2]?.reason ?? '', /needs a live cluster: it runs image quay\.io\/operator-framework\/scorecard-test-kuttl/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a scorecard config with more than 100 YAML aliases is read; an alias bomb is BUNDLE_CHECK_CONFIG naming the file', async () => {
  const dir = await copy();
  try {
    const config = join(dir, 'tests', 'scorecard', 'config.yaml');
    await mkdir(join(dir, 'tests', 'scorecard'), { recursive: true });
    const test = '  - &t {entrypoint: [scorecard-test, basic-check-spec], image: quay.io/operator-framework/scorecard-test:v1.3.0, labels: {suite: basic, test: basic-check-spec-test}}\n';
    await writeFile(config, `apiVersion: scorecard.operatorframework.io/v1alpha3\nkind: Configuration\nstages:\n- tests:\n${test}${'  - *t\n'.repeat(150)}`);
    const res = await checkBundle(dir, { validateValue });
    assert.equal(res.results.length, 151);
    await writeFile(config, `apiVersion: scorecard.operatorframework.io/v1alpha3\nkind: Configuration\n${BILLION_LAUGHS}`);
    await assert.rejects(checkBundle(dir, { validateValue }), { code: 'BUNDLE_CHECK_CONFIG', message: bombMessage(config) });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
