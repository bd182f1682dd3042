/** What a plan says an upgrade deletes: the deployed revision's objects the new render no longer has. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bombObject, BOMB_REASON_IN_OBJECT, manyAliasesObject } from '../util/yaml.test-helper.js';
import { deletions } from './plan.js';

const revision = (manifest: string): { name: string; namespace: string; revision: number; manifest: string } => ({ name: 'ext-p', namespace: 'ns', revision: 4, manifest });

test('the deployed revision may have more than 100 YAML aliases', () => {
  const current = revision(`---\n${manyAliasesObject('kept')}---\n${manyAliasesObject('gone', 400)}`);
  assert.deepEqual(deletions(current, new Set(['ConfigMap//kept'])), [{ action: 'delete', kind: 'ConfigMap', name: 'gone' }]);
});

test('an alias bomb in the deployed revision is RELEASE_MANIFEST naming the release, revision and document', () => {
  assert.throws(() => deletions(revision(`---\n${manyAliasesObject('kept')}---\n${bombObject()}`), new Set()), {
    code: 'RELEASE_MANIFEST',
    message: `release ns/ext-p revision 4: manifest document 2: ${BOMB_REASON_IN_OBJECT}`,
  });
});
