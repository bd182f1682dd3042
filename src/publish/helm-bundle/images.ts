/**
 * `relatedImages`: every image the operator may run, so mirroring tools copy them all for a
 * disconnected install. That is the operator's own image and each `image` of a container,
 * init container or ephemeral container anywhere in what the charts render: Pod templates of
 * workloads, and also custom resources that carry containers (a Prometheus or Grafana sidecar).
 */
import type { KubeObject } from '../../kube/types.js';
import { parseReference } from '../../oci/reference.js';

export interface RelatedImage {
  name: string;
  image: string;
}

const CONTAINER_LISTS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

function collect(v: unknown, out: Set<string>): void {
  if (Array.isArray(v)) {
    for (const x of v) collect(x, out);
    return;
  }
  if (typeof v !== 'object' || v === null) return;
  for (const [k, x] of Object.entries(v)) {
    if (CONTAINER_LISTS.has(k) && Array.isArray(x)) {
      for (const c of x) {
        const image = typeof c === 'object' && c !== null ? (c as Record<string, unknown>).image : undefined;
        if (typeof image === 'string' && image.trim() !== '') out.add(image.trim());
      }
    }
    collect(x, out);
  }
}

/** Images of every container in `objects`, sorted. */
export function containerImages(objects: readonly KubeObject[]): string[] {
  const out = new Set<string>();
  for (const o of objects) collect(o, out);
  return [...out].sort();
}

/** A name for an image: its repository's last path element, as a DNS label. */
function baseName(image: string): string {
  let repository = '';
  try {
    repository = parseReference(image).repository;
  } catch {
    // Not a reference (a chart's default left half-templated): named generically.
  }
  const name = (repository.split('/').at(-1) ?? '').replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  return name === '' ? 'image' : name;
}

/** `relatedImages` entries with unique names: the operator first, then the charts' images. */
export function relatedImages(operator: RelatedImage, images: readonly string[]): RelatedImage[] {
  const out: RelatedImage[] = [operator];
  const names = new Set([operator.name]);
  for (const image of images) {
    if (image === operator.image) continue;
    const base = baseName(image);
    let name = base;
    for (let i = 2; names.has(name); i++) name = `${base}-${i}`;
    names.add(name);
    out.push({ name, image });
  }
  return out;
}
