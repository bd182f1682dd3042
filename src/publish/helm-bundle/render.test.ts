/** objectsOf reads Helm's output as Helm does: many YAML aliases are fine, an alias bomb is refused by name. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bombObject, BOMB_REASON_IN_OBJECT, manyAliasesObject } from '../../util/yaml.test-helper.js';
import { objectsOf } from './render.js';

test('objectsOf reads a rendered manifest with more than 100 aliases', () => {
  const objects = objectsOf(`---\n${manyAliasesObject('a')}---\n${manyAliasesObject('b', 2000)}`, 'chart: rendered manifest');
  assert.deepEqual(objects.map((o) => [o.metadata.name, (o as { aliases?: unknown[] }).aliases?.length]), [['a', 150], ['b', 2000]]);
});

test('objectsOf refuses an alias bomb naming the manifest and document', () => {
  assert.throws(() => objectsOf(`---\n${manyAliasesObject('a')}---\n${bombObject()}`, 'chart: rendered manifest'), {
    name: 'YamlAliasError',
    code: 'YAML_ALIASES',
    message: `chart: rendered manifest: document 2: ${BOMB_REASON_IN_OBJECT}`,
  });
});
