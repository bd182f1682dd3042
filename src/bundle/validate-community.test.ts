import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBundleDir } from './load.js';
import { validateBundleDir, validateLoadedBundle } from './validate.js';
import { isMailAddress } from './validate-optional.js';
import type { ManifestObject, RegistryV1Bundle } from './types.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');
const webhook = (): Promise<RegistryV1Bundle> => loadBundleDir(join(testdata, 'webhook-operator'));
const obj = (kind: string, apiVersion: string, body: Record<string, unknown>, name = 'x'): ManifestObject => ({
  file: `manifests/${name}.yaml`,
  index: 0,
  apiVersion,
  kind,
  name,
  object: { apiVersion, kind, metadata: { name }, ...body },
});
const withAnnotations = (b: RegistryV1Bundle, a: Record<string, string>): RegistryV1Bundle => ({ ...b, csv: { ...b.csv, annotations: { ...b.csv.annotations, ...a } } });
const messages = (b: RegistryV1Bundle, name: Parameters<typeof validateLoadedBundle>[1]): string[] => validateLoadedBundle(b, name).errors().map((p) => p.message);

describe('optional validators at parity with operator-framework/api', () => {
  it('object: PDBs that forbid every eviction, a default PriorityClass, RBAC on the default SCCs', async () => {
    const b = await webhook();
    const others = [
      obj('PodDisruptionBudget', 'policy/v1', { spec: { maxUnavailable: 0 } }, 'pdb-zero'),
      obj('PodDisruptionBudget', 'policy/v1', { spec: { minAvailable: '100%' } }, 'pdb-all'),
      obj('PodDisruptionBudget', 'policy/v1', { spec: { minAvailable: 1 } }, 'pdb-ok'),
      obj('PriorityClass', 'scheduling.k8s.io/v1', { value: 10, globalDefault: true }, 'pc'),
      obj('ClusterRole', 'rbac.authorization.k8s.io/v1', { rules: [{ apiGroups: ['security.openshift.io'], resources: ['securitycontextconstraints'], verbs: ['use', 'patch'], resourceNames: ['restricted'] }] }, 'scc'),
      obj('Role', 'rbac.authorization.k8s.io/v1', { rules: [{ apiGroups: ['security.openshift.io'], resources: ['securitycontextconstraints'], verbs: ['use'], resourceNames: ['restricted'] }] }, 'scc-use'),
      obj('Role', 'rbac.authorization.k8s.io/v1', { rules: [{ apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['create'] }] }, 'pdb-role'),
    ];
    const r = validateLoadedBundle({ ...b, others: [...b.others, ...others] }, { optional: ['object'] });
    const errs = r.errors().map((p) => `${p.file ?? ''} ${p.message}`);
    assert.equal(errs.length, 4, errs.join('\n'));
    assert.ok(errs.some((e) => e.startsWith('manifests/pdb-zero.yaml maxUnavailable field cannot be set to 0 or 0%')));
    assert.ok(errs.some((e) => e.startsWith('manifests/pdb-all.yaml minAvailable field cannot be set to 100%')));
    assert.ok(errs.some((e) => e.startsWith('manifests/pc.yaml globalDefault field cannot be set to true')));
    assert.ok(errs.some((e) => e.startsWith('manifests/scc.yaml RBAC includes permission to modify default securitycontextconstraints')));
    assert.ok(r.warnings().some((p) => p.file === 'manifests/pdb-role.yaml' && /create\/update poddisruptionbudgets/.test(p.message)));
    // Not selected: no object checks.
    assert.ok(!validateLoadedBundle({ ...b, others: [...b.others, ...others] }).errors().some((p) => p.rule.startsWith('object.')));
  });

  it('operatorgroup: OLM annotation keys spelled exactly', async () => {
    const b = await webhook();
    const og = obj('OperatorGroup', 'operators.coreos.com/v1', {}, 'og');
    (og.object.metadata as Record<string, unknown>).annotations = { 'olm.targetnamespaces': 'a', 'olm.providedAPIs': 'x' };
    const errs = validateLoadedBundle({ ...b, others: [...b.others, og] }, { optional: ['operatorgroup'] })
      .errors()
      .filter((p) => p.rule.startsWith('operatorgroup.'))
      .map((p) => p.message);
    assert.deepEqual(errs, ['provided annotation olm.targetnamespaces uses wrong case and should be olm.targetNamespaces instead']);
  });

  it('community: APIs removed in 1.22 need olm.maxOpenShiftVersion below 4.9', async () => {
    const b = await webhook();
    const old = { ...b, others: [...b.others, obj('ClusterRole', 'rbac.authorization.k8s.io/v1beta1', { rules: [] }, 'old-role')] };
    const noProps = Object.fromEntries(Object.entries(old.csv.annotations).filter(([k]) => k !== 'olm.properties'));
    const none = messages({ ...old, csv: { ...old.csv, annotations: noProps } }, { optional: ['community'] });
    assert.equal(none.length, 1);
    assert.match(none[0] ?? '', /^csv\.Annotations not specified olm\.maxOpenShiftVersion for an OCP version < 4\.9.*ClusterRole: \(\["old-role"\]\)/);
    assert.match(messages(withAnnotations(old, { 'olm.properties': '{' }), { optional: ['community'] })[0] ?? '', /invalid value specified for olm\.properties/);
    assert.match(messages(withAnnotations(old, { 'olm.properties': '[{"type":"other","value":"x"}]' }), { optional: ['community'] })[0] ?? '', /with the key `olm\.maxOpenShiftVersion`/);
    assert.match(messages(withAnnotations(old, { 'olm.properties': '[{"type":"olm.maxOpenShiftVersion","value":"4.9"}]' }), { optional: ['community'] })[0] ?? '', /has the OCP version value 4\.9 which is >= of 4\.9/);
    assert.match(messages(withAnnotations(old, { 'olm.properties': '[{"type":"olm.maxOpenShiftVersion","value":"four"}]' }), { optional: ['community'] })[0] ?? '', /Unable to parse \(four\)/);
    assert.deepEqual(messages(withAnnotations(old, { 'olm.properties': '[{"type":"olm.maxOpenShiftVersion","value":"4.8"}]' }), { optional: ['community'] }), []);
    const patch = validateLoadedBundle(withAnnotations(old, { 'olm.properties': '[{"type":"olm.maxOpenShiftVersion","value":"4.8.1"}]' }), { optional: ['community'] });
    assert.deepEqual(patch.errors(), []);
    assert.ok(patch.warnings().some((p) => /must specify only major\.minor versions/.test(p.message)));
    // A bundle without removed APIs needs nothing.
    assert.deepEqual(messages({ ...b, csv: { ...b.csv, annotations: noProps } }, { optional: ['community'] }), []);
  });

  it('community: build metadata in olm.maxOpenShiftVersion is no patch part; the index-path Dockerfile label is checked, its absence warned', async (t) => {
    const b = await webhook();
    const old = withAnnotations({ ...b, others: [...b.others, obj('ClusterRole', 'rbac.authorization.k8s.io/v1beta1', { rules: [] }, 'old-role')] }, { 'olm.properties': '[{"type":"olm.maxOpenShiftVersion","value":"4.8.0+build"}]' });
    const noIndex = validateLoadedBundle(old, { optional: ['community'] });
    assert.deepEqual(noIndex.errors(), []);
    assert.deepEqual(noIndex.warnings().filter((p) => p.rule.startsWith('community')).map((p) => p.rule), ['community.index-path']);
    const d = await mkdtemp(join(tmpdir(), 'community-index-'));
    t.after(() => rm(d, { recursive: true, force: true }));
    const label = async (line: string): Promise<string[]> => {
      const f = join(d, `${line.length}-${Math.random()}.Dockerfile`);
      await writeFile(f, `FROM scratch\n${line}\n`);
      return validateLoadedBundle(old, { optional: ['community'], indexPath: f }).errors().map((p) => p.message);
    };
    assert.deepEqual(await label('LABEL com.redhat.openshift.versions="v4.6-v4.8"'), []);
    assert.deepEqual(await label('LABEL com.redhat.openshift.versions="=v4.8"'), []);
    assert.match((await label('LABEL com.redhat.openshift.versions="v4.6-v4.9"'))[0] ?? '', /deprecated and removed in v1\.22/);
    assert.match((await label('LABEL com.redhat.openshift.versions="=v4.9"'))[0] ?? '', /deprecated and removed in v1\.22/);
    assert.match((await label('LABEL com.redhat.openshift.versions="v4.6,v4.7"'))[0] ?? '', /allows to distribute it on >= 4\.9/);
    assert.match((await label('LABEL other=1'))[0] ?? '', /provide compatible version\(s\) via the labels/);
    const missing = validateLoadedBundle(old, { optional: ['community'], indexPath: join(d, 'nope') }).errors();
    assert.match(missing[0]?.message ?? '', /was not found/);
  });

  it('operatorhub: maintainers emails are checked with or without a name; categories, capabilities', async () => {
    const b = await webhook();
    const raw = structuredClone(b.csv.raw);
    (raw.spec as Record<string, unknown>).maintainers = [{ email: 'not an email' }, { name: 'A', email: 'A <a@example.com>' }, { name: 'B', email: 'b@example.com' }];
    const csv = { ...b.csv, raw, annotations: { ...b.csv.annotations, categories: 'Database, Nope', capabilities: 'Sentient' } };
    const hub = messages({ ...b, csv }, { optional: ['operatorhub'] });
    assert.ok(hub.includes('csv.Spec.Maintainers elements should contain both name and email'));
    assert.ok(hub.some((m) => m.startsWith('csv.Spec.Maintainers email not an email is invalid')));
    assert.ok(hub.includes('csv.Metadata.Annotations["categories"] value " Nope" is not in the set of standard categories'));
    assert.ok(hub.some((m) => m.startsWith('csv.Metadata.Annotations.Capabilities "Sentient" is not a valid capabilities level')));
    // operatorhub/v2 leaves categories and capabilities to their own validators.
    const v2 = messages({ ...b, csv }, { optional: ['operatorhubv2'] });
    assert.equal(v2.length, 2, v2.join('\n'));
    assert.ok(isMailAddress('"quoted name"@example.com') && isMailAddress('Jane Doe <jane@example.com>') && !isMailAddress('jane@') && !isMailAddress('<jane@example.com'));
  });

  it('categories: OPERATOR_BUNDLE_CATEGORIES replaces the standard list', async (t) => {
    const b = await webhook();
    const dir = await mkdtemp(join(tmpdir(), 'categories-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'categories.json');
    await writeFile(file, JSON.stringify({ categories: ['Kitchen'] }));
    const saved = process.env.OPERATOR_BUNDLE_CATEGORIES;
    t.after(() => {
      if (saved === undefined) delete process.env.OPERATOR_BUNDLE_CATEGORIES;
      else process.env.OPERATOR_BUNDLE_CATEGORIES = saved;
    });
    process.env.OPERATOR_BUNDLE_CATEGORIES = file;
    assert.deepEqual(messages(withAnnotations(b, { categories: 'Kitchen' }), { optional: ['categories'] }), []);
    assert.deepEqual(messages(withAnnotations(b, { categories: 'Database' }), { optional: ['categories'] }), ['csv.Metadata.Annotations["categories"] value "Database" is not in the set of custom categories']);
    process.env.OPERATOR_BUNDLE_CATEGORIES = join(dir, 'missing.json');
    assert.match(messages(withAnnotations(b, { categories: 'Database' }), { optional: ['categories'] })[0] ?? '', /could not extract custom categories .*missing\.json/);
  });

  it('CRD conversion: webhook review versions required and recognised, none forbidden without a webhook', async () => {
    const b = await webhook();
    const crd = b.crds[0];
    assert.ok(crd !== undefined);
    const withConversion = (conversion: unknown): string[] => {
      const o = structuredClone(crd.object);
      (o.spec as Record<string, unknown>).conversion = conversion;
      return validateLoadedBundle({ ...b, crds: [{ ...crd, object: o }] }).errors().filter((p) => p.rule.startsWith('crd.conversion')).map((p) => p.message);
    };
    const client = { service: { name: 's', namespace: 'n' } };
    assert.deepEqual(withConversion({ strategy: 'Webhook', webhook: { clientConfig: client, conversionReviewVersions: ['v1'] } }), []);
    assert.deepEqual(withConversion({ strategy: 'Webhook', webhook: { clientConfig: client } }), [
      'spec.conversion.webhook.conversionReviewVersions: Required value: must include at least one of v1, v1beta1',
    ]);
    assert.deepEqual(withConversion({ strategy: 'Webhook', webhook: { clientConfig: client, conversionReviewVersions: ['v2', 'v2'] } }), [
      'spec.conversion.webhook.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
      'spec.conversion.webhook.conversionReviewVersions: Invalid value: ["v2","v2"]: must include at least one of v1, v1beta1',
    ]);
    assert.deepEqual(withConversion({ strategy: 'None', webhook: { conversionReviewVersions: ['v1'] } }), [
      'spec.conversion.webhook.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ]);
  });

  it('loading: the CSV name is checked even when the bundle does not load', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'csv-name-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await cp(join(testdata, 'webhook-operator'), dir, { recursive: true });
    await writeFile(join(dir, 'manifests', 'broken.yaml'), 'kind: ConfigMap\nmetadata: [\n');
    const csvFile = join(dir, 'manifests', 'webhook-operator.clusterserviceversion.yaml');
    const { readFile } = await import('node:fs/promises');
    await writeFile(csvFile, (await readFile(csvFile, 'utf8')).replace(/^ {2}name: webhook-operator\.v[^\n]*$/m, '  name: Webhook_Operator.v1'));
    const { result, bundle } = await validateBundleDir(dir);
    assert.equal(bundle, undefined);
    const rules = result.errors().map((p) => p.rule);
    assert.ok(rules.includes('yaml.syntax'), rules.join(','));
    assert.ok(rules.includes('csv.name'), rules.join(','));
  });

  it('loading: a manifests directory without annotations takes its package from package.yaml', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'pkg-yaml-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const version = join(dir, '0.1.0');
    await mkdir(version);
    await cp(join(testdata, 'webhook-operator', 'manifests'), join(version, 'manifests'), { recursive: true });
    const refused = await validateBundleDir(version);
    assert.ok(refused.result.errors().some((p) => p.rule === 'bundle.no-annotations'));
    await writeFile(join(dir, 'package.yaml'), 'packageName: from-package-yaml\nchannels:\n- name: stable\n  currentCSV: webhook-operator.v0.1.0\n');
    const b = await loadBundleDir(version);
    assert.equal(b.packageName, 'from-package-yaml');
  });
});
