/**
 * `binnacle install | upgrade | uninstall | status | rollback`: the Operator API from the
 * command line. Each writes a ClusterExtension (the manager does the work) and, with --wait,
 * follows its conditions until the install settles.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { olmv1TwinOf } from '../../api/olmv1/twin.js';
import { OLMV1_API_VERSION } from '../../api/olmv1/types.js';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../../api/types.js';
import { buildInstalledState, describeNeeds, unitsNeededBy, type InstalledState } from '../../installed/index.js';
import type { KubeClient } from '../../kube/client.js';
import { findCondition, type Condition } from '../../kube/types.js';
import { BinnacleError, UsageError } from '../../util/errors.js';
import { toJson, toYaml } from '../../util/output.js';
import { printData, type CliContext } from '../context.js';
import { collect, outputOption, parseDuration } from '../flags.js';
import { addKubeFlags, withCluster, type KubeFlags } from '../kube.js';
import { extensionSpecRef } from '../../actions/extension-ref.js';

interface InstallFlags extends KubeFlags {
  name?: string;
  namespace?: string;
  serviceAccount?: string;
  createServiceAccount?: boolean;
  channel?: string[];
  version?: string;
  policy?: string;
  watchNamespace?: string;
  config?: string;
  catalogSelector?: string[];
  keepFailed?: boolean;
  wait?: boolean;
  timeout: number;
  output: string;
}


function policyOf(v: string | undefined): 'CatalogProvided' | 'SelfCertified' | undefined {
  if (v === undefined) return undefined;
  if (v === 'CatalogProvided' || v === 'SelfCertified') return v;
  throw new UsageError(`--policy ${v}: expected CatalogProvided or SelfCertified`);
}

function ceRef(name: string): { apiVersion: string; kind: string; name: string } {
  return { apiVersion: API_VERSION, kind: 'ClusterExtension', name };
}

/** A ServiceAccount allowed to install anything: convenient for development, said out loud. */
async function createInstaller(client: KubeClient, namespace: string, name: string, ctx: CliContext): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  await client.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `binnacle-installer-${namespace}-${name}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
  ctx.err(`• created ServiceAccount ${namespace}/${name} bound to cluster-admin (--create-service-account)\n`);
}

function conditionLine(c: Condition): string {
  return `${c.type}=${c.status} (${c.reason})${c.message === '' ? '' : `: ${c.message}`}`;
}

/** Follows the extension's conditions until Installed is settled for the current generation. */
async function waitForInstall(client: KubeClient, name: string, timeoutMs: number, ctx: CliContext): Promise<ClusterExtension> {
  const deadline = Date.now() + timeoutMs;
  const seen = new Set<string>();
  for (;;) {
    const ce = await client.get<ClusterExtension>(ceRef(name));
    // Conditions of an older generation say nothing about this install.
    const current = ce.status?.observedGeneration === ce.metadata.generation;
    if (current) {
      printNewConditions(ce, seen, ctx);
      if (installSettled(ce, name)) return ce;
    }
    if (Date.now() > deadline) throw installTimeout(ce, name, timeoutMs);
    await sleep(500);
  }
}

/** Prints each Installed and Progressing condition not printed before. */
function printNewConditions(ce: ClusterExtension, seen: Set<string>, ctx: CliContext): void {
  for (const c of ce.status?.conditions ?? []) {
    const line = conditionLine(c);
    if (!seen.has(line) && ['Installed', 'Progressing'].includes(c.type)) {
      seen.add(line);
      ctx.err(`• ${line}\n`);
    }
  }
}

/** Installed and no longer progressing; throws when progress stopped short of success. */
function installSettled(ce: ClusterExtension, name: string): boolean {
  const installed = findCondition(ce.status?.conditions, 'Installed');
  const progressing = findCondition(ce.status?.conditions, 'Progressing');
  if (installed?.status === 'True' && progressing?.status === 'False') return true;
  if (progressing?.status === 'False' && progressing.reason !== 'Succeeded') {
    throw new BinnacleError('terminal', 'INSTALL_BLOCKED', `${name}: ${progressing.message}`);
  }
  return false;
}

function installTimeout(ce: ClusterExtension, name: string, timeoutMs: number): BinnacleError {
  const why = findCondition(ce.status?.conditions, 'Progressing')?.message ?? findCondition(ce.status?.conditions, 'Installed')?.message ?? 'no status yet (is `binnacle manager` running?)';
  return new BinnacleError('transient', 'INSTALL_TIMEOUT', `${name} did not finish within ${timeoutMs / 1000}s: ${why}`);
}

async function installedState(client: KubeClient): Promise<InstalledState> {
  const [bds, ces] = await Promise.all([client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'), client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')]);
  return buildInstalledState(bds.items, ces.items);
}

async function printInstalled(ctx: CliContext, client: KubeClient, ce: ClusterExtension, format: string): Promise<void> {
  if (format === 'json') ctx.out(toJson(summary(ce, await installedState(client))));
  else if (format === 'yaml') ctx.out(toYaml(summary(ce, await installedState(client))));
  else ctx.out(`installed ${ce.status?.install?.bundle.name ?? ''} (${ce.status?.install?.bundle.version ?? ''}) in ${ce.status?.install?.namespace ?? ce.spec.namespace}\n`);
}

/** The BundleDeployments an extension needs, each with who else needs it. */
function bundlesOf(state: InstalledState, name: string): { bundleDeployment: string; package: string; version: string; namespace: string; revision: number | null; installed: string; neededBy: string; shared: boolean }[] {
  return unitsNeededBy(state, name).map((u) => ({
    bundleDeployment: u.bundleDeployment,
    package: u.package,
    version: u.version,
    namespace: u.namespace,
    revision: u.object.status?.revision ?? null,
    installed: findCondition(u.object.status?.conditions, 'Installed')?.status ?? 'Unknown',
    neededBy: describeNeeds(u.needs),
    shared: u.needs.some((n) => n.extension !== name),
  }));
}

function summary(ce: ClusterExtension, state: InstalledState): Record<string, unknown> {
  return {
    name: ce.metadata.name,
    package: ce.spec.source.catalog.packageName,
    namespace: ce.spec.namespace,
    installed: ce.status?.install?.bundle ?? null,
    resolution: ce.status?.resolution ?? null,
    bundles: bundlesOf(state, ce.metadata.name ?? ''),
    conditions: ce.status?.conditions ?? [],
  };
}

/** The `--config` file: one YAML mapping, read as kubectl reads YAML (see util/yaml.ts); errors name the flag. */
export async function readConfigFlag(file: string): Promise<Record<string, unknown>> {
  const { readYaml, YamlError } = await import('../../util/yaml.js');
  let parsed: unknown;
  try {
    parsed = readYaml(readFileSync(file, 'utf8'), `--config ${file}`);
  } catch (err) {
    throw new UsageError(err instanceof YamlError ? err.message : `--config ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`--config ${file}: expected a YAML mapping`);
  return parsed as Record<string, unknown>;
}

/** The twin of an OLM v1 ClusterExtension (controllers/cluster-olmv1-twin.ts) says which object the user wrote; others (a label alone included), nothing. */
export function servedAsLine(ce: ClusterExtension): string {
  return olmv1TwinOf(ce) === undefined ? '' : `API:        ${OLMV1_API_VERSION} ClusterExtension ${ce.metadata.name ?? ''} (Binnacle reconciles it as this binnacle.dev twin)\n`;
}

export function registerOperatorCommands(program: Command, ctx: CliContext): void {
  addKubeFlags(program.command('install <package>'))
    .description('Install an operator from the served catalogs (creates a ClusterExtension)')
    .option('--name <name>', 'ClusterExtension name (default: the package name)')
    .option('-n, --namespace <ns>', 'install namespace (default: the package name)')
    .option('--service-account <name>', 'ServiceAccount in the install namespace whose permissions the install uses (default: <name>-installer)')
    .option('--create-service-account', 'create that ServiceAccount bound to cluster-admin (development)')
    .option('--channel <channel>', 'channel to install from (repeatable)', collect)
    .option('--version <range>', 'version range, e.g. ">=1.2 <2", "~1.4", "1.2.3"')
    .option('--policy <policy>', 'upgrade policy: CatalogProvided (follow upgrade edges) or SelfCertified (any version)')
    .option('--watch-namespace <ns>', 'namespace(s) the operator watches, comma-separated (default: its install modes decide)')
    .option('--config <file>', 'YAML with deployment overrides (env, resources, tolerations, nodeSelector, …)')
    .option('--catalog-selector <key=value>', 'only catalogs with this label (repeatable)', collect)
    .option('--keep-failed', 'keep a failed first install for debugging (by default it is removed, as helm install --atomic does)')
    .option('--wait', 'wait until installed, printing progress')
    .option('--timeout <duration>', 'how long --wait waits (e.g. 300s, 5m)', parseDuration, 300_000)
    .addOption(outputOption(['text', 'json', 'yaml'], 'text'))
    .action(async (pkg: string, flags: InstallFlags) => {
      await withCluster(flags, async (client) => {
        const name = flags.name ?? pkg;
        const namespace = flags.namespace ?? pkg;
        const sa = flags.serviceAccount ?? `${name}-installer`;
        const catalog: ClusterExtension['spec']['source']['catalog'] = { packageName: pkg };
        if (flags.channel !== undefined) catalog.channels = flags.channel;
        if (flags.version !== undefined) catalog.version = flags.version;
        const policy = policyOf(flags.policy);
        if (policy !== undefined) catalog.upgradeConstraintPolicy = policy;
        if (flags.catalogSelector !== undefined) {
          const matchLabels: Record<string, string> = {};
          for (const kv of flags.catalogSelector) {
            const [k, v] = kv.split('=');
            if (k === undefined || v === undefined || k === '') throw new UsageError(`--catalog-selector ${kv}: expected key=value`);
            matchLabels[k] = v;
          }
          catalog.selector = { matchLabels };
        }
        const install: NonNullable<ClusterExtension['spec']['install']> = {};
        if (flags.watchNamespace !== undefined) {
          const list = flags.watchNamespace.split(',').map((n) => n.trim()).filter((n) => n !== '');
          if (list.length > 1) install.watchNamespaces = list;
          else install.watchNamespace = flags.watchNamespace;
        }
        if (flags.config !== undefined) install.config = await readConfigFlag(flags.config);
        if (flags.keepFailed === true) install.keepFailedInstall = true;
        await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
        if (flags.createServiceAccount === true) await createInstaller(client, namespace, sa, ctx);
        else if ((await client.find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: sa })) === undefined) {
          throw new BinnacleError('input', 'SERVICE_ACCOUNT_MISSING', `ServiceAccount ${namespace}/${sa} does not exist: create it with the permissions the operator needs, or pass --create-service-account`);
        }
        const spec: ClusterExtension['spec'] = { namespace, serviceAccount: { name: sa }, source: { sourceType: 'Catalog', catalog } };
        if (Object.keys(install).length > 0) spec.install = install;
        await client.apply({ apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name }, spec }, { force: true });
        ctx.err(`• ClusterExtension ${name} applied (package ${pkg}, namespace ${namespace})\n`);
        if (flags.wait === true) {
          const ce = await waitForInstall(client, name, flags.timeout, ctx);
          await printInstalled(ctx, client, ce, flags.output);
        }
      });
    });

  addKubeFlags(program.command('upgrade <name>'))
    .description('Change what an installed operator should run: version range, channels, policy')
    .option('--version <range>', 'new version range ("" removes it)')
    .option('--channel <channel>', 'channels (repeatable; replaces the list)', collect)
    .option('--policy <policy>', 'CatalogProvided or SelfCertified')
    .option('--wait', 'wait until installed')
    .option('--timeout <duration>', 'how long --wait waits (e.g. 300s, 5m)', parseDuration, 300_000)
    .action(async (name: string, flags: KubeFlags & { version?: string; channel?: string[]; policy?: string; wait?: boolean; timeout: number }) => {
      await withCluster(flags, async (client) => {
        const catalog: Record<string, unknown> = {};
        if (flags.version !== undefined) catalog.version = flags.version === '' ? null : flags.version;
        if (flags.channel !== undefined) catalog.channels = flags.channel;
        const policy = policyOf(flags.policy);
        if (policy !== undefined) catalog.upgradeConstraintPolicy = policy;
        if (Object.keys(catalog).length === 0) throw new UsageError('nothing to change: give --version, --channel or --policy');
        // Refused for a PlatformOperator's extension; for an OLM v1 ClusterExtension's twin, the OLM v1 object.
        await client.patch(await extensionSpecRef(client, name), { spec: { source: { catalog } } });
        ctx.err(`• ClusterExtension ${name} updated\n`);
        if (flags.wait === true) {
          const ce = await waitForInstall(client, name, flags.timeout, ctx);
          ctx.out(`installed ${ce.status?.install?.bundle.name ?? ''} (${ce.status?.install?.bundle.version ?? ''})\n`);
        }
      });
    });

  addKubeFlags(program.command('uninstall <name>'))
    .description('Remove an operator and everything its resolution installed')
    .option('--wait', 'wait until everything is gone')
    .option('--timeout <duration>', 'how long --wait waits (e.g. 300s, 5m)', parseDuration, 300_000)
    .action(async (name: string, flags: KubeFlags & { wait?: boolean; timeout: number }) => {
      await withCluster(flags, async (client) => {
        // Refused for a PlatformOperator's extension; for an OLM v1 ClusterExtension's twin, the OLM v1 object.
        const existed = await client.delete(await extensionSpecRef(client, name));
        if (!existed) throw new BinnacleError('input', 'NOT_FOUND', `ClusterExtension ${name} does not exist`);
        ctx.err(`• ClusterExtension ${name} deleted\n`);
        if (flags.wait === true) {
          const deadline = Date.now() + flags.timeout;
          while ((await client.find(ceRef(name))) !== undefined) {
            if (Date.now() > deadline) throw new BinnacleError('transient', 'UNINSTALL_TIMEOUT', `${name} is still being removed after ${flags.timeout / 1000}s`);
            await sleep(500);
          }
          ctx.err('• everything it installed is gone\n');
        }
      });
    });

  addKubeFlags(program.command('status [name]'))
    .description('Show installed operators, or one in detail')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (name: string | undefined, flags: KubeFlags & { output: string }) => {
      await withCluster(flags, async (client) => {
        const all = (await client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')).items;
        const list = name === undefined ? all : [await client.get<ClusterExtension>(ceRef(name))];
        // Who needs what is recorded on the BundleDeployments: one view of the whole cluster.
        const state = buildInstalledState((await client.list<BundleDeployment>(API_VERSION, 'BundleDeployment')).items, all);
        const rows = list.map((ce) => statusRow(ce, state));
        if (name !== undefined && flags.output === 'table') {
          const ce = list[0];
          if (ce !== undefined) printStatusDetail(ctx, ce, name, state);
          return;
        }
        printData(ctx, flags.output, { value: list.map((ce) => summary(ce, state)), headers: ['name', 'package', 'version', 'installed', 'progressing', 'dependencies', 'message'], rows });
      });
    });

  addKubeFlags(program.command('rollback <name>'))
    .description('Go back to the version installed before the current one (pins it; upgrade lifts the pin)')
    .option('--to-version <version>', 'a specific earlier version')
    .option('--wait', 'wait until installed')
    .option('--timeout <duration>', 'how long --wait waits (e.g. 300s, 5m)', parseDuration, 300_000)
    .action(async (name: string, flags: KubeFlags & { toVersion?: string; wait?: boolean; timeout: number }) => {
      await withCluster(flags, async (client) => {
        const { rollbackExtension } = await import('../../actions/release-history.js');
        const said = await rollbackImpact(client, name, flags.toVersion);
        const { from, to } = await rollbackExtension(client, name, flags.toVersion);
        ctx.err(`• ${name}: rolling back from ${from} to ${to}\n`);
        ctx.out(said.map((l) => `${l}\n`).join(''));
        if (flags.wait === true) {
          const after = await waitForInstall(client, name, flags.timeout, ctx);
          ctx.out(`installed ${after.status?.install?.bundle.name ?? ''} (${after.status?.install?.bundle.version ?? ''})\n`);
        }
      });
    });
}

/** One extension's row in the `status` table. */
function statusRow(ce: ClusterExtension, state: InstalledState): string[] {
  const installed = findCondition(ce.status?.conditions, 'Installed');
  const progressing = findCondition(ce.status?.conditions, 'Progressing');
  const deps = bundlesOf(state, ce.metadata.name ?? '').filter((b) => b.package !== ce.spec.source.catalog.packageName);
  return [
    ce.metadata.name ?? '',
    ce.spec.source.catalog.packageName,
    ce.status?.install?.bundle.version ?? '',
    installed?.status ?? 'Unknown',
    progressing?.status ?? 'Unknown',
    deps.map((d) => `${d.package}${d.shared ? ' (shared)' : ''}`).join(', '),
    (progressing?.status === 'True' ? progressing.message : installed?.message ?? '').split('\n')[0] ?? '',
  ];
}

/** `status <name>` as a table: the extension, its conditions, its resolution and the bundles it needs. */
function printStatusDetail(ctx: CliContext, ce: ClusterExtension, name: string, state: InstalledState): void {
  const where = ce.status?.install?.namespace;
  ctx.out(`Name:       ${name}\nPackage:    ${ce.spec.source.catalog.packageName}\nNamespace:  ${ce.spec.namespace}${where !== undefined && where !== ce.spec.namespace ? ` (it runs in ${where})` : ''}\nInstalled:  ${ce.status?.install?.bundle.name ?? '(none)'}\n`);
  ctx.out(servedAsLine(ce));
  ctx.out('Conditions:\n');
  for (const c of ce.status?.conditions ?? []) ctx.out(`  ${conditionLine(c)}\n`);
  if (ce.status?.resolution?.explanation !== undefined) ctx.out(`Resolution:\n  ${ce.status.resolution.explanation.replace(/\n/g, '\n  ')}\n`);
  for (const n of ce.status?.resolution?.notices ?? []) ctx.out(`Notice:     ${n}\n`);
  ctx.out('Bundles:\n');
  for (const b of bundlesOf(state, name)) {
    ctx.out(`  ${b.bundleDeployment}  ${b.package} ${b.version}  namespace ${b.namespace}  revision ${b.revision ?? '-'}  Installed=${b.installed}  ${b.neededBy}\n`);
  }
}

/**
 * What going back does to the CRDs and to custom resources written against the current
 * version, in sentences. An explicit version the history does not have cannot be compared.
 */
async function rollbackImpact(client: KubeClient, name: string, toVersion: string | undefined): Promise<string[]> {
  const [{ rollbackPreview }, { describeRollback }] = await Promise.all([import('../../actions/release-history.js'), import('../../actions/rollback-impact.js')]);
  const preview = await rollbackPreview(client, name, toVersion).catch((err: unknown) => {
    if (toVersion !== undefined && err instanceof BinnacleError && err.code === 'NO_EARLIER_VERSION') return undefined;
    throw err;
  });
  if (preview === undefined) return [`${name}: ${toVersion ?? ''} was never installed here, so what going back does to custom resources cannot be said before it is tried`];
  const lines = [`${name}: going back from ${preview.from} to ${preview.to} (revision ${preview.revision} of release ${preview.namespace}/${preview.release})`];
  lines.push(...describeRollback(preview.from, preview.to, preview.customResources));
  if (preview.crdProblems.length > 0) lines.push(`CRD upgrade safety refuses going back${preview.dataAtRisk ? ' (stored objects would be left unreadable)' : ''}:`, ...preview.crdProblems.map((p) => `  ${p.crd}: [${p.rule}] ${p.message}`));
  else if (preview.customResources.length === 0) lines.push('  no CRD field changes: custom resources are reconciled by the older version as they are');
  return lines;
}
