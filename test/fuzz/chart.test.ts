/**
 * Fuzzing the Helm chart loader with packaged charts (.tgz): src/helm/chart-source fetches the
 * archive into the cache and reads its Chart.yaml; then Helm's own loader in the WebAssembly engine
 * (src/helm/engine.ts) inspects and renders it. Archives are a small chart changed by
 * structure-aware mutations of Chart.yaml and values.yaml, broken templates, entries with `..`
 * and absolute paths, a second top directory, subcharts, damaged and non-gzip bytes. Each gets an
 * answer or a ChartSourceError/HelmError, and nothing is written outside the cache. The engine is
 * slow, so its CI sample is small.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { fetchChart } from '../../src/helm/chart-source/index.js';
import { createHelmEngine, helmWasmDir } from '../../src/helm/index.js';
import { TAR_END, filePadding, ustarHeader } from '../../src/oci/tar-writer.js';
import { Sandbox, type ByteMutation, type Mutation, byteMutationArb, fc, fuzz, mutate, mutateText, mutationArb, nastyString } from './harness.js';

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
    [`${top}/Chart.yaml`, y(input.chartMutations.reduce<unknown>((d, m) => mutate(d, m), CHART_YAML))],
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

test('fuzz: chart archives through Helm\'s loader and renderer (WebAssembly engine)', { timeout: 30 * 60_000 }, async () => {
  assert.ok(existsSync(join(helmWasmDir(), 'helm.wasm')), `the Helm engine is not built at ${helmWasmDir()}: run \`bash hack/build-tools.sh\``);
  const engine = createHelmEngine();
  after(() => engine.close());
  await fuzz(
    'chart-engine',
    chartArb,
    async (input) => {
      const f = await fetched(input);
      const charts = await engine.inspect(f.path);
      const r = await engine.render({ chart: f.path, releaseName: 'fuzz', namespace: 'ns' });
      return { charts: charts.length, bytes: r.output.length };
    },
    { ciRuns: 12, fullRuns: Number(process.env.BINNACLE_FUZZ_ENGINE_RUNS ?? 200), sandbox, timeoutMs: 60_000 },
  );
});
