/**
 * Parity figures of Binnacle's bundle validators against operator-framework/api v0.27.0 (the
 * reference validators, run through hack/bench-tools/operator-verify/parity, built and cached in
 * .cache/bench-bin; the test fails when Go cannot build it). Two sets:
 * - cases written here (mutations of src/bundle/testdata/webhook-operator), each run with the
 *   default suite plus community, operatorhub, object and operatorgroup;
 * - every version directory of the operatorhub-2021 corpus, default suite (what
 *   `operator-verify manifests` runs).
 * Prints verdict agreement (both reject or both accept) and same-problem agreement (where both
 * reject, at least one problem of the same class). Every verdict difference must be one of the
 * deliberate differences listed in DELIBERATE, with its reason; the written cases must agree
 * 100%.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { validateBundleDir, type OptionalValidator } from '../../src/bundle/index.js';
import { operatorCorpusDir } from './corpus.test-helper.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CORPUS = operatorCorpusDir();
const PARITY = join(ROOT, '.cache', 'bench-bin', 'operator-verify-parity');
const WEBHOOK = join(ROOT, 'src', 'bundle', 'testdata', 'webhook-operator');
const SUITES: OptionalValidator[] = ['community', 'operatorhub', 'object', 'operatorgroup'];

interface Verdict {
  errors: string[];
}

/**
 * Binnacle rules that are warnings here but errors in the reference, on purpose, and count as
 * errors for the verdict: a v1beta1 CRD with preserveUnknownFields (the default), or of a
 * protected group (*.k8s.io) without api-approved.kubernetes.io, is refused by today's API server
 * and by operator-verify; Binnacle upgrades it to v1 itself (x-kubernetes-preserve-unknown-fields,
 * an "unapproved" annotation) and only warns.
 */
const WARNINGS_AS_ERRORS = new Set(['crd.preserve-unknown-fields', 'crd.api-approval']);

/**
 * Deliberate differences: a verdict that differs only because of one of these Binnacle rules (it
 * rejects, the reference accepts) is listed with its reason, not counted as a defect.
 */
const DELIBERATE: Record<string, string> = {
  'crd.structural': 'a v1 CRD whose schema is not structural is refused by the API server at install; operator-framework/api skips openAPIV3Schema checks',
  'install.': 'the bundle cannot be installed by OLM or Binnacle (render checks: deployments, install modes, webhooks); operator-framework/api does not render',
  'csv.webhook': 'webhook definitions the API server or OLM refuse (sideEffects, admissionReviewVersions, deployment); operator-framework/api does not check them',
  'csv.install-strategy': 'OLM installs only the "deployment" strategy',
  'metadata.': 'metadata/annotations.yaml and dependencies.yaml as opm reads them; operator-verify does not read metadata',
  'bundle.related-images': 'image references OLM cannot pull',
  'bundle.service-account': 'a ServiceAccount that clashes with the CSV is refused by opm (pkg/lib/bundle)',
  'bundle.object-name': 'an object without metadata.name cannot be applied',
  'crd.api-approval': 'the API server refuses a v1 CRD in a protected group without api-approved.kubernetes.io',
  'crd.namespace': 'a CRD is cluster-scoped',
  'manifest.': 'a manifest that is not a Kubernetes object cannot be applied',
  'field.': 'a required field (apiVersion, kind, metadata.name) missing or of the wrong type: the object cannot be applied, and OLM cannot decode it',
};

/** Problem classes, so that two wordings of one problem match. */
const CLASSES: [RegExp, string][] = [
  [/maxOpenShiftVersion|olm\.properties/, 'max-openshift'],
  [/install ?modes?|installModes/i, 'install-modes'],
  [/minKubeVersion|min-kube/i, 'min-kube'],
  [/example/i, 'examples'],
  [/replaces/i, 'replaces'],
  [/metadata\.name|csv\.name|is invalid: a lowercase RFC 1123/i, 'name'],
  [/conversionReviewVersions|conversion/i, 'conversion'],
  [/preserveUnknownFields|preserve-unknown/i, 'preserve-unknown-fields'],
  [/owned CRD|not in the bundle|should be in the bundle|owned|crd-not-owned|crd-missing/i, 'owned-crds'],
  [/spec\.versions|storage version|served|crd\.versions/i, 'crd-versions'],
  [/spec\.names|crd\.names|plural|singular|listKind/i, 'crd-names'],
  [/spec\.group|crd\.group/i, 'crd-group'],
  [/scope/i, 'crd-scope'],
  [/Maintainers|maintainers/, 'maintainers'],
  [/Links|links/, 'links'],
  [/Provider|provider/, 'provider'],
  [/Icon|icon/, 'icon'],
  [/categor/i, 'categories'],
  [/capabilit/i, 'capabilities'],
  [/poddisruptionbudget|maxUnavailable|minAvailable|pdb/i, 'pdb'],
  [/globalDefault|priority-class/i, 'priority-class'],
  [/securitycontextconstraints|object\.rbac/i, 'scc'],
  [/wrong case|annotation-case/i, 'annotation-case'],
  [/displayName|required-field|Required value|must be set/i, 'required-field'],
  [/version/i, 'version'],
  [/yaml|json|unmarshal|decode|syntax/i, 'parse'],
];

function classOf(text: string): string {
  return CLASSES.find(([re]) => re.test(text))?.[1] ?? 'other';
}

function ensureParityTool(): void {
  const r = spawnSync('bash', [join(ROOT, 'hack', 'bench-tools', 'operator-verify', 'build.sh')], { encoding: 'utf8' });
  assert.ok(
    r.status === 0 && existsSync(PARITY),
    `cannot build the reference validator (hack/bench-tools/operator-verify/build.sh needs Go and the module proxy): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
  );
}

/**
 * The reference's verdicts, one process for every directory. For read-only inputs (the corpus)
 * they are cached in .cache/bench-bin, keyed by the tool binary, the suites and the directories:
 * the reference takes minutes over the corpus on a loaded machine.
 */
function reference(dirs: string[], suites: string[], cache = false): Map<string, Verdict> {
  const st = statSync(PARITY);
  const key = createHash('sha256').update(`${st.size}:${st.mtimeMs}:${suites.join(',')}:${dirs.join('\n')}`).digest('hex').slice(0, 16);
  const cached = join(ROOT, '.cache', 'bench-bin', `parity-${key}.jsonl`);
  let stdout: string;
  if (cache && existsSync(cached)) stdout = readFileSync(cached, 'utf8');
  else {
    const r = spawnSync(PARITY, [`-suites=${suites.join(',')}`], { input: dirs.join('\n'), encoding: 'utf8', maxBuffer: 256 << 20 });
    assert.equal(r.status, 0, `operator-verify-parity failed: ${r.stderr}`);
    stdout = r.stdout;
    if (cache) writeFileSync(cached, stdout);
  }
  const out = new Map<string, Verdict>();
  for (const line of stdout.split('\n').filter((l) => l !== '')) {
    const v = JSON.parse(line) as { dir: string; load?: string; errors: string[] };
    out.set(v.dir, { errors: v.load !== undefined ? [`load: ${v.load}`] : v.errors });
  }
  return out;
}

async function binnacle(dir: string, optional: OptionalValidator[]): Promise<{ errors: string[]; rules: string[] }> {
  const { result } = await validateBundleDir(dir, { optional });
  const ps = result.all().filter((p) => p.severity === 'error' || WARNINGS_AS_ERRORS.has(p.rule));
  return { errors: ps.map((p) => `${p.rule}: ${p.field ?? ''}: ${p.message}`), rules: ps.map((p) => p.rule) };
}

interface Figures {
  cases: number;
  verdictAgree: number;
  bothReject: number;
  sameProblem: number;
  differences: { dir: string; ours: string[]; theirs: string[]; deliberate?: string }[];
}

async function compare(dirs: string[], optional: OptionalValidator[], cache = false): Promise<Figures> {
  const theirs = reference(dirs, optional, cache);
  const f: Figures = { cases: dirs.length, verdictAgree: 0, bothReject: 0, sameProblem: 0, differences: [] };
  for (const dir of dirs) {
    const ours = await binnacle(dir, optional);
    const ref = theirs.get(dir)?.errors ?? ['reference printed nothing'];
    const weReject = ours.errors.length > 0;
    const theyReject = ref.length > 0;
    if (weReject === theyReject) f.verdictAgree++;
    if (weReject && theyReject) {
      f.bothReject++;
      const a = new Set(ours.errors.map(classOf));
      if (ref.map(classOf).some((c) => a.has(c))) f.sameProblem++;
    } else if (weReject !== theyReject) {
      const key = weReject ? ours.rules.every((r) => Object.keys(DELIBERATE).some((k) => r.startsWith(k))) ? ours.rules.map((r) => Object.keys(DELIBERATE).find((k) => r.startsWith(k))).find((k) => k !== undefined) : undefined : undefined;
      f.differences.push({ dir, ours: ours.errors, theirs: ref, ...(key === undefined ? {} : { deliberate: key }) });
    }
  }
  return f;
}

function report(title: string, f: Figures, root: string): void {
  const pct = (n: number, d: number): string => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);
  console.log(`\n${title}: ${f.cases} cases`);
  console.log(`  verdict agreement      ${f.verdictAgree}/${f.cases} = ${pct(f.verdictAgree, f.cases)}`);
  console.log(`  same-problem agreement ${f.sameProblem}/${f.bothReject} = ${pct(f.sameProblem, f.bothReject)} (of the cases both reject)`);
  for (const d of f.differences) {
    const who = d.ours.length > 0 ? 'only Binnacle rejects' : 'only the reference rejects';
    console.log(`  ${who}: ${relative(root, d.dir)}${d.deliberate !== undefined ? ` [deliberate: ${d.deliberate}]` : ''}`);
    for (const e of (d.ours.length > 0 ? d.ours : d.theirs).slice(0, 2)) console.log(`      ${e.slice(0, 220)}`);
  }
}

type Mutation = (dir: string) => Promise<void>;

async function editYaml(file: string, edit: (doc: Record<string, unknown>) => void): Promise<void> {
  const doc = parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  edit(doc);
  await writeFile(file, stringify(doc));
}
const CSV = 'manifests/webhook-operator.clusterserviceversion.yaml';
const CRD = 'manifests/example.com_widgets.yaml';
type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => v as Obj;
const csvEdit = (edit: (csv: Obj) => void): Mutation => (d) => editYaml(join(d, CSV), edit);
const addFile = (name: string, text: string): Mutation => (d) => writeFile(join(d, 'manifests', name), text);
const props = (v: string): Mutation => csvEdit((c) => void (o(o(c.metadata).annotations)['olm.properties'] = v));
const oldRole = addFile('old-role.yaml', 'apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole\nmetadata:\n  name: old-role\nrules: []\n');
const both = (...ms: Mutation[]): Mutation => async (d) => {
  for (const m of ms) await m(d);
};

/** Cases written for this test: each a change to the webhook-operator bundle. */
const CASES: Record<string, Mutation> = {
  'unchanged': async () => {},
  'csv-name-uppercase': csvEdit((c) => void (o(c.metadata).name = 'Webhook-Operator.v0.2.0')),
  'csv-replaces-bad': csvEdit((c) => void (o(c.spec).replaces = 'bad_name')),
  'no-install-modes': csvEdit((c) => void (o(c.spec).installModes = [])),
  'no-supported-install-mode': csvEdit((c) => void (o(c.spec).installModes = [{ type: 'AllNamespaces', supported: false }])),
  'min-kube-not-semver': csvEdit((c) => void (o(c.spec).minKubeVersion = '1.21')),
  'example-not-owned': csvEdit((c) => void (o(o(c.metadata).annotations)['alm-examples'] = '[{"apiVersion":"other.io/v1","kind":"Nope"}]')),
  'example-not-json': csvEdit((c) => void (o(o(c.metadata).annotations)['alm-examples'] = '[{')),
  'alm-examples-empty': csvEdit((c) => void (o(o(c.metadata).annotations)['alm-examples'] = '')),
  'annotation-case': csvEdit((c) => void (o(o(c.metadata).annotations)['olm.skiprange'] = '<0.2.0')),
  'maintainer-email-no-name': csvEdit((c) => void (o(c.spec).maintainers = [{ email: 'not-an-email' }])),
  'maintainer-email-with-name': csvEdit((c) => void (o(c.spec).maintainers = [{ name: 'A', email: 'A <a@example.com>' }])),
  'maintainer-email-bad-with-name': csvEdit((c) => void (o(c.spec).maintainers = [{ name: 'A', email: 'a@@example' }])),
  'link-bad-url': csvEdit((c) => void (o(c.spec).links = [{ name: 'docs', url: 'not a url' }])),
  'no-provider': csvEdit((c) => {
    delete o(c.spec).provider;
  }),
  'two-icons': csvEdit((c) => void (o(c.spec).icon = [{ base64data: 'AA==', mediatype: 'image/png' }, { base64data: 'AA==', mediatype: 'image/png' }])),
  'icon-bad-mediatype': csvEdit((c) => void (o(c.spec).icon = [{ base64data: 'AA==', mediatype: 'image/bmp' }])),
  'category-unknown': csvEdit((c) => void (o(o(c.metadata).annotations).categories = 'Database,Cooking')),
  'category-standard': csvEdit((c) => void (o(o(c.metadata).annotations).categories = 'Database, Security')),
  'capability-unknown': csvEdit((c) => void (o(o(c.metadata).annotations).capabilities = 'Sentient')),
  'removed-api-no-properties': both(oldRole, csvEdit((c) => {
    delete o(o(c.metadata).annotations)['olm.properties'];
  })),
  'removed-api-max-ocp-4.8': both(oldRole, props('[{"type":"olm.maxOpenShiftVersion","value":"4.8"}]')),
  'removed-api-max-ocp-4.9': both(oldRole, props('[{"type":"olm.maxOpenShiftVersion","value":"4.9"}]')),
  'removed-api-max-ocp-missing': both(oldRole, props('[{"type":"olm.other","value":"x"}]')),
  'removed-api-properties-not-json': both(oldRole, props('not json')),
  'pdb-max-unavailable-zero': addFile('pdb.yaml', 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\nspec:\n  maxUnavailable: 0\n'),
  'pdb-min-available-all': addFile('pdb.yaml', 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\nspec:\n  minAvailable: 100%\n'),
  'pdb-fine': addFile('pdb.yaml', 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\nspec:\n  minAvailable: 1\n'),
  'priorityclass-global-default': addFile('pc.yaml', 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: pc\nvalue: 5\nglobalDefault: true\n'),
  'role-modifies-default-scc': addFile('scc-role.yaml', 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: scc\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  verbs: [update]\n  resourceNames: [anyuid]\n'),
  'role-uses-scc': addFile('scc-role.yaml', 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: scc\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  verbs: [use]\n  resourceNames: [anyuid]\n'),
  'crd-webhook-conversion-no-review-versions': (d) =>
    editYaml(join(d, CRD), (c) => void (o(c.spec).conversion = { strategy: 'Webhook', webhook: { clientConfig: { service: { name: 's', namespace: 'n', path: '/convert' } } } })),
  'crd-webhook-conversion-unknown-review-version': (d) =>
    editYaml(join(d, CRD), (c) => void (o(c.spec).conversion = { strategy: 'Webhook', webhook: { clientConfig: { service: { name: 's', namespace: 'n', path: '/convert' } }, conversionReviewVersions: ['v3'] } })),
  'crd-no-plural': (d) => editYaml(join(d, CRD), (c) => {
    delete o(o(c.spec).names).plural;
  }),
  'crd-two-storage-versions': (d) =>
    editYaml(join(d, CRD), (c) => {
      const vs = o(c.spec).versions as Obj[];
      vs.push({ ...structuredClone(vs[0]), name: 'v2' });
    }),
};

describe('validator parity with operator-framework/api', () => {
  it('written cases: verdicts agree 100% (default + community, operatorhub, object, operatorgroup)', async (t) => {
    ensureParityTool();
    const root = await mkdtemp(join(tmpdir(), 'validator-parity-'));
    t.after(() => rm(root, { recursive: true, force: true }));
    const dirs: string[] = [];
    for (const [name, mutate] of Object.entries(CASES)) {
      const dir = join(root, name);
      await cp(WEBHOOK, dir, { recursive: true });
      await mutate(dir);
      dirs.push(dir);
    }
    const f = await compare(dirs, SUITES);
    report('written cases', f, root);
    assert.deepEqual(f.differences.map((d) => relative(root, d.dir)), [], 'verdicts differ');
  });

  it('operatorhub-2021 corpus: every verdict difference is a listed deliberate one (default suite)', async () => {
    assert.ok(existsSync(CORPUS), `no corpus at ${CORPUS} (set BINNACLE_CORPUS)`);
    ensureParityTool();
    const dirs: string[] = [];
    for (const p of readdirSync(CORPUS).sort()) {
      const pd = join(CORPUS, p);
      if (!statSync(pd).isDirectory()) continue;
      for (const v of readdirSync(pd).sort()) if (statSync(join(pd, v)).isDirectory()) dirs.push(join(pd, v));
    }
    const f = await compare(dirs, [], true);
    report('operatorhub-2021 corpus', f, CORPUS);
    const deliberate = f.differences.filter((d) => d.deliberate !== undefined);
    const byReason: Record<string, number> = {};
    for (const d of deliberate) byReason[d.deliberate ?? ''] = (byReason[d.deliberate ?? ''] ?? 0) + 1;
    console.log('  deliberate differences:');
    for (const [k, n] of Object.entries(byReason)) console.log(`    ${n} × ${k}: ${DELIBERATE[k] ?? ''}`);
    const undeliberate = f.differences.filter((d) => d.deliberate === undefined).map((d) => relative(CORPUS, d.dir));
    assert.deepEqual(undeliberate, [], 'verdicts differ for reasons not listed as deliberate');
  });
});
