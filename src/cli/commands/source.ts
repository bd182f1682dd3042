/** `binnacle source unpack|gc`: bundle sources into the content-addressed tree cache (see src/source). */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ValidationError, UsageError } from '../../util/errors.js';
import type { ProgressEvent, UnpackedSource } from '../../source/index.js';
import { printData, type CliContext } from '../context.js';
import { outputOption, parseBytes } from '../flags.js';
import { clientFor } from '../kube.js';

interface UnpackFlags {
  image?: string;
  pullSecret?: string;
  insecure?: boolean;
  git?: string;
  branch?: string;
  tag?: string;
  commit?: string;
  directory?: string;
  http?: string;
  sha256?: string;
  local?: string;
  configmap: string[];
  cache: string;
  maxBytes?: number;
  kubeconfig?: string;
  context?: string;
  output: string;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function nsName(flag: string, value: string): { namespace: string; name: string; rest: string | undefined } {
  const m = /^([^/:]+)\/([^/:]+)(?::(.*))?$/.exec(value);
  if (m === null) throw new UsageError(`${flag} ${value}: expected NAMESPACE/NAME${flag === '--configmap' ? '[:PATH]' : ''}`);
  return { namespace: m[1] ?? '', name: m[2] ?? '', rest: m[3] };
}

/** The flags as the CRD wire form, so the one validator checks both. */
function wireSource(f: UnpackFlags): Record<string, unknown> {
  checkOneSource(f);
  if (f.image !== undefined) return imageWire(f, f.image);
  if (f.git !== undefined) return gitWire(f, f.git);
  if (f.http !== undefined) return { type: 'http', http: { url: f.http, ...(f.sha256 === undefined ? {} : { sha256: f.sha256 }) } };
  if (f.local !== undefined) return { type: 'local', local: { path: f.local } };
  return {
    type: 'configMaps',
    configMaps: f.configmap.map((v) => {
      const r = nsName('--configmap', v);
      return { namespace: r.namespace, name: r.name, ...(r.rest === undefined || r.rest === '' ? {} : { path: r.rest }) };
    }),
  };
}

/** Exactly one source flag, and no flag of another source type. */
function checkOneSource(f: UnpackFlags): void {
  const chosen = [
    f.image === undefined ? undefined : 'image',
    f.git === undefined ? undefined : 'git',
    f.http === undefined ? undefined : 'http',
    f.local === undefined ? undefined : 'local',
    f.configmap.length === 0 ? undefined : 'configmap',
  ].filter((x) => x !== undefined);
  if (chosen.length !== 1) throw new UsageError(`give exactly one of --image, --git, --http, --local, --configmap${chosen.length > 1 ? ` (got ${chosen.map((c) => `--${c}`).join(', ')})` : ''}`);
  const only = (flags: (keyof UnpackFlags)[], kind: string): void => {
    for (const k of flags) if (f[k] !== undefined) throw new UsageError(`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} only goes with ${kind}`);
  };
  if (f.image === undefined) only(['pullSecret', 'insecure'], '--image');
  if (f.git === undefined) only(['branch', 'tag', 'commit', 'directory'], '--git');
  if (f.http === undefined) only(['sha256'], '--http');
}

function imageWire(f: UnpackFlags, ref: string): Record<string, unknown> {
  const ps = f.pullSecret === undefined ? undefined : nsName('--pull-secret', f.pullSecret);
  return {
    type: 'image',
    image: { ref, ...(ps === undefined ? {} : { pullSecret: { namespace: ps.namespace, name: ps.name } }), ...(f.insecure === true ? { insecure: true } : {}) },
  };
}

function gitWire(f: UnpackFlags, repository: string): Record<string, unknown> {
  const ref = { ...(f.branch === undefined ? {} : { branch: f.branch }), ...(f.tag === undefined ? {} : { tag: f.tag }), ...(f.commit === undefined ? {} : { commit: f.commit }) };
  return { type: 'git', git: { repository, ref, ...(f.directory === undefined ? {} : { directory: f.directory }) } };
}

function mib(n: number): string {
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Progress on stderr, at most a few times a second, so stdout stays data. */
function progressPrinter(ctx: CliContext): (p: ProgressEvent) => void {
  let last = 0;
  let lastPhase = '';
  return (p) => {
    if (p.bytes === undefined) return;
    const now = Date.now();
    if (p.phase === lastPhase && now - last < 250 && (p.total === undefined || p.bytes !== p.total)) return;
    last = now;
    lastPhase = p.phase;
    ctx.err(`${p.phase}: ${mib(p.bytes)}${p.total === undefined ? '' : ` / ${mib(p.total)} (${Math.floor((100 * p.bytes) / Math.max(p.total, 1))}%)`}\n`);
  };
}

export function registerSourceCommands(program: Command, ctx: CliContext): void {
  const source = program.command('source').description('Bundle sources: images, git, HTTP tarballs, ConfigMaps and local directories into a content-addressed cache');

  source
    .command('unpack')
    .description('Fetch one source into the cache and print its tree digest, directory and what it resolved to')
    .option('--image <ref>', 'an OCI image reference')
    .option('--pull-secret <ns/name>', 'a kubernetes.io/dockerconfigjson Secret with the registry credentials (needs a cluster)')
    .option('--insecure', 'plain http to the registry')
    .option('--git <url>', 'a git repository URL')
    .option('--branch <name>', 'git branch')
    .option('--tag <name>', 'git tag')
    .option('--commit <sha>', 'git commit (full sha)')
    .option('--directory <dir>', 'subdirectory of the git repository')
    .option('--http <url>', 'URL of a .tar, .tar.gz or .tgz')
    .option('--sha256 <hex>', 'expected sha256 of the download')
    .option('--local <dir>', 'a local directory')
    .option('--configmap <ns/name[:path]>', 'a ConfigMap whose keys become files (repeatable; needs a cluster)', collect, [])
    .option('--cache <dir>', 'the source cache', '.cache/sources')
    .option('--max-bytes <n>', 'largest tree accepted (bytes, or with Ki/Mi/Gi: 512Mi)', parseBytes)
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (flags: UnpackFlags) => {
      const { bundleSourceFrom, bundleSourceToJson, unpackSource } = await import('../../source/index.js');
      let parsed;
      try {
        parsed = bundleSourceFrom(wireSource(flags), { field: 'source' });
      } catch (err) {
        // The flags are the user's input: a bad value is a usage error.
        if (err instanceof ValidationError) throw new UsageError(err.result.errors().map((p) => `${p.field ?? ''}: ${p.message}`).join('\n'));
        throw err;
      }
      const needsCluster = parsed.type === 'configMaps' || (parsed.type === 'image' && parsed.pullSecret !== undefined);
      // Only ConfigMaps and pull secrets need the cluster (found as every command finds it).
      const client = needsCluster ? await clientFor(flags) : undefined;
      let result: UnpackedSource;
      try {
        result = await unpackSource(parsed, {
          cacheDir: resolve(flags.cache),
          logger: ctx.logger,
          // The user at the terminal may read their own files.
          allowHostPaths: true,
          onProgress: progressPrinter(ctx),
          ...(client === undefined ? {} : { client }),
          ...(flags.maxBytes === undefined ? {} : { maxBytes: flags.maxBytes }),
        });
      } finally {
        client?.close();
      }
      const from = result.resolved.image?.digest ?? result.resolved.git?.commit ?? (result.resolved.http === undefined ? '' : `sha256:${result.resolved.http.sha256}`);
      printData(ctx, flags.output, {
        value: { source: bundleSourceToJson(parsed), ...result },
        headers: ['type', 'digest', 'resolved', 'dir'],
        rows: [[parsed.type, result.digest, from, result.dir]],
      });
    });

  source
    .command('gc')
    .description('Remove cached trees whose digest is not kept')
    .option('--cache <dir>', 'the source cache', '.cache/sources')
    .option('--keep <digest>', 'a tree digest to keep (repeatable)', collect, [])
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (flags: { cache: string; keep: string[]; output: string }) => {
      const { gcSources } = await import('../../source/index.js');
      for (const d of flags.keep) if (!/^(sha256:)?[0-9a-f]{64}$/.test(d)) throw new UsageError(`--keep ${d}: expected sha256:<64 hex digits>`);
      const r = await gcSources(resolve(flags.cache), flags.keep);
      printData(ctx, flags.output, {
        value: r,
        headers: ['removed trees', 'removed refs', 'removed image trees', 'removed blobs'],
        rows: [[String(r.removedTrees), String(r.removedRefs), String(r.removedImageTrees), String(r.removedBlobs)]],
      });
    });
}
