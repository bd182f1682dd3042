/** Subcharts are found through Chart.yaml files read as Helm reads them (YAML aliases included). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelmEngine } from '../../helm-engine/engine.js';
import { aliasLines, BILLION_LAUGHS, bombMessage } from '../../util/yaml.test-helper.js';
import { subchartSource } from './chart-dir.js';

const engine = {} as HelmEngine; // only archives are inspected; these subcharts are directories

async function chart(parentYaml: string, subYaml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chart-dir-'));
  await mkdir(join(dir, 'charts', 'db'), { recursive: true });
  await writeFile(join(dir, 'Chart.yaml'), parentYaml);
  await writeFile(join(dir, 'charts', 'db', 'Chart.yaml'), subYaml);
  return dir;
}

test('a Chart.yaml with more than 100 aliases is read: the subchart is found by its alias', async () => {
  const dir = await chart(`apiVersion: v2\nname: top\nversion: 0.1.0\ndependencies: [{name: postgres, alias: db}]\n${aliasLines()}`, `apiVersion: v2\nname: postgres\nversion: 1.0.0\n${aliasLines(300)}`);
  try {
    assert.deepEqual(await subchartSource(engine, dir, ['db'], dir), { type: 'dir', dir: join(dir, 'charts', 'db') });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('an alias bomb in a Chart.yaml is refused naming the file', async () => {
  const dir = await chart(`apiVersion: v2\nname: top\nversion: 0.1.0\n`, `apiVersion: v2\nname: postgres\nversion: 1.0.0\n${BILLION_LAUGHS}`);
  try {
    await assert.rejects(subchartSource(engine, dir, ['postgres'], dir), { code: 'YAML_ALIASES', message: bombMessage(join(dir, 'charts', 'db', 'Chart.yaml')) });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
