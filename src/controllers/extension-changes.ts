/**
 * What one ClusterExtension's resolution (or removal) changes in the installed state, worked
 * out without I/O from the view (`src/installed`) so every rule can be tested on its own:
 *
 * - a chosen bundle whose package is installed is not installed again: the extension is
 *   recorded as needing that BundleDeployment;
 * - the extension's own package, installed as another extension's dependency, is taken over in
 *   place: same BundleDeployment, same namespace and release, now held by this extension;
 * - a BundleDeployment the extension no longer needs loses its need; with no need left it is
 *   deleted, so a shared dependency goes with the last extension that needs it;
 * - nothing is installed while an earlier copy of the same package or API is still being removed.
 *
 * Every BundleDeployment body is complete (spec, labels, annotations, ownerReferences) and is
 * written with server-side apply under Binnacle's field manager, while the installed-state lock
 * is held; a body equal to what is there is not written at all.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  ANNOTATION_BUNDLE_NAME,
  ANNOTATION_BUNDLE_VERSION,
  ANNOTATION_CATALOG,
  ANNOTATION_PROVIDES,
  API_VERSION,
  LABEL_NEEDED_BY_PREFIX,
  LABEL_OWNER_KIND,
  LABEL_OWNER_NAME,
  LABEL_PACKAGE,
  LABEL_RESOLUTION_SET,
  type BundleDeployment,
  type BundleDeploymentSpec,
  type ClusterExtension,
} from '../api/types.js';
import { bundleDeploymentName } from '../api/names.js';
import { olmv1TwinOf } from '../api/olmv1/twin.js';
import { needLabels, sortNeeds, unitOf, unitsNeededBy, type InstalledState, type InstalledUnit, type Need, type NeedRole } from '../installed/index.js';
import type { ChosenBundle } from '../resolve/index.js';
import { parseConfigMapsImage } from '../source/configmaps-ref.js';

const OWNER_KIND = 'ClusterExtension';

export interface ExtensionChanges {
  /** Complete BundleDeployment bodies to apply, dependencies first. */
  apply: BundleDeployment[];
  /** BundleDeployments no extension needs any more. */
  delete: string[];
  /** Why some of the set cannot be written yet; look again later. */
  waiting: string[];
  /** The BundleDeployment of each package of the set, once the changes are made. */
  deployments: Map<string, string>;
  /** Packages whose BundleDeployment another extension's dependency was, and this one now holds. */
  takenOver: string[];
}

interface BundleInfo {
  name: string | undefined;
  version: string;
  catalog: string | undefined;
  provides: readonly string[];
}

function emptyChanges(): ExtensionChanges {
  return { apply: [], delete: [], waiting: [], deployments: new Map(), takenOver: [] };
}

/** Stable JSON (sorted keys) for comparing what is there with what should be. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

const MANAGED_ANNOTATIONS = [ANNOTATION_BUNDLE_NAME, ANNOTATION_BUNDLE_VERSION, ANNOTATION_CATALOG, ANNOTATION_PROVIDES];

function managedLabels(labels: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels ?? {}).filter(([k]) => k.startsWith(LABEL_NEEDED_BY_PREFIX) || [LABEL_OWNER_KIND, LABEL_OWNER_NAME, LABEL_RESOLUTION_SET, LABEL_PACKAGE].includes(k)),
  );
}

/** True when applying `body` would change nothing Binnacle manages on `live`. */
function unchanged(live: BundleDeployment, body: BundleDeployment): boolean {
  const annotations = (o: BundleDeployment): Record<string, string> => Object.fromEntries(Object.entries(o.metadata.annotations ?? {}).filter(([k]) => MANAGED_ANNOTATIONS.includes(k)));
  const owners = (o: BundleDeployment): string[] => (o.metadata.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}/${r.uid}/${String(r.controller ?? false)}`).sort();
  return (
    canonical(live.spec) === canonical(body.spec) &&
    canonical(managedLabels(live.metadata.labels)) === canonical(managedLabels(body.metadata.labels)) &&
    canonical(annotations(live)) === canonical(annotations(body)) &&
    canonical(owners(live)) === canonical(owners(body))
  );
}

function body(state: InstalledState, o: { name: string; pkg: string; holder: string; needs: readonly Need[]; bundle: BundleInfo; spec: BundleDeploymentSpec }): BundleDeployment {
  const annotations: Record<string, string> = { [ANNOTATION_BUNDLE_VERSION]: o.bundle.version };
  if (o.bundle.name !== undefined) annotations[ANNOTATION_BUNDLE_NAME] = o.bundle.name;
  if (o.bundle.catalog !== undefined && o.bundle.catalog !== '') annotations[ANNOTATION_CATALOG] = o.bundle.catalog;
  if (o.bundle.provides.length > 0) annotations[ANNOTATION_PROVIDES] = [...o.bundle.provides].sort().join(',');
  const needs = sortNeeds(o.needs);
  const ownerReferences = needs.flatMap((n) => {
    const ref = state.extensions.get(n.extension);
    return ref === undefined || ref.uid === '' ? [] : [{ apiVersion: API_VERSION, kind: OWNER_KIND, name: n.extension, uid: ref.uid, blockOwnerDeletion: false }];
  });
  return {
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: {
      name: o.name,
      labels: { [LABEL_OWNER_KIND]: OWNER_KIND, [LABEL_OWNER_NAME]: o.holder, [LABEL_RESOLUTION_SET]: o.holder, [LABEL_PACKAGE]: o.pkg, ...needLabels(needs) },
      annotations,
      ownerReferences,
    },
    spec: o.spec,
  };
}

/**
 * The source of a catalog bundle's `image`: an OCI image, or ConfigMaps a `configmaps://`
 * reference names (a catalog served from ConfigMaps, `binnacle run bundle DIR`).
 */
function sourceForImage(image: string, verify: ClusterExtension['spec']['verify'], base?: BundleDeploymentSpec['source']): BundleDeploymentSpec['source'] {
  // The extension's verify policy goes with every source; one that cannot carry a signature
  // (ConfigMaps) is then refused by the BundleDeployment, naming its type.
  const v = verify === undefined ? {} : { verify };
  const configMaps = parseConfigMapsImage(image);
  if (configMaps !== undefined) return { type: 'configMaps', configMaps, ...v };
  return { type: 'image', image: { ...(base?.type === 'image' ? base.image : undefined), ref: image }, ...v };
}

/**
 * The BundleDeployment spec an extension asks for one of its bundles; `base` keeps where a
 * taken-over one runs; `installed` is its BundleDeployment's spec now, whose source stays when
 * the bundle kept is one no catalog offers any more (it has no image of its own).
 */
function specFor(ce: ClusterExtension, b: ChosenBundle, isMain: boolean, name: string, base?: BundleDeploymentSpec, installed?: BundleDeploymentSpec): BundleDeploymentSpec {
  const install = ce.spec.install ?? {};
  const spec = baseSpec(ce, b, name, base, installed);
  // Where it watches and its config are the requested package's; a dependency installed fresh keeps its own.
  if (base !== undefined || isMain) setWorkloadOptions(spec, install);
  // The twin of an OLM v1 ClusterExtension (same name): its bundle's objects carry OLM v1's owner labels (informational).
  // (Only ever set: a bundle shared with another extension keeps what its requester gave it.)
  // A twin as api/olmv1/twin.ts says (the label and the OLM v1 controller reference agree): a label alone is not one.
  const twinOf = olmv1TwinOf(ce);
  if (isMain && twinOf !== undefined) {
    spec.olmv1Owner = ce.metadata.name ?? '';
    // The uid the twin controller copied from the OLM v1 object it checked: what may be taken over.
    spec.olmv1OwnerUID = twinOf;
  }
  if (install.adoptExisting !== undefined) spec.adoptExisting = install.adoptExisting;
  if (install.conflictPolicy !== undefined) spec.conflictPolicy = install.conflictPolicy;
  if (install.waitStrategy !== undefined) spec.waitStrategy = install.waitStrategy;
  if (install.crdUpgradeSafety !== undefined) spec.crdUpgradeSafety = install.crdUpgradeSafety;
  if (install.autoRollback !== undefined) spec.autoRollback = install.autoRollback;
  if (install.keepFailedInstall !== undefined) spec.keepFailedInstall = install.keepFailedInstall;
  setDrift(spec, ce);
  return spec;
}

/** Where the bundle runs from: the taken-over spec with the chosen image, the installed source kept, or a fresh spec. */
function baseSpec(ce: ClusterExtension, b: ChosenBundle, name: string, base: BundleDeploymentSpec | undefined, installed: BundleDeploymentSpec | undefined): BundleDeploymentSpec {
  const image = b.image !== '' ? b.image : base?.source.image?.ref;
  if (base !== undefined) {
    const spec = structuredClone(base);
    if (image !== undefined) spec.source = sourceForImage(image, ce.spec.verify, spec.source);
    return spec;
  }
  if (b.image === '' && installed !== undefined) return { ...freshSpec(ce, '', name), source: structuredClone(installed.source) };
  return freshSpec(ce, image ?? '', name);
}

function freshSpec(ce: ClusterExtension, image: string, name: string): BundleDeploymentSpec {
  return {
    source: sourceForImage(image, ce.spec.verify),
    format: 'registry+v1',
    installNamespace: ce.spec.namespace,
    serviceAccount: { name: ce.spec.serviceAccount.name, ...(ce.spec.serviceAccount.namespace === undefined ? {} : { namespace: ce.spec.serviceAccount.namespace }) },
    releaseName: name,
  };
}

/** The namespaces the operator watches and its config, as the extension sets them. */
function setWorkloadOptions(spec: BundleDeploymentSpec, install: NonNullable<ClusterExtension['spec']['install']>): void {
  if (install.watchNamespace !== undefined) spec.watchNamespace = install.watchNamespace;
  if (install.watchNamespaces !== undefined) spec.watchNamespaces = install.watchNamespaces;
  if (install.config !== undefined) spec.config = install.config;
  if (install.bundleConfig !== undefined) spec.bundleConfig = install.bundleConfig;
}

/** The extension's drift rules govern its BundleDeployments (all of them: the rules' targets say which objects); none set, none passed. */
function setDrift(spec: BundleDeploymentSpec, ce: ClusterExtension): void {
  if (ce.spec.drift === undefined) delete spec.drift;
  else spec.drift = structuredClone(ce.spec.drift);
}

function withNeed(needs: readonly Need[], extension: string, role: NeedRole): Need[] {
  return [...needs.filter((n) => n.extension !== extension), { extension, role }];
}

/** After `extension` lets go: who holds it now (the requester if any, else the first that needs it). */
function nextHolder(unit: InstalledUnit, remaining: readonly Need[], leaving: string): string {
  if (unit.holder !== undefined && unit.holder !== leaving && remaining.some((n) => n.extension === unit.holder)) return unit.holder;
  return sortNeeds(remaining)[0]?.extension ?? leaving;
}

function unitInfo(u: InstalledUnit): BundleInfo {
  return { name: u.bundleName, version: u.version, catalog: u.catalog, provides: u.provides };
}

/** Lets `extension` go of `unit`: a smaller set of needs, or deletion when none is left. */
function release(state: InstalledState, unit: InstalledUnit, extension: string, out: ExtensionChanges): void {
  const remaining = unit.needs.filter((n) => n.extension !== extension);
  if (remaining.length === 0) {
    out.delete.push(unit.bundleDeployment);
    return;
  }
  const next = body(state, { name: unit.bundleDeployment, pkg: unit.package, holder: nextHolder(unit, remaining, extension), needs: remaining, bundle: unitInfo(unit), spec: unit.object.spec });
  if (!unchanged(unit.object, next)) out.apply.push(next);
}

/** The changes that give `ce` the bundles `chosen` (its own resolution set, in install order). */
export function changesForResolution(ce: ClusterExtension, state: InstalledState, chosen: readonly ChosenBundle[]): ExtensionChanges {
  const out = emptyChanges();
  const me = ce.metadata.name ?? '';
  const main = ce.spec.source.catalog.packageName;
  for (const b of chosen) {
    const role: NeedRole = b.package === main ? 'requested' : 'dependency';
    const unit = unitOf(state, b.package);
    if (unit === undefined) addUnit(ce, state, b, role, out);
    else needUnit(ce, state, unit, b, role, out);
  }
  const wanted = new Set(chosen.map((b) => b.package));
  for (const unit of unitsNeededBy(state, me)) {
    if (unit.state === 'deleting' || wanted.has(unit.package)) continue;
    release(state, unit, me, out);
  }
  return out;
}

/** A new BundleDeployment for a bundle no one installs yet: once one leaving that provides the same is gone, and under a free name. */
function addUnit(ce: ClusterExtension, state: InstalledState, b: ChosenBundle, role: NeedRole, out: ExtensionChanges): void {
  const me = ce.metadata.name ?? '';
  const leaving = state.units.filter((u) => u.state === 'deleting' && (u.package === b.package || u.provides.some((g) => b.provides.includes(g))));
  if (leaving.length > 0) {
    out.waiting.push(`${b.package}: waiting for BundleDeployment ${leaving.map((u) => u.bundleDeployment).join(', ')} to be removed`);
    return;
  }
  const name = bundleDeploymentName(me, b.package);
  const clash = state.units.find((u) => u.bundleDeployment === name);
  if (clash !== undefined) {
    out.waiting.push(`${b.package}: BundleDeployment ${name} already installs package ${clash.package}`);
    return;
  }
  out.deployments.set(b.package, name);
  out.apply.push(
    body(state, { name, pkg: b.package, holder: me, needs: [{ extension: me, role }], bundle: { name: b.name, version: b.version, catalog: b.catalog, provides: b.provides }, spec: specFor(ce, b, role === 'requested', name) }),
  );
}

/**
 * An installed BundleDeployment the extension needs too: the requested package is taken over
 * (its bundle and spec become the extension's); a dependency is only shared.
 */
function needUnit(ce: ClusterExtension, state: InstalledState, unit: InstalledUnit, b: ChosenBundle, role: NeedRole, out: ExtensionChanges): void {
  const me = ce.metadata.name ?? '';
  out.deployments.set(b.package, unit.bundleDeployment);
  const needs = withNeed(unit.needs, me, role);
  let next: BundleDeployment;
  if (role === 'requested') {
    const own = unit.bundleDeployment === bundleDeploymentName(me, b.package);
    if (!own && unit.holder !== me) out.takenOver.push(b.package);
    next = body(state, {
      name: unit.bundleDeployment,
      pkg: b.package,
      holder: me,
      needs,
      bundle: b.image === '' ? unitInfo(unit) : { name: b.name, version: b.version, catalog: b.catalog, provides: b.provides },
      spec: specFor(ce, b, true, unit.bundleDeployment, own ? undefined : unit.object.spec, unit.object.spec),
    });
  } else {
    const holder = unit.holder !== undefined && needs.some((n) => n.extension === unit.holder) ? unit.holder : (sortNeeds(needs)[0]?.extension ?? me);
    next = body(state, { name: unit.bundleDeployment, pkg: b.package, holder, needs, bundle: unitInfo(unit), spec: unit.object.spec });
  }
  if (!unchanged(unit.object, next)) out.apply.push(next);
}

/**
 * Why this extension may not take over `unit`, another extension's dependency it now requests,
 * or undefined. A take-over keeps where the bundle runs and as whom (its namespace and installer)
 * and puts in this extension's bundle, config and policies; `binnacle.dev` ClusterExtensions are a
 * cluster admin's to write (docs/trust-model.md), so that is theirs to choose. Two things are not:
 * a signature policy the bundle is verified with is never dropped or changed by it, and an OLM v1
 * ClusterExtension, whose creator may be a namespace's user admitted by a policy that pins its
 * namespace and package, never takes over (operator-controller shares nothing between extensions:
 * it refuses objects another owns), or it would install as another extension's installer, where
 * that one runs.
 */
export function takeOverProblem(ce: ClusterExtension, unit: InstalledUnit): string | undefined {
  const holder = `package ${unit.package} is installed as a dependency (BundleDeployment ${unit.bundleDeployment} in namespace ${unit.namespace}, needed by ${unit.needs.map((n) => n.extension).join(', ')})`;
  if (olmv1TwinOf(ce) !== undefined) return `${holder}; an OLM v1 ClusterExtension does not take over another extension's install`;
  const verify = unit.object.spec.source.verify;
  if (verify !== undefined && !isDeepStrictEqual(verify, ce.spec.verify)) return `${holder}, its source verified with a signature policy; spec.verify must repeat it to take it over (a take-over would drop or change it)`;
  return undefined;
}

/** The changes that let `extension` go of everything: what others still need stays. */
export function changesForRemoval(extension: string, state: InstalledState): ExtensionChanges {
  const out = emptyChanges();
  for (const unit of unitsNeededBy(state, extension)) {
    if (unit.state === 'deleting') {
      out.waiting.push(`BundleDeployment ${unit.bundleDeployment} is being removed`);
      continue;
    }
    release(state, unit, extension, out);
  }
  return out;
}

/** BundleDeployments a ClusterExtension made that no existing extension needs (left by a crash or a forced delete). */
export function orphans(state: InstalledState): string[] {
  return state.units.filter((u) => u.state !== 'deleting' && u.needs.length === 0 && u.object.metadata.labels?.[LABEL_OWNER_KIND] === OWNER_KIND).map((u) => u.bundleDeployment);
}
