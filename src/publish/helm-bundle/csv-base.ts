/**
 * What the CSV says about the operator, taken from Chart.yaml: display name, description,
 * icon, keywords, maintainers, links, provider, the oldest Kubernetes it supports; plus the
 * install modes (a Helm operator serves any set of namespaces: WATCH_NAMESPACE decides) and
 * the related images. It is the "base CSV" the bundle writer (`generateBundle`) starts from.
 */
import semver from 'semver';
import type { JsonObject } from '../../bundle/decode.js';
import type { ChartDescription } from '../../helm-engine/engine.js';
import type { RelatedImage } from './images.js';

export interface CsvBaseInput {
  chart: ChartDescription;
  packageName: string;
  version: string;
  image: string;
  kinds: readonly { kind: string; chart: string }[];
  relatedImages: readonly RelatedImage[];
  /** The icon as a data file, overriding Chart.yaml's. */
  icon?: { data: Buffer; mediatype: string };
  replaces?: string;
  skipRange?: string;
}

export interface CsvBase {
  csv: JsonObject;
  /** `spec.minKubeVersion`, when the chart's kubeVersion is a simple lower bound. */
  minKubeVersion?: string;
  /** What could not be carried over from Chart.yaml. */
  notes: string[];
}

/**
 * The lower bound of a `kubeVersion` constraint that is nothing else (`>=1.19.0-0`, `>= 1.21`,
 * `>=v1.23.0`), as MAJOR.MINOR.PATCH; undefined for anything else (ranges with upper bounds,
 * `^`, `~`, alternatives), which a CSV's single minimum cannot say.
 */
export function simpleLowerBound(kubeVersion: string | undefined): string | undefined {
  if (kubeVersion === undefined) return undefined;
  const m = /^\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-[0-9A-Za-z.-]+)?\s*$/.exec(kubeVersion);
  if (m === null) return undefined;
  const v = `${m[1] ?? '0'}.${m[2] ?? '0'}.${m[3] ?? '0'}`;
  return semver.valid(v) ?? undefined;
}

function titleCase(s: string): string {
  return s.split(/[-_.\s]+/).filter((w) => w !== '').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}

const ICON_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/svg+xml']);

function iconOf(input: CsvBaseInput, notes: string[]): { base64data: string; mediatype: string }[] | undefined {
  if (input.icon !== undefined) return [{ base64data: input.icon.data.toString('base64'), mediatype: input.icon.mediatype }];
  const url = input.chart.metadata.icon;
  if (url === undefined || url === '') return undefined;
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data !== null && ICON_TYPES.has(data[1] ?? '')) return [{ base64data: (data[2] ?? '').trim(), mediatype: data[1] ?? '' }];
  notes.push(`Chart.yaml icon ${url} is a link, and a CSV holds the image itself; pass --icon FILE to include it`);
  return undefined;
}

type ChartMeta = CsvBaseInput['chart']['metadata'];

/** The chart's maintainers that have a name, with their email. */
function maintainersOf(meta: ChartMeta): { name: string; email?: string }[] {
  return (meta.maintainers ?? []).filter((m) => m.name !== undefined && m.name !== '').map((m) => ({ name: m.name ?? '', ...(m.email === undefined ? {} : { email: m.email }) }));
}

/** The chart's home page, then its maintainers' pages. */
function linksOf(meta: ChartMeta): { name: string; url: string }[] {
  return [
    ...(meta.home === undefined || meta.home === '' ? [] : [{ name: 'Home', url: meta.home }]),
    ...(meta.maintainers ?? []).filter((m) => m.url !== undefined && m.url !== '').map((m) => ({ name: m.name ?? 'Maintainer', url: m.url ?? '' })),
  ];
}

export function csvBase(input: CsvBaseInput): CsvBase {
  const meta = input.chart.metadata;
  const notes: string[] = [];
  const kinds = input.kinds.map((k) => `\`${k.kind}\` (chart ${k.chart})`).join(', ');
  const summary = meta.description ?? `${titleCase(meta.name)}, from its Helm chart`;
  const description = [
    summary,
    '',
    `This operator installs the Helm chart ${meta.name} ${meta.version}${meta.appVersion === undefined ? '' : ` (app version ${meta.appVersion})`}: each custom resource of ${kinds} is one Helm release, its spec the chart's values. It runs Binnacle's Helm operator (\`binnacle helm-operator run\`), which renders the chart with Helm's own engine, applies it with server-side apply, repairs drift, upgrades when the resource changes and uninstalls when it is deleted. Release records are Helm's own, so \`helm list\` and \`helm history\` show them.`,
  ].join('\n');
  const minKubeVersion = simpleLowerBound(meta.kubeVersion);
  if (meta.kubeVersion !== undefined && meta.kubeVersion !== '' && minKubeVersion === undefined) {
    notes.push(`Chart.yaml kubeVersion ${JSON.stringify(meta.kubeVersion)} is not a simple lower bound (>=X.Y.Z), so spec.minKubeVersion is not set`);
  }
  const maintainers = maintainersOf(meta);
  const links = linksOf(meta);
  const icon = iconOf(input, notes);
  const annotations: Record<string, string> = {
    capabilities: 'Basic Install',
    containerImage: input.image,
    description: summary,
    'binnacle.dev/helm-chart': `${meta.name} ${meta.version}`,
    ...(input.skipRange === undefined ? {} : { 'olm.skipRange': input.skipRange }),
  };
  const csv: JsonObject = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: `${input.packageName}.v${input.version}`, annotations },
    spec: {
      displayName: titleCase(meta.name),
      description,
      // A placeholder the writer needs; set (or removed) once the bundle is written.
      minKubeVersion: minKubeVersion ?? '',
      maturity: 'alpha',
      provider: { name: maintainers[0]?.name ?? meta.name },
      ...(meta.keywords === undefined || meta.keywords.length === 0 ? {} : { keywords: meta.keywords }),
      ...(maintainers.length === 0 ? {} : { maintainers }),
      ...(links.length === 0 ? {} : { links }),
      ...(icon === undefined ? {} : { icon }),
      ...(input.replaces === undefined ? {} : { replaces: input.replaces }),
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: true },
        { type: 'AllNamespaces', supported: true },
      ],
      relatedImages: input.relatedImages,
    },
  };
  return { csv, ...(minKubeVersion === undefined ? {} : { minKubeVersion }), notes };
}
