/**
 * Fuzzing the Helm chart loader with packaged charts (.tgz): src/helm/chart-source fetches the
 * archive into the cache and reads its Chart.yaml; then Helm's own loader in the WebAssembly engine
 * (src/helm-engine/engine.ts) inspects and renders it. Archives are a small chart changed by targeted
 * corruptions and structure-aware mutations of Chart.yaml and values.yaml, broken templates,
 * entries with `..` and absolute paths, a second top directory, subcharts, damaged and non-gzip
 * bytes. Each gets an answer or a ChartSourceError/HelmError, and nothing is written outside the
 * cache. The engine is slow, so its CI sample is small.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { fetchChart } from '../../src/helm/chart-source/index.js';
import { createHelmEngine, HelmError, helmWasmDir } from '../../src/helm-engine/index.js';
import { TAR_END, filePadding, ustarHeader } from '../../src/oci/tar-writer.js';
import { Sandbox, type ByteMutation, type Corruption, type Mutation, byteMutationArb, corrupt, corruptionArb, fc, fuzz, mutate, mutateText, mutationArb, nastyString, nastyValue } from './harness.js';

const CHART_YAML = { apiVersion: 'v2', name: 'memcached', version: '7.0.1', appVersion: '1.6', kubeVersion: '>=1.20.0-0', dependencies: [{ name: 'sub', version: '0.1.0' }] };
const VALUES = { replicas: 1, image: { repository: 'memcached', tag: '1.6' }, list: [1, 2], enabled: true };
const TEMPLATES: string[] = [
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n',
  '{{- if .Values.enabled }}\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include "x.name" . }}\n{{- end }}\n',
  '{{ define "x.name" }}{{ .Chart.Name }}-{{ .Values.image.tag }}{{ end }}',
  '{{ range .Values.list }}{{ . }}{{ end }}',
  '{{ .Values.missing.deeper }}',
  '{{ fail "refused" }}',
  '{{ template "nope" . }}',
  '{{ range $i := until 100000 }}{{ $i }}{{ end }}',
  '{{ toYaml .Values | indent 2 }',
  '{{ required "need x" .Values.x }}',
  '{{ lookup "v1" "Secret" "ns" "name" }}',
  '{{ .Files.Get "../../etc/passwd" }}',
];
const SUB_CHART = { apiVersion: 'v2', name: 'sub', version: '0.1.0' };

interface ChartInput {
  top: string;
  /** Targeted corruptions of Chart.yaml (see harness.ts `corrupt`), before the mutations. */
  chartCorruptions: Corruption[];
  chartMutations: Parameters<typeof mutate>[1][];
  valuesMutations: Parameters<typeof mutate>[1][];
  templates: string[];
  hazards: [string, string][];
  subchart: boolean;
  gzip: boolean;
  damage: Parameters<typeof mutateText>[1];
}

const sandbox = await Sandbox.create('chart');
after(() => sandbox.dispose());

const chartArb: fc.Arbitrary<ChartInput> = fc.record({
  top: fc.oneof({ weight: 8, arbitrary: fc.constant('memcached') }, { weight: 1, arbitrary: fc.constantFrom('other', '.', '..', '') }, { weight: 1, arbitrary: nastyString.filter((s) => !s.includes('/') && !s.includes('\0')) }),
  // Chart.yaml as it is, or (mostly) with one to three things wrong (its name or version null, missing, the wrong type, almost valid), then maybe randomly mutated.
  chartCorruptions: fc.oneof({ weight: 1, arbitrary: fc.constant<Corruption[]>([]) }, { weight: 3, arbitrary: fc.array(corruptionArb, { minLength: 1, maxLength: 3 }) }),
  chartMutations: fc.oneof(fc.constant<Mutation[]>([]), fc.array(mutationArb, { maxLength: 2 })),
  valuesMutations: fc.oneof(fc.constant<Mutation[]>([]), fc.array(mutationArb, { maxLength: 2 })),
  // Half the charts have only templates that render, so the engine answers as well as refuses.
  templates: fc.oneof(fc.subarray(TEMPLATES.slice(0, 4), { minLength: 1 }), fc.subarray(TEMPLATES, { minLength: 1, maxLength: 4 })),
  hazards: fc.array(
    fc.constantFrom<[string, string]>(
      ['../../../escaped.txt', 'pwned'],
      ['/abs.txt', 'pwned'],
      ['memcached/../../up.txt', 'pwned'],
      [`${sandbox.root}/outside/secret`, 'pwned'],
      ['second/Chart.yaml', 'apiVersion: v2\nname: second\nversion: 1.0.0\n'],
      ['memcached/values.schema.json', '{"type": "object", "required": ["nope"]}'],
      ['memcached/values.schema.json', '{"$ref": "http://example.invalid/schema.json"}'],
      ['memcached/values.schema.json', '{not json'],
      ['memcached/crds/crd.yaml', 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n'],
      ['memcached/.helmignore', '*\n'],
      ['memcached/Chart.lock', 'garbage: ['],
      ['memcached/requirements.yaml', 'dependencies: 5\n'],
    ),
    { maxLength: 2 },
  ),
  // Chart.yaml names a dependency "sub": without charts/sub Helm refuses the chart.
  subchart: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  gzip: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  damage: fc.oneof({ weight: 3, arbitrary: fc.constant<ByteMutation>({ at: 0, op: 'none', bytes: '' }) }, { weight: 1, arbitrary: byteMutationArb }),
});

function archive(input: ChartInput): Buffer {
  const top = input.top;
  const y = (d: unknown): string => {
    const s: unknown = stringify(d);
    return typeof s === 'string' ? s : '';
  };
  const files: [string, string][] = [
    [`${top}/Chart.yaml`, y(input.chartMutations.reduce<unknown>((d, m) => mutate(d, m), input.chartCorruptions.reduce<unknown>((d, c) => corrupt(d, c), CHART_YAML)))],
    [`${top}/values.yaml`, y(input.valuesMutations.reduce<unknown>((d, m) => mutate(d, m), VALUES))],
    ...input.templates.map((t, i): [string, string] => [`${top}/templates/t${i}.yaml`, t]),
    ...(input.subchart ? ([[`${top}/charts/sub/Chart.yaml`, y(SUB_CHART)], [`${top}/charts/sub/templates/cm.yaml`, TEMPLATES[0] ?? '']] as [string, string][]) : []),
    ...input.hazards,
  ];
  const parts: Buffer[] = [];
  for (const [path, content] of files) {
    const body = Buffer.from(content);
    parts.push(ustarHeader(path, '0', 0o644, body.length, '', 0), body, filePadding(body.length));
  }
  parts.push(TAR_END);
  const tar = Buffer.concat(parts);
  const bytes = input.gzip ? gzipSync(tar) : tar;
  if (input.damage.op === 'none') return bytes;
  // Damage as bytes: a cut, or one byte overwritten.
  const at = input.damage.at % (bytes.length + 1);
  if (input.damage.op === 'truncate') return bytes.subarray(0, at);
  const out = Buffer.from(bytes);
  if (at < out.length) out[at] = (out[at] ?? 0) ^ 0x5a;
  return out;
}

let n = 0;
async function fetched(input: ChartInput): Promise<{ path: string; name: string; version: string }> {
  const dir = join(sandbox.work, `src-${n++}`);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'chart.tgz');
  await writeFile(file, archive(input));
  return fetchChart({ type: 'archive', path: file }, { cacheDir: join(sandbox.work, 'cache'), allowHostPaths: true, maxArchiveBytes: 1024 * 1024 });
}

test('fuzz: chart archives (chart-source fetch and Chart.yaml)', { timeout: 30 * 60_000 }, async () => {
  await fuzz(
    'chart-archives',
    chartArb,
    async (input) => {
      const f = await fetched(input);
      return `${f.name}@${f.version}`;
    },
    { ciRuns: 200, sandbox },
  );
});

// ---- the engine: rendered charts ----

/**
 * Templates for the engine loader, each with its work bounded (the old pool's `until 100000`
 * cost 0.6–3 s a render and was in a third of the charts; together with a cold engine start that
 * made inputs cost seconds). Kinds: renders, broken templates, `fail`/`required`, recursion that
 * Helm stops (include, template), fan-out and `tpl` nesting that is large but ends, big output,
 * deep values through toYaml, sprig's key generation (RSA keys come from the host), and a `tpl`
 * that calls itself (the worker's stack overflows: a HELM_ENGINE_CRASH, and a fresh engine).
 */
const fanOut = (depth: number): string =>
  Array.from({ length: depth }, (_, i) => `{{ define "f${i}" }}{{ include "f${i + 1}" . }}{{ include "f${i + 1}" . }}{{ end }}`).join('') + `{{ define "f${depth}" }}x{{ end }}out: {{ include "f0" . | len }}\n`;
const tplNest = (depth: number): string => `out: {{ tpl "${'{{ tpl `'.repeat(depth)}x${'` . }}'.repeat(depth)}" . }}\n`;
const templateArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 40, arbitrary: fc.constantFrom(...TEMPLATES.slice(0, 4)) },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '{{ .Values.missing.deeper }}',
      '{{ template "nope" . }}',
      '{{ toYaml .Values | indent 2 }',
      '{{ end }}',
      '{{ if }}x{{ end }}',
      '{{ .Values.replicas | nosuchfunc }}',
      'kind: [unclosed\n',
      'just a string\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n',
      'a: &x [1]\nb: *y\n',
      '{{ lookup "v1" "Secret" "ns" "name" }}',
      '{{ .Files.Get "../../etc/passwd" }}',
      '{{ .Files.Glob "**" | toYaml }}',
      '{{ toYaml .Capabilities | indent 2 }}',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations: {"helm.sh/hook": "pre-install", "helm.sh/hook-weight": "nope"}\n',
      '{{ .Values.image.tag | int | div 0 }}',
      '{{ index .Values.list 99 }}',
      '{{ printf "%*d" 999999999 1 }}',
      '{{ regexFind "(a*)*$" (repeat 40 "a") }}',
      '{{ fromYaml "a: [" | toYaml }}',
      '{{ semverCompare ">=1.0" "junk" }}',
    ),
  },
  { weight: 4, arbitrary: fc.constantFrom(TEMPLATES[5] ?? '', TEMPLATES[9] ?? '', '{{ required "" nil }}', '{{ fail (printf "%s" .Values) }}', '{{ if .Values.enabled }}{{ fail "enabled" }}{{ end }}') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '{{ define "r" }}{{ include "r" . }}{{ end }}{{ include "r" . }}',
      '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}',
      '{{ define "a" }}{{ include "b" . }}{{ end }}{{ define "b" }}{{ include "a" . }}{{ end }}{{ include "a" . }}',
    ),
  },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 14 }).map(fanOut) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 40 }).map(tplNest) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 2_000_000 }).map((n) => `big: {{ repeat ${n} "x" | quote }}\n`) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 5000 }).map((n) => `{{ range $i := until ${n} }}k{{ $i }}: {{ $i }}\n{{ end }}`) },
  { weight: 3, arbitrary: fc.constant('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n  v: {{ toYaml .Values | quote }}\n') },
  { weight: 1, arbitrary: fc.constantFrom('ca: {{ (genCA "x" 365).Cert | quote }}\n', 'k: {{ genPrivateKey "ecdsa" | quote }}\n', 'k: {{ genPrivateKey "rsa" | quote }}\n') },
  { weight: 1, arbitrary: fc.constant('{{ tpl .Values.t . }}') },
);

/** values.yaml text: the mutated values, or values nested very deep, or a self-calling tpl. */
const valuesTextArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(stringify(VALUES)) },
  { weight: 4, arbitrary: fc.array(mutationArb, { maxLength: 2 }).map((ms) => stringify(ms.reduce<unknown>((d, m) => mutate(d, m), VALUES)) as string | undefined ?? '') },
  { weight: 2, arbitrary: fc.constantFrom(10, 100, 1000, 5000).map((d) => `replicas: 1\ndeep: ${'{a: '.repeat(d)}1${'}'.repeat(d)}\n`) },
  { weight: 1, arbitrary: fc.constantFrom(10, 1000).map((d) => `replicas: 1\ndeep: ${'['.repeat(d)}${']'.repeat(d)}\n`) },
  { weight: 1, arbitrary: fc.constant('t: "{{ tpl .Values.t . }}"\nreplicas: 1\n') },
  { weight: 1, arbitrary: fc.constantFrom('a: &a [1,2]\nb: [*a,*a,*a]\n', 'x: [\n', ': :\n', '- 1\n- 2\n', '') },
);

/** Chart.yaml: mutated, or one of the ways a real one is wrong. */
const chartYamlArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(stringify(CHART_YAML)) },
  { weight: 3, arbitrary: fc.array(mutationArb, { maxLength: 2 }).map((ms) => stringify(ms.reduce<unknown>((d, m) => mutate(d, m), CHART_YAML)) as string | undefined ?? '') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'apiVersion: v2\nversion: 1.0.0\n',
      'apiVersion: v2\nname: memcached\nversion: not-semver\n',
      'apiVersion: v3\nname: memcached\nversion: 1.0.0\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ntype: library\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ntype: nonsense\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\nkubeVersion: ">=99.0.0"\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\nkubeVersion: "~~~"\n',
      'apiVersion: v1\nname: memcached\nversion: 1.0.0\n',
      'name: memcached\nversion: 1.0.0\n',
      'apiVersion: v2\nname: ../../x\nversion: 1.0.0\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\nicon: [1]\n',
      '{not yaml',
      '',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies:\n- name: absent\n  version: 1.0.0\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 9.9.9\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  alias: a\n- name: sub\n  version: 0.1.0\n  alias: a\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  alias: "../../x"\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  tags: [t]\n  import-values: [{child: nope, parent: x}, 7]\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: "~~~"\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies: 7\n',
      'apiVersion: v2\nname: memcached\nversion: 1.0.0\ndependencies: [null, {}]\n',
    ),
  },
);

/** charts/: a subchart directory, a broken one, a nested one, a packaged one (maybe damaged), none. */
const subchartArb = fc.constantFrom('dir', 'dir', 'dir', 'dir', 'dir', 'none', 'broken', 'nested', 'tgz', 'bad-tgz');

interface EngineInput {
  chartYaml: string;
  valuesYaml: string;
  templates: string[];
  subchart: 'dir' | 'none' | 'broken' | 'nested' | 'tgz' | 'bad-tgz';
  hazards: [string, string][];
  values: Record<string, unknown>;
  set: string[];
  inspect: boolean;
}

const engineArb: fc.Arbitrary<EngineInput> = fc.record({
  chartYaml: chartYamlArb,
  valuesYaml: valuesTextArb,
  templates: fc.array(templateArb, { minLength: 1, maxLength: 3 }),
  subchart: subchartArb,
  hazards: fc.oneof(
    { weight: 3, arbitrary: fc.constant<[string, string][]>([]) },
    {
      weight: 1,
      arbitrary: fc.subarray(
    [
      ['memcached/values.schema.json', '{"type": "object", "required": ["nope"]}'],
      ['memcached/values.schema.json', '{"$ref": "http://example.invalid/schema.json"}'],
      ['memcached/values.schema.json', '{not json'],
      ['memcached/values.schema.json', '{"properties": {"deep": {"$ref": "#"}}, "$ref": "#/properties/deep"}'],
      ['memcached/crds/crd.yaml', 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n'],
      ['memcached/crds/bad.yaml', '{{ fail "crds are not templates" }}: ['],
      ['memcached/.helmignore', 'templates/\n'],
      ['memcached/Chart.lock', 'garbage: ['],
      ['memcached/templates/NOTES.txt', '{{ .Values.missing.x }}'],
      ['memcached/templates/_helpers.tpl', '{{ define "x.name" }}{{ fail "in a helper" }}{{ end }}'],
      ['memcached/templates/tests/t.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: t, annotations: {helm.sh/hook: test}}\n'],
      ['../../../escaped.txt', 'pwned'],
    ] as [string, string][],
    { minLength: 1, maxLength: 2 },
      ),
    },
  ),
  values: fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.dictionary(nastyString, nastyValue, { maxKeys: 3 }) }),
  set: fc.oneof(
    { weight: 5, arbitrary: fc.constant<string[]>([]) },
    { weight: 1, arbitrary: fc.array(fc.oneof(fc.constantFrom('replicas=2', 'a.b[1000000]=x', 'a[65536]=1', 'list[3]=x', 'x={a,b}', '=1', 'a.=1', 'image=null', 'enabled=false'), nastyString), { maxLength: 2 }) },
  ),
  inspect: fc.nat({ max: 4 }).map((k) => k === 0),
});

const SUB_TEMPLATE = TEMPLATES[0] ?? '';
function subchartFiles(kind: EngineInput['subchart']): [string, string | Buffer][] {
  const sub = (extra: [string, string][] = []): [string, string][] => [['Chart.yaml', stringify(SUB_CHART)], ['templates/cm.yaml', SUB_TEMPLATE], ...extra];
  const tgz = (files: [string, string][]): Buffer => tarOf(files.map(([p, c]) => [`sub/${p}`, c]));
  switch (kind) {
    case 'none':
      return [];
    case 'dir':
      return sub().map(([p, c]) => [`memcached/charts/sub/${p}`, c]);
    case 'broken':
      return sub([['templates/bad.yaml', '{{ .Values.x.y.z }}'], ['values.yaml', 'x: [']]).map(([p, c]) => [`memcached/charts/sub/${p}`, c]);
    case 'nested':
    {
      const files: [string, string][] = [
        ...sub([['Chart.yaml', 'apiVersion: v2\nname: sub\nversion: 0.1.0\ndependencies:\n- name: leaf\n  version: 1.0.0\n']]),
        ['charts/leaf/Chart.yaml', 'apiVersion: v2\nname: leaf\nversion: 1.0.0\n'],
        ['charts/leaf/templates/t.yaml', '{{ fail "leaf" }}'],
      ];
      return files.map(([p, c]) => [`memcached/charts/sub/${p}`, c]);
    }
    case 'tgz':
      return [['memcached/charts/sub-0.1.0.tgz', gzipSync(tgz(sub()))]];
    case 'bad-tgz':
      return [['memcached/charts/sub-0.1.0.tgz', gzipSync(tgz(sub())).subarray(0, 40)]];
  }
}

function tarOf(files: [string, string | Buffer][]): Buffer {
  const parts: Buffer[] = [];
  for (const [path, content] of files) {
    const body = Buffer.from(content);
    parts.push(ustarHeader(path, '0', 0o644, body.length, '', 0), body, filePadding(body.length));
  }
  parts.push(TAR_END);
  return Buffer.concat(parts);
}

async function engineArchive(input: EngineInput): Promise<string> {
  const files: [string, string | Buffer][] = [
    ['memcached/Chart.yaml', input.chartYaml],
    ['memcached/values.yaml', input.valuesYaml],
    ...input.templates.map((t, i): [string, string] => [`memcached/templates/t${i}.yaml`, t]),
    ...subchartFiles(input.subchart),
    ...input.hazards,
  ];
  const dir = join(sandbox.work, `engine-${n++}`);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'chart.tgz');
  await writeFile(file, gzipSync(tarOf(files)));
  const f = await fetchChart({ type: 'archive', path: file }, { cacheDir: join(sandbox.work, 'cache'), allowHostPaths: true, maxArchiveBytes: 1024 * 1024 });
  return f.path;
}

function engineCases(input: EngineInput): string[] {
  const out = new Set<string>();
  for (const t of input.templates) {
    if (TEMPLATES.slice(0, 4).includes(t)) out.add('renders');
    else if (/fail|required/.test(t)) out.add('fail-required');
    else if (/define "r"|define "a"/.test(t)) out.add('recursive-include');
    else if (t.includes('define "f0"')) out.add('include-fan-out');
    else if (t.includes('tpl "')) out.add('tpl-nesting');
    else if (t.includes('repeat') || t.includes('until')) out.add('huge-output');
    else if (t.includes('toYaml .Values | quote')) out.add('values-through-toYaml');
    else if (t.startsWith('{{ tpl .Values.t')) out.add('tpl-self');
    else if (t.includes('gen')) out.add('key-generation');
    else out.add('broken-template');
  }
  if (input.valuesYaml.includes('deep: ')) out.add('deep-values');
  if (input.chartYaml !== stringify(CHART_YAML)) out.add('chart-yaml-changed');
  if (input.chartYaml.includes('version: 1.0.0\ndependencies')) out.add('bad-dependencies');
  if (input.subchart !== 'dir' && input.subchart !== 'none') out.add(`subchart-${input.subchart}`);
  return [...out];
}

test('fuzz: chart archives through Helm\'s loader and renderer (WebAssembly engine)', { timeout: 60 * 60_000 }, async () => {
  assert.ok(existsSync(join(helmWasmDir(), 'helm.wasm')), `the Helm engine is not built at ${helmWasmDir()}: run \`bash hack/build-tools.sh\``);
  // One engine for the whole run, warm across inputs; its per-call bound is the hang detector: a
  // render past it is a HELM_TIMEOUT and a fresh worker (generous: warm renders take tens of ms).
  const engine = createHelmEngine(undefined, { callTimeoutMs: 20_000 });
  after(() => engine.close());
  // A chart that renders, to show the engine still answers after every input.
  // (Beside the sandbox, not in it: anything new in the sandbox outside its work directory is an escape.)
  const canary = await mkdtemp(join(tmpdir(), 'binnacle-fuzz-canary-'));
  after(() => rm(canary, { recursive: true, force: true }));
  await mkdir(join(canary, 'templates'), { recursive: true });
  await writeFile(join(canary, 'Chart.yaml'), 'apiVersion: v2\nname: canary\nversion: 0.1.0\n');
  await writeFile(join(canary, 'templates', 'cm.yaml'), TEMPLATES[0] ?? '');
  await engine.template({ chart: canary, releaseName: 'canary' });
  let restarts = 0;
  const fig = await fuzz(
    'chart-engine',
    engineArb,
    async (input) => {
      const path = await engineArchive(input);
      try {
        const charts = input.inspect ? (await engine.inspect(path)).length : undefined;
        const r = await engine.render({ chart: path, releaseName: 'fuzz', namespace: 'ns', values: input.values, set: input.set });
        return { charts, bytes: r.output.length };
      } catch (err) {
        if (err instanceof HelmError && (err.code === 'HELM_TIMEOUT' || err.code.startsWith('HELM_ENGINE_'))) restarts++;
        throw err;
      }
    },
    {
      ciRuns: 40,
      fullRuns: Number(process.env.BINNACLE_FUZZ_ENGINE_RUNS ?? 1000),
      sandbox,
      // The fetch, the render and (after a crash) a fresh engine's start.
      timeoutMs: 60_000,
      errors: [HelmError],
      cases: engineCases,
      afterEach: async () => {
        const r = await engine.template({ chart: canary, releaseName: 'canary' });
        return r.output.includes('name: canary') ? undefined : `the engine answered the canary chart with ${JSON.stringify(r.output.slice(0, 200))}`;
      },
    },
  );
  console.log(`  chart-engine: ${restarts} inputs ended the worker (timeout or crash) and it was restarted; ${fig.answers} rendered`);
  assert.ok(fig.answers > 0 && fig.errors > 0, 'the engine both rendered and refused charts');
});
