/**
 * The bundled CLI (build-bundle.ts) runs as the sources do. It is bundled here from the sources
 * (esbuild reads TypeScript; the build bundles tsc's output of the same files) into a folder of
 * .cache/, as deep as dist/cli-bundle/, so paths taken next to modules resolve as in the build.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BINNACLE_VERSION } from '../api/version.js';
import { assertLatin1Chunks, bundleCli, STARTUP_CHUNK } from './build-bundle.js';
import { HELP_INDEX_FILE, helpIndexOf } from './help-index.js';
import { captureContext, runCli } from './in-process.test-helper.js';
import { buildProgram } from './main.js';
import { runProcess } from './run-process.test-helper.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const VALID = path.join('src', 'catalog', 'testdata', 'fbc', 'valid');
const BAD = path.join('src', 'catalog', 'testdata', 'bad');

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** As runCli: what it printed and its exit code. */
async function spawnBundle(main: string, args: string[]): Promise<Ran> {
  const { code, out, err } = await runProcess(process.execPath, [main, ...args], { cwd: ROOT, env: { BINNACLE_LOG_LEVEL: '' } });
  return { code, out, err };
}

describe('the bundled CLI', () => {
  let outDir = '';
  let indexDir = '';
  let main = '';

  before(async () => {
    await mkdir(path.join(ROOT, '.cache'), { recursive: true });
    outDir = await mkdtemp(path.join(ROOT, '.cache', 'cli-bundle-test-'));
    indexDir = await mkdtemp(path.join(tmpdir(), 'cli-bundle-index-'));
    const helpIndex = path.join(indexDir, HELP_INDEX_FILE);
    await writeFile(helpIndex, JSON.stringify(helpIndexOf(await buildProgram(captureContext().ctx))));
    await bundleCli({ entry: path.join(ROOT, 'src', 'cli', 'main.ts'), outDir, helpIndex });
    main = path.join(outDir, 'main.js');
  });

  after(async () => {
    await rm(outDir, { recursive: true, force: true });
    await rm(indexDir, { recursive: true, force: true });
  });

  it('keeps each command group in a chunk of its own, loaded only when wanted', async () => {
    const files = await readdir(outDir);
    assert.ok(files.includes(HELP_INDEX_FILE), 'the help index is copied beside the chunks');
    const entry = await readFile(main, 'utf8');
    assert.ok(!entry.includes('Check a catalog against every opm validate rule'), 'the catalog group is not in the entry chunk');
    const chunks = await Promise.all(files.filter((f) => f.endsWith('.js')).map(async (f) => readFile(path.join(outDir, f), 'utf8')));
    assert.equal(chunks.filter((c) => c.includes('Check a catalog against every opm validate rule')).length, 1);
  });

  it('keeps every error class its name: none renamed where names collide (errors take new.target.name; the bundle has no keepNames)', async () => {
    // Every class of the sources whose ancestry reaches Error.
    const sources = (await readdir(path.join(ROOT, 'src'), { recursive: true })).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.includes('test-helper'));
    const parentOf = new Map<string, string>();
    for (const f of sources) {
      for (const m of (await readFile(path.join(ROOT, 'src', f), 'utf8')).matchAll(/\bclass (\w+)(?:<[^>]*>)? extends (\w+)/g)) parentOf.set(m[1] ?? '', m[2] ?? '');
    }
    const isError = (name: string, depth = 0): boolean => name === 'Error' || (depth < 20 && parentOf.has(name) && isError(parentOf.get(name) ?? '', depth + 1));
    const errorClasses = [...parentOf.keys()].filter((n) => isError(n));
    assert.ok(errorClasses.includes('BinnacleError') && errorClasses.includes('InputError') && errorClasses.length >= 20, `${errorClasses.length} error classes found`);
    const files = (await readdir(outDir)).filter((f) => f.endsWith('.js'));
    const bundle = (await Promise.all(files.map(async (f) => readFile(path.join(outDir, f), 'utf8')))).join('\n');
    for (const name of errorClasses) {
      // A class takes the name of its declaration or of the variable it is assigned to (esbuild writes
      // `var Name = class extends ...`); esbuild renames a colliding one `Name2`, and names a class
      // that refers to itself `_Name`.
      const renamed = new RegExp(`\\bclass (_${name}|${name}\\d+)\\b|\\b(_${name}|${name}\\d+) = class\\b`).exec(bundle);
      assert.equal(renamed, null, `error class ${name} is named ${renamed?.[1] ?? renamed?.[2] ?? ''} in the bundle`);
    }
    assert.ok(/\bInputError = class extends BinnacleError\b|\bclass InputError extends BinnacleError\b/.test(bundle), 'the error classes are in the bundle under their names');
  });

  it('gives the modules every command loads at start one chunk, and every chunk imports them from there', async () => {
    const files = (await readdir(outDir)).filter((f) => f.endsWith('.js'));
    const chunks = new Map(await Promise.all(files.map(async (f) => [f, await readFile(path.join(outDir, f), 'utf8')] as const)));
    // Static imports: `import {...} from "./x.js"`, `export {...} from "./x.js"`, `import "./x.js"`.
    const staticImports = (text: string): string[] => [...text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s*"\.\/([^"]+)";$|^import\s*"\.\/([^"]+)";$/gms)].map((m) => m[1] ?? m[2] ?? '');
    assert.deepEqual(staticImports(chunks.get('main.js') ?? ''), Array(staticImports(chunks.get('main.js') ?? '').length).fill(STARTUP_CHUNK), 'main.js imports the start-up chunk alone');
    assert.ok(staticImports(chunks.get(STARTUP_CHUNK) ?? 'missing').length === 0, 'the start-up chunk imports no other chunk');
    // A chunk pointing at one merged away would fail when loaded: every chunk named in quotes, static or dynamic, is there.
    for (const [f, text] of chunks) for (const [, named] of text.matchAll(/"\.\/([\w-]+\.js)"/g)) assert.ok(chunks.has(named ?? ''), `${f} imports ${named}, which the bundle does not have`);
  });

  it('creates a require only in the chunks that call one', async () => {
    const banner = 'const require = __binnacleCreateRequire(import.meta.url);';
    const files = (await readdir(outDir)).filter((f) => f.endsWith('.js'));
    let withRequire = 0;
    for (const f of files) {
      const text = await readFile(path.join(outDir, f), 'utf8');
      const at = text.indexOf(banner);
      if (at === -1) continue;
      withRequire++;
      assert.match(text.slice(at + banner.length), /\brequire\b/, `${f} creates a require it does not use`);
    }
    assert.ok(withRequire > 0, 'the inlined CommonJS packages (commander) keep theirs');
  });

  it('does not load child_process for a command that spawns nothing (commander gets a lazy stand-in)', async () => {
    // Run the bundle in a child that reports which of Node's own modules it loaded.
    const probe = `process.argv.splice(1, 1, ${JSON.stringify(main)}); process.on('exit', () => process.stderr.write('\\nLOADED ' + process.moduleLoadList.filter((m) => /child_process/.test(m)).join(',') + '\\n')); await import(${JSON.stringify(`file://${main}`)});`;
    const r = await runProcess(process.execPath, ['--input-type=module', '-e', probe, main, 'catalog', 'validate', VALID], { cwd: ROOT, env: { BINNACLE_LOG_LEVEL: '' } });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /valid \(2 packages/);
    assert.match(r.err, /\nLOADED \n/, 'node:child_process stays unloaded');
  });

  it('validates a catalog without loading the yaml package, pino or js-yaml\'s writer', async () => {
    // Run the bundle in a child that reports the CommonJS modules it loaded from node_modules (`yaml` and pino are required when first used).
    const probe = `process.argv.splice(1, 1, ${JSON.stringify(main)}); const { createRequire } = await import('node:module'); process.on('exit', () => process.stderr.write('\\nREQUIRED ' + Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('node_modules')).join(',') + '\\n')); await import(${JSON.stringify(`file://${main}`)});`;
    const r = await runProcess(process.execPath, ['--input-type=module', '-e', probe, main, 'catalog', 'validate', VALID], { cwd: ROOT, env: { BINNACLE_LOG_LEVEL: '' } });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /valid \(2 packages/);
    const required = /\nREQUIRED (.*)\n/.exec(r.err)?.[1];
    assert.ok(required !== undefined, r.err);
    assert.doesNotMatch(required, /node_modules[\\/](yaml|pino)[\\/]/, 'plain YAML is read by js-yaml, and nothing is logged');
    // js-yaml is bundled: its chunk holds the loader alone (the package's entry builds its writer too, at import).
    const files = await readdir(outDir);
    const withJsYaml = (await Promise.all(files.map(async (f) => readFile(path.join(outDir, f), 'utf8')))).filter((c) => c.includes('node_modules/js-yaml/'));
    assert.equal(withJsYaml.length, 1);
    assert.match(withJsYaml[0] ?? '', /node_modules\/js-yaml\/lib\/loader\.js/);
    assert.doesNotMatch(withJsYaml[0] ?? '', /node_modules\/js-yaml\/(lib\/dumper\.js|dist\/)/);
  });

  it('reads the help index beside its chunks', async () => {
    const file = path.join(outDir, HELP_INDEX_FILE);
    const original = await readFile(file, 'utf8');
    // A changed index proves the listing comes from this file.
    const marked = (JSON.parse(original) as { name: string }[]).map((e) => (e.name === 'catalog' ? { ...e, description: 'MARKED' } : e));
    await writeFile(file, JSON.stringify(marked));
    try {
      const help = await spawnBundle(main, ['--help']);
      assert.equal(help.code, 0);
      assert.match(help.out, /catalog +MARKED/);
    } finally {
      await writeFile(file, original);
    }
  });

  it('prints its version without loading a command group (as the top-level help)', async () => {
    const files = await readdir(outDir);
    const contents = await Promise.all(files.map(async (f) => [f, await readFile(path.join(outDir, f), 'utf8')] as const));
    const group = contents.find(([, c]) => c.includes('Check a catalog against every opm validate rule'))?.[0];
    assert.ok(group !== undefined, 'the catalog group has a chunk');
    // Taken away: a --version that loaded the command groups would fail to import it.
    await rename(path.join(outDir, group), path.join(outDir, `${group}.away`));
    try {
      const r = await spawnBundle(main, ['--version']);
      assert.deepEqual([r.code, r.out, r.err], [0, `${BINNACLE_VERSION}\n`, '']);
    } finally {
      await rename(path.join(outDir, `${group}.away`), path.join(outDir, group));
    }
  });

  it("prints a command's help without loading the YAML parser", async () => {
    const files = await readdir(outDir);
    const contents = await Promise.all(files.map(async (f) => [f, await readFile(path.join(outDir, f), 'utf8')] as const));
    const yamlChunk = contents.find(([, c]) => c.includes('node_modules/js-yaml/'))?.[0];
    assert.ok(yamlChunk !== undefined, 'js-yaml has a chunk');
    // Taken away: a help that loaded it (the OLM v1 group's name once came with the CRD loader) would fail to import it.
    await rename(path.join(outDir, yamlChunk), path.join(outDir, `${yamlChunk}.away`));
    try {
      const r = await spawnBundle(main, ['install', '--help']);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /^Usage: binnacle install /);
    } finally {
      await rename(path.join(outDir, `${yamlChunk}.away`), path.join(outDir, yamlChunk));
    }
  });

  for (const args of [['--help'], ['--version'], ['catalog', 'validate', VALID], ['catalog', 'validate', '-o', 'json', VALID], ['catalog', 'validate', BAD], ['catalog', 'render', VALID], ['catalog', 'validate'], ['install', '--help']]) {
    it(`prints what the sources print: ${args.join(' ')}`, async () => {
      const [bundled, source] = await Promise.all([spawnBundle(main, args), runCli(args)]);
      assert.deepEqual(bundled, source);
    });
  }
});

describe('assertLatin1Chunks (the production build)', () => {
  it('passes chunks all Latin-1 and stops at one with a character beyond it, naming its file, line and character', async (t) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'binnacle-latin1-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await writeFile(path.join(dir, 'a.js'), 'export const a = "caf\\u00e9";\n// café: Latin-1, one byte a character\n');
    await assertLatin1Chunks(dir);
    await writeFile(path.join(dir, 'b.js'), 'export const b = 1;\n\n  // bits \u2192 keys\n');
    await assert.rejects(assertLatin1Chunks(dir), (err: Error) => err.message.startsWith(`${path.join(dir, 'b.js')}:3: U+2192 is beyond Latin-1`));
  });
});
