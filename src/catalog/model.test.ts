import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { emptyDeclarativeConfig, type DeclarativeConfig, type Property } from '../declcfg/index.js';
import { loadFbcStream } from './load.js';
import { toModel } from './model.js';
import { validateConfig } from './validate.js';

/**
 * test/fuzz/catalog.test.ts, seed 20261202, input 1,886, shrunk by fast-check: the fuzz's catalog
 * (catalog.json, one JSON document a line) with prometheus.v1.2.0's `olm.package` property given
 * the type "hasOwnProperty". Validation threw `TypeError: Cannot convert undefined or null to
 * object`: the property type was looked up among the known types' shapes on a plain object, so
 * "hasOwnProperty" found Object.prototype's method, and `shapeProblem` read the fields of a shape
 * that has none (`Object.keys(undefined)`).
 */
const SHRUNK_CATALOG = [
  '{"schema":"olm.package","name":"etcd","defaultChannel":"stable","description":"etcd","icon":{"base64data":"iVBORw0KGgo=","mediatype":"image/png"}}',
  '{"schema":"olm.channel","package":"etcd","name":"stable","entries":[{"name":"etcd.v0.9.0"},{"name":"etcd.v0.9.2","replaces":"etcd.v0.9.0","skips":["etcd.v0.9.1"],"skipRange":">=0.9.0 <0.9.2"}]}',
  '{"schema":"olm.bundle","package":"etcd","name":"etcd.v0.9.0","image":"quay.io/example/etcd:v0.9.0","properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"0.9.0"}},{"type":"olm.gvk","value":{"group":"etcd.database.coreos.com","version":"v1beta2","kind":"EtcdCluster"}}]}',
  '{"schema":"olm.bundle","package":"etcd","name":"etcd.v0.9.2","image":"quay.io/example/etcd:v0.9.2","relatedImages":[{"name":"etcd","image":"quay.io/example/etcd-operator:v0.9.2"}],"properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"0.9.2"}},{"type":"olm.gvk","value":{"group":"etcd.database.coreos.com","version":"v1beta2","kind":"EtcdCluster"}},{"type":"olm.package.required","value":{"packageName":"prometheus","versionRange":">=1.0.0 <2.0.0"}},{"type":"olm.constraint","value":{"failureMessage":"needs prometheus","cel":{"rule":"properties.exists(p, p.type == \\"olm.package\\" && semver_compare(p.value.version, \\"1.0.0\\") >= 0)"}}},{"type":"olm.bundle.object","value":{"data":"eyJhcGlWZXJzaW9uIjoib3BlcmF0b3JzLmNvcmVvcy5jb20vdjFhbHBoYTEiLCJraW5kIjoiQ2x1c3RlclNlcnZpY2VWZXJzaW9uIiwibWV0YWRhdGEiOnsibmFtZSI6ImV0Y2QudjAuOS4yIn0sInNwZWMiOnsidmVyc2lvbiI6IjAuOS4yIn19"}}]}',
  '{"schema":"olm.package","name":"prometheus","defaultChannel":"beta"}',
  '{"schema":"olm.channel","package":"prometheus","name":"beta","entries":[{"name":"prometheus.v1.2.0"}]}',
  '{"schema":"olm.bundle","package":"prometheus","name":"prometheus.v1.2.0","image":"quay.io/example/prometheus:v1.2.0","properties":[{"type":"hasOwnProperty","value":{"packageName":"prometheus","version":"1.2.0"}}]}',
  '{"schema":"olm.deprecations","package":"etcd","entries":[{"reference":{"schema":"olm.bundle","name":"etcd.v0.9.0"},"message":"use 0.9.2"}]}',
  '{"schema":"example.com/other","anything":[1,2,3]}',
].join('\n');

function bundleWith(properties: Property[]): DeclarativeConfig {
  const cfg = emptyDeclarativeConfig();
  cfg.packages.push({ schema: 'olm.package', name: 'p', defaultChannel: 'stable' });
  cfg.channels.push({ schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1.0.0' }] });
  cfg.bundles.push({ schema: 'olm.bundle', package: 'p', name: 'p.v1.0.0', image: 'quay.io/example/p:v1.0.0', properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }, ...properties] });
  return cfg;
}

const problems = (cfg: DeclarativeConfig): string[][] =>
  validateConfig(cfg)
    .result.errors()
    .map((p) => [p.rule, p.field ?? '', p.message]);

describe('the model: bundle property values as opm decodes them', () => {
  it('the fuzz catalog whose olm.package property has the type "hasOwnProperty" is invalid for its missing olm.package, not a crash', async () => {
    const loaded = await loadFbcStream(Readable.from([SHRUNK_CATALOG]), 'catalog.json');
    assert.ok(loaded.result.ok, loaded.result.render());
    const { result } = validateConfig(loaded.config);
    assert.deepEqual(
      result.errors().map((p) => [p.rule, p.field, p.message]),
      [['bundle.package-property', 'properties', 'must have exactly 1 "olm.package" property, found 0']],
    );
    assert.match(result.render(), /package "prometheus"\n {4}bundle "prometheus.v1.2.0"\n {6}error \[bundle.package-property\] properties: must have exactly 1/);
  });

  it('a property type named like an Object.prototype member is a type opm does not know: any value decodes', () => {
    for (const type of ['hasOwnProperty', '__proto__', 'constructor', 'toString', 'valueOf', 'isPrototypeOf']) {
      for (const value of [{ packageName: 'p', version: '1.0.0' }, {}, null, 'x', 7, [null], { a: null }]) {
        assert.deepEqual(problems(bundleWith([{ type, value }])), [], `${type} ${JSON.stringify(value)}`);
      }
    }
  });

  it('a known type\'s value: null decodes to the zero value; a value that is not an object is an error naming the property\'s field', () => {
    assert.deepEqual(problems(bundleWith([{ type: 'olm.gvk', value: null }, { type: 'olm.csv.metadata', value: { annotations: null, links: [null], provider: null } }])), []);
    assert.deepEqual(problems(bundleWith([{ type: 'olm.gvk', value: 'x' }])), [['bundle.property', 'properties[1].value', 'parse property[1] of type "olm.gvk": cannot unmarshal string into the value of type object']]);
    assert.deepEqual(problems(bundleWith([{ type: 'olm.csv.metadata', value: { annotations: ['a'] } }])), [
      ['bundle.property', 'properties[1].value', 'parse property[1] of type "olm.csv.metadata": cannot unmarshal array into field annotations of type map[string]string'],
    ]);
    assert.deepEqual(problems(bundleWith([{ type: 'olm.csv.metadata', value: { links: [7] } }])), [
      ['bundle.property', 'properties[1].value', 'parse property[1] of type "olm.csv.metadata": cannot unmarshal number into field links[0] of type object'],
    ]);
  });

  it('toModel still builds the bundle whose property type it does not know', () => {
    const { model } = toModel(bundleWith([{ type: 'hasOwnProperty', value: { a: 1 } }]));
    assert.deepEqual(model.packages.get('p')?.bundles.get('p.v1.0.0')?.properties.map((p) => p.type), ['olm.package', 'hasOwnProperty']);
  });
});
