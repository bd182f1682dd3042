/**
 * `binnacle helm …`: Helm charts through Helm's own engine (src/helm). `helm template` prints
 * exactly what the `helm` CLI of the same version prints for the same arguments; on failure
 * it exits 1 with Helm's error text. The engine is loaded only when a helm command runs.
 */
import type { Command } from 'commander';
import { UsageError } from '../../util/errors.js';
import type { CliContext } from '../context.js';

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];
/** StringSlice flags (`-a a,b -a c`), as Helm's pflag parses them. */
const collectSlice = (v: string, prev: string[] = []): string[] => [...prev, ...v.split(',').filter((s) => s !== '')];

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
    .action(async (args: string[], flags: TemplateFlags) => {
      if (args.length > 2) throw new UsageError(`helm template takes [NAME] CHART, got ${args.length} arguments`);
      const [name, chart] = args.length === 2 ? [args[0], args[1]] : ['release-name', args[0]];
      if (chart === undefined || name === undefined) throw new UsageError('helm template needs a CHART');
      const { helmEngine } = await import('../../helm/engine.js');
      const res = await helmEngine().render({
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
      });
      ctx.out(res.output);
    });
}

export function valueOptions(flags: TemplateFlags): { valueFiles?: string[]; set?: string[]; setString?: string[]; setFile?: string[]; setJson?: string[]; setLiteral?: string[] } {
  return {
    ...(flags.values === undefined ? {} : { valueFiles: flags.values }),
    ...(flags.set === undefined ? {} : { set: flags.set }),
    ...(flags.setString === undefined ? {} : { setString: flags.setString }),
    ...(flags.setFile === undefined ? {} : { setFile: flags.setFile }),
    ...(flags.setJson === undefined ? {} : { setJson: flags.setJson }),
    ...(flags.setLiteral === undefined ? {} : { setLiteral: flags.setLiteral }),
  };
}
