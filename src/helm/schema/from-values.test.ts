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

/** The properties inferred from values.yaml given as its lines. */
function inferredProperties(lines: string[]): NonNullable<StructuralSchema['properties']> {
  return infer(lines.join('\n')).properties ?? {};
}

/** Every description among the properties, by dotted path: what a test expects described, and nothing else. */
function descriptions(properties: NonNullable<StructuralSchema['properties']>, prefix = ''): Record<string, string> {
  return Object.fromEntries(
    Object.entries(properties).flatMap(([key, schema]): [string, string][] => [
      ...(schema.description === undefined ? [] : [[`${prefix}${key}`, schema.description] as [string, string]]),
      ...Object.entries(descriptions(schema.properties ?? {}, `${prefix}${key}.`)),
    ]),
  );
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
    const p = inferredProperties([
      'ports: [80, 443]',
      'hosts: []',
      'mixed: [1, {a: 1}]',
      'intOrString: [1, "x"]',
      'env:',
      '  - name: A',
      '    value: "1"',
      '  - name: B',
      '    valueFrom: {secretKeyRef: {name: s, key: k}}',
    ]);
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
    const p = inferredProperties([
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
    ]);
    // image.tag: its comment is detached by the blank line.
    assert.deepEqual(descriptions(p), {
      'image.pullPolicy': 'this plain comment is above a key that has no helm-docs comment',
      'image.repository': 'Image repository. Use a mirror when offline.',
      other: 'belongs to `other` although indented under image',
      replicas: 'Number of replicas',
    });
  });

  it('plain comments leave out commented-out YAML; Bitnami @param lines describe keys by path', () => {
    const p = inferredProperties([
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
    ]);
    // onlyCode: the commented-out YAML above it describes nothing.
    assert.deepEqual(descriptions(p), {
      podAnnotations: 'Pod annotations\nref: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations/',
      'service.ports.http': 'HTTP port',
      'service.type': 'Kubernetes service type',
    });
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
