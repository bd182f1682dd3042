import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crdForChart, valuesSchema } from '../../helm/schema/index.js';
import { aliasLines, BILLION_LAUGHS, BOMB_REASON } from '../../util/yaml.test-helper.js';
import { exampleFor, formFor, initialState, labelOf, valueOf, type FieldState, type FormField } from './schema-form.js';

const schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
    spec: {
      type: 'object',
      required: ['size', 'template'],
      properties: {
        image: { type: 'string', description: 'from the schema' },
        size: { type: 'integer', minimum: 1, default: 3 },
        ratio: { type: 'number' },
        enabled: { type: 'boolean' },
        mode: { type: 'string', enum: ['Fast', 'Safe'], default: 'Safe' },
        maxUnhealthy: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        template: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, namespace: { type: 'string' } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        ports: { type: 'array', items: { type: 'integer' } },
        conditions: { type: 'array', default: [{ type: 'Ready', status: 'False' }], items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, status: { type: 'string' } } } },
        matrix: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
      },
    },
  },
};

function child(f: FormField, ...keys: string[]): FormField {
  let cur = f;
  for (const k of keys) {
    const next = cur.fields?.find((x) => x.key === k);
    assert.ok(next !== undefined, `no field ${k} under ${cur.path || '(root)'}`);
    cur = next;
  }
  return cur;
}

/** Sets the text of the scalar at `keys` in an object state. */
function setText(state: FieldState, keys: string[], text: string): void {
  let cur = state;
  for (const k of keys) {
    assert.ok('fields' in cur);
    const next = cur.fields[k];
    assert.ok(next !== undefined);
    cur = next;
  }
  assert.ok('text' in cur);
  cur.text = text;
}

describe('form from a CRD schema', () => {
  it('leaves apiVersion, kind, metadata and status to the page and the server', () => {
    const form = formFor(schema);
    assert.deepEqual(form.fields?.map((f) => f.key), ['spec']);
  });

  it('gives each schema type its field kind, and paths as the API server names them', () => {
    const spec = child(formFor(schema), 'spec');
    const kinds = Object.fromEntries((spec.fields ?? []).map((f) => [f.key, f.kind]));
    assert.deepEqual(kinds, {
      size: 'integer',
      template: 'object',
      image: 'string',
      ratio: 'number',
      enabled: 'boolean',
      mode: 'enum',
      maxUnhealthy: 'int-or-string',
      labels: 'yaml',
      raw: 'yaml',
      ports: 'array',
      conditions: 'array',
      matrix: 'yaml',
    });
    assert.equal(child(spec, 'template', 'name').path, 'spec.template.name');
    assert.equal(child(spec, 'conditions').item?.kind, 'object');
    assert.equal(child(spec, 'conditions').item?.fields?.[0]?.path, 'spec.conditions[].type');
    assert.deepEqual(child(spec, 'mode').options, ['Fast', 'Safe']);
    assert.equal(child(spec, 'size').minimum, 1);
  });

  it('marks required fields and puts them first (after descriptors)', () => {
    const spec = child(formFor(schema), 'spec');
    assert.deepEqual(spec.fields?.slice(0, 2).map((f) => [f.key, f.required]), [['size', true], ['template', true]]);
    assert.equal(child(spec, 'image').required, false);
    assert.equal(child(spec, 'template', 'name').required, true);
  });

  it('takes labels, descriptions and order from spec descriptors; hidden ones stay out of the form', () => {
    const form = formFor(schema, [
      { path: 'mode', displayName: 'Operating mode', description: 'from the CSV' },
      { path: 'template.namespace', displayName: 'Template namespace' },
      { path: 'image', 'x-descriptors': ['urn:alm:descriptor:com.tectonic.ui:hidden'] },
    ]);
    const spec = child(form, 'spec');
    assert.deepEqual(spec.fields?.slice(0, 2).map((f) => f.key), ['mode', 'template']);
    assert.equal(child(spec, 'mode').label, 'Operating mode');
    assert.equal(child(spec, 'mode').description, 'from the CSV');
    assert.equal(child(spec, 'template', 'namespace').label, 'Template namespace');
    assert.deepEqual(child(spec, 'template').fields?.map((f) => f.key), ['namespace', 'name']);
    assert.equal(spec.fields?.some((f) => f.key === 'image'), false);
    assert.equal(child(spec, 'ratio').label, 'Ratio');
  });

  it('labels keys in words', () => {
    assert.equal(labelOf('maxUnhealthy'), 'Max unhealthy');
    assert.equal(labelOf('externalRemediationTemplate'), 'External remediation template');
    assert.equal(labelOf('enableTLS'), 'Enable TLS');
    assert.equal(labelOf('log_level'), 'Log level');
  });
});

describe('form state and value', () => {
  it('prefills from defaults and sends them back typed', () => {
    const form = formFor(schema);
    const state = initialState(form, {});
    const { value, problems } = valueOf(form, state);
    assert.deepEqual(problems, []);
    // The required template is sent (empty) for the API server to name what it lacks.
    assert.deepEqual(value, { spec: { size: 3, mode: 'Safe', template: {}, conditions: [{ type: 'Ready', status: 'False' }] } });
  });

  it('round-trips an example: scalars, int-or-string, nested objects, arrays, YAML fields, and keys the schema does not name', () => {
    const form = formFor(schema);
    const example = {
      apiVersion: 'x/v1',
      kind: 'K',
      metadata: { name: 'a' },
      spec: {
        size: 2,
        ratio: 0.5,
        enabled: false,
        mode: 'Fast',
        maxUnhealthy: '40%',
        template: { name: 't' },
        labels: { a: 'b' },
        raw: { anything: [1, { deep: true }] },
        ports: [80, 443],
        conditions: [{ type: 'Ready', status: 'Unknown' }],
        matrix: [['a'], ['b', 'c']],
        unknownToSchema: { kept: 1 },
      },
    };
    const state = initialState(form, example);
    const { value, problems } = valueOf(form, state);
    assert.deepEqual(problems, []);
    assert.deepEqual(value, { spec: example.spec });
  });

  it('reads int-or-string as an integer when it is one', () => {
    const form = formFor(schema);
    const state = initialState(form, {});
    setText(state, ['spec', 'maxUnhealthy'], '2');
    assert.equal((valueOf(form, state).value.spec as Record<string, unknown>).maxUnhealthy, 2);
    setText(state, ['spec', 'maxUnhealthy'], '49%');
    assert.equal((valueOf(form, state).value.spec as Record<string, unknown>).maxUnhealthy, '49%');
  });

  it('a YAML field reads more than 100 aliases; an alias bomb is a problem on the field saying why', () => {
    const form = formFor(schema);
    const state = initialState(form, {});
    setText(state, ['spec', 'raw'], aliasLines(400));
    const { value, problems } = valueOf(form, state);
    assert.deepEqual(problems, []);
    assert.equal(((value.spec as { raw: { aliases: unknown[] } }).raw.aliases).length, 400);
    setText(state, ['spec', 'raw'], BILLION_LAUGHS);
    assert.deepEqual(valueOf(form, state).problems, [{ path: 'spec.raw', message: BOMB_REASON }]);
  });

  it('reports what cannot be read, naming the field', () => {
    const form = formFor(schema);
    const state = initialState(form, {});
    setText(state, ['spec', 'size'], 'three');
    setText(state, ['spec', 'ratio'], 'half');
    setText(state, ['spec', 'enabled'], 'yes');
    setText(state, ['spec', 'raw'], 'a: [');
    const spec = state as { fields: Record<string, { fields: Record<string, FieldState> }> };
    const conditions = spec.fields.spec?.fields.conditions;
    assert.ok(conditions !== undefined && 'items' in conditions && conditions.items[0] !== undefined);
    setText(conditions.items[0], ['type'], '');
    const { problems, value } = valueOf(form, state);
    assert.deepEqual(problems.map((p) => p.path), ['spec.size', 'spec.ratio', 'spec.enabled', 'spec.raw']);
    assert.match(problems[0]?.message ?? '', /not an integer/);
    assert.match(problems[3]?.message ?? '', /^not valid YAML \(line 1, column 5\): Flow sequence/);
    // An item left partly empty keeps what it has; its required `type` is the server's to name (spec.conditions[0].type).
    assert.deepEqual((value.spec as Record<string, unknown>).conditions, [{ status: 'False' }]);
  });

  it('leaves out optional fields left empty, and an emptied optional object', () => {
    const form = formFor(schema);
    const state = initialState(form, { spec: { size: 1, template: { name: 'n' }, image: 'img', ports: [] } });
    setText(state, ['spec', 'image'], '');
    setText(state, ['spec', 'mode'], '');
    const spec = valueOf(form, state).value.spec as Record<string, unknown>;
    assert.deepEqual(Object.keys(spec).sort(), ['conditions', 'size', 'template']);
  });

  it('keeps an enum option of another type as that type', () => {
    const form = formFor({ type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer', enum: [1, 3, 5] } } } } });
    const state = initialState(form, { spec: { replicas: 3 } });
    assert.deepEqual(valueOf(form, state).value, { spec: { replicas: 3 } });
  });
});

describe('forms for Helm-operator kinds', () => {
  it('come from the CRD Binnacle generates from the inferred values schema', () => {
    const values = 'replicaCount: 1\nimage:\n  repository: nginx\n  tag: ""\nservice:\n  type: ClusterIP\n  port: 80\nextraEnv: []\npodAnnotations: {}\n';
    const { schema: spec } = valuesSchema({ valuesYaml: values, chartName: 'web' });
    const crd = crdForChart({ group: 'charts.example.com', version: 'v1', kind: 'Web', scope: 'Namespaced', spec });
    const form = formFor((crd.spec as { versions: { schema: { openAPIV3Schema: unknown } }[] }).versions[0]?.schema.openAPIV3Schema);
    const specField = child(form, 'spec');
    assert.equal(child(specField, 'replicaCount').kind, 'integer');
    assert.equal(child(specField, 'service', 'port').kind, 'integer');
    assert.equal(child(specField, 'image', 'repository').kind, 'string');
    assert.equal(child(specField, 'podAnnotations').kind, 'yaml');
    const state = initialState(form, { spec: { replicaCount: 2, image: { repository: 'nginx' }, service: { type: 'NodePort', port: 8080 } } });
    assert.deepEqual(valueOf(form, state).value, { spec: { replicaCount: 2, image: { repository: 'nginx' }, service: { type: 'NodePort', port: 8080 } } });
  });
});

describe('alm-examples', () => {
  const alm = JSON.stringify([
    { apiVersion: 'a.example.com/v1', kind: 'Thing', metadata: { name: 'one' }, spec: { x: 1 } },
    { apiVersion: 'b.example.com/v1', kind: 'Thing', metadata: { name: 'two' } },
  ]);
  it('picks the example of the kind in the group', () => {
    assert.deepEqual(exampleFor(alm, 'b.example.com', 'Thing')?.metadata, { name: 'two' });
    assert.equal(exampleFor(alm, 'c.example.com', 'Thing'), undefined);
    assert.equal(exampleFor('not json', 'a.example.com', 'Thing'), undefined);
  });
});
