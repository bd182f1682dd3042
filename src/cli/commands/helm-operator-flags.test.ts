import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError, type Command } from 'commander';
import { pino } from 'pino';
import { buildProgram } from '../main.js';
import { podNamespace } from '../../kube/in-cluster.js';
import { UsageError } from '../../util/errors.js';
import { resolveRunFlags, zapLogger, type RawRunFlags, type RunOptions } from './helm-operator-flags.js';
import { DEFAULT_HELM_RECONCILES } from '../../controllers/helm-operator/watches.js';

/** operator-sdk v1.42.3's image entry point (images/helm-operator/Dockerfile). */
const ENTRYPOINT = ['--watches-file=./watches.yaml'];
/**
 * The scaffold's manager container (testdata/helm/memcached-operator config/manager/manager.yaml)
 * after config/default/manager_metrics_patch.yaml, which adds each of its three at index 0.
 */
const SCAFFOLD = ['--metrics-require-rbac', '--metrics-secure', '--metrics-bind-address=:8443', '--leader-elect', '--leader-election-id=memcached-operator', '--health-probe-bind-address=:8081'];

/** Parses `args` with the real `binnacle helm-operator run` command; its action only resolves the flags. */
async function parse(args: string[], env: Record<string, string | undefined> = {}): Promise<RunOptions> {
  const ctx = { logger: pino({ level: 'silent' }), out: () => undefined, err: () => undefined };
  const program = await buildProgram(ctx, 'helm-operator');
  const run = program.commands.find((c) => c.name() === 'helm-operator')?.commands.find((c) => c.name() === 'run') as Command;
  run.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  let got: RunOptions | undefined;
  run.action((flags: RawRunFlags, cmd: Command) => {
    got = resolveRunFlags(flags, (name) => cmd.getOptionValueSource(name) === 'cli', env);
  });
  await program.parseAsync(['helm-operator', 'run', ...args], { from: 'user' });
  assert.ok(got !== undefined);
  return got;
}

describe('helm-operator run flags (operator-sdk v1.42.3)', () => {
  it("takes the image's entry point and the scaffold's manager arguments, with operator-sdk's meaning", async () => {
    const o = await parse([...ENTRYPOINT, ...SCAFFOLD]);
    assert.equal(o.watchesFile, './watches.yaml');
    assert.equal(o.metricsAddress, ':8443');
    assert.equal(o.probeAddress, ':8081');
    assert.equal(o.metricsSecure, true);
    assert.equal(o.metricsRequireRbac, true);
    assert.deepEqual(o.leaderElection, { id: 'memcached-operator', namespace: undefined });
    assert.deepEqual(o.warnings, []);
    assert.equal(o.zap, undefined);
  });

  it("has operator-sdk's defaults", async () => {
    const o = await parse([]);
    assert.equal(o.watchesFile, './watches.yaml');
    assert.equal(o.metricsAddress, ':8080');
    assert.equal(o.probeAddress, ':8081');
    assert.equal(o.reconcilePeriodMs, 60_000);
    // Not operator-sdk's (the number of CPUs): a waiting reconcile holds no thread here.
    assert.equal(o.maxConcurrentReconciles, DEFAULT_HELM_RECONCILES);
    assert.ok(DEFAULT_HELM_RECONCILES >= 16 && DEFAULT_HELM_RECONCILES >= availableParallelism());
    assert.equal(o.metricsSecure, false);
    assert.equal(o.metricsRequireRbac, false);
    assert.equal(o.leaderElection, undefined);
    assert.equal(o.suppressOverrideValues, false);
  });

  it('takes every other flag, booleans as pflag does (bare, =true, =false), and "0" turns a server off', async () => {
    const o = await parse([
      '--watches-file', 'w.yaml', '--reconcile-period=1h30m', '--max-concurrent-reconciles=3', '--metrics-bind-address=0', '--health-probe-bind-address', '0',
      '--metrics-secure=false', '--leader-elect=true', '--leader-election-namespace=ops', '--suppress-override-values', '--enable-http2=false',
      '--zap-devel=false', '--zap-encoder=console', '--zap-log-level=error', '--zap-stacktrace-level=panic', '--zap-time-encoding=epoch',
    ]);
    assert.equal(o.watchesFile, 'w.yaml');
    assert.equal(o.reconcilePeriodMs, 90 * 60_000);
    assert.equal(o.maxConcurrentReconciles, 3);
    assert.equal(o.metricsAddress, undefined);
    assert.equal(o.probeAddress, undefined);
    assert.equal(o.metricsSecure, false);
    assert.deepEqual(o.leaderElection, { id: undefined, namespace: 'ops' });
    assert.equal(o.suppressOverrideValues, true);
    assert.deepEqual(o.zap, { level: 'error', format: 'console', time: 'epoch', stacktraceLevel: 'fatal' });
    assert.deepEqual(o.warnings, []);
  });

  it("takes the deprecated aliases (--metrics-addr, --enable-leader-election) and Binnacle's --watches, but not with their new names", async () => {
    const o = await parse(['--metrics-addr=:9090', '--enable-leader-election', '--watches=x.yaml'], { OPERATOR_NAME: 'legacy' });
    assert.equal(o.metricsAddress, ':9090');
    assert.deepEqual(o.leaderElection, { id: 'legacy', namespace: undefined }, 'OPERATOR_NAME names the lease when --leader-election-id does not');
    assert.equal(o.watchesFile, 'x.yaml');
    await assert.rejects(parse(['--metrics-addr=:1', '--metrics-bind-address=:2']), /only one of --metrics-addr and --metrics-bind-address/);
    await assert.rejects(parse(['--leader-elect', '--enable-leader-election']), /only one of --leader-elect and --enable-leader-election/);
    await assert.rejects(parse(['--watches=a', '--watches-file=b']), /only one of --watches and --watches-file/);
    assert.deepEqual((await parse(['--leader-elect', '--leader-election-id=own'], { OPERATOR_NAME: 'legacy' })).leaderElection?.id, 'own');
  });

  it('refuses --metrics-require-rbac without --metrics-secure, as operator-sdk does', async () => {
    await assert.rejects(parse(['--metrics-require-rbac']), (err: unknown) => err instanceof UsageError && /--metrics-secure flag is required when --metrics-require-rbac is present/.test(err.message));
    await assert.rejects(parse(['--metrics-require-rbac', '--metrics-secure=false']), UsageError);
  });

  it('refuses unknown flags and bad values with a clear message', async () => {
    await assert.rejects(parse(['--no-such-flag']), (err: unknown) => err instanceof CommanderError && err.code === 'commander.unknownOption' && /--no-such-flag/.test(err.message));
    await assert.rejects(parse(['--leader-elect=maybe']), /Expected true or false/);
    await assert.rejects(parse(['--reconcile-period=5']), /Go duration/);
    await assert.rejects(parse(['--max-concurrent-reconciles=0']), /positive whole number/);
    await assert.rejects(parse(['--zap-log-level=loud']), /invalid log level "loud"/);
    await assert.rejects(parse(['--zap-log-level=0']), /invalid log level "0"/);
    await assert.rejects(parse(['--zap-encoder=xml']), /invalid encoder value "xml"/);
    await assert.rejects(parse(['--zap-time-encoding=unix']), /invalid time-encoding value "unix"/);
    await assert.rejects(parse(['--zap-stacktrace-level=debug']), /invalid stacktrace level "debug"/);
  });

  it('accepts what it cannot honour and says so, once each', async () => {
    const o = await parse(['--enable-http2', '--reconcile-period=0']);
    assert.equal(o.warnings.length, 2);
    assert.match(o.warnings[0] ?? '', /--enable-http2 is not supported/);
    assert.match(o.warnings[1] ?? '', /--reconcile-period=0 .* not supported/);
    assert.equal(o.reconcilePeriodMs, undefined);
  });

  it("maps zap's levels as zap reads them: names, and N > 0 as logr's V(N)", async () => {
    assert.equal((await parse(['--zap-log-level=debug'])).zap?.level, 'debug');
    assert.equal((await parse(['--zap-log-level=INFO'])).zap?.level, 'info');
    assert.equal((await parse(['--zap-log-level=1'])).zap?.level, 'debug');
    assert.equal((await parse(['--zap-log-level=5'])).zap?.level, 'trace');
    assert.deepEqual((await parse(['--zap-devel'])).zap, { level: 'debug', format: 'console', time: 'rfc3339', stacktraceLevel: 'warn' }, 'development defaults');
    assert.deepEqual((await parse(['--zap-devel', '--zap-encoder=json', '--zap-log-level=info'])).zap, { level: 'info', format: 'json', time: 'rfc3339', stacktraceLevel: 'warn' }, 'explicit flags win over --zap-devel');
  });
});

describe('the zap-configured logger', () => {
  it('writes JSON with the level name, the chosen time encoding and a stack trace from the stack-trace level', () => {
    const lines: string[] = [];
    const log = zapLogger({ level: 'info', format: 'json', time: 'millis', stacktraceLevel: 'error' }, (l) => lines.push(l));
    log.debug('hidden');
    log.info({ k: 'v' }, 'Installed release');
    log.error('broke');
    assert.equal(lines.length, 2);
    const info = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    assert.equal(info.level, 'info');
    assert.equal(info.msg, 'Installed release');
    assert.equal(info.k, 'v');
    assert.equal(typeof info.ts, 'number');
    assert.equal(info.stacktrace, undefined);
    const err = JSON.parse(lines[1] ?? '') as Record<string, unknown>;
    assert.equal(err.level, 'error');
    assert.match(String(err.stacktrace), /at /);
  });

  it('writes rfc3339 times and, for console, one readable line', () => {
    const lines: string[] = [];
    zapLogger({ level: 'info', format: 'json', time: 'rfc3339', stacktraceLevel: 'fatal' }, (l) => lines.push(l)).info('x');
    assert.match(String((JSON.parse(lines[0] ?? '') as { ts: unknown }).ts), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const text: string[] = [];
    zapLogger({ level: 'info', format: 'console', time: 'rfc3339', stacktraceLevel: 'fatal' }, (l) => text.push(l)).info({ release: 'r' }, 'Reconciled release');
    assert.match(text[0] ?? '', /INFO +Reconciled release {2}release=r\n$/);
  });
});

describe("the leader-election namespace defaults to the Pod's", () => {
  it("reads the service account's namespace file, and asks for the flag outside a Pod", () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-'));
    const saved = process.env.BINNACLE_SERVICEACCOUNT_DIR;
    try {
      process.env.BINNACLE_SERVICEACCOUNT_DIR = dir;
      assert.throws(() => podNamespace(), /not running in-cluster .*give --leader-election-namespace/);
      writeFileSync(join(dir, 'namespace'), 'memcached-operator-system\n');
      assert.equal(podNamespace(), 'memcached-operator-system');
    } finally {
      if (saved === undefined) delete process.env.BINNACLE_SERVICEACCOUNT_DIR;
      else process.env.BINNACLE_SERVICEACCOUNT_DIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('helm-operator run: Helm engine threads', () => {
  async function threads(args: string[]): Promise<number> {
    const ctx = { logger: pino({ level: 'silent' }), out: () => undefined, err: () => undefined };
    const program = await buildProgram(ctx, 'helm-operator');
    const run = program.commands.find((c) => c.name() === 'helm-operator')?.commands.find((c) => c.name() === 'run') as Command;
    run.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    let got: number | undefined;
    run.action((flags: { helmEngineThreads: number }) => {
      got = flags.helmEngineThreads;
    });
    await program.parseAsync(['helm-operator', 'run', ...args], { from: 'user' });
    assert.ok(got !== undefined);
    return got;
  }

  it('renders on one engine thread unless told otherwise (a second costs ~70 MiB against a 128 MiB scaffold limit)', async () => {
    assert.equal(await threads([]), 1);
    assert.equal(await threads(['--helm-engine-threads', '2']), 2);
  });
});
