/**
 * The `git` source, with the real git CLI: a shallow fetch of one branch, tag or commit into a
 * fresh repository, a checkout of it, and the commit sha it resolved to. Git runs with no system
 * or global config (so no hooks, filters or credential helpers of this machine), no templates,
 * `core.hooksPath=/dev/null`, no prompts, and only the plain transports (never `ext::`).
 */
import { spawn } from 'node:child_process';
import { lstat, realpath, rm } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { Logger } from 'pino';
import { timeoutReason } from '../util/deadline.js';
import { BinnacleError, InputError } from '../util/errors.js';
import { redactText, redactUrl } from '../util/redact.js';
import type { GitSource } from './types.js';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
  /** git was killed because it passed its deadline. */
  timedOut?: boolean;
}

const SAFE_CONFIG = ['-c', 'core.hooksPath=/dev/null', '-c', 'advice.detachedHead=false', '-c', 'core.symlinks=true', '-c', 'protocol.ext.allow=never'];

function gitEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'SSH_AUTH_SOCK', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy', 'TMPDIR'];
  const env: NodeJS.ProcessEnv = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  return {
    ...env,
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
  };
}

/** Run git; never throws for a non-zero exit (callers decide), only when git cannot start. */
export function runGit(args: readonly string[], opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const timeoutMs = opts.timeoutMs ?? 300_000;
    // Its own process group, so the deadline ends git's helpers too (git-remote-http would
    // otherwise hold the pipes open, waiting on a server that never answers).
    const child = spawn('git', [...SAFE_CONFIG, ...args], { cwd: opts.cwd, env: { ...gitEnv(), ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new BinnacleError('terminal', 'SOURCE_GIT_UNAVAILABLE', `cannot run git: ${e.message}`, { cause: e }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const note = signal === null ? '' : timedOut ? `\n${timeoutReason(remoteHost(args), timeoutMs)} (git ${args[0] ?? ''} stopped)` : `\n(killed by ${signal})`;
      resolve({ code: code ?? (signal === null ? 1 : 128), stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') + note, ...(timedOut ? { timedOut } : {}) });
    });
  });
}

/**
 * Basic credentials for the remote's http(s) requests, as configuration in the environment
 * (GIT_CONFIG_COUNT/KEY/VALUE, git ≥ 2.31): not in the URL, the arguments (visible in `ps`), or
 * a file, and never printed by git.
 */
export function credentialEnv(credentials: { username: string; password: string } | undefined): NodeJS.ProcessEnv {
  if (credentials === undefined) return {};
  const basic = Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64');
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
}

/** The remote a git command talks to (the argument after `--`), without credentials, for messages. */
function remoteHost(args: readonly string[]): string {
  const i = args.indexOf('--');
  const remote = i < 0 ? undefined : args[i + 1];
  if (remote === undefined) return 'git';
  try {
    return new URL(remote).host || redactUrl(remote);
  } catch {
    return redactUrl(remote);
  }
}

/** The last meaningful line git printed, for error messages. */
function gitSays(r: GitResult): string {
  const lines = r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  // git may quote the remote URL, credentials and all.
  return redactText(lines.at(-1) ?? `git exited with code ${r.code}`);
}

export interface FetchedGit {
  /** The checked-out tree (the chosen directory of it), in a work directory. */
  tree: string;
  commit: string;
}

function describeRef(ref: GitSource['ref']): string {
  if (ref.branch !== undefined) return `branch "${ref.branch}"`;
  if (ref.tag !== undefined) return `tag "${ref.tag}"`;
  return `commit ${ref.commit ?? '?'}`;
}

/** Ask the remote for `refName`; distinguishes "repository unreachable" from "no such ref". */
async function lsRemote(repository: string, refName: string, timeoutMs: number, env: NodeJS.ProcessEnv): Promise<string[]> {
  const r = await runGit(['ls-remote', '--', repository, refName], { timeoutMs, env });
  if (r.code !== 0) {
    throw new BinnacleError('transient', 'SOURCE_GIT_REPOSITORY', `git repository ${redactUrl(repository)} cannot be read: ${gitSays(r)}`);
  }
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

export async function fetchGit(
  source: GitSource,
  work: string,
  opts: { logger: Logger; timeoutMs?: number; credentials?: { username: string; password: string } },
): Promise<FetchedGit> {
  const timeoutMs = opts.timeoutMs ?? 300_000;
  const env = credentialEnv(opts.credentials);
  const repo = join(work, 'checkout');
  const shown = redactUrl(source.repository);
  const what = `${shown} ${describeRef(source.ref)}`;
  const init = await runGit(['init', '-q', '--template=', repo], { timeoutMs });
  if (init.code !== 0) throw new BinnacleError('terminal', 'SOURCE_GIT', `git init failed: ${gitSays(init)}`);

  const fetch = (refspec: string, depth: boolean): Promise<GitResult> =>
    runGit(['fetch', '-q', '--no-tags', '--no-recurse-submodules', ...(depth ? ['--depth', '1'] : []), '--', source.repository, refspec], { cwd: repo, timeoutMs, env });

  const { branch, tag, commit } = source.ref;
  if (commit === undefined) {
    const refName = branch !== undefined ? `refs/heads/${branch}` : `refs/tags/${tag ?? ''}`;
    const found = await lsRemote(source.repository, refName, timeoutMs, env);
    if (found.length === 0) throw new BinnacleError('input', 'SOURCE_GIT_UNKNOWN_REF', `git repository ${shown} has no ${describeRef(source.ref)}`);
    opts.logger.debug({ repository: shown, ref: refName }, 'fetching git ref');
    const r = await fetch(refName, true);
    if (r.code !== 0) throw new BinnacleError('transient', 'SOURCE_GIT_FETCH', `fetching ${what} failed: ${gitSays(r)}`);
  } else {
    opts.logger.debug({ repository: shown, commit }, 'fetching git commit');
    const r = await fetch(commit, true);
    if (r.code !== 0) {
      // Servers may refuse a sha they do not advertise; then fetch everything and look for it.
      await lsRemote(source.repository, 'HEAD', timeoutMs, env);
      const all = await fetch('+refs/*:refs/remotes/all/*', false);
      if (all.code !== 0) throw new BinnacleError('transient', 'SOURCE_GIT_FETCH', `fetching ${shown} failed: ${gitSays(all)}`);
      const has = await runGit(['cat-file', '-e', `${commit}^{commit}`], { cwd: repo, timeoutMs });
      if (has.code !== 0) throw new BinnacleError('input', 'SOURCE_GIT_UNKNOWN_REF', `git repository ${shown} has no commit ${commit}`);
      const co = await runGit(['checkout', '-q', '--detach', commit], { cwd: repo, timeoutMs });
      if (co.code !== 0) throw new BinnacleError('terminal', 'SOURCE_GIT', `checking out ${what} failed: ${gitSays(co)}`);
      return finish(source, repo, commit, timeoutMs);
    }
  }
  const co = await runGit(['checkout', '-q', '--detach', 'FETCH_HEAD'], { cwd: repo, timeoutMs });
  if (co.code !== 0) throw new BinnacleError('terminal', 'SOURCE_GIT', `checking out ${what} failed: ${gitSays(co)}`);
  const head = await runGit(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: repo, timeoutMs });
  if (head.code !== 0) throw new BinnacleError('terminal', 'SOURCE_GIT', `cannot read the commit of ${what}: ${gitSays(head)}`);
  return finish(source, repo, head.stdout.trim(), timeoutMs);
}

async function finish(source: GitSource, repo: string, commit: string, timeoutMs: number): Promise<FetchedGit> {
  const head = await runGit(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: repo, timeoutMs });
  const sha = head.code === 0 ? head.stdout.trim() : commit;
  // The repository's own metadata is not part of the bundle.
  await rm(join(repo, '.git'), { recursive: true, force: true });
  const dir = source.directory === undefined || source.directory.replace(/^\.?\/*/, '') === '' ? '' : source.directory;
  if (dir === '') return { tree: repo, commit: sha };
  const tree = join(repo, dir);
  const st = await lstat(tree).catch(() => undefined);
  if (st === undefined || !st.isDirectory()) {
    throw new InputError('SOURCE_GIT_DIRECTORY', `${st === undefined ? 'does not exist' : 'is not a directory'} in ${redactUrl(source.repository)} at commit ${sha}`, {
      field: `directory "${source.directory ?? ''}"`,
    });
  }
  // A directory reached through a symlinked parent could be anywhere on this machine.
  const [realRepo, realTree] = await Promise.all([realpath(repo), realpath(tree)]);
  if (!realTree.startsWith(`${realRepo}${sep}`)) {
    throw new InputError('SOURCE_UNSAFE_LINK', `leads, through a symlink, outside the repository ${redactUrl(source.repository)}`, { field: `directory "${source.directory ?? ''}"` });
  }
  return { tree, commit: sha };
}
