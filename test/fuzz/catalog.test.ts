/**
 * Fuzzing the file-based catalog loader (src/catalog/load.ts loadFbcDir) with JSON and YAML
 * catalogs: a small valid catalog as it is, with targeted corruptions (a field null, missing, of
 * the wrong type, oversized or almost valid; a record or list element repeated), or changed by
 * random structure-aware mutations (any field replaced, removed, added or wrapped), then damaged
 * as text, plus YAML's own hazards (alias bombs, tags, merge keys, duplicate keys). What loads
 * goes on through validation (the model) and resolution, as `catalog validate` and a
 * ClusterExtension would take it; a catalog with problems is then refused as `catalog build`
 * refuses it, with a ValidationError naming each problem's file, field and rule. Each catalog
 * gets an answer or a BinnacleError, and nothing is written outside the catalog's directory.
 */
import { after, test } from 'node:test';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadFbcDir } from '../../src/catalog/load.js';
import { validateConfig } from '../../src/catalog/validate.js';
import { resolve } from '../../src/resolve/resolver.js';
import { BinnacleError, ValidationError } from '../../src/util/errors.js';
import { Sandbox, byteMutationArb, corrupt, corruptionArb, fc, fuzz, mutate, mutateText, mutationArb, nastyString } from './harness.js';

const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64');
const csv = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', metadata: { name: 'etcd.v0.9.2' }, spec: { version: '0.9.2' } };

/** A small catalog that validates and resolves: two packages, a dependency, a CEL constraint, a deprecation. */
export const CATALOG: unknown[] = [
  { schema: 'olm.package', name: 'etcd', defaultChannel: 'stable', description: 'etcd', icon: { base64data: 'iVBORw0KGgo=', mediatype: 'image/png' } },
  {
    schema: 'olm.channel',
    package: 'etcd',
    name: 'stable',
    entries: [{ name: 'etcd.v0.9.0' }, { name: 'etcd.v0.9.2', replaces: 'etcd.v0.9.0', skips: ['etcd.v0.9.1'], skipRange: '>=0.9.0 <0.9.2' }],
  },
  {
    schema: 'olm.bundle',
    package: 'etcd',
    name: 'etcd.v0.9.0',
    image: 'quay.io/example/etcd:v0.9.0',
    properties: [
      { type: 'olm.package', value: { packageName: 'etcd', version: '0.9.0' } },
      { type: 'olm.gvk', value: { group: 'etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdCluster' } },
    ],
  },
  {
    schema: 'olm.bundle',
    package: 'etcd',
    name: 'etcd.v0.9.2',
    image: 'quay.io/example/etcd:v0.9.2',
    relatedImages: [{ name: 'etcd', image: 'quay.io/example/etcd-operator:v0.9.2' }],
    properties: [
      { type: 'olm.package', value: { packageName: 'etcd', version: '0.9.2' } },
      { type: 'olm.gvk', value: { group: 'etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdCluster' } },
      { type: 'olm.package.required', value: { packageName: 'prometheus', versionRange: '>=1.0.0 <2.0.0' } },
      { type: 'olm.constraint', value: { failureMessage: 'needs prometheus', cel: { rule: 'properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "1.0.0") >= 0)' } } },
      { type: 'olm.bundle.object', value: { data: b64(csv) } },
    ],
  },
  { schema: 'olm.package', name: 'prometheus', defaultChannel: 'beta' },
  { schema: 'olm.channel', package: 'prometheus', name: 'beta', entries: [{ name: 'prometheus.v1.2.0' }] },
  {
    schema: 'olm.bundle',
    package: 'prometheus',
    name: 'prometheus.v1.2.0',
    image: 'quay.io/example/prometheus:v1.2.0',
    properties: [{ type: 'olm.package', value: { packageName: 'prometheus', version: '1.2.0' } }],
  },
  { schema: 'olm.deprecations', package: 'etcd', entries: [{ reference: { schema: 'olm.bundle', name: 'etcd.v0.9.0' }, message: 'use 0.9.2' }] },
  { schema: 'example.com/other', anything: [1, 2, 3] },
];

const sandbox = await Sandbox.create('catalog');
after(() => sandbox.dispose());

/** YAML that only YAML can say: aliases (and an alias bomb), tags, merge keys, duplicate keys, directives; and nesting too deep to walk (YAML and JSON). */
const yamlHazard = fc.constantFrom(
  '',
  'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nschema: olm.package\nname: bomb\n',
  'schema: !!binary aGVsbG8=\nname: x\n',
  'schema: olm.package\nname: dup\nname: dup2\n',
  'base: &base {schema: olm.package}\n<<: *base\nname: merged\n',
  '%YAML 1.1\n---\nschema: olm.package\nname: yes\ndefaultChannel: on\n',
  'schema: olm.bundle\nname: !!timestamp 2001-12-14\npackage: !!int 12\n',
  '? [complex, key]\n: value\nschema: olm.channel\n',
  'schema: olm.package\nname: *undefined_alias\n',
  '!!python/object:os.system ["echo pwned"]\n',
  `${'- '.repeat(2000)}x\n`,
  `${'['.repeat(3000)}${']'.repeat(3000)}\n`,
  `{"schema": "olm.package", "name": "deep", "x": ${'['.repeat(5000)}${']'.repeat(5000)}}\n`,
);

const mutated = fc.array(fc.record({ base: fc.nat(), mutations: fc.array(mutationArb, { maxLength: 2 }) }), { minLength: 1, maxLength: 6 }).map((picks) =>
  CATALOG.map((d, i) => {
    const hit = picks.find((p) => p.base % CATALOG.length === i);
    return hit === undefined ? d : hit.mutations.reduce<unknown>((x, m) => mutate(x, m), d);
  }),
);
/** One to three corruptions of the catalog (its list of records: a corruption may repeat a whole record, or leave a single value). */
const corrupted = fc.array(corruptionArb, { minLength: 1, maxLength: 3 }).map((cs) => {
  const out = cs.reduce<unknown>((x, c) => corrupt(x, c), CATALOG);
  return Array.isArray(out) ? (out as unknown[]) : [out];
});
const docs = fc.oneof({ weight: 2, arbitrary: fc.constant(CATALOG) }, { weight: 4, arbitrary: corrupted }, { weight: 2, arbitrary: mutated });

const catalogFiles = fc.record({
  format: fc.constantFrom('json', 'json-pretty', 'yaml', 'yaml-one-per-file', 'mixed'),
  docs,
  damage: byteMutationArb,
  hazard: yamlHazard,
  name: fc.oneof(fc.constantFrom('catalog', 'index', 'a/b/c', '.hidden', 'x.json.bak'), nastyString.filter((s) => /^[\w.-]{1,40}$/.test(s))),
  indexignore: fc.constantFrom(undefined, '*.yaml\n', '!important.json\n**\n', '[\n', '/\n'),
  request: fc.record({ package: fc.constantFrom('etcd', 'prometheus', 'missing', ''), versionRange: fc.constantFrom(undefined, '>=0.9.0', '!=0.9.2', '0.9.x || >5', 'garbage'), channel: fc.constantFrom(undefined, 'stable', 'beta', 'none') }),
});

let n = 0;
test('fuzz: file-based catalogs, JSON and YAML (load, validate, resolve)', { timeout: 30 * 60_000 }, async () => {
  await fuzz(
    'fbc',
    catalogFiles,
    async (input) => {
      const dir = join(sandbox.work, `catalog-${n++}`);
      await mkdir(join(dir, 'a', 'b'), { recursive: true });
      const files: [string, string][] = [];
      const yamlDoc = (d: unknown): string => {
        const y: unknown = stringify(d, { aliasDuplicateObjects: false }); // undefined for undefined
        return typeof y === 'string' ? y : '';
      };
      switch (input.format) {
        case 'json':
          files.push([`${input.name}.json`, input.docs.map((d) => JSON.stringify(d) ?? 'null').join('')]);
          break;
        case 'json-pretty':
          files.push([`${input.name}.json`, input.docs.map((d) => JSON.stringify(d, null, 2) ?? 'null').join('\n')]);
          break;
        case 'yaml':
          files.push([`${input.name}.yaml`, input.docs.map(yamlDoc).join('---\n') + (input.hazard === '' ? '' : `---\n${input.hazard}`)]);
          break;
        case 'yaml-one-per-file':
          input.docs.forEach((d, i) => files.push([`doc-${i}.yml`, yamlDoc(d)]));
          files.push(['hazard.yaml', input.hazard]);
          break;
        case 'mixed':
          input.docs.forEach((d, i) => files.push([i % 2 === 0 ? `a/doc-${i}.json` : `a/b/doc-${i}.yaml`, i % 2 === 0 ? (JSON.stringify(d) ?? '') : yamlDoc(d)]));
          break;
      }
      for (const [i, [name, raw]] of files.entries()) {
        const text = i === 0 ? mutateText(raw, input.damage) : raw;
        await mkdir(join(dir, name, '..'), { recursive: true });
        await writeFile(join(dir, name), text);
      }
      if (input.indexignore !== undefined) await writeFile(join(dir, '.indexignore'), input.indexignore);
      const loaded = await loadFbcDir(dir);
      const { result } = validateConfig(loaded.config);
      const r = input.request;
      let resolution: unknown;
      try {
        resolution = resolve({
          catalogs: [{ name: 'fuzz', config: loaded.config }],
          requests: [{ package: r.package, ...(r.versionRange === undefined ? {} : { versionRange: r.versionRange }), ...(r.channel === undefined ? {} : { channels: [r.channel] }) }],
        });
      } catch (err) {
        // No solution (or a bad request) is the resolver's answer; anything else is a crash.
        if (!(err instanceof BinnacleError)) throw err;
        resolution = err.code;
      }
      // Resolution ran whatever the catalog's problems (the resolver must bear them); a catalog with problems is refused.
      if (!loaded.result.ok) throw new ValidationError(loaded.result);
      if (!result.ok) throw new ValidationError(result);
      return { chosen: resolution };
    },
    { ciRuns: 250, sandbox },
  );
});
