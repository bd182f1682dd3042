/** Files the CLI reads (release objects, --config) take YAML as kubectl does: many aliases are fine, an alias bomb is refused by name. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aliasLines, BILLION_LAUGHS, BOMB_REASON, bombObject, BOMB_REASON_IN_OBJECT, manyAliasesObject } from '../../util/yaml.test-helper.js';
import { readConfigFlag } from './operators.js';
import { readObjects } from './release.js';
import { withTempDir } from '../../util/temp-dir.test-helper.js';

const inTemp = (fn: (dir: string) => Promise<void>): Promise<void> => withTempDir('cli-yaml-', fn);

test('release objects: more than 100 aliases are read; an alias bomb is YAML_ALIASES naming the file and document', async () => {
  await inTemp(async (dir) => {
    await writeFile(join(dir, 'a.yaml'), `---\n${manyAliasesObject('one')}---\n${manyAliasesObject('two', 1000)}`);
    assert.deepEqual((await readObjects(dir)).map((o) => [o.metadata.name, (o as { aliases?: unknown[] }).aliases?.length]), [['one', 150], ['two', 1000]]);
    await writeFile(join(dir, 'b.yaml'), `${manyAliasesObject()}---\n${bombObject()}`);
    await assert.rejects(readObjects(dir), { code: 'YAML_ALIASES', message: `${join(dir, 'b.yaml')}: document 2: ${BOMB_REASON_IN_OBJECT}` });
  });
});

test('--config: more than 100 aliases are read; an alias bomb is a usage error naming the flag', async () => {
  await inTemp(async (dir) => {
    const file = join(dir, 'config.yaml');
    await writeFile(file, `env: []\n${aliasLines(300)}`);
    assert.equal(((await readConfigFlag(file)).aliases as unknown[]).length, 300);
    await writeFile(file, BILLION_LAUGHS);
    await assert.rejects(readConfigFlag(file), { name: 'UsageError', message: `--config ${file}: ${BOMB_REASON}` });
  });
});
