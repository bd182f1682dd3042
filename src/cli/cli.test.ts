/**
 * The CLI behaves like kubectl: one rule for finding the cluster in every command, the same
 * global flags everywhere, flag values checked with a one-line error, no stack trace for a
 * user's mistake, quiet logs unless -v, and output piped into `head` ending quietly.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import { buildProgram, run } from './main.js';
import { captureContext } from './in-process.test-helper.js';
import { runProcess, type Ran } from './run-process.test-helper.js';
import { helpIndexOf, loadHelpIndex } from './help-index.js';
import { REGISTRARS } from './commands/index.js';
import { formatLogLine, logLevel, type LogSettings } from './context.js';
import { durationMs, leafCommands, commandPath } from './flags.js';
import { kubeconfigSource, mergeKubeconfigs } from '../kube/kubeconfig-rule.js';
import { loadKubeConfig } from '../kube/config.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const CORPUS = path.join(ROOT, '..', 'shared', 'corpus', 'operatorhub-2021');
const BIG_BUNDLE = path.join(CORPUS, 'opentelemetry-operator', '0.27.0');

async function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; out: string; err: string }> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) Reflect.deleteProperty(process.env, k);
    else process.env[k] = v;
  }
  try {
    const c = captureContext();
    const code = await run(args, c.ctx);
    return { code, out: c.out(), err: c.err() };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Reflect.deleteProperty(process.env, k);
      else process.env[k] = v;
    }
  }
}

/** The CLI as a user runs it: a process, from source. */
function spawnCli(args: string[], opts: { env?: Record<string, string> } = {}): Promise<Ran> {
  return runProcess(process.execPath, [path.join(ROOT, 'bin', 'binnacle.js'), ...args], { cwd: ROOT, env: { BINNACLE_FROM_SOURCE: '1', BINNACLE_LOG_LEVEL: '', ...opts.env } });
}

const kubeconfigYaml = (cluster: string, server: string, current: string | undefined): string =>
  [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{ name: ${cluster}, cluster: { server: "${server}" } }]`,
    `users: [{ name: ${cluster}-admin, user: { token: t } }]`,
    `contexts: [{ name: ${cluster}, context: { cluster: ${cluster}, user: ${cluster}-admin } }]`,
    ...(current === undefined ? [] : [`current-context: ${current}`]),
    '',
  ].join('\n');

describe('finding the cluster: kubectl’s rule', () => {
  const has = (...present: string[]) => (p: string) => present.includes(p);

  it('--kubeconfig wins over $KUBECONFIG and ~/.kube/config', () => {
    assert.deepEqual(kubeconfigSource({ flag: '/a', env: '/b', home: '/h', exists: has('/a', '/b', '/h/.kube/config') }), { kind: 'flag', files: ['/a'] });
  });

  it('$KUBECONFIG is a colon-separated list of which the existing files count', () => {
    assert.deepEqual(kubeconfigSource({ env: `/b${path.delimiter}/missing${path.delimiter}${path.delimiter}/c`, home: '/h', exists: has('/b', '/c', '/h/.kube/config') }), { kind: 'env', files: ['/b', '/c'] });
  });

  it('$KUBECONFIG naming only missing files is an error, not a silent fallback to another cluster', () => {
    const s = kubeconfigSource({ env: '/missing', home: '/h', exists: has('/h/.kube/config') });
    assert.equal(s.kind, 'none');
  });

  it('unset or empty $KUBECONFIG falls back to ~/.kube/config, then in-cluster, then nothing', () => {
    for (const env of [undefined, '']) {
      assert.deepEqual(kubeconfigSource({ env, home: '/h', exists: has('/h/.kube/config') }), { kind: 'home', files: ['/h/.kube/config'] });
      assert.deepEqual(kubeconfigSource({ env, home: '/h', exists: has(), inCluster: true }), { kind: 'in-cluster' });
      assert.equal(kubeconfigSource({ env, home: '/h', exists: has(), inCluster: false }).kind, 'none');
    }
  });

  it('never prefers the built-in local cluster', () => {
    const local = path.join(ROOT, '.cache', 'clusters', 'binnacle', 'kubeconfig');
    const s = kubeconfigSource({ home: '/h', exists: has(local, '/h/.kube/config') });
    assert.deepEqual(s, { kind: 'home', files: ['/h/.kube/config'] });
  });

  it('merges as kubectl: the first file to define a name or a current-context wins', () => {
    const m = mergeKubeconfigs([
      { clusters: [{ name: 'a', n: 1 }], users: [{ name: 'u' }], contexts: [{ name: 'a' }], currentContext: '' },
      { clusters: [{ name: 'a', n: 2 }, { name: 'b', n: 3 }], users: [{ name: 'u' }], contexts: [{ name: 'b' }], currentContext: 'b' },
      { clusters: [], users: [], contexts: [], currentContext: 'a' },
    ]);
    assert.deepEqual(m.clusters, [{ name: 'a', n: 1 }, { name: 'b', n: 3 }]);
    assert.equal(m.currentContext, 'b');
    assert.deepEqual(m.contexts.map((c) => c.name), ['a', 'b']);
  });

  describe('with real files', () => {
    let dir = '';
    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'binnacle-kubeconfig-'));
      await writeFile(path.join(dir, 'one'), kubeconfigYaml('one', 'https://127.0.0.1:1111', 'one'));
      await writeFile(path.join(dir, 'two'), kubeconfigYaml('two', 'https://127.0.0.1:2222', 'two'));
    });
    after(() => rm(dir, { recursive: true, force: true }));

    it('$KUBECONFIG=one:two gives both contexts, current from the first; --context picks the other; --kubeconfig overrides', () => {
      const saved = process.env.KUBECONFIG;
      process.env.KUBECONFIG = `${path.join(dir, 'one')}${path.delimiter}${path.join(dir, 'two')}`;
      try {
        const kc = loadKubeConfig();
        assert.deepEqual(kc.getContexts().map((c) => c.name), ['one', 'two']);
        assert.equal(kc.getCurrentCluster()?.server, 'https://127.0.0.1:1111');
        assert.equal(loadKubeConfig({ context: 'two' }).getCurrentCluster()?.server, 'https://127.0.0.1:2222');
        assert.equal(loadKubeConfig({ kubeconfig: path.join(dir, 'two') }).getCurrentCluster()?.server, 'https://127.0.0.1:2222');
        assert.throws(() => loadKubeConfig({ context: 'three' }), /context "three" is not in the kubeconfig \(have: one, two\)/);
      } finally {
        if (saved === undefined) delete process.env.KUBECONFIG;
        else process.env.KUBECONFIG = saved;
      }
    });
  });
});

/** Every command that talks to the cluster, with the arguments it needs to get that far. */
const CLUSTER_COMMANDS: string[][] = [
  ['install', 'pkg'],
  ['upgrade', 'ext', '--version', '1.2.3'],
  ['uninstall', 'ext'],
  ['status'],
  ['rollback', 'ext'],
  ['history', 'ext'],
  ['plan', 'pkg'],
  ['approve', 'ext'],
  ['manager'],
  ['release', 'history', 'rel', '-n', 'ns'],
  ['release', 'rollback', 'rel', '-n', 'ns'],
  ['release', 'uninstall', 'rel', '-n', 'ns', '--owner', 'ClusterExtension/x'],
  ['source', 'unpack', '--configmap', 'ns/name'],
  ['helm', 'adopt', 'rel', '--kind', 'Kind.v1.example.com'],
  ['helm', 'rollback', 'rel', '--kind', 'Kind.v1.example.com'],
  ['cleanup', 'pkg'],
];

describe('every cluster-facing command finds the cluster the same way', () => {
  for (const args of CLUSTER_COMMANDS) {
    it(`${args.slice(0, 2).join(' ')}: --kubeconfig, $KUBECONFIG and --context reach the one rule`, async () => {
      const flag = await cli([...args, '--kubeconfig', '/nonexistent/flag-config', '--context', 'x'], { KUBECONFIG: undefined });
      assert.equal(flag.code, 1, flag.err);
      assert.match(flag.err, /^error: --kubeconfig \/nonexistent\/flag-config: the file does not exist\n$/);
      const env = await cli(args, { KUBECONFIG: '/nonexistent/env-config' });
      assert.equal(env.code, 1, env.err);
      assert.match(env.err, /no file named in \$KUBECONFIG exists \(\/nonexistent\/env-config\)/);
      // Global flags also go before the command, as kubectl takes them.
      const before = await cli(['--kubeconfig', '/nonexistent/flag-config', ...args], { KUBECONFIG: undefined });
      assert.match(before.err, /--kubeconfig \/nonexistent\/flag-config: the file does not exist/);
    });
  }
});

describe('command groups load on demand', () => {
  it('each registrar names exactly the top-level commands it adds, so `binnacle NAME` loads what NAME needs', async () => {
    for (const r of REGISTRARS) {
      const program = new Command('binnacle');
      (await r.load())(program, captureContext().ctx);
      assert.deepEqual(program.commands.map((c) => c.name()).sort(), [...new Set(r.commands)].sort());
    }
  });

  it('a command names its group alone; every group is built for --help or an unknown name', async () => {
    const all = (await buildProgram(captureContext().ctx)).commands.map((c) => c.name());
    assert.deepEqual((await buildProgram(captureContext().ctx, 'catalog')).commands.map((c) => c.name()), ['catalog']);
    assert.deepEqual((await buildProgram(captureContext().ctx, 'bundle')).commands.map((c) => c.name()).sort(), ['bundle', 'cleanup', 'run']);
    assert.deepEqual((await buildProgram(captureContext().ctx, 'no-such-command')).commands.map((c) => c.name()), all);
    assert.ok(all.length > 20, `${all.length} top-level commands`);
  });
});

describe('the top-level help from the built index', () => {
  it('lists every command exactly as the program with every group loaded does, at any width', async () => {
    const full = await buildProgram(captureContext().ctx);
    const indexed = await buildProgram(captureContext().ctx, undefined, helpIndexOf(full));
    assert.equal(indexed.commands.length, full.commands.length);
    for (const columns of [80, 200]) {
      full.configureOutput({ getOutHelpWidth: () => columns });
      indexed.configureOutput({ getOutHelpWidth: () => columns });
      assert.equal(indexed.helpInformation(), full.helpInformation());
    }
    assert.match(indexed.helpInformation(), /install \[options\] <package>\s+Install an operator/);
  });

  it('reads the index the build wrote, and nothing that is missing or not an index', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'help-index-'));
    try {
      const file = path.join(dir, 'help-index.json');
      const entries = [{ name: 'install', term: 'install [options] <package>', description: 'Install' }];
      await writeFile(file, JSON.stringify(entries));
      assert.deepEqual(loadHelpIndex(new URL(`file://${file}`)), entries);
      await writeFile(file, JSON.stringify([{ name: 'install' }]));
      assert.equal(loadHelpIndex(new URL(`file://${file}`)), undefined);
      await writeFile(file, '{not json');
      assert.equal(loadHelpIndex(new URL(`file://${file}`)), undefined);
      assert.equal(loadHelpIndex(new URL(`file://${path.join(dir, 'missing.json')}`)), undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('global flags are named the same on every command', () => {
  let leaves: Command[] = [];
  before(async () => {
    leaves = leafCommands(await buildProgram(captureContext().ctx));
  });

  it('every command takes --kubeconfig, --context, -v/--verbose, --log-format and --request-timeout', () => {
    assert.ok(leaves.length > 30, `${leaves.length} commands`);
    for (const c of leaves) {
      const flags = new Map(c.options.map((o) => [o.long, o.short]));
      for (const long of ['--kubeconfig', '--context', '--log-format', '--request-timeout']) assert.ok(flags.has(long), `${commandPath(c)} lacks ${long}`);
      assert.equal(flags.get('--verbose'), '-v', `${commandPath(c)}: -v is --verbose`);
    }
  });

  it('-n is always --namespace and -o always --output <format>, and each checks its formats', () => {
    for (const c of leaves) {
      for (const o of c.options) {
        if (o.short === '-n' || o.long === '--namespace') assert.deepEqual([o.short, o.long], ['-n', '--namespace'], commandPath(c));
        if (o.short === '-o' || o.long === '--output') {
          assert.deepEqual([o.short, o.long], ['-o', '--output'], commandPath(c));
          assert.match(o.flags, /<format>/, `${commandPath(c)}: -o is an output format`);
          assert.throws(() => o.parseArg?.('bogus', undefined), /Expected one of/, `${commandPath(c)} does not check -o: declare it with outputOption() from src/cli/flags.ts`);
        }
      }
    }
  });

  it('the cluster commands above are every command with --kubeconfig of its own meaning', () => {
    const names = new Set(CLUSTER_COMMANDS.map((a) => `binnacle ${a.filter((x) => !x.startsWith('-')).slice(0, ['release', 'source', 'helm'].includes(a[0] ?? '') ? 2 : 1).join(' ')}`));
    const talkers = ['install', 'upgrade', 'uninstall', 'status', 'rollback', 'history', 'plan', 'approve', 'manager', 'release history', 'release rollback', 'release uninstall', 'source unpack', 'helm adopt', 'helm rollback', 'cleanup'].map((n) => `binnacle ${n}`);
    for (const t of talkers) assert.ok(names.has(t), t);
  });
});

describe('flag values are checked with one line naming the flag and the accepted form', () => {
  const cases: [string[], RegExp][] = [
    [['manager', '--workers', 'abc'], /option '--workers <n>' argument 'abc' is invalid\. Expected a positive whole number/],
    [['manager', '--workers', '-3'], /option '--workers <n>' argument '-3' is invalid/],
    [['manager', '--workers', '0'], /option '--workers <n>' argument '0' is invalid/],
    [['manager', '--catalog-workers', '0'], /option '--catalog-workers <n>' argument '0' is invalid\. Expected a positive whole number/],
    [['manager', '--health-timeout', 'soon'], /option '--health-timeout <duration>' argument 'soon' is invalid\. Expected a positive duration such as 30s, 5m/],
    [['install', 'pkg', '--timeout', 'abc'], /option '--timeout <duration>' argument 'abc' is invalid/],
    [['install', 'pkg', '--timeout', '-5'], /option '--timeout <duration>' argument '-5' is invalid/],
    [['cluster', 'up', '--timeout', '5x'], /option '--timeout <duration>' argument '5x' is invalid/],
    [['run', 'bundle', 'dir', '--timeout', 'abc'], /option '--timeout <duration>' argument 'abc' is invalid/],
    [['cleanup', 'pkg', '--timeout', '0'], /option '--timeout <duration>' argument '0' is invalid/],
    [['status', '-o', 'xml'], /option '-o, --output <format>' argument 'xml' is invalid\. Expected one of: table, json, yaml\./],
    [['helm', 'rollback', 'rel', 'two'], /REVISION two: expected a revision number, such as 2/],
    [['bundle', 'render', 'x', '--install-namespace', 'n', '-o', 'table'], /Expected one of: yaml, json\./],
    [['catalog', 'validate', 'x', '--max-file-size', 'big'], /option '--max-file-size <bytes>' argument 'big' is invalid\. Expected a positive byte count/],
    [['catalog', 'serve', 'x', '--port', '70000'], /option '--port <port>' argument '70000' is invalid/],
    [['release', 'rollback', 'r', '-n', 'ns', '--to', '1.5'], /option '--to <revision>' argument '1\.5' is invalid/],
    [['image', 'pull', 'r', '--dir', 'd', '--max-bytes', '-1'], /option '--max-bytes <n>' argument '-1' is invalid/],
    [['install', 'pkg', '--log-format', 'xml'], /option '--log-format <format>' argument 'xml' is invalid\. Expected one of: text, json\./],
    [['install', 'pkg', '--no-such-flag'], /unknown option '--no-such-flag'/],
    [['status', '--request-timeout', 'soon'], /option '--request-timeout <duration>' argument 'soon' is invalid\. Expected a duration such as 30s or 2m .*or 0 for no deadline/],
    [['resolve', '--catalog', 'x', '--package', 'p', '--policy', 'Sometimes'], /--policy Sometimes: expected CatalogProvided or SelfCertified/],
  ];
  for (const [args, message] of cases) {
    it(args.join(' '), async () => {
      const r = await cli(args);
      assert.equal(r.code, 2, r.err);
      const lines = r.err.trimEnd().split('\n');
      assert.match(lines[0] ?? '', /^error: /);
      assert.match(lines[0] ?? '', message);
      // The one usage line of the command, not the whole help, and no stack.
      assert.match(lines[1] ?? '', /^usage: binnacle \S+/);
      assert.equal(lines.length, 3, r.err);
      assert.doesNotMatch(r.err, /Options:|\n\s+at /);
      assert.equal(r.out, '');
    });
  }

  it('durations read as kubectl writes them; a bare number is seconds', () => {
    assert.equal(durationMs('30s'), 30_000);
    assert.equal(durationMs('5m'), 300_000);
    assert.equal(durationMs('1h30m'), 5_400_000);
    assert.equal(durationMs('120'), 120_000);
    assert.equal(durationMs('500ms'), 500);
    for (const bad of ['', 'abc', '-5', '5x', 's']) assert.equal(durationMs(bad), undefined, bad);
  });
});

describe('--request-timeout', () => {
  it('bounds each API request, as kubectl does, naming the server and the deadline', { timeout: 60_000 }, async () => {
    // An API server that accepts the connection and never answers.
    const held: import('node:http').ServerResponse[] = [];
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as import('node:net').AddressInfo).port;
    const dir = await mkdtemp(path.join(tmpdir(), 'binnacle-request-timeout-'));
    const kubeconfig = path.join(dir, 'config');
    await writeFile(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`);
    try {
      const r = await cli(['status', '--kubeconfig', kubeconfig, '--request-timeout', '300ms']);
      assert.equal(r.code, 1, r.err);
      assert.match(r.err, new RegExp(`no answer from the API server at 127\\.0\\.0\\.1:${port} within 300 ms`));
    } finally {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('errors', () => {
  it('a missing file is a one-line error, not a stack trace', async () => {
    const r = await cli(['catalog', 'validate', '/nonexistent/catalog']);
    assert.equal(r.code, 1);
    assert.doesNotMatch(r.err, /\n\s+at /);
    assert.equal(r.err.trimEnd().split('\n').length, 1, r.err);
  });

  it('`catalog validate` of a catalog it stops reading (more than 1,000 problems) reports why it stopped, not what the unread files seemed to lack', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cli-validate-partial-'));
    try {
      // A broken generator's typo, repeated: each channel entry misspelt; the bundles it names come in a later file.
      const channel = { schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1' }] };
      await writeFile(path.join(dir, 'a.json'), `${JSON.stringify({ schema: 'olm.package', name: 'p', defaultChannel: 'stable' })}\n${JSON.stringify(channel)}\n${'{"schem":"olm.bundle","name":"typo"}\n'.repeat(1200)}`);
      await writeFile(path.join(dir, 'b.json'), `${JSON.stringify({ schema: 'olm.bundle', package: 'p', name: 'p.v1', image: 'example.com/p:v1', properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }] })}\n`);
      const r = await cli(['catalog', 'validate', dir, '-o', 'json']);
      assert.equal(r.code, 1);
      const rules = (JSON.parse(r.out) as { problems: { rule: string; message: string }[] }).problems.map((p) => p.rule);
      assert.ok(rules.includes('fbc.too-many-problems'), rules.slice(-3).join(' '));
      assert.ok(rules.includes('fbc.model-not-checked'));
      assert.ok(!rules.some((x) => x.startsWith('channel.') || x.startsWith('package.')), `model problems of a catalog read in part: ${[...new Set(rules)].join(' ')}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('`helm template` past a render bound is a one-line error naming the limit, with exit 1', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cli-helm-bomb-'));
    try {
      await mkdir(path.join(dir, 'templates'));
      await writeFile(path.join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: bomb\nversion: 0.1.0\n');
      await writeFile(path.join(dir, 'values.yaml'), 'x: \'{{ len (repeat 100000000 "xxxxxxxxxx") }}\'\n');
      await writeFile(path.join(dir, 'templates', 'cm.yaml'), '{{ tpl .Values.x . }}\n');
      const r = await cli(['helm', 'template', 'x', dir]);
      assert.equal(r.code, 1);
      assert.equal(r.out, '');
      assert.match(r.err, /^error: render exceeded the memory limit of \d+ MiB/);
      assert.equal(r.err.trimEnd().split('\n').length, 1, r.err);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('logs', () => {
  it('text lines for people: time, level, message, fields', () => {
    const line = formatLogLine(JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 1, 12, 0, 0), msg: 'catalog not reachable', catalog: 'ops', err: { message: 'refused' } }));
    assert.match(line, /^\d\d:\d\d:\d\d WARN {2}catalog not reachable {2}catalog=ops err="refused"\n$/);
  });

  it('quiet unless -v: warn by default, info with -v, debug with -vv; JSON starts at info', () => {
    assert.equal(logLevel({ format: 'text', verbose: 0 }, undefined), 'warn');
    assert.equal(logLevel({ format: 'text', verbose: 1 }, undefined), 'info');
    assert.equal(logLevel({ format: 'text', verbose: 2 }, undefined), 'debug');
    assert.equal(logLevel({ format: 'json', verbose: 0 }, undefined), 'info');
    assert.equal(logLevel({ format: 'text', verbose: 0 }, 'error'), 'error');
  });

  it("BINNACLE_LOG_LEVEL is one of pino's levels; another value is refused, naming the variable and the levels", () => {
    assert.throws(() => logLevel({ format: 'json', verbose: 0 }, 'loud'), { code: 'USAGE', message: 'BINNACLE_LOG_LEVEL: "loud" is not a log level; it takes one of fatal, error, warn, info, debug, trace, silent' });
    assert.throws(() => logLevel({ format: 'json', verbose: 0 }, 'INFO'), /"INFO" is not a log level/);
    assert.deepEqual(['fatal', 'silent'].map((l) => logLevel({ format: 'text', verbose: 0 }, l)), ['fatal', 'silent']);
  });

  it('a bad BINNACLE_LOG_LEVEL is refused before the command runs, by a command that never logs too', async () => {
    const valid = path.join('src', 'catalog', 'testdata', 'fbc', 'valid');
    const ok = await spawnCli(['catalog', 'validate', valid]);
    assert.equal(ok.code, 0, ok.err);
    assert.equal(ok.err, '', 'the command logs nothing');
    const bad = await spawnCli(['catalog', 'validate', valid], { env: { BINNACLE_LOG_LEVEL: 'loud' } });
    assert.equal(bad.code, 2);
    assert.match(bad.err, /^error: BINNACLE_LOG_LEVEL: "loud" is not a log level/);
    assert.equal(bad.out, '', 'nothing validated');
  });

  it('the global flags set the logging before the command runs: the manager logs JSON by default, other commands text', async () => {
    const seen: LogSettings[] = [];
    const settings = async (args: string[]): Promise<LogSettings | undefined> => {
      const c = captureContext();
      c.ctx.configureLogging = (o) => seen.push(o);
      seen.length = 0;
      await run([...args, '--kubeconfig', '/nonexistent/config'], c.ctx);
      return seen.at(-1);
    };
    assert.deepEqual(await settings(['manager']), { format: 'json', verbose: 0 });
    assert.deepEqual(await settings(['helm-operator', 'run']), { format: 'json', verbose: 0 });
    assert.deepEqual(await settings(['manager', '--log-format', 'text']), { format: 'text', verbose: 0 });
    assert.deepEqual(await settings(['status']), { format: 'text', verbose: 0 });
    assert.deepEqual(await settings(['status', '-vv']), { format: 'text', verbose: 2 });
    assert.deepEqual(await settings(['-v', '--log-format', 'json', 'status']), { format: 'json', verbose: 1 });
  });

  it('a command on the terminal logs nothing unless -v; --log-format json writes JSON lines', { timeout: 300_000 }, async () => {
    const args = ['bundle', 'render', BIG_BUNDLE, '--install-namespace', 'ns'];
    const quiet = await spawnCli(args);
    assert.equal(quiet.code, 0, quiet.err);
    assert.equal(quiet.err, '');
    const verbose = await spawnCli([...args, '-v']);
    assert.match(verbose.err, /^\d\d:\d\d:\d\d INFO {2}rendered bundle {2}bundle=opentelemetry-operator\.v0\.27\.0 format=registry\+v1 objects=\d+\n$/);
    const json = await spawnCli([...args, '--log-format', 'json']);
    const rec = JSON.parse(json.err.trim()) as { msg: string; level: number };
    assert.equal(rec.msg, 'rendered bundle');
    assert.equal(rec.level, 30);
  });
});

describe('output piped into a reader that stops early', () => {
  it('`binnacle bundle render … | head -1` ends quietly with exit 0', { timeout: 300_000 }, async () => {
    // A real pipe(2), as the shell makes it: Node's own stdio pipes are socket pairs, whose
    // larger buffer would take the whole output before the reader goes away.
    const script = `node bin/binnacle.js bundle render '${BIG_BUNDLE}' --install-namespace ns | head -1; echo "binnacle exit: \${PIPESTATUS[0]}" >&2`;
    const r = await runProcess('bash', ['-c', script], { cwd: ROOT, env: { BINNACLE_FROM_SOURCE: '1', BINNACLE_LOG_LEVEL: '' } });
    assert.equal(r.out, 'apiVersion: v1\n', 'head got its line');
    assert.equal(r.err, 'binnacle exit: 0\n', 'nothing else on stderr: no EPIPE, no stack');
  });
});

describe('bundle render is the render a BundleDeployment applies', () => {
  it('prints the OperatorCondition, its RBAC and OPERATOR_CONDITION_NAME, as the controller applies them (src/render render)', { timeout: 300_000 }, async () => {
    const r = await spawnCli(['bundle', 'render', BIG_BUNDLE, '--install-namespace', 'ns']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /kind: OperatorCondition\n/);
    assert.match(r.out, /name: OPERATOR_CONDITION_NAME/);
  });
});
