import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { valuesSchema } from './values-schema.js';
import { checkStructural } from './structural.js';
import type { StructuralSchema, ValuesSchemaOptions } from './types.js';

function infer(valuesYaml: string, options: ValuesSchemaOptions = {}): StructuralSchema {
  const r = valuesSchema({ valuesYaml, chartName: 'demo', options: { allowNullOverrides: false, ...options } });
  assert.equal(r.source, 'values.yaml');
  assert.deepEqual(checkStructural(r.schema, { root: false }), []);
  assert.deepEqual(r.warnings.filter((w) => w.rule === 'schema.default-conflict'), [], 'an inferred schema fits its own defaults');
  return r.schema;
}

const ANY = { 'x-kubernetes-preserve-unknown-fields': true, nullable: true };

describe('values.yaml → inferred schema', () => {
  it('infers scalar types from defaults: string, integer vs number, boolean', () => {
    const s = infer('name: web\nreplicas: 2\nratio: 0.5\nscale: 1.0\nbig: 1e3\nenabled: true\nlegacy: yes\n');
    assert.deepEqual(s.properties, {
      name: { type: 'string' },
      replicas: { type: 'integer' },
      ratio: { type: 'number' },
      scale: { type: 'number' },
      big: { type: 'number' },
      enabled: { type: 'boolean' },
      legacy: { type: 'boolean' },
    });
  });

  it('null defaults are nullable and keep any value; {} is a free-form map', () => {
    const s = infer('tag: ~\nempty:\nresources: {}\n');
    assert.deepEqual(s.properties, { tag: ANY, empty: ANY, resources: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
  });

  it('lists: items from the elements, any value when empty or mixed', () => {
    const s = infer(
      [
        'ports: [80, 443]',
        'hosts: []',
        'mixed: [1, {a: 1}]',
        'intOrString: [1, "x"]',
        'env:',
        '  - name: A',
        '    value: "1"',
        '  - name: B',
        '    valueFrom: {secretKeyRef: {name: s, key: k}}',
      ].join('\n'),
    );
    const p = s.properties ?? {};
    assert.deepEqual(p.ports, { type: 'array', items: { type: 'integer' } });
    assert.deepEqual(p.hosts, { type: 'array', items: ANY });
    assert.deepEqual(p.mixed, { type: 'array', items: { 'x-kubernetes-preserve-unknown-fields': true } });
    assert.deepEqual(p.intOrString, { type: 'array', items: { 'x-kubernetes-int-or-string': true } });
    const env = p.env?.items;
    assert.deepEqual(Object.keys(env?.properties ?? {}), ['name', 'value', 'valueFrom']);
    assert.equal(env?.properties?.valueFrom?.type, 'object');
  });

  it('objects keep unknown keys unless inferred objects are closed; defaults are never copied', () => {
    const open = infer('image:\n  repository: nginx\n  tag: "1.25"\n');
    assert.deepEqual(open.properties?.image, { type: 'object', properties: { repository: { type: 'string' }, tag: { type: 'string' } }, 'x-kubernetes-preserve-unknown-fields': true });
    const closed = infer('image:\n  repository: nginx\nextra: {}\n', { inferredObjects: 'closed' });
    assert.deepEqual(closed.properties?.image, { type: 'object', properties: { repository: { type: 'string' } } });
    assert.deepEqual(closed.properties?.extra, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, '{} stays free-form');
    assert.equal(JSON.stringify(open).includes('"default"'), false);
  });

  it('descriptions come from helm-docs `# --` comments, with continuation lines, skipping @ annotations', () => {
    const s = infer(
      [
        '# -- Number of replicas',
        'replicas: 1',
        '',
        'image:',
        '  # -- Image repository.',
        '  # Use a mirror when offline.',
        '  # @default -- nginx',
        '  repository: nginx',
        '  # this plain comment is above a key that has no helm-docs comment',
        '  pullPolicy: IfNotPresent',
        '  # -- described,',
        '  # but the blank line below detaches it',
        '',
        '  tag: latest',
        '  # -- belongs to `other` although indented under image',
        'other: 1',
      ].join('\n'),
    );
    const p = s.properties ?? {};
    assert.equal(p.replicas?.description, 'Number of replicas');
    assert.equal(p.image?.properties?.repository?.description, 'Image repository. Use a mirror when offline.');
    assert.equal(p.image?.properties?.pullPolicy?.description, 'this plain comment is above a key that has no helm-docs comment');
    assert.equal(p.image?.properties?.tag?.description, undefined);
    assert.equal(p.other?.description, 'belongs to `other` although indented under image');
  });

  it('plain comments leave out commented-out YAML; Bitnami @param lines describe keys by path', () => {
    const s = infer(
      [
        '## @param service.type Kubernetes service type',
        '## @param service.ports.http [default: 80] HTTP port',
        '## Pod annotations',
        '## ref: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations/',
        '# podAnnotations:',
        '#   prometheus.io/scrape: "true"',
        'podAnnotations: {}',
        'service:',
        '  type: ClusterIP',
        '  ports:',
        '    http: 80',
        '# key: value',
        'onlyCode: 1',
      ].join('\n'),
    );
    const p = s.properties ?? {};
    assert.equal(p.podAnnotations?.description, 'Pod annotations\nref: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations/');
    assert.equal(p.service?.properties?.type?.description, 'Kubernetes service type');
    assert.equal(p.service?.properties?.ports?.properties?.http?.description, 'HTTP port');
    assert.equal(p.onlyCode?.description, undefined);
  });

  it('an empty values.yaml gives a free-form object', () => {
    assert.deepEqual(infer('# nothing here\n'), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('every field an override reaches is nullable by default (a null deletes a chart default in Helm)', () => {
    const r = valuesSchema({ valuesYaml: 'a:\n  b: 1\nlist:\n  - x: 1\n', chartName: 'demo' });
    const p = r.schema.properties ?? {};
    assert.equal(r.schema.nullable, undefined, 'not the spec itself');
    assert.equal(p.a?.nullable, true);
    assert.equal(p.a?.properties?.b?.nullable, true);
    assert.equal(p.list?.nullable, true);
    assert.equal(p.list?.items?.nullable, undefined, 'list elements are replaced, not merged');
  });
});
