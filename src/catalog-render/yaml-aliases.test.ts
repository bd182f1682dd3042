/**
 * Catalog readers read YAML aliases as opm (Go's YAML) does: many aliases are fine, an alias bomb
 * is a problem or error naming the file (FBC documents, package manifests, bundle objects).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { aliasLines, BILLION_LAUGHS, BOMB, BOMB_REASON, bombMessage } from '../util/yaml.test-helper.js';
import { loadFbcStream } from '../catalog/load.js';
import { readPackageManifest } from './package-dir.js';
import { validateConfig } from '../catalog/validate.js';

const PKG = 'schema: olm.package\nname: p\ndefaultChannel: stable\n';
const CHANNEL = 'schema: olm.channel\npackage: p\nname: stable\nentries:\n- name: p.v1.0.0\n';
const bundle = (props: string): string => `schema: olm.bundle\npackage: p\nname: p.v1.0.0\nimage: quay.io/x/p:1.0.0\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n${props}`;

describe('catalog YAML aliases', () => {
  it('an FBC document with more than 100 aliases is read; an alias bomb is fbc.parse naming the file and line', async () => {
    const many = await loadFbcStream(Readable.from([`${PKG}---\n${CHANNEL}---\nschema: example.com.custom\npackage: p\nname: x\n${aliasLines(1000)}`]), 'catalog.yaml');
    assert.ok(many.result.ok, many.result.render());
    assert.equal((many.config.others[0]?.blob as { aliases?: unknown[] } | undefined)?.aliases?.length, 1000);
    const bomb = await loadFbcStream(Readable.from([`${PKG}---\n${BILLION_LAUGHS}`]), 'catalog.yaml');
    assert.deepEqual(bomb.result.errors().map((p) => [p.rule, p.file, p.message]), [['fbc.parse', 'catalog.yaml:5', `document 1 cannot be read: ${BOMB_REASON}`]]);
  });

  it('a bundle object with an alias bomb is refused (opm cannot decode it); one with many aliases is not', async () => {
    const object = (yaml: string): string => `- type: olm.bundle.object\n  value: {data: ${Buffer.from(yaml).toString('base64')}}\n`;
    const ok = await loadFbcStream(Readable.from([`${PKG}---\n${CHANNEL}---\n${bundle(object(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n${aliasLines(500)}`))}`]), 'catalog.yaml');
    assert.ok(ok.result.ok, ok.result.render());
    assert.ok(validateConfig(ok.config).result.ok, validateConfig(ok.config).result.render());
    const bad = await loadFbcStream(Readable.from([`${PKG}---\n${CHANNEL}---\n${bundle(object(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n${BILLION_LAUGHS}`))}`]), 'catalog.yaml');
    const errors = validateConfig(bad.config).result.errors();
    assert.deepEqual(errors.map((p) => [p.rule, p.field]), [['bundle.property', 'properties[1].value.data']]);
    assert.match(errors[0]?.message ?? '', new RegExp(`^parse property\\[1\\] of type "olm\\.bundle\\.object" as bundle object: the object is not usable YAML: ${BOMB.source}$`));
  });

  it('a package manifest with more than 100 aliases is read; an alias bomb is PACKAGE_MANIFEST_YAML naming the file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pkg-aliases-'));
    try {
      const file = path.join(dir, 'p.package.yaml');
      await writeFile(file, `packageName: p\nchannels:\n- &c {name: stable, currentCSV: p.v1.0.0}\n${Array.from({ length: 200 }, () => '- *c\n').join('')}`);
      assert.equal((await readPackageManifest(file)).channels.length, 201);
      await writeFile(file, `packageName: p\n${BILLION_LAUGHS}`);
      await assert.rejects(readPackageManifest(file), { code: 'PACKAGE_MANIFEST_YAML', message: bombMessage(file) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
