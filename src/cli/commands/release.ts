/**
 * `binnacle release apply|history|rollback|uninstall`: the applier on its own, for objects
 * already rendered into YAML. Revisions are Helm release records, so `helm list` sees them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { ActionConfig, ApplyResult, Owner, ReleaseRef } from '../../apply/index.js';
import { describeRef, isKubeObject, type KubeObject } from '../../kube/types.js';
import { BinnacleError, InputError, UsageError } from '../../util/errors.js';
import { printData, type CliContext } from '../context.js';
import { outputOption, parseDuration, parsePositiveInt } from '../flags.js';
import { clientFor } from '../kube.js';

interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
  namespace: string;
  output: string;
}

function parseOwner(value: string): Owner {
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) throw new UsageError(`--owner ${value}: expected Kind/name, e.g. ClusterExtension/my-operator`);
  return { kind: value.slice(0, slash), name: value.slice(slash + 1) };
}

function parseChart(value: string): { name: string; version: string } {
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) throw new UsageError(`--chart ${value}: expected name@version`);
  return { name: value.slice(0, at), version: value.slice(at + 1) };
}

/**
 * Every object in a YAML file, or in the .yaml/.yml/.json files of a directory (sorted); YAML is
 * read as kubectl reads it (aliases included: see util/yaml.ts), errors name the file and document.
 */
export async function readObjects(path: string): Promise<KubeObject[]> {
  const { readYamlAll } = await import('../../util/yaml.js');
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((f) => /\.(ya?ml|json)$/.test(f))
          .sort()
          .map((f) => join(path, f))
      : [path];
  } catch (err) {
    throw new InputError('FILE_UNREADABLE', `cannot read: ${err instanceof Error ? err.message : String(err)}`, { file: path, cause: err });
  }
  const out: KubeObject[] = [];
  for (const file of files) {
    readYamlAll(readFileSync(file, 'utf8'), file).forEach((value, i) => {
      if (value === null || value === undefined) return;
      if (!isKubeObject(value)) throw new InputError('OBJECT_INVALID', 'not a Kubernetes object: needs apiVersion, kind and metadata', { file, field: `document ${i + 1}` });
      out.push(value);
    });
  }
  return out;
}

/**
 * Runs `fn` with the release engine's configuration for release `name`: acting as the kubeconfig's
 * user, whose own Helm records in the release namespace are the history (as `helm` keeps it).
 */
async function withRelease<T>(flags: ClusterFlags, name: string, ctx: CliContext, fn: (cfg: ActionConfig, engine: typeof import('../../apply/index.js')) => Promise<T>): Promise<T> {
  const [client, engine, { OpenApiSchemas }] = await Promise.all([clientFor(flags), import('../../apply/index.js'), import('../../kube/openapi.js')]);
  try {
    const history = new engine.ReleaseStore(client).bind({ name, namespace: flags.namespace });
    return await fn(engine.actionConfig({ client, history, logger: ctx.logger, schemas: new OpenApiSchemas(client) }), engine);
  } finally {
    client.close();
  }
}

function printResult(ctx: CliContext, format: string, res: ApplyResult): void {
  printData(ctx, format, {
    value: res,
    headers: ['object', 'action', 'healthy', 'reason'],
    rows: [
      ...res.health.objects.map((o) => [describeRef(o.ref), 'applied', o.healthy ? 'yes' : 'no', o.reason]),
      ...res.pruned.map((r) => [describeRef(r), 'pruned', '', '']),
      ...(res.skipped ?? []).map((s) => [describeRef(s.object), 'skipped', '', s.reason]),
    ],
  });
  for (const d of res.droppedFields ?? []) {
    ctx.err(`warning: ${describeRef(d.object)}: ${d.path} is not declared by ${d.schema}; ${d.renamedTo === undefined ? 'dropped' : `applied as ${d.renamedTo}`}\n`);
  }
  ctx.err(`revision ${res.revision}: ${res.status}: ${res.message}\n`);
  if (res.status !== 'deployed') throw new BinnacleError('terminal', `APPLY_${res.status.toUpperCase().replace('-', '_')}`, `release not deployed: ${res.message}`);
}

export function registerReleaseCommands(program: Command, ctx: CliContext): void {
  const release = program.command('release').description('Apply rendered objects as a Helm-compatible release: phases, ownership, pruning, CRD safety, health, rollback');
  const withCluster = (c: Command): Command =>
    c
      .requiredOption('-n, --namespace <ns>', 'release namespace (where its records live)')
      .addOption(outputOption(['table', 'json', 'yaml'], 'table'));

  withCluster(release.command('apply <name>'))
    .description('Install or upgrade release <name> with the objects in -f')
    .requiredOption('-f, --filename <path>', 'YAML file or directory of objects')
    .requiredOption('--owner <Kind/name>', 'the owner recorded on every object')
    .option('--chart <name@version>', 'chart name and version shown by helm')
    .option('--adopt', 'take over objects that exist but are not ours')
    .option('--no-auto-rollback', 'leave a failed upgrade in place instead of rolling back')
    .option('--force', "replace objects whose change the API server refuses as immutable (delete and re-create them), as helm's --force; never CRDs, namespaces or volumes")
    .option('--keep-failed', 'keep a failed first install for debugging instead of removing it')
    .option('--no-wait', 'do not wait for health')
    .option('--health-timeout <duration>', 'how long to wait for health (e.g. 300s, 5m)', parseDuration, 300_000)
    .action(async (name: string, flags: ClusterFlags & { filename: string; owner: string; chart?: string; adopt?: boolean; force?: boolean; autoRollback: boolean; keepFailed?: boolean; wait: boolean; healthTimeout: number }) => {
      const owner = parseOwner(flags.owner);
      const healthTimeoutMs = flags.healthTimeout;
      const objects = await readObjects(flags.filename);
      const ref: ReleaseRef = { name, namespace: flags.namespace };
      const res = await withRelease(flags, name, ctx, (cfg, engine) =>
        engine.applyRelease(cfg, {
          owner,
          release: ref,
          objects,
          ...(flags.chart === undefined ? {} : { chart: parseChart(flags.chart) }),
          adopt: flags.adopt === true,
          force: flags.force === true,
          rollbackForce: flags.force === true,
          autoRollback: flags.autoRollback,
          keepFailedInstall: flags.keepFailed === true,
          waitForHealth: flags.wait,
          healthTimeoutMs,
        }),
      );
      printResult(ctx, flags.output, res);
    });

  withCluster(release.command('history <name>'))
    .description('List the revisions of release <name>, as `helm history` does')
    .action(async (name: string, flags: ClusterFlags) => {
      const history = await withRelease(flags, name, ctx, async (cfg) => (await cfg.history.read()).revisions);
      if (history.length === 0) throw new BinnacleError('input', 'RELEASE_NOT_FOUND', `release ${flags.namespace}/${name} has no revisions`);
      printData(ctx, flags.output, {
        value: history.map(({ manifest: _manifest, ...rest }) => rest),
        headers: ['revision', 'updated', 'status', 'chart', 'app version', 'description'],
        rows: history.map((r) => [String(r.revision), r.lastDeployed, r.status, `${r.chart.name}-${r.chart.version}`, r.chart.appVersion ?? '', r.description]),
      });
    });

  withCluster(release.command('rollback <name>'))
    .description('Re-apply an earlier good revision of release <name> as a new revision')
    .option('--to <revision>', 'revision to roll back to (default: the last good one before the current)', parsePositiveInt)
    .option('--force', 'replace objects whose change the API server refuses as immutable (delete and re-create them), as helm rollback --force')
    .option('--health-timeout <duration>', 'how long to wait for health (e.g. 300s, 5m)', parseDuration, 300_000)
    .action(async (name: string, flags: ClusterFlags & { to?: number; force?: boolean; healthTimeout: number }) => {
      const to = flags.to;
      const healthTimeoutMs = flags.healthTimeout;
      const res = await withRelease(flags, name, ctx, async (cfg, engine) => {
        // A Helm operator's custom resource (a namespaced owner) is the release's desired state: an old
        // manifest applied behind it would be put back by the manager's next reconcile.
        const owner = (await cfg.history.read()).revisions.at(-1)?.owner;
        if (owner?.namespace !== undefined) {
          throw new BinnacleError('input', 'RELEASE_HELD_BY_RESOURCE', `release ${flags.namespace}/${name} is held by ${owner.kind} ${owner.namespace}/${owner.name}, whose spec the manager renders: roll it back with \`binnacle helm rollback ${name} -n ${flags.namespace}\`, which writes that spec`);
        }
        return engine.rollback(cfg, { release: { name, namespace: flags.namespace }, ...(to === undefined ? {} : { toRevision: to }), healthTimeoutMs, force: flags.force === true });
      });
      printResult(ctx, flags.output, res);
    });

  withCluster(release.command('uninstall <name>'))
    .description('Delete every object of release <name> (CRDs last, and with them their custom resources) and its records')
    .requiredOption('--owner <Kind/name>', 'the owner the release belongs to')
    .action(async (name: string, flags: ClusterFlags & { owner: string }) => {
      const owner = parseOwner(flags.owner);
      const res = await withRelease(flags, name, ctx, (cfg, engine) => engine.uninstall(cfg, { owner, release: { name, namespace: flags.namespace } }));
      printData(ctx, flags.output, { value: res, headers: ['deleted'], rows: res.deleted.map((r) => [describeRef(r)]) });
    });
}
