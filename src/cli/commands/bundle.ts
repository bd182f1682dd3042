/** `binnacle bundle validate|render|fbc|generate|build`: operator bundles (see src/bundle). */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { DeploymentOverrides } from '../../bundle/index.js';
import type { RenderContext } from '../../render/index.js';
import type { RegistryClient } from '../../oci/index.js';
import type { CommunityLayout } from '../../bundle/community-layout.js';
import { BinnacleError, InputError, UsageError, ValidationResult, problemToString } from '../../util/errors.js';
import { toJson, toYaml } from '../../util/output.js';
import type { CliContext } from '../context.js';
import { collect, outputOption, withFlagNames } from '../flags.js';
import { stat } from 'node:fs/promises';

/** The bundle library and the registry client, loaded when a bundle command runs. */
async function lib(): Promise<typeof import('../../bundle/index.js') & typeof import('../../oci/index.js')> {
  const [bundle, oci] = await Promise.all([import('../../bundle/index.js'), import('../../oci/index.js')]);
  return { ...bundle, ...oci };
}

const DEFAULT_CACHE = join('.cache', 'images');


async function client(ctx: CliContext, insecure: boolean | undefined): Promise<RegistryClient> {
  const { RegistryClient } = await import('../../oci/index.js');
  return new RegistryClient({ logger: ctx.logger, ...(insecure === true ? { insecure: true } : {}) });
}

/** A local file or directory (else the source is an image reference). */
async function isLocal(p: string): Promise<boolean> {
  const st = await stat(p).catch(() => undefined);
  return st !== undefined && (st.isDirectory() || st.isFile());
}

function summary(r: ValidationResult): { subject: string; ok: boolean; errors: unknown[]; warnings: unknown[] } {
  return { subject: r.subject, ok: r.ok, errors: r.errors(), warnings: r.warnings() };
}

export function registerBundleCommands(program: Command, ctx: CliContext): void {
  const bundle = program.command('bundle').description('Operator bundles: validate, render to Kubernetes objects, FBC records, generate, build images');

  bundle
    .command('validate')
    .description('Validate bundles (bundle directories, package-manifest version directories, package-manifest packages, or bundle images); exit 1 if any has errors')
    .argument('<sources...>', 'bundle or package-manifest version directories, package directories (every version and the package file), manifest files or directories without a CSV (each object validated by its kind), or image references')
    .option('--select-optional <selector>', 'optional validators: suite=operatorframework or name=<validator> (repeatable)', collect, [])
    .option('--k8s-version <version>', 'Kubernetes version to check removed APIs against')
    .option('--optional-values <key=value>', "optional validators' values, as operator-sdk takes them: k8s-version=<version>, index-path=<bundle Dockerfile> (community) (repeatable)", collect, [])
    .addOption(outputOption(['text', 'json'], 'text'))
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .action(async (sources: string[], o: { selectOptional: string[]; k8sVersion?: string; optionalValues: string[]; output: string; cacheDir: string; insecure?: boolean }) => {
      const { parseSelectOptional, parseOptionalValues, validatePath, resolveBundleSource, validateBundleDir } = await lib();
      const format = o.output;
      const optional = parseSelectOptional(o.selectOptional);
      const values = parseOptionalValues(o.optionalValues);
      const k8sVersion = o.k8sVersion ?? values.k8sVersion;
      // --k8s-version only means something to the removed-APIs check, so it turns that on.
      if (k8sVersion !== undefined && !optional.includes('alpha-deprecated-apis')) optional.push('alpha-deprecated-apis');
      const opts = { optional, ...(k8sVersion === undefined ? {} : { k8sVersion }), ...(values.indexPath === undefined ? {} : { indexPath: values.indexPath }) };
      const results: ValidationResult[] = [];
      for (const src of sources) {
        if (await isLocal(src)) results.push(await validatePath(src, opts));
        else {
          const s = await resolveBundleSource(src, { cacheDir: o.cacheDir, client: await client(ctx, o.insecure) });
          const v = await validateBundleDir(s.dir, { ...opts, ...(s.packageName === undefined ? {} : { packageName: s.packageName }) });
          const named = new ValidationResult(`image ${src} (${s.digest ?? ''})`);
          named.children.push(v.result);
          results.push(named);
        }
      }
      const failed = results.filter((r) => !r.ok);
      if (format === 'json') ctx.out(toJson(results.map(summary)));
      else {
        for (const r of results) {
          const text = r.render();
          if (text !== '') ctx.out(`${text}\n`);
          ctx.out(`${r.ok ? 'PASS' : 'FAIL'} ${r.subject}: ${r.errors().length} error(s), ${r.warnings().length} warning(s)\n`);
        }
      }
      if (failed.length > 0) throw new BinnacleError('input', 'BUNDLE_INVALID', `${failed.length} of ${results.length} bundle source(s) have errors`);
    });

  bundle
    .command('render')
    .description('Turn a bundle into the Kubernetes objects OLM would create for it')
    .argument('<source>', "bundle directory, package-manifest version directory, package directory (its default channel's head), or image reference")
    .requiredOption('--install-namespace <ns>', 'namespace the operator is installed into')
    .option('--watch-namespace <ns>', "namespace the operator watches (repeatable; '' or none = all namespaces)", collect, [])
    .option('--config <file>', 'deployment overrides (YAML: env, envFrom, volumes, volumeMounts, tolerations, resources, nodeSelector, affinity, annotations)')
    .addOption(outputOption(['yaml', 'json'], 'yaml'))
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .action(async (source: string, o: { installNamespace: string; watchNamespace: string[]; config?: string; output: string; cacheDir: string; insecure?: boolean }) => {
      const { resolveBundleSource } = await lib();
      const { bundleWebhookCerts, NO_SECRETS } = await import('../../render/webhook-certs.js');
      const { createRenderer } = await import('../../render/index.js');
      const format = o.output;
      const s = await resolveBundleSource(source, { cacheDir: o.cacheDir, client: await client(ctx, o.insecure) });
      const overrides = o.config === undefined ? undefined : await readOverrides(o.config);
      const watch = o.watchNamespace.flatMap((w) => w.split(',')).map((w) => w.trim());
      // The render a BundleDeployment applies (removed APIs moved, orphan conversions dropped, the
      // OperatorCondition added), offline: self-signed certificates, no cluster.
      const bundleFormat = (await isPlain(s.dir, s.labels)) ? 'plain' : 'registry+v1';
      const toRender: RenderContext = {
        dir: s.dir,
        name: s.packageName ?? 'bundle',
        spec: {
          source: { type: 'image', image: { ref: source } },
          format: bundleFormat,
          installNamespace: o.installNamespace,
          ...(watch.length === 0 ? {} : { watchNamespaces: watch }),
        },
        digest: '',
        revision: 1,
        certs: await bundleWebhookCerts(s.dir, { format: bundleFormat, installNamespace: o.installNamespace, packageName: s.packageName, owner: { name: s.packageName ?? 'bundle' }, reader: NO_SECRETS }),
        ...(s.packageName === undefined ? {} : { packageName: s.packageName }),
        ...(overrides === undefined ? {} : { overrides }),
      };
      const rendered = await createRenderer().bundle(toRender);
      ctx.logger.info({ bundle: rendered.chart.description ?? rendered.chart.name, format: bundleFormat, objects: rendered.objects.length }, 'rendered bundle');
      const objects: unknown[] = rendered.objects;
      if (format === 'json') ctx.out(toJson({ apiVersion: 'v1', kind: 'List', items: objects }));
      else ctx.out(objects.map((x) => toYaml(x)).join('---\n'));
    });

  bundle
    .command('fbc')
    .description('Print the file-based-catalog olm.bundle record of a bundle, with its derived properties')
    .argument('<source>', "bundle directory, package-manifest version directory, package directory (its default channel's head), or image reference")
    .option('--image <ref>', 'bundle image to record (default: the source, when it is an image)')
    .option('--package <name>', 'package name (package-manifest layout)')
    .addOption(outputOption(['json', 'yaml'], 'json'))
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .action(async (source: string, o: { image?: string; package?: string; output: string; cacheDir: string; insecure?: boolean }) => {
      const { resolveBundleSource, loadBundleDir, toFbcBundle } = await lib();
      const format = o.output;
      const s = await resolveBundleSource(source, { cacheDir: o.cacheDir, client: await client(ctx, o.insecure) });
      const pkg = o.package ?? s.packageName;
      const b = await loadBundleDir(s.dir, pkg === undefined ? {} : { packageName: pkg });
      const image = o.image ?? s.image;
      const rec = toFbcBundle(b, { ...(image === undefined ? {} : { image }), ...(pkg === undefined ? {} : { packageName: pkg }) });
      ctx.out(format === 'json' ? toJson(rec) : toYaml(rec));
    });

  bundle
    .command('generate')
    .description('Write a registry+v1 bundle (CSV + annotations) from CRDs, RBAC and a Deployment')
    .requiredOption('--input <dir>', 'directory of manifests: CRDs, RBAC, Deployment, optional base CSV and samples')
    .requiredOption('--output-dir <dir>', 'bundle directory to write (manifests/, metadata/); with --community, the repository root')
    .requiredOption('--package <name>', 'package name')
    .requiredOption('--version <semver>', 'bundle version')
    .requiredOption('--channels <list>', 'comma-separated channels')
    .option('--default-channel <name>', 'default channel (default: the first of --channels)')
    .option('--community', "write the community-operators layout under --output-dir: operators/<package>/<version>/ and operators/<package>/ci.yaml; the community suite validates it")
    .option('--update-graph <mode>', 'with --community: replaces-mode (follow spec.replaces) or semver-mode, for a new ci.yaml')
    .option('--reviewer <github-user>', 'with --community: a reviewer for a new ci.yaml (repeatable)', collect)
    .action(withFlagNames({ packageName: '--package', version: '--version', channels: '--channels', defaultChannel: '--default-channel', updateGraph: '--update-graph', reviewers: '--reviewer' }, async (o: { input: string; outputDir: string; package: string; version: string; channels: string; defaultChannel?: string; community?: boolean; updateGraph?: string; reviewer?: string[] }) => {
      const { generateBundle, validateBundleDir, parseSelectOptional } = await lib();
      if (o.community !== true && (o.updateGraph !== undefined || o.reviewer !== undefined)) throw new UsageError('--update-graph and --reviewer go with --community');
      let outputDir = o.outputDir;
      let community: { layout: CommunityLayout; write: (l: CommunityLayout) => Promise<boolean> } | undefined;
      if (o.community === true) {
        const { prepareCommunityLayout, parseUpdateGraph, writeCommunityCi } = await import('../../bundle/community-layout.js');
        const layout = await prepareCommunityLayout({
          repoRoot: o.outputDir,
          packageName: o.package,
          version: o.version,
          ...(o.updateGraph === undefined ? {} : { updateGraph: parseUpdateGraph(o.updateGraph) }),
          ...(o.reviewer === undefined ? {} : { reviewers: o.reviewer }),
        });
        outputDir = layout.bundleDir;
        community = { layout, write: writeCommunityCi };
      }
      const res = await generateBundle({
        inputDir: o.input,
        outputDir,
        packageName: o.package,
        version: o.version,
        channels: o.channels.split(',').map((c) => c.trim()).filter((c) => c !== ''),
        ...(o.defaultChannel === undefined ? {} : { defaultChannel: o.defaultChannel }),
      });
      for (const f of res.files) ctx.out(`wrote ${join(outputDir, f)}\n`);
      for (const s of res.skipped) ctx.err(`• skipped ${s.file} (${s.kind} ${s.name}): ${s.reason}\n`);
      if (community !== undefined) {
        // Only once the bundle is there: a failed generation leaves no ci.yaml behind.
        ctx.out((await community.write(community.layout)) ? `wrote ${community.layout.ciYaml}\n` : `kept ${community.layout.ciYaml}\n`);
        for (const n of community.layout.notes) ctx.err(`• ${n}\n`);
      }
      // A community submission is held to the community suite, as their pipeline holds it.
      const v = await validateBundleDir(outputDir, o.community === true ? { optional: parseSelectOptional(['suite=operatorframework']) } : {});
      for (const p of v.result.all()) ctx.err(`• ${problemToString(p)}\n`);
      if (!v.result.ok) throw new BinnacleError('input', 'BUNDLE_INVALID', `generated bundle ${res.csvName} has errors (see above)`);
    }));

  bundle
    .command('build')
    .description('Build a bundle image (/manifests, /metadata, labels from annotations.yaml, or for a package-manifest directory from its package file), optionally push it')
    .argument('<dir>', "bundle directory, package-manifest version directory, or package directory (its default channel's head)")
    .requiredOption('--tag <ref>', 'image reference')
    .option('--push', 'push the image to its registry')
    .option('--layout <dir>', 'OCI image layout directory to write (default: a temp directory)')
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .addOption(outputOption(['text', 'json'], 'text'))
    .action(async (dir: string, o: { tag: string; push?: boolean; layout?: string; insecure?: boolean; output: string }) => {
      const { buildBundleImage } = await lib();
      const format = o.output;
      const built = await buildBundleImage(dir, {
        tag: o.tag,
        ...(o.push === true ? { push: true, client: await client(ctx, o.insecure) } : {}),
        ...(o.layout === undefined ? {} : { layoutDir: o.layout }),
      });
      const value = { bundle: built.bundleName, tag: o.tag, digest: built.image.manifestDigest, layout: built.image.layoutDir, labels: built.labels, pushed: built.pushed };
      if (format === 'json') ctx.out(toJson(value));
      else ctx.out(`built ${o.tag} (${built.bundleName}) ${built.image.manifestDigest}\nlayout: ${built.image.layoutDir}\n${built.pushed === undefined ? '' : `pushed: ${built.pushed.ref}\n`}`);
    });
}

async function readOverrides(file: string): Promise<DeploymentOverrides> {
  const [{ parseYamlDocuments }, { decodeOverrides }] = await Promise.all([import('../../bundle/yaml-docs.js'), import('../../bundle/index.js')]);
  const text = await readFile(file, 'utf8').catch((e: unknown) => {
    throw new InputError('BUNDLE_CONFIG', `cannot read: ${e instanceof Error ? e.message : String(e)}`, { file });
  });
  const parsed = parseYamlDocuments(text, file);
  const first = parsed.problems.find((x) => x.severity === 'error');
  if (first !== undefined) throw new InputError('BUNDLE_CONFIG', first.message, { file });
  const { overrides, problems } = decodeOverrides(parsed.documents[0]?.value ?? {}, file);
  const p = problems[0];
  if (p !== undefined) throw new InputError('BUNDLE_CONFIG', problems.map((x) => (x.field === undefined || x.field === '' ? x.message : `${x.field}: ${x.message}`)).join('; '), { file, ...(p.field === undefined ? {} : { field: p.field }) });
  return overrides;
}

/** A plain bundle says so in its media type, or has no CSV and does not claim to be registry+v1. */
async function isPlain(dir: string, labels: Record<string, string>): Promise<boolean> {
  const { ANNOTATION_MEDIATYPE, loadBundleDir, BundleLoadError } = await lib();
  const mediatype = labels[ANNOTATION_MEDIATYPE];
  if (mediatype !== undefined) return mediatype === 'plain+v0';
  const ann = await readFile(join(dir, 'metadata', 'annotations.yaml'), 'utf8').catch(() => '');
  if (/mediatype\.v1:\s*["']?plain\+v0/.test(ann)) return true;
  if (/mediatype\.v1:/.test(ann)) return false;
  try {
    await loadBundleDir(dir);
    return false;
  } catch (e) {
    return e instanceof BundleLoadError && e.code === 'BUNDLE_NO_CSV';
  }
}

