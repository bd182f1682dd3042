/**
 * `binnacle helm …`: Helm charts through Helm's own engine (src/helm). `helm template` prints
 * exactly what the `helm` CLI of the same version prints for the same arguments; on failure
 * it exits 1 with Helm's error text. The engine is loaded only when a helm command runs.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../util/errors.js';
import { definedFields } from '../../util/object.js';
import type { CliContext } from '../context.js';
import { collect, collectSlice } from '../flags.js';
import { addKubeFlags, withCluster, type KubeFlags } from '../kube.js';
import { registerHelmBundleCommand } from './helm-bundle.js';
import { registerHelmReleaseCommand } from './helm-release.js';


export interface TemplateFlags {
  values?: string[];
  set?: string[];
  setString?: string[];
  setFile?: string[];
  setJson?: string[];
  setLiteral?: string[];
  namespace?: string;
  kubeVersion?: string;
  apiVersions?: string[];
  includeCrds?: boolean;
  skipTests?: boolean;
  hooks?: boolean;
  showOnly?: string[];
  isUpgrade?: boolean;
  skipSchemaValidation?: boolean;
}

/** The values flags every helm-like command takes, as Helm names them. */
export function addValuesFlags(c: Command): Command {
  return c
    .option('-f, --values <file>', 'values file (repeatable)', collect)
    .option('--set <k=v>', 'set values on the command line (repeatable)', collect)
    .option('--set-string <k=v>', 'set STRING values on the command line (repeatable)', collect)
    .option('--set-file <k=path>', 'set values from files (repeatable)', collect)
    .option('--set-json <k=json>', 'set JSON values on the command line (repeatable)', collect)
    .option('--set-literal <k=v>', 'set a literal STRING value (repeatable)', collect);
}

export function registerHelmCommands(program: Command, ctx: CliContext): void {
  const helm = program.command('helm').description("Helm charts, rendered by Helm's own engine");

  addValuesFlags(helm.command('template <args...>'))
    .description('Render a chart locally, exactly as `helm template [NAME] CHART` does')
    .option('-n, --namespace <ns>', 'namespace', 'default')
    .option('--kube-version <v>', 'Kubernetes version for Capabilities.KubeVersion')
    .option('-a, --api-versions <list>', 'Kubernetes API versions for Capabilities.APIVersions (repeatable, comma-separated)', collectSlice)
    .option('--include-crds', 'include CRDs in the output')
    .option('--skip-tests', 'skip tests from the output')
    .option('--no-hooks', 'leave hooks out of the output')
    .option('-s, --show-only <template>', 'only show manifests rendered from the given templates (repeatable)', collect)
    .option('--is-upgrade', 'set .Release.IsUpgrade instead of .Release.IsInstall')
    .option('--skip-schema-validation', 'skip values.schema.json validation')
    .option('--repo <url>', 'chart repository URL (CHART is then a chart name)')
    .option('--version <range>', 'chart version or range, for oci:// and repository charts')
    .option('--plain-http', 'plain HTTP for an oci:// registry')
    .action(async (args: string[], flags: TemplateFlags & { repo?: string; version?: string; plainHttp?: boolean }) => {
      if (args.length > 2) throw new UsageError(`helm template takes [NAME] CHART, got ${args.length} arguments`);
      const [name, chartArg] = args.length === 2 ? [args[0], args[1]] : ['release-name', args[0]];
      if (chartArg === undefined || name === undefined) throw new UsageError('helm template needs a CHART');
      const chart = await localChart(chartArg, flags);
      const { createRenderer } = await import('../../render/index.js');
      const template = {
        chart,
        releaseName: name,
        namespace: flags.namespace ?? 'default',
        ...valueOptions(flags),
        ...(flags.kubeVersion === undefined ? {} : { kubeVersion: flags.kubeVersion }),
        ...(flags.apiVersions === undefined ? {} : { apiVersions: flags.apiVersions }),
        includeCrds: flags.includeCrds === true,
        skipTests: flags.skipTests === true,
        disableHooks: flags.hooks === false,
        ...(flags.showOnly === undefined ? {} : { showOnly: flags.showOnly }),
        isUpgrade: flags.isUpgrade === true,
        skipSchemaValidation: flags.skipSchemaValidation === true,
      };
      // `helm template` is an install's render that prints Helm's output: the same function.
      ctx.out((await createRenderer().template(template)).output);
    });

  addKubeFlags(helm.command('adopt <release>'))
    .description('Take over a release that `helm install` made: a custom resource of KIND whose spec is its values continues its history, with no reinstall')
    .requiredOption('--kind <kind>', 'the Helm-operator kind: Kind.version.group, or Kind when one HelmOperator serves it')
    .option('-n, --namespace <ns>', 'the release namespace', 'default')
    .action(async (release: string, flags: KubeFlags & { kind: string; namespace: string }) => {
      const { adoptRelease } = await import('../../helm/adopt.js');
      await withCluster(flags, async (client) => {
        const kind = await parseKind(client, flags.kind);
        const res = await adoptRelease(client, { release: { name: release, namespace: flags.namespace }, kind });
        ctx.out(`release ${flags.namespace}/${release} (revision ${res.revision}, ${res.objects} objects) adopted by ${kind.kind} ${flags.namespace}/${res.cr.metadata.name ?? release}\n`);
      });
    });
  addKubeFlags(helm.command('rollback <release> [revision]'))
    .description("Roll a Helm operator's release back to an earlier revision's values, as helm rollback does: written into its custom resource's spec, from which the manager makes the next revision")
    .option('--kind <kind>', "the Helm-operator kind: Kind.version.group, or Kind when one HelmOperator serves it (default: the kind the release's records name)")
    .option('-n, --namespace <ns>', 'the release namespace', 'default')
    .option('--system-namespace <ns>', "the manager's namespace, where the release history it trusts is kept", 'binnacle-system')
    .option('--accept-config', "for a revision that did not record the resource's own values: write Helm's config for it, with what valuesFrom and overrideValues added then")
    .option('--dry-run', 'print the spec it would write, and write nothing')
    .action(async (release: string, revision: string | undefined, flags: KubeFlags & { kind?: string; namespace: string; systemNamespace: string; acceptConfig?: boolean; dryRun?: boolean }) => {
      const { rollbackHelmRelease } = await import('../../helm/rollback.js');
      if (revision !== undefined && !/^[1-9]\d{0,8}$/.test(revision)) throw new UsageError(`REVISION ${revision}: expected a revision number, such as 2`);
      const toRevision = revision === undefined ? undefined : Number(revision);
      await withCluster(flags, async (client) => {
        const kindOf = (recorded: string) => parseKind(client, recorded, `the release's recorded kind (give --kind Kind.version.group):`);
        const given = flags.kind === undefined ? undefined : await parseKind(client, flags.kind);
        const res = await rollbackHelmRelease(client, { release: { name: release, namespace: flags.namespace }, kindOf, ...(given === undefined ? {} : { kind: given }), systemNamespace: flags.systemNamespace, acceptConfig: flags.acceptConfig === true, dryRun: flags.dryRun === true, logger: ctx.logger, ...(toRevision === undefined ? {} : { toRevision }) });
        const kind = res.kind;
        const chart = res.to.chart.version === res.from.chart.version ? '' : ` (revision ${res.to.revision} was made from chart ${res.to.chart.name} ${res.to.chart.version}; the chart stays the HelmOperator's, ${res.from.chart.version} at revision ${res.from.revision})`;
        const accepted = res.values === 'config' ? " (Helm's config for that revision, accepted with --accept-config)" : '';
        if (flags.dryRun === true) {
          ctx.err(`• ${kind.kind} ${flags.namespace}/${release}: its spec would be set to revision ${res.to.revision}'s values${chart}; nothing written (--dry-run)\n`);
          ctx.out(`${JSON.stringify(res.spec, null, 2)}\n`);
          return;
        }
        ctx.err(`• ${kind.kind} ${flags.namespace}/${release}: spec set to revision ${res.to.revision}'s values${chart}\n`);
        ctx.err(`• spec written: ${JSON.stringify(res.spec)}${accepted}\n`);
        ctx.out(`release ${flags.namespace}/${release} rolling back from revision ${res.from.revision} to revision ${res.to.revision}'s values: the manager makes the next revision\n`);
      });
    });
  registerHelmBundleCommand(helm, ctx);
  registerHelmReleaseCommand(helm, ctx);
}

/** A local chart path as it is; an oci:// or repository chart fetched into the cache first. */
async function localChart(arg: string, flags: { repo?: string; version?: string; plainHttp?: boolean }): Promise<string> {
  if (flags.repo === undefined && !arg.startsWith('oci://')) return arg;
  const { parseChartRef, fetchChart } = await import('../../helm/chart-source/index.js');
  const { cacheDir } = await import('../../cluster/layout.js');
  const ref = parseChartRef(arg, { ...(flags.repo === undefined ? {} : { repo: flags.repo }), ...(flags.version === undefined ? {} : { version: flags.version }), ...(flags.plainHttp === true ? { insecure: true } : {}) });
  return (await fetchChart(ref, { cacheDir: join(cacheDir(), 'charts') })).path;
}

/** `Kind.version.group` (kubectl's form), or `Kind` when one HelmOperator serves that kind. */
async function parseKind(client: import('../../kube/client.js').KubeClient, s: string, flag = '--kind'): Promise<{ group: string; version: string; kind: string }> {
  const parts = s.split('.');
  if (parts.length >= 3 && parts[0] !== undefined && parts[1] !== undefined) return { kind: parts[0], version: parts[1], group: parts.slice(2).join('.') };
  const { API_VERSION } = await import('../../api/types.js');
  const hops = await client.list<import('../../api/types.js').HelmOperator>(API_VERSION, 'HelmOperator').catch(() => ({ items: [] }));
  const found = hops.items.flatMap((h) => h.spec.kinds).filter((k) => k.kind === s);
  const only = found[0];
  if (found.length !== 1 || only === undefined) throw new UsageError(`${flag} ${s}: ${found.length === 0 ? 'no HelmOperator serves it' : 'several HelmOperators serve it'}; give it as Kind.version.group`);
  return { kind: only.kind, version: only.version, group: only.group };
}

export function valueOptions(flags: TemplateFlags): { valueFiles?: string[]; set?: string[]; setString?: string[]; setFile?: string[]; setJson?: string[]; setLiteral?: string[] } {
  return definedFields({ valueFiles: flags.values, set: flags.set, setString: flags.setString, setFile: flags.setFile, setJson: flags.setJson, setLiteral: flags.setLiteral });
}
