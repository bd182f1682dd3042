/**
 * Parity of Binnacle's bundle validators with operator-framework/api v0.27.0 on the reference's
 * OWN test cases: the tables of its `pkg/validation/internal/*_test.go` and their testdata
 * (vendored under test/vendor/operator-framework-api-v0.27.0, Apache-2.0, since CI cannot fetch).
 * Each case is the input its table names (a file, a bundle directory, or the same bundle changed
 * as the Go test changes it in memory) and the validator it runs. The EXPECTED verdict is not
 * written here: it comes from running the reference code itself on the same input
 * (hack/bench-tools/operator-verify/parity -cases, built and cached in .cache/bench-bin; the test
 * fails when Go cannot build it). Binnacle runs what a user gets: `bundle validate FILE` (lone
 * objects, by kind) for per-kind cases; for bundle cases, loading the bundle and then the checks
 * of the one validator the table names (Binnacle's bundle-level checks for BundleValidator, the
 * optional validator for an optional suite).
 *
 * Prints verdict agreement (both reject or both accept) per validator and in total, counted per
 * reference test case, and warning agreement as an aside. Every verdict difference must be in
 * DELIBERATE with its reason; the total must be at least 95%.
 *
 * Left out: multiarch_test.go (pulls images from registries), and table rows whose input is no
 * file the validator can be given (a nil bundle, a nil CSV, the loader's own size arithmetic).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { validateBundleDir, validateLonePath, validatePackageManifest, type OptionalValidator } from '../../src/bundle/index.js';
import type { ValidationResult } from '../../src/util/errors.js';

const ROOT = resolve(import.meta.dirname, '../..');
const VENDOR = join(ROOT, 'test', 'vendor', 'operator-framework-api-v0.27.0');
const TD = join(VENDOR, 'pkg', 'validation', 'internal', 'testdata');
const MTD = join(VENDOR, 'pkg', 'manifests', 'testdata');
const PARITY = join(ROOT, '.cache', 'bench-bin', 'operator-verify-parity');

type PerKind = 'csv' | 'crd' | 'object' | 'operatorgroup' | 'packagemanifest';
type Validator = PerKind | 'bundle' | OptionalValidator;

type Obj = Record<string, unknown>;
type Mutation = (dir: string) => Promise<void>;

interface Case {
  /** `<Go test function>/<table row>`. */
  id: string;
  validator: Validator;
  /** Relative to the vendored testdata (`manifests:` for pkg/manifests/testdata), or written by `write`. */
  input: string;
  /** Changes a copy of the input, as the Go test changes the loaded bundle. */
  mutate?: Mutation;
  /** A file the case writes itself (the Go test builds the object in memory). */
  write?: string;
  values?: Record<string, string>;
  env?: Record<string, string>;
}

/**
 * Verdict differences kept on purpose, by Binnacle rule, each with its reason. A difference is
 * deliberate when Binnacle rejects only through these rules, or when the reference rejects and
 * Binnacle only warns through one of them. Binnacle's stricter rules that protect an install but
 * that the reference does not have are warnings in validation (the install still refuses), so
 * they need no entry here.
 */
const DELIBERATE: Record<string, string> = {
  'crd.preserve-unknown-fields':
    'a v1beta1 CRD that preserves unknown fields (the v1beta1 default) is refused by the reference and by Kubernetes 1.22+; Binnacle installs it as v1 with x-kubernetes-preserve-unknown-fields, as OLM does, so it only warns',
  'crd.api-approval': 'a v1beta1 CRD of a protected group without api-approved.kubernetes.io: Binnacle installs it as v1 with an "unapproved" annotation, so it only warns',
  'csv.webhook': 'a webhook definition OLM cannot install (its deployment is not in the CSV, no sideEffects or admissionReviewVersions): the reference does not check webhook definitions',
};

function deliberateReason(ours: Verdict, theirs: Verdict): string | undefined {
  const keys = Object.keys(DELIBERATE);
  const match = (rule: string): string | undefined => keys.find((k) => rule.startsWith(k));
  if (ours.errorRules.length > 0 && theirs.errors.length === 0) {
    const ks = ours.errorRules.map(match);
    return ks.every((k) => k !== undefined) ? ks[0] : undefined;
  }
  if (ours.errorRules.length === 0 && theirs.errors.length > 0) return ours.warningRules.map(match).find((k) => k !== undefined);
  return undefined;
}

// --- inputs ---------------------------------------------------------------------------------

async function editYaml(file: string, edit: (doc: Obj) => void): Promise<void> {
  const doc = parse(await readFile(file, 'utf8')) as Obj;
  edit(doc);
  await writeFile(file, stringify(doc));
}
const o = (v: unknown): Obj => v as Obj;
const ETCD_CSV = 'etcdoperator.v0.9.4.clusterserviceversion.yaml';
const csvEdit = (file: string, edit: (csv: Obj) => void): Mutation => (d) => editYaml(join(d, file), edit);
const etcdCsv = (edit: (csv: Obj) => void): Mutation => csvEdit(ETCD_CSV, edit);
const annotations = (a: Record<string, string>): Mutation => etcdCsv((c) => void (o(c.metadata).annotations = a));
const maxOcp = (v: string): Record<string, string> => ({ 'olm.properties': `[{"type": "olm.maxOpenShiftVersion", "value": "${v}"}]` });
const firstRule = (rule: Obj): Mutation =>
  etcdCsv((c) => {
    const perms = o(o(o(c.spec).install).spec).permissions as Obj[];
    (perms[0]?.rules as Obj[])[0] = rule;
  });
const addFile = (name: string, text: string): Mutation => (d) => writeFile(join(d, name), text);
const pkg = (doc: Obj): string => stringify({ packageName: 'test-package', ...doc });

const DOCKERFILE = (name: string): string => join(TD, 'dockerfile', name);

/** The reference's test tables, one entry per row. */
const CASES: Case[] = [
  // bundle_test.go TestValidateBundle (BundleValidator: loading and the bundle-level checks)
  { id: 'TestValidateBundle/registryv1 valid bundle', validator: 'bundle', input: 'valid_bundle' },
  { id: 'TestValidateBundle/valid bundle with multiple versions in CRD', validator: 'bundle', input: 'valid_bundle_2' },
  { id: 'TestValidateBundle/CRD etcdclusters v1beta2 missing in bundle', validator: 'bundle', input: 'invalid_bundle' },
  { id: 'TestValidateBundle/CRD etcdclusters v1beta2 missing in CSV', validator: 'bundle', input: 'invalid_bundle_2' },
  { id: 'TestValidateBundle/duplicate CRD in bundle', validator: 'bundle', input: 'invalid_bundle_3' },
  { id: "TestValidateBundle/service account can't match sa in csv", validator: 'bundle', input: 'invalid_bundle_sa' },
  // bundle_test.go TestValidateServiceAccount (objects added to a bundle whose CSV runs as etcd-operator)
  {
    id: 'TestValidateServiceAccount/an object with the same name as the service account',
    validator: 'bundle',
    input: 'valid_bundle',
    mutate: addFile('deployment.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: etcd-operator\nspec:\n  template:\n    spec:\n      serviceAccountName: etcd-operator\n'),
  },
  {
    id: 'TestValidateServiceAccount/service account included in both CSV and bundle',
    validator: 'bundle',
    input: 'valid_bundle',
    mutate: addFile('sa.yaml', 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: etcd-operator\n'),
  },
  // bundle_test.go Test_EnsureGetBundleSizeValue
  { id: 'Test_EnsureGetBundleSizeValue/valid bundle', validator: 'bundle', input: 'valid_bundle' },
  // csv_test.go TestValidateCSV
  { id: 'TestValidateCSV/successfully validated', validator: 'csv', input: 'correct.csv.yaml' },
  { id: 'TestValidateCSV/invalid install modes', validator: 'csv', input: 'noInstallMode.csv.yaml' },
  { id: 'TestValidateCSV/valid install modes with conversionCRDs', validator: 'csv', input: 'correct.csv.with.conversion.webhook.yaml' },
  { id: 'TestValidateCSV/invalid install modes with conversionCRDs', validator: 'csv', input: 'incorrect.csv.with.conversion.webhook.yaml' },
  { id: 'TestValidateCSV/invalid annotation name for csv', validator: 'csv', input: 'badAnnotationNames.csv.yaml' },
  { id: 'TestValidateCSV/csv with name over 63 characters limit', validator: 'csv', input: 'badName.csv.yaml' },
  { id: 'TestValidateCSV/alm-examples pretty format and invalid', validator: 'csv', input: 'invalid.alm-examples.csv.yaml' },
  { id: 'TestValidateCSV/alm-examples not informed', validator: 'csv', input: 'correct.csv.empty.example.yaml' },
  { id: 'TestValidateCSV/olm.properties in the annotations', validator: 'csv', input: 'correct.csv.olm.properties.annotation.yaml' },
  { id: 'TestValidateCSV/minKubeVersion not semver', validator: 'csv', input: 'invalid_min_kube_version.csv.yaml' },
  // crd_test.go TestValidateCRD
  { id: 'TestValidateCRD/valid v1beta1 CRD', validator: 'crd', input: 'v1beta1.crd.yaml' },
  { id: 'TestValidateCRD/v1beta1 CRD duplicate version', validator: 'crd', input: 'duplicateVersions.crd.yaml' },
  { id: 'TestValidateCRD/valid v1 CRD', validator: 'crd', input: 'v1.crd.yaml' },
  { id: 'TestValidateCRD/v1 CRD deprecated .spec.version field', validator: 'crd', input: 'deprecatedVersion.crd.yaml' },
  { id: 'TestValidateCRD/no conversionReviewVersions', validator: 'crd', input: 'noConversionReviewVersions.crd.yaml' },
  // object_test.go TestValidateObject
  ...[
    ['valid PDB', 'valid_pdb'],
    ['PDB minAvailable 100%', 'invalid_pdb_minAvailable'],
    ['PDB maxUnavailable 0', 'invalid_pdb_maxUnavailable'],
    ['valid priorityclass', 'valid_priorityclass'],
    ['priorityclass global default', 'invalid_priorityclass'],
    ['valid pdb role', 'valid_role_get_pdb'],
    ['role modifies pdb', 'invalid_role_create_pdb'],
    ['valid scc role', 'valid_role_get_scc'],
    ['role modifies default scc', 'invalid_role_modify_scc'],
  ].map(([name, file]): Case => ({ id: `TestValidateObject/${name}`, validator: 'object', input: `objects/${file}.yaml` })),
  // operatorgroup_test.go TestValidateOperatorGroup
  { id: 'TestValidateOperatorGroup/successfully validated', validator: 'operatorgroup', input: 'correct.og.yaml' },
  { id: 'TestValidateOperatorGroup/invalid annotation name', validator: 'operatorgroup', input: 'badAnnotationNames.og.yaml' },
  // package_manifest_test.go TestValidatePackageManifest (the Go test builds each in memory)
  ...(
    [
      ['successful validation', { channels: [{ name: 'foo', currentCSV: 'bar' }], defaultChannel: 'foo' }],
      ['no default channel with only one channel', { channels: [{ name: 'foo', currentCSV: 'bar' }] }],
      ['no default channel and more than one channel', { channels: [{ name: 'foo', currentCSV: 'bar' }, { name: 'foo2', currentCSV: 'baz' }] }],
      ['default channel does not exist in channels', { channels: [{ name: 'foo', currentCSV: 'bar' }], defaultChannel: 'baz' }],
      ['channels are empty', { defaultChannel: 'baz' }],
      ["one channel's CSVName is empty", { channels: [{ name: 'foo' }], defaultChannel: 'foo' }],
      ['duplicate channel name', { channels: [{ name: 'foo', currentCSV: 'bar' }, { name: 'foo', currentCSV: 'baz' }], defaultChannel: 'foo' }],
    ] as [string, Obj][]
  ).map(([name, doc]): Case => ({ id: `TestValidatePackageManifest/${name}`, validator: 'packagemanifest', input: '', write: pkg(doc) })),
  // community_test.go Test_communityValidator
  { id: 'Test_communityValidator/no deprecated apis', validator: 'community', input: 'valid_bundle_v1' },
  { id: 'Test_communityValidator/max OCP 4.8 and index label, deprecated apis', validator: 'community', input: 'valid_bundle_v1beta1', mutate: annotations(maxOcp('4.8')), values: { 'index-path': DOCKERFILE('valid_bundle.Dockerfile') } },
  { id: 'Test_communityValidator/missing olm.properties, deprecated apis', validator: 'community', input: 'valid_bundle_v1beta1', mutate: annotations({}), values: { 'index-path': DOCKERFILE('valid_bundle.Dockerfile') } },
  {
    id: 'Test_communityValidator/olm.properties without max OCP version',
    validator: 'community',
    input: 'valid_bundle_v1beta1',
    mutate: annotations({ 'olm.properties': '[{"type": "olm.invalid", "value": "4.9"}]' }),
    values: { 'index-path': DOCKERFILE('valid_bundle.Dockerfile') },
  },
  { id: 'Test_communityValidator/max OCP 4.9, deprecated apis', validator: 'community', input: 'valid_bundle_v1beta1', mutate: annotations(maxOcp('4.9')), values: { 'index-path': DOCKERFILE('valid_bundle.Dockerfile') } },
  { id: 'Test_communityValidator/missing index-path, deprecated apis', validator: 'community', input: 'valid_bundle_v1beta1', mutate: annotations(maxOcp('4.8')) },
  { id: 'Test_communityValidator/patch version in maxOpenShiftVersion', validator: 'community', input: 'valid_bundle_v1beta1', mutate: annotations(maxOcp('4.8.1')), values: { 'index-path': DOCKERFILE('valid_bundle.Dockerfile') } },
  { id: 'Test_communityValidator/maxOpenShiftVersion 4.8.0+build', validator: 'community', input: 'valid_bundle_v1beta1', mutate: annotations(maxOcp('4.8.0+build')), values: { 'index-path': DOCKERFILE('valid_bundle.Dockerfile') } },
  { id: 'Test_communityValidator/index label =v4.8', validator: 'community', input: 'valid_bundle_v1beta1', mutate: annotations(maxOcp('4.8')), values: { 'index-path': DOCKERFILE('valid_bundle_4_8.Dockerfile') } },
  // community_test.go Test_checkOCPLabelsWithHasDeprecatedAPIs (the label check runs only with removed APIs and a valid max OCP)
  ...[
    ['valid OCP labels', 'valid_bundle.Dockerfile'],
    ['OCP label not found', 'bundle_without_label.Dockerfile'],
    ['index path is an invalid path', 'invalid'],
    ['OCP label index is => 4.9', 'invalid_bundle_equals_upper.Dockerfile'],
    ['OCP label index range is => 4.9', 'invalid_bundle_range_upper.Dockerfile'],
    ['OCP label index range with a comma', 'invalid_bundle_range_upper_coma.Dockerfile'],
  ].map(([name, file]): Case => ({
    id: `Test_checkOCPLabelsWithHasDeprecatedAPIs/${name}`,
    validator: 'community',
    input: 'valid_bundle_v1beta1',
    mutate: annotations(maxOcp('4.8')),
    values: { 'index-path': DOCKERFILE(file ?? '') },
  })),
  // operatorhub_test.go
  { id: 'TestValidateBundleOperatorHub/valid bundle', validator: 'operatorhub', input: 'valid_bundle' },
  { id: 'TestValidateBundleOperatorHub/invalid bundle operatorhubio', validator: 'operatorhub', input: 'invalid_bundle_operatorhub' },
  { id: 'TestCustomCategories/valid bundle custom categories', validator: 'operatorhub', input: 'valid_bundle_custom_categories', env: { OPERATOR_BUNDLE_CATEGORIES: join(TD, 'categories.json') } },
  { id: 'TestCustomCategories/valid bundle standard categories', validator: 'operatorhub', input: 'valid_bundle', env: { OPERATOR_BUNDLE_CATEGORIES: '' } },
  ...(
    [
      ['valid value', [{ base64data: 'iVBORw0KGgoAAAANSUhEUgAAAOEAAADZCAYAAADWmle6AAAACXBIWXMAAAsTAAALEwEAmpwYAAAAGXRFWHRTb2Z0d2Fy', mediatype: 'image/png' }]],
      ['icon not provided', undefined],
      ['icon data invalid', [{ mediatype: 'image/png' }]],
      ['icon mediatype invalid', [{ base64data: 'iVBORw0KGgoAAAANSUhEUgAAAOEAAADZCAYAAADWmle6AAAACXBIWXMAAAsTAAALEwEAmpwYAAAAGXRFWHRTb2Z0d2Fy', mediatype: 'invalid' }]],
    ] as [string, Obj[] | undefined][]
  ).map(([name, icon]): Case => ({
    id: `TestCheckSpecIcon/${name}`,
    validator: 'operatorhub',
    input: 'valid_bundle',
    mutate: etcdCsv((c) => {
      if (icon === undefined) delete o(c.spec).icon;
      else o(c.spec).icon = icon;
    }),
  })),
  ...[
    ['valid value', '1.16.0'],
    ['minKubeVersion not informed', ''],
    ['invalid value', 'alpha1'],
  ].map(([name, v]): Case => ({ id: `TestCheckSpecMinKubeVersion/${name}`, validator: 'operatorhub', input: 'valid_bundle', mutate: etcdCsv((c) => void (o(c.spec).minKubeVersion = v)) })),
  // operatorhubv2_test.go, standardcapabilities_test.go, standardcategories_test.go
  { id: 'TestValidateBundleOperatorHubV2/valid bundle', validator: 'operatorhubv2', input: 'valid_bundle' },
  { id: 'TestValidateBundleOperatorHubV2/invalid bundle operatorhubio', validator: 'operatorhubv2', input: 'invalid_bundle_operatorhub' },
  { id: 'TestValidateCapabilities/valid bundle', validator: 'capabilities', input: 'valid_bundle' },
  { id: 'TestValidateCapabilities/invalid bundle operatorhubio', validator: 'capabilities', input: 'invalid_bundle_operatorhub' },
  { id: 'TestValidateCategories/valid bundle', validator: 'categories', input: 'valid_bundle' },
  { id: 'TestValidateCategories/invalid bundle operatorhubio', validator: 'categories', input: 'invalid_bundle_operatorhub' },
  // good_practices_test.go
  { id: 'Test_ValidateGoodPractices/resource request set', validator: 'good-practices', input: 'valid_bundle' },
  { id: 'Test_ValidateGoodPractices/resource request not set', validator: 'good-practices', input: 'valid_bundle_v1' },
  {
    id: 'Test_ValidateGoodPractices/no deployment to install',
    validator: 'good-practices',
    input: 'valid_bundle',
    mutate: etcdCsv((c) => void (o(o(o(c.spec).install).spec).deployments = null)),
  },
  { id: 'Test_ValidateGoodPractices/channel not following the convention', validator: 'good-practices', input: 'bundle_with_metadata' },
  {
    id: 'Test_ValidateGoodPractices/CRD without description',
    validator: 'good-practices',
    input: 'valid_bundle',
    mutate: etcdCsv((c) => {
      const owned = o(o(c.spec).customresourcedefinitions).owned as Obj[];
      for (const crd of owned) if (crd.name === 'etcdclusters.etcd.database.coreos.com') delete crd.description;
    }),
  },
  ...[
    ['channel names following the convention', 'fast,candidate'],
    ['channel names NOT following the convention', 'mychannel-4.5'],
    ['one channel NOT following the convention', 'alpha,fast-v2.1,candidate-v2.2'],
  ].map(([name, channels]): Case => ({
    id: `TestValidateHubChannels/${name}`,
    validator: 'good-practices',
    input: 'bundle_with_metadata',
    mutate: (d) => editYaml(join(d, 'metadata', 'annotations.yaml'), (a) => void (o(a.annotations)['operators.operatorframework.io.bundle.channels.v1'] = channels)),
  })),
  ...(
    [
      ['no permissions', undefined],
      ['all verbs and resources of the apiGroup', { apiGroups: ['apiextensions.k8s.io'], resources: ['*'], verbs: ['*'] }],
      ['all verbs with the resource specified', { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['*'] }],
      ['create a CRD', { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['create'] }],
      ['patch a CRD', { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['patch'] }],
    ] as [string, Obj | undefined][]
  ).map(([name, rule]): Case => ({
    id: `TestValidateRBACForCRDsWith/${name}`,
    validator: 'good-practices',
    input: 'valid_bundle',
    ...(rule === undefined ? {} : { mutate: firstRule(rule) }),
  })),
  ...[
    ['valid bundle name', 'memcached-operator.v0.9.2'],
    ['name not following the convention', 'memcached-operator0.9.2'],
    ['name version not semver (v1)', 'memcached-operator.v1'],
    ['name version not semver (v1, again)', 'memcached-operator.v1'],
    ['name version not semver (v1--1.0)', 'memcached-operator.v1--1.0'],
    ['name version not semver (v1.3)', 'memcached-operator.v1.3'],
    ['patch releases', 'memcached-operator.v0.9.2+alpha'],
  ].map(([name, csvName]): Case => ({ id: `TestCheckBundleName/${name}`, validator: 'good-practices', input: 'valid_bundle', mutate: etcdCsv((c) => void (o(c.metadata).name = csvName)) })),
  // removed_apis_test.go
  { id: 'Test_GetRemovedAPIsOn1_22From/no deprecated apis', validator: 'alpha-deprecated-apis', input: 'valid_bundle_v1', values: { 'k8s-version': '1.22' } },
  { id: 'Test_GetRemovedAPIsOn1_22From/CRDs deprecated', validator: 'alpha-deprecated-apis', input: 'valid_bundle_v1beta1', values: { 'k8s-version': '1.22' } },
  { id: 'Test_GetRemovedAPIsOn1_22From/other kinds deprecated', validator: 'alpha-deprecated-apis', input: 'bundle_with_deprecated_resources', values: { 'k8s-version': '1.22' } },
  { id: 'Test_GetRemovedAPIsOn1_25From/no deprecated apis', validator: 'alpha-deprecated-apis', input: 'valid_bundle_v1', values: { 'k8s-version': '1.25' } },
  { id: 'Test_GetRemovedAPIsOn1_25From/removed APIs in 1.25', validator: 'alpha-deprecated-apis', input: 'removed_api_1_25', values: { 'k8s-version': '1.25' } },
  { id: 'Test_GetRemovedAPIsOn1_25From/deprecated APIs in 1.25', validator: 'alpha-deprecated-apis', input: 'deprecated_api_1_25', values: { 'k8s-version': '1.25' } },
  { id: 'Test_GetRemovedAPIsOn1_26From/no deprecated apis', validator: 'alpha-deprecated-apis', input: 'valid_bundle_v1', values: { 'k8s-version': '1.26' } },
  { id: 'Test_GetRemovedAPIsOn1_26From/removed APIs in 1.26', validator: 'alpha-deprecated-apis', input: 'removed_api_1_26', values: { 'k8s-version': '1.26' } },
  {
    id: 'TestValidateDeprecatedAPIS/CRD v1beta1 and minKubeVersion informed',
    validator: 'alpha-deprecated-apis',
    input: 'valid_bundle_v1beta1',
    mutate: etcdCsv((c) => void (o(c.spec).minKubeVersion = '1.11.3')),
  },
  { id: 'TestValidateDeprecatedAPIS/k8sVersion >= 1.22 with the deprecated API', validator: 'alpha-deprecated-apis', input: 'valid_bundle_v1beta1', mutate: etcdCsv((c) => void (o(c.spec).minKubeVersion = '')), values: { 'k8s-version': '1.22' } },
  { id: 'TestValidateDeprecatedAPIS/k8sVersion >= 1.25 with removed APIs on 1.25', validator: 'alpha-deprecated-apis', input: 'removed_api_1_25', mutate: csvEdit('memcached-operator.clusterserviceversion.yaml', (c) => void (o(c.spec).minKubeVersion = '')), values: { 'k8s-version': '1.25' } },
  { id: 'TestValidateDeprecatedAPIS/k8sVersion empty with removed APIs on 1.25', validator: 'alpha-deprecated-apis', input: 'removed_api_1_25', mutate: csvEdit('memcached-operator.clusterserviceversion.yaml', (c) => void (o(c.spec).minKubeVersion = '')) },
  { id: 'TestValidateDeprecatedAPIS/k8sVersion >= 1.26 with removed APIs on 1.26', validator: 'alpha-deprecated-apis', input: 'removed_api_1_26', mutate: csvEdit('memcached-operator.clusterserviceversion.yaml', (c) => void (o(c.spec).minKubeVersion = '')), values: { 'k8s-version': '1.26' } },
  { id: 'TestValidateDeprecatedAPIS/k8sVersion empty with removed APIs on 1.26', validator: 'alpha-deprecated-apis', input: 'removed_api_1_26', mutate: csvEdit('memcached-operator.clusterserviceversion.yaml', (c) => void (o(c.spec).minKubeVersion = '')) },
  { id: 'TestValidateDeprecatedAPIS/k8sVersion invalid', validator: 'alpha-deprecated-apis', input: 'valid_bundle_v1beta1', mutate: etcdCsv((c) => void (o(c.spec).minKubeVersion = '')), values: { 'k8s-version': 'invalid' } },
  { id: 'TestValidateDeprecatedAPIS/csv.spec.minKubeVersion invalid', validator: 'alpha-deprecated-apis', input: 'valid_bundle_v1beta1', mutate: etcdCsv((c) => void (o(c.spec).minKubeVersion = 'invalid')) },
  // pkg/manifests testdata (manifests_test.go loads each; here loaded and checked by BundleValidator)
  { id: 'manifests/valid_bundle', validator: 'bundle', input: 'manifests:valid_bundle' },
  { id: 'manifests/invalid_bundle_with_hidden', validator: 'bundle', input: 'manifests:invalid_bundle_with_hidden' },
  { id: 'manifests/invalid_bundle_with_subdir', validator: 'bundle', input: 'manifests:invalid_bundle_with_subdir' },
  { id: 'manifests/valid_package 0.9.2', validator: 'bundle', input: 'manifests:valid_package/0.9.2' },
  { id: 'manifests/valid_package 0.9.4', validator: 'bundle', input: 'manifests:valid_package/0.9.4' },
  { id: 'manifests/valid_package package.yaml', validator: 'packagemanifest', input: 'manifests:valid_package/package.yaml' },
];

// --- running both ---------------------------------------------------------------------------

interface Verdict {
  errors: string[];
  warnings: string[];
  errorRules: string[];
  warningRules: string[];
}

function ensureParityTool(): void {
  const r = spawnSync('bash', [join(ROOT, 'hack', 'bench-tools', 'operator-verify', 'build.sh')], { encoding: 'utf8' });
  assert.ok(
    r.status === 0 && existsSync(PARITY),
    `cannot build the reference validator (hack/bench-tools/operator-verify/build.sh needs Go and the module proxy): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
  );
}

/** Each case's input on disk: the vendored file or directory, or a changed copy of it. */
async function materialize(c: Case, scratch: string, n: number): Promise<string> {
  const src = c.input.startsWith('manifests:') ? join(MTD, c.input.slice('manifests:'.length)) : join(TD, c.input);
  if (c.write !== undefined) {
    const file = join(scratch, `${n}`, 'package.yaml');
    await mkdir(join(scratch, `${n}`), { recursive: true });
    await writeFile(file, c.write);
    return file;
  }
  if (c.mutate === undefined) return src;
  const dir = join(scratch, `${n}`, 'bundle');
  await cp(src, dir, { recursive: true });
  await c.mutate(dir);
  return dir;
}

/** The reference's verdicts: its own validator run on each input, all in one process. */
function reference(cases: Case[], paths: string[]): Map<string, Verdict> {
  const input = cases.map((c, i) => JSON.stringify({ id: c.id, validator: c.validator, path: paths[i], values: c.values, env: c.env })).join('\n');
  const r = spawnSync(PARITY, ['-cases'], { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `operator-verify-parity -cases failed: ${r.stderr}`);
  const out = new Map<string, Verdict>();
  for (const line of r.stdout.split('\n').filter((l) => l !== '')) {
    const v = JSON.parse(line) as { id: string; load?: string; errors: string[]; warnings: string[] };
    out.set(v.id, { errors: v.load !== undefined ? [`load: ${v.load}`, ...v.errors] : v.errors, warnings: v.warnings, errorRules: [], warningRules: [] });
  }
  return out;
}

function verdictOf(r: ValidationResult): Verdict {
  return {
    errors: r.errors().map((p) => `${p.rule}: ${p.file ?? ''} ${p.field ?? ''}: ${p.message}`),
    warnings: r.warnings().map((p) => `${p.rule}: ${p.message}`),
    errorRules: r.errors().map((p) => p.rule),
    warningRules: r.warnings().map((p) => p.rule),
  };
}

/** What a Binnacle user gets for the same input and validator. */
async function binnacle(c: Case, path: string): Promise<Verdict> {
  if (c.validator === 'packagemanifest') return verdictOf(validatePackageManifest(await readFile(path, 'utf8'), path));
  if (c.validator === 'csv' || c.validator === 'crd' || c.validator === 'object' || c.validator === 'operatorgroup') return verdictOf(await validateLonePath(path));
  const saved = new Map(Object.keys(c.env ?? {}).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(c.env ?? {})) process.env[k] = v;
  try {
    const optional = c.validator === 'bundle' ? [] : [c.validator];
    const k8sVersion = c.values?.['k8s-version'];
    const indexPath = c.values?.['index-path'];
    const { result, bundle } = await validateBundleDir(path, { optional, ...(k8sVersion === undefined ? {} : { k8sVersion }), ...(indexPath === undefined ? {} : { indexPath }) });
    // A bundle that does not load fails every validator; else only the named one's checks count.
    if (bundle === undefined) return verdictOf(result);
    const suite = result.children.find((ch) => ch.subject === c.validator);
    assert.ok(suite !== undefined, `${c.id}: no ${c.validator} result`);
    return verdictOf(suite);
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) Reflect.deleteProperty(process.env, k);
      else process.env[k] = v;
    }
  }
}

interface Row {
  c: Case;
  ours: Verdict;
  theirs: Verdict;
}

function report(rows: Row[]): { agree: number; undeliberate: string[] } {
  const pct = (n: number, d: number): string => `${n}/${d} = ${((100 * n) / d).toFixed(1)}%`;
  const byValidator = new Map<string, Row[]>();
  for (const r of rows) byValidator.set(r.c.validator, [...(byValidator.get(r.c.validator) ?? []), r]);
  const agrees = (r: Row): boolean => r.ours.errors.length > 0 === r.theirs.errors.length > 0;
  const warnAgrees = (r: Row): boolean => r.ours.warnings.length > 0 === r.theirs.warnings.length > 0;
  console.log(`\noperator-framework/api v0.27.0 own test cases: ${rows.length}`);
  for (const [v, rs] of [...byValidator].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${v.padEnd(22)} verdicts ${pct(rs.filter(agrees).length, rs.length)}   (warnings ${pct(rs.filter(warnAgrees).length, rs.length)})`);
  }
  const agree = rows.filter(agrees).length;
  console.log(`  ${'total'.padEnd(22)} verdicts ${pct(agree, rows.length)}   (warnings ${pct(rows.filter(warnAgrees).length, rows.length)})`);
  const undeliberate: string[] = [];
  const used = new Map<string, number>();
  for (const r of rows.filter((x) => !agrees(x))) {
    const who = r.ours.errors.length > 0 ? 'only Binnacle rejects' : 'only the reference rejects';
    const key = deliberateReason(r.ours, r.theirs);
    if (key === undefined) undeliberate.push(r.c.id);
    else used.set(key, (used.get(key) ?? 0) + 1);
    console.log(`  ${who}: ${r.c.id}${key === undefined ? '' : ` [deliberate: ${key}]`}`);
    for (const e of (r.ours.errors.length > 0 ? r.ours.errors : r.theirs.errors).slice(0, 2)) console.log(`      ${e.slice(0, 240)}`);
  }
  console.log('  deliberate differences:');
  for (const [k, n] of used) console.log(`    ${n} × ${k}: ${DELIBERATE[k] ?? ''}`);
  // Where both reject, the first reason of each, so that agreement for different reasons shows.
  console.log('  both reject:');
  for (const r of rows.filter((x) => x.ours.errors.length > 0 && x.theirs.errors.length > 0)) {
    console.log(`    ${r.c.id}\n      Binnacle:  ${(r.ours.errors[0] ?? '').slice(0, 160)}\n      reference: ${(r.theirs.errors[0] ?? '').slice(0, 160)}`);
  }
  return { agree, undeliberate };
}

describe('validator parity with operator-framework/api v0.27.0 on its own test tables', () => {
  it('every case input is vendored', () => {
    assert.ok(existsSync(join(VENDOR, 'LICENSE')), 'vendored testdata without its licence');
    assert.ok(readdirSync(TD).length > 30, `vendored testdata missing at ${TD}`);
    for (const c of CASES) {
      if (c.write !== undefined) continue;
      const p = c.input.startsWith('manifests:') ? join(MTD, c.input.slice('manifests:'.length)) : join(TD, c.input);
      assert.ok(existsSync(p), `${c.id}: ${p} is not vendored`);
    }
    assert.equal(new Set(CASES.map((c) => c.id)).size, CASES.length, 'case ids are unique');
  });

  it('verdicts agree on at least 95% of the cases, and every difference is deliberate', async (t) => {
    ensureParityTool();
    const scratch = await mkdtemp(join(tmpdir(), 'validator-parity-ref-'));
    t.after(() => rm(scratch, { recursive: true, force: true }));
    const paths: string[] = [];
    for (const [i, c] of CASES.entries()) paths.push(await materialize(c, scratch, i));
    const theirs = reference(CASES, paths);
    const rows: Row[] = [];
    for (const [i, c] of CASES.entries()) {
      const ref = theirs.get(c.id);
      assert.ok(ref !== undefined, `the reference printed nothing for ${c.id}`);
      rows.push({ c, ours: await binnacle(c, paths[i] ?? ''), theirs: ref });
    }
    const { agree, undeliberate } = report(rows);
    assert.deepEqual(undeliberate, [], 'verdicts differ for reasons not listed as deliberate');
    assert.ok(agree / rows.length >= 0.95, `verdict agreement ${agree}/${rows.length} is under 95%`);
  });
});
