import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyOverrides, decodeOverrides } from './overrides.js';

function deployment(): Record<string, unknown> {
  return {
    metadata: { name: 'd', annotations: { keep: 'mine' } },
    spec: {
      template: {
        metadata: {},
        spec: {
          containers: [{ name: 'c', env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'v', mountPath: '/old' }] }],
          volumes: [{ name: 'v', emptyDir: {} }],
          tolerations: [{ key: 't', operator: 'Exists' }],
          affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: {} }] }, podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] } },
        },
      },
    },
  };
}
const pod = (d: Record<string, unknown>): Record<string, unknown> =>
  ((d.spec as Record<string, unknown>).template as Record<string, Record<string, unknown>>).spec ?? {};

describe('applyOverrides', () => {
  it('merges by name, appends unique, replaces resources, keeps existing annotations', () => {
    const d = deployment();
    applyOverrides(d, {
      env: [{ name: 'A', value: '2' }, { name: 'B', value: '3' }],
      volumes: [{ name: 'v', configMap: { name: 'cm' } }],
      volumeMounts: [{ name: 'v', mountPath: '/new' }],
      tolerations: [{ key: 't', operator: 'Exists' }, { key: 'u', operator: 'Exists' }],
      annotations: { keep: 'theirs', add: 'x' },
    });
    const p = pod(d);
    const c = (p.containers as Record<string, unknown>[])[0];
    assert.deepEqual(c?.env, [{ name: 'A', value: '2' }, { name: 'B', value: '3' }]);
    assert.deepEqual(c?.volumeMounts, [{ name: 'v', mountPath: '/new' }]);
    assert.deepEqual(p.volumes, [{ name: 'v', configMap: { name: 'cm' } }]);
    assert.equal((p.tolerations as unknown[]).length, 2);
    assert.deepEqual((d.metadata as Record<string, unknown>).annotations, { keep: 'mine', add: 'x' });
  });

  it('affinity: {} erases it, an empty part erases that part, a set part replaces it', () => {
    const erased = deployment();
    applyOverrides(erased, { affinity: {} });
    assert.equal(pod(erased).affinity, undefined);
    const partial = deployment();
    applyOverrides(partial, { affinity: { podAffinity: {}, podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 2 }] } } });
    const a = pod(partial).affinity as Record<string, unknown>;
    assert.deepEqual(Object.keys(a).sort(), ['nodeAffinity', 'podAntiAffinity']);
  });
});

describe('decodeOverrides', () => {
  it('reports every bad field with file and field', () => {
    const { problems } = decodeOverrides({ env: [{ value: 'x' }], nodeSelector: { a: 1 }, volumez: [] }, 'config.yaml');
    assert.deepEqual(problems.map((p) => p.field).sort(), ['env[0].name', 'nodeSelector.a', 'volumez']);
    assert.ok(problems.every((p) => p.file === 'config.yaml'));
  });
});
