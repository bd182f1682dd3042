/** `binnacle image inspect|pull|build|push`: OCI images without Docker (see src/oci). */
import { cp, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { LayerSpec, Platform, RegistryClient } from '../../oci/index.js';
import { BinnacleError, UsageError } from '../../util/errors.js';
import { toJson, toYaml } from '../../util/output.js';
import { printData, type CliContext } from '../context.js';
import { outputOption, parseBytes } from '../flags.js';

/** The OCI library, loaded when an image command runs. */
const oci = (): Promise<typeof import('../../oci/index.js')> => import('../../oci/index.js');

interface ClientOpts {
  insecure?: boolean;
  platform: string;
}

function parsePlatform(value: string): Platform {
  const [os, architecture, variant, extra] = value.split('/');
  if (os === undefined || os === '' || architecture === undefined || architecture === '' || extra !== undefined) {
    throw new UsageError(`--platform ${value}: expected os/arch or os/arch/variant, e.g. linux/amd64`);
  }
  return { os, architecture, ...(variant === undefined || variant === '' ? {} : { variant }) };
}

async function clientFor(ctx: CliContext, opts: ClientOpts): Promise<RegistryClient> {
  const { RegistryClient } = await oci();
  return new RegistryClient({ logger: ctx.logger, ...(opts.insecure === true ? { insecure: true } : {}) });
}

function withClientOptions(c: Command): Command {
  return c
    .option('--platform <os/arch>', 'platform to pick from a multi-platform image', 'linux/amd64')
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)');
}

function printValue(ctx: CliContext, format: string, value: unknown, text: string): void {
  if (format === 'json') ctx.out(toJson(value));
  else if (format === 'yaml') ctx.out(toYaml(value));
  else if (format === 'text') ctx.out(text);
  else throw new UsageError(`-o ${format}: expected one of text, json, yaml`);
}

/** `--layer DIR[:/path/in/image]`, the path defaulting to the image root. */
function parseLayer(value: string, previous: LayerSpec[]): LayerSpec[] {
  const colon = value.lastIndexOf(':');
  const layer = colon > 0 ? { dir: value.slice(0, colon), prefix: value.slice(colon + 1) } : { dir: value, prefix: '/' };
  if (layer.dir === '') throw new UsageError(`--layer ${value}: the directory is missing`);
  return [...previous, layer];
}

function parseLabel(value: string, previous: Record<string, string>): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UsageError(`--label ${value}: expected key=value`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

export function registerImageCommands(program: Command, ctx: CliContext): void {
  const image = program.command('image').description('Inspect, pull, build and push OCI images (catalog and bundle images) without Docker');

  withClientOptions(image.command('inspect <ref>'))
    .description('Show an image: digest, media type, platform, labels and layers')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (ref: string, opts: ClientOpts & { output: string }) => {
      const { parseReference, withDigest, parseImageConfig, formatReference } = await oci();
      const client = await clientFor(ctx, opts);
      const parsed = parseReference(ref);
      const resolved = await client.resolveImage(parsed, parsePlatform(opts.platform));
      const pinned = withDigest(parsed, resolved.digest);
      const config = parseImageConfig(`config of ${formatReference(pinned)}`, await client.getBlobBytes(pinned, resolved.manifest.config.digest, resolved.manifest.config.size));
      const value = {
        ref: formatReference(parsed),
        digest: resolved.digest,
        mediaType: resolved.manifest.mediaType,
        ...(resolved.index === undefined ? {} : { index: { digest: resolved.index.digest, mediaType: resolved.index.mediaType } }),
        platform: `${config.os}/${config.architecture}`,
        labels: config.labels,
        layers: resolved.manifest.layers.map((l) => ({ digest: l.digest, size: l.size, mediaType: l.mediaType })),
      };
      printData(ctx, opts.output, {
        value,
        headers: ['field', 'value'],
        rows: [
          ['ref', value.ref],
          ['digest', value.digest],
          ['mediaType', value.mediaType],
          ...(value.index === undefined ? [] : [['index', value.index.digest]]),
          ['platform', value.platform],
          ...Object.entries(value.labels).map(([k, v]) => ['label', `${k}=${v}`]),
          ...value.layers.map((l) => ['layer', `${l.digest} ${l.size} ${l.mediaType}`]),
        ],
      });
    });

  withClientOptions(image.command('pull <ref>'))
    .description('Pull an image, verify every blob, and unpack its files into --dir (through the local cache)')
    .requiredOption('--dir <dir>', 'directory to put the image files in (must not exist or be empty)')
    .option('--cache-dir <dir>', 'content-addressed image cache', '.cache/images')
    .option('--max-bytes <n>', 'refuse images larger than this when unpacked (bytes, or with Ki/Mi/Gi)', parseBytes, 1024 * 1024 * 1024)
    .addOption(outputOption(['text', 'json', 'yaml'], 'text'))
    .action(async (ref: string, opts: ClientOpts & { dir: string; cacheDir: string; maxBytes: number; output: string }) => {
      const { pullAndUnpack } = await oci();
      const maxBytes = opts.maxBytes;
      const existing = await readdir(opts.dir).catch(() => [] as string[]);
      if (existing.length > 0) throw new BinnacleError('input', 'IMAGE_DIR_NOT_EMPTY', `--dir ${opts.dir} is not empty; choose a new directory`);
      const pulled = await pullAndUnpack(ref, { cacheDir: resolve(opts.cacheDir), client: await clientFor(ctx, opts), maxBytes, platform: parsePlatform(opts.platform) });
      await cp(pulled.dir, opts.dir, { recursive: true, verbatimSymlinks: true });
      const value = { digest: pulled.digest, dir: resolve(opts.dir), labels: pulled.labels };
      printValue(ctx, opts.output, value, `digest: ${value.digest}\ndir:    ${value.dir}\n${Object.entries(value.labels).map(([k, v]) => `label:  ${k}=${v}\n`).join('')}`);
    });

  image
    .command('build')
    .description('Build an image deterministically from directories into an OCI layout (and optionally push it)')
    .requiredOption('--layer <dir[:/path]>', 'a directory to add as one layer, at /path in the image (repeatable)', parseLayer, [])
    .option('--label <key=value>', 'an image label (repeatable)', parseLabel, {})
    .requiredOption('--layout <dir>', 'OCI image layout directory to write the image into')
    .option('--tag <tag>', 'tag to record in the layout index')
    .option('--entrypoint <path>', "the program the image runs (its config's Entrypoint, as a Dockerfile's ENTRYPOINT [\"path\"])")
    .option('--user <uid[:gid]>', "the user the image runs as (its config's User): numeric, so a Pod's runAsNonRoot can check it")
    .option('--push <ref>', 'push the built image to this reference')
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .addOption(outputOption(['text', 'json', 'yaml'], 'text'))
    .action(async (opts: { layer: LayerSpec[]; label: Record<string, string>; layout: string; tag?: string; entrypoint?: string; user?: string; push?: string; insecure?: boolean; output: string }) => {
      if (opts.user !== undefined && !/^\d+(:\d+)?$/.test(opts.user)) throw new UsageError(`--user ${JSON.stringify(opts.user)}: give a numeric uid, or uid:gid (a name cannot be checked against runAsNonRoot)`);
      if (opts.entrypoint !== undefined && !opts.entrypoint.startsWith('/')) throw new UsageError(`--entrypoint ${JSON.stringify(opts.entrypoint)}: give the program's absolute path in the image`);
      const config = { ...(opts.entrypoint === undefined ? {} : { Entrypoint: [opts.entrypoint] }), ...(opts.user === undefined ? {} : { User: opts.user }) };
      const { buildImage, pushImage } = await oci();
      const built = await buildImage({ layers: opts.layer, labels: opts.label, outputDir: opts.layout, ...(opts.tag === undefined ? {} : { tag: opts.tag }), ...(Object.keys(config).length === 0 ? {} : { config }) });
      const pushed = opts.push === undefined ? undefined : await pushImage(built, opts.push, await clientFor(ctx, { insecure: opts.insecure, platform: 'linux/amd64' }));
      const value = { digest: built.manifestDigest, layout: resolve(built.layoutDir), ...(pushed === undefined ? {} : { pushed: pushed.ref }) };
      printValue(ctx, opts.output, value, `digest: ${value.digest}\nlayout: ${value.layout}\n${pushed === undefined ? '' : `pushed: ${pushed.ref}\n`}`);
    });

  image
    .command('push <layout> <ref>')
    .description('Push the image in an OCI layout directory (from `image build`) to a registry')
    .option('--tag <tag>', 'which tagged manifest of the layout to push, when it holds several')
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .action(async (layout: string, ref: string, opts: { tag?: string; insecure?: boolean }) => {
      // Fail on a missing layout before touching the network.
      await readFile(join(layout, 'index.json')).catch(() => {
        throw new BinnacleError('input', 'IMAGE_NO_LAYOUT', `${layout} is not an OCI image layout (no index.json)`);
      });
      const { readImageLayout, pushImage } = await oci();
      const built = await readImageLayout(layout, opts.tag);
      const pushed = await pushImage(built, ref, await clientFor(ctx, { insecure: opts.insecure, platform: 'linux/amd64' }));
      ctx.out(`${pushed.ref}\n`);
    });
}
