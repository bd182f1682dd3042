/**
 * `binnacle helm bundle CHART --kind Kind[=charts/sub]... --output-dir DIR`: a Helm chart as an
 * installable operator, a `registry+v1` bundle whose operator is Binnacle's Helm operator
 * (see src/helm/bundle). Prints where each piece went and what was derived: kinds and their
 * CRDs, required APIs, RBAC, related images, and the validators' warnings.
 */
import type { Command } from 'commander';
import { definedFields } from '../../util/object.js';
import { toJson } from '../../util/output.js';
import type { CliContext } from '../context.js';
import { collect, collectSlice, outputOption, withFlagNames } from '../flags.js';

/** The options of generateBundle that helm bundle passes on, as its flags. */
const HELM_BUNDLE_FLAGS = { version: '--version', channels: '--channels', defaultChannel: '--default-channel' };

/** The flags that say how a chart becomes a bundle, which `helm bundle` and `helm release` share. */
export interface BundleFlags {
  group?: string;
  crdVersion?: string;
  image?: string;
  apiVersions?: string[];
  kubeVersion?: string;
  icon?: string;
}

/** Adds the BundleFlags to `c`. */
export function addBundleFlags(c: Command): Command {
  return c
    .option('--group <group>', 'API group of the kinds (default: <chart>.helm.binnacle.dev); keep it from one release to the next')
    .option('--crd-version <v>', 'API version of the kinds', 'v1alpha1')
    .option('--image <ref>', "Binnacle's image, which runs the operator (default: ghcr.io/binnacle-dev/binnacle:<this version>)")
    .option('-a, --api-versions <list>', 'more API versions for the render RBAC comes from (repeatable, comma-separated)', collectSlice)
    .option('--kube-version <v>', 'Kubernetes version for Capabilities.KubeVersion while rendering')
    .option('--icon <file>', 'icon for the CSV (.png, .jpg, .gif, .svg); Chart.yaml icons that are links are not fetched');
}

/** The BundleFlags given, as helmBundle's options. */
export function bundleOptionsOf(f: BundleFlags): { [K in keyof BundleFlags]?: Exclude<BundleFlags[K], undefined> } {
  return definedFields({ group: f.group, crdVersion: f.crdVersion, image: f.image, apiVersions: f.apiVersions, kubeVersion: f.kubeVersion, icon: f.icon });
}

interface Flags extends BundleFlags {
  kind: string[];
  outputDir: string;
  output: 'text' | 'json';
  version?: string;
  package?: string;
  channels?: string[];
  defaultChannel?: string;
  replaces?: string;
  skipRange?: string;
}

export function registerHelmBundleCommand(helm: Command, ctx: CliContext): void {
  addBundleFlags(helm.command('bundle <chart>'))
    .description("Write a registry+v1 bundle that installs CHART as an operator: one custom resource kind per --kind, served by Binnacle's Helm operator (no image to build)")
    .requiredOption('--kind <Kind[=charts/sub]>', 'a kind the chart serves; Kind=charts/sub for a subchart (repeatable)', collect)
    .requiredOption('--output-dir <dir>', 'bundle directory to write (its manifests/ and metadata/ are replaced)')
    .option('--version <semver>', "the bundle's version (default: the chart's version)")
    .option('--package <name>', "package name (default: the chart's name)")
    .option('--channels <list>', 'channels of the bundle (comma-separated)', collectSlice)
    .option('--default-channel <name>', 'default channel (default: the first of --channels)')
    .option('--replaces <csv>', 'the CSV this version replaces (spec.replaces)')
    .option('--skip-range <range>', 'versions this one upgrades from (olm.skipRange), e.g. "<1.2.0"')
    .addOption(outputOption(['text', 'json'], 'text'))
    .action(withFlagNames(HELM_BUNDLE_FLAGS, async (chart: string, f: Flags) => {
      const [{ helmBundle }, { createRenderer }] = await Promise.all([import('../../helm/bundle/index.js'), import('../../render/index.js')]);
      const res = await helmBundle({
        chart,
        // The chart's renders (RBAC, CRDs) go through the renderer's caching engine.
        engine: createRenderer().engine,
        kinds: f.kind,
        outputDir: f.outputDir,
        ...bundleOptionsOf(f),
        ...definedFields({
          version: f.version,
          packageName: f.package,
          channels: f.channels,
          defaultChannel: f.defaultChannel,
          replaces: f.replaces,
          skipRange: f.skipRange,
        }),
      });
      if (f.output === 'json') {
        ctx.out(
          toJson({
            dir: res.dir,
            csv: res.csvName,
            package: res.packageName,
            version: res.version,
            image: res.image,
            files: res.files,
            kinds: res.kinds.map((k) => ({ group: k.group, version: k.version, kind: k.kind, plural: k.plural, chart: k.chart, archive: `charts/${k.archive}`, schema: k.schemaSource, schemaWarnings: k.schemaWarnings.length })),
            required: res.required,
            notRequired: res.notRequired,
            permissions: res.rbac.permissions,
            clusterPermissions: res.rbac.clusterPermissions,
            relatedImages: res.relatedImages,
            notes: res.notes,
            warnings: res.validation.warnings(),
          }),
        );
        return;
      }
      const lines = [`wrote ${res.csvName} (package ${res.packageName}) to ${res.dir}`, ...res.files.map((file) => `  ${file}`), 'kinds (served by binnacle helm-operator run from the ConfigMap):'];
      for (const k of res.kinds) {
        lines.push(`  ${k.kind}.${k.version}.${k.group}  chart ${k.chart} → charts/${k.archive}  spec from ${k.schemaSource}${k.schemaWarnings.length === 0 ? '' : ` (${k.schemaWarnings.length} schema warnings)`}`);
      }
      lines.push(res.required.length === 0 ? 'requires no other operator' : 'requires (metadata/dependencies.yaml, olm.gvk):');
      for (const g of res.required) lines.push(`  ${g.group}/${g.version} ${g.kind}`);
      if (res.notRequired.length > 0) lines.push('not required:');
      for (const g of res.notRequired) lines.push(`  ${g.group}/${g.version} ${g.kind}: ${g.reason}`);
      lines.push(`RBAC: ${res.rbac.permissions.length} rules in watched namespaces, ${res.rbac.clusterPermissions.length} cluster-wide`);
      lines.push(`related images: ${res.relatedImages.map((i) => i.image).join(', ')}`);
      for (const n of res.notes) lines.push(`note: ${n}`);
      const warnings = res.validation.render();
      if (warnings !== '') lines.push('validation warnings:', warnings);
      ctx.out(`${lines.join('\n')}\n`);
    }));
}
