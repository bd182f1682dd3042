/**
 * OLM v1's objects onto Binnacle's, and Binnacle's status back into OLM v1's words: the two
 * halves of the adapter that serves `olm.operatorframework.io/v1` with Binnacle's own engine
 * (controllers/cluster-*-olmv1.ts). An OLM v1 object is reconciled through a `binnacle.dev`
 * twin of the same kind and name, whose spec is `…TwinSpec` of it and whose status, read back
 * through `…StatusFromTwin`, becomes the OLM v1 object's. Pure functions: no cluster, no clock
 * but the one passed in.
 */
import type { Condition } from '../../kube/types.js';
import type { CatalogSelector } from '../catalog-selector.js';
import type { ClusterCatalog, ClusterCatalogSpec, ClusterExtension, ClusterExtensionSpec, DriftMode } from '../types.js';
import type { ServiceAccountMode } from './serviceaccount-policy.js';
import { OLMV1_EXTRA_ANNOTATIONS, OLMV1_REASONS as R, type Olmv1ClusterCatalog, type Olmv1ClusterCatalogStatus, type Olmv1ClusterExtension, type Olmv1ClusterExtensionStatus } from './types.js';

/** A condition to set on the OLM v1 object (its observedGeneration and transition time are the writer's). */
export interface ConditionSpec {
  type: string;
  status: boolean | 'Unknown';
  reason: string;
  message: string;
}

/** The ServiceAccount an OLM v1 ClusterExtension that names none installs as (`binnacle manager --olmv1-installer`). */
export interface InstallerIdentity {
  namespace: string;
  name: string;
}

/** The flag that configures the default installer, as the refusal names it. */
export const OLMV1_INSTALLER_FLAG = '--olmv1-installer';

/** Parses `<namespace>/<name>`; undefined when it is not that. */
export function parseInstaller(value: string): InstallerIdentity | undefined {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(value.trim());
  return m === null ? undefined : { namespace: m[1] ?? '', name: m[3] ?? '' };
}

/** The twin's spec and the annotations it carries, or why there is none (a terminal problem: the object must change). */
export type TwinSpec<S> = { ok: true; spec: S; annotations: Record<string, string> } | { ok: false; reason: string; message: string };

const DRIFT_MODES: readonly string[] = ['Repair', 'Warn', 'Off'];
const APPROVALS: readonly string[] = ['Manual', 'Automatic'];

/** Binnacle's extras, read from the annotations (OLMV1_EXTRA_ANNOTATIONS) into the twin's spec; problems collected. */
function extras(annotations: Record<string, string>, problems: string[]): Partial<ClusterExtensionSpec> {
  const A = OLMV1_EXTRA_ANNOTATIONS;
  const out: Partial<ClusterExtensionSpec> = {};
  const upgrade = annotations[A.upgradeApproval];
  if (upgrade !== undefined) {
    if (APPROVALS.includes(upgrade)) out.upgradeApproval = upgrade as 'Manual' | 'Automatic';
    else problems.push(`annotation ${A.upgradeApproval}: must be Manual or Automatic, not "${upgrade}"`);
  }
  const install = annotations[A.installApproval];
  if (install !== undefined) {
    if (APPROVALS.includes(install)) out.install = { approval: install as 'Manual' | 'Automatic' };
    else problems.push(`annotation ${A.installApproval}: must be Manual or Automatic, not "${install}"`);
  }
  const drift = annotations[A.drift];
  if (drift !== undefined) {
    if (DRIFT_MODES.includes(drift)) out.drift = { mode: drift as DriftMode };
    else problems.push(`annotation ${A.drift}: must be Repair, Warn or Off, not "${drift}"`);
  }
  const verify = annotations[A.verifySecret];
  if (verify !== undefined) {
    const secret = parseInstaller(verify);
    if (secret !== undefined) out.verify = { provider: 'cosign', secretRef: secret };
    else problems.push(`annotation ${A.verifySecret}: must be <namespace>/<secret name>, not "${verify}"`);
  }
  const limit = annotations[A.historyLimit];
  if (limit !== undefined) {
    if (/^\d{1,4}$/.test(limit)) out.resolutionHistoryLimit = Number(limit);
    else problems.push(`annotation ${A.historyLimit}: must be a whole number, not "${limit}"`);
  }
  return out;
}

/** How to give an OLM v1 ClusterExtension an identity, for the condition that says none is set. */
export function noInstallerMessage(): string {
  return (
    'no installer identity: this ClusterExtension names no spec.serviceAccount, and Binnacle never installs as itself (OLM v1.11 would install as cluster-admin). ' +
    `Set spec.serviceAccount.name to a ServiceAccount in spec.namespace that may install the bundle, or have the cluster admin start the manager with ${OLMV1_INSTALLER_FLAG}=<namespace>/<serviceaccount> ` +
    `(binnacle install-self ${OLMV1_INSTALLER_FLAG}=…) to name a default installer; see docs/from-olm-v1.md`
  );
}

/**
 * The inline configuration (experimental `spec.config.inline`), passed whole as the twin's
 * `install.bundleConfig`: its BundleDeployment checks it against the bundle's install modes with
 * OLM v1's rules and messages (bundle/bundle-config.ts), since only the bundle says whether
 * watchNamespace is required, allowed or unknown. No config is `{}`: OLM v1 checks that too (a
 * Single/OwnNamespace-only bundle then needs watchNamespace; no default is picked).
 */
function bundleConfig(v1: Olmv1ClusterExtension): Record<string, unknown> {
  const inline = v1.spec.config?.inline;
  return inline === undefined || inline === null ? {} : { ...inline };
}

type Olmv1CatalogSource = NonNullable<Olmv1ClusterExtension['spec']['source']['catalog']>;

/** What of spec.source Binnacle cannot serve as written. */
function sourceProblems(v1: Olmv1ClusterExtension): string[] {
  const out: string[] = [];
  const catalog = v1.spec.source.catalog;
  if (v1.spec.source.sourceType !== 'Catalog' || catalog === undefined) out.push('spec.source: sourceType Catalog with catalog set is the only source');
  return out;
}

/** A metav1.LabelSelector as Binnacle's (api/catalog-selector.ts): the same fields, empty ones left out. */
function catalogSelector(sel: NonNullable<Olmv1CatalogSource['selector']>): CatalogSelector {
  return {
    ...(sel.matchLabels === undefined ? {} : { matchLabels: sel.matchLabels }),
    ...(sel.matchExpressions === undefined || sel.matchExpressions.length === 0 ? {} : { matchExpressions: sel.matchExpressions.map((e) => ({ key: e.key, operator: e.operator, ...(e.values === undefined ? {} : { values: e.values }) })) }),
  };
}

/** spec.source.catalog, field for field. */
function catalogSource(c: Olmv1CatalogSource): ClusterExtensionSpec['source']['catalog'] {
  return {
    packageName: c.packageName,
    ...(c.version === undefined ? {} : { version: c.version }),
    ...(c.channels === undefined ? {} : { channels: c.channels }),
    ...(c.selector === undefined ? {} : { selector: catalogSelector(c.selector) }),
    ...(c.upgradeConstraintPolicy === undefined ? {} : { upgradeConstraintPolicy: c.upgradeConstraintPolicy }),
  };
}

/**
 * The `binnacle.dev` ClusterExtension that installs what an OLM v1 one asks for. Identity: the
 * ServiceAccount the object names (in spec.namespace), else the default installer the admin
 * configured, else none (refused, saying how to set one). With `serviceAccount: 'Ignore'`
 * (serviceaccount-policy.ts) the named ServiceAccount is ignored, as operator-controller does.
 */
export function extensionTwinSpec(v1: Olmv1ClusterExtension, installer: InstallerIdentity | undefined, serviceAccount: ServiceAccountMode = 'Use'): TwinSpec<ClusterExtensionSpec> {
  const catalog = v1.spec.source.catalog;
  const blocked = sourceProblems(v1);
  const annotations = v1.metadata.annotations ?? {};
  const extra = extras(annotations, blocked);
  // `Ignore` (the admin's explicit choice of OLM v1's behaviour): the deprecated field is ignored, the default installer acts.
  const sa = serviceAccount === 'Ignore' ? undefined : v1.spec.serviceAccount?.name;
  const identity = sa !== undefined && sa !== '' ? { name: sa } : installer;
  if (blocked.length > 0 || catalog === undefined) return { ok: false, reason: R.Blocked, message: blocked.join('; ') };
  if (identity === undefined) return { ok: false, reason: R.Blocked, message: noInstallerMessage() };
  // OLM v1's install.preflight.crdUpgradeSafety.enforcement: None skips the CRD upgrade safety check, as it does there.
  const enforcement = v1.spec.install?.preflight?.crdUpgradeSafety?.enforcement;
  const install = { ...extra.install, bundleConfig: bundleConfig(v1), ...(enforcement === 'None' ? { crdUpgradeSafety: 'None' as const } : {}) };
  const spec: ClusterExtensionSpec = {
    namespace: v1.spec.namespace,
    serviceAccount: identity,
    source: { sourceType: 'Catalog', catalog: catalogSource(catalog) },
    ...(Object.keys(install).length === 0 ? {} : { install }),
    ...(extra.upgradeApproval === undefined ? {} : { upgradeApproval: extra.upgradeApproval }),
    ...(extra.drift === undefined ? {} : { drift: extra.drift }),
    ...(extra.verify === undefined ? {} : { verify: extra.verify }),
    ...(extra.resolutionHistoryLimit === undefined ? {} : { resolutionHistoryLimit: extra.resolutionHistoryLimit }),
  };
  // An approval given on the OLM v1 object (where binnacle approve writes it for a twin) reaches the twin.
  const approved = annotations['binnacle.dev/approved-plan'];
  return { ok: true, spec, annotations: approved === undefined ? {} : { 'binnacle.dev/approved-plan': approved } };
}

/** The twin's condition, only when the twin has reconciled its current generation. */
function current(twin: { metadata: { generation?: number }; status?: { observedGeneration?: number; conditions?: Condition[] } }, type: string): Condition | undefined {
  return twin.status?.conditions?.find((c) => c.type === type);
}

/** Whether the twin's status speaks for its current spec. */
export function twinCaughtUp(twin: { metadata: { generation?: number }; status?: { observedGeneration?: number } } | undefined): boolean {
  return twin !== undefined && twin.status?.observedGeneration !== undefined && twin.status.observedGeneration === twin.metadata.generation;
}

export interface ExtensionStatusInput {
  /** The twin, caught up (twinCaughtUp). */
  twin: ClusterExtension;
  progressDeadlineMinutes?: number | undefined;
  now: Date;
  /** The installed release's revision (the main BundleDeployment's `status.revision`). */
  revision?: number | undefined;
}

export interface ExtensionStatusOutput {
  conditions: ConditionSpec[];
  install?: Olmv1ClusterExtensionStatus['install'];
  activeRevisions?: Olmv1ClusterExtensionStatus['activeRevisions'];
  /** When to look again (the progress deadline's end). */
  requeueAfterMs?: number;
}

/** Binnacle's Progressing (status, reason) in OLM v1's reasons (api/v1/common_types.go). */
function progressing(c: Condition | undefined): ConditionSpec {
  if (c === undefined) return { type: 'Progressing', status: true, reason: R.Retrying, message: 'not reconciled yet' };
  if (c.status === 'False' && c.reason === 'Succeeded') return { type: 'Progressing', status: true, reason: R.Succeeded, message: 'Desired state reached' };
  // Terminal: the inline configuration the bundle refuses (OLM v1's rules and words, from the BundleDeployment).
  if (c.status === 'False' && c.reason === 'InvalidConfiguration') return { type: 'Progressing', status: false, reason: R.InvalidConfiguration, message: c.message };
  if (c.status === 'False') return { type: 'Progressing', status: false, reason: R.Blocked, message: c.message };
  if (c.reason === 'Installing' || c.reason === 'Waiting') return { type: 'Progressing', status: true, reason: R.RollingOut, message: c.message };
  // Binnacle's own: only when the admin asked for approval (docs/from-olm-v1.md).
  if (c.reason === 'AwaitingApproval') return { type: 'Progressing', status: true, reason: 'AwaitingApproval', message: c.message };
  return { type: 'Progressing', status: true, reason: R.Retrying, message: c.message };
}

const DEPRECATION_TYPES = [
  ['Deprecated', 'not deprecated'],
  ['PackageDeprecated', 'package not deprecated'],
  ['ChannelDeprecated', 'channel not deprecated'],
  ['BundleDeprecated', 'bundle not deprecated'],
] as const;

/** An OLM v1 ClusterExtension's status from its twin's (caught up). */
export function extensionStatusFromTwin(i: ExtensionStatusInput): ExtensionStatusOutput {
  const out: ExtensionStatusOutput = { conditions: [] };
  setInstalled(i, out);
  out.conditions.push(progressingWithDeadline(i, out));
  for (const [type, notMessage] of DEPRECATION_TYPES) out.conditions.push(deprecationCondition(current(i.twin, type), type, notMessage));
  return out;
}

/** Installed, and (once installed) the bundle and the active revision. */
function setInstalled(i: ExtensionStatusInput, out: ExtensionStatusOutput): void {
  const twin = i.twin;
  const installed = current(twin, 'Installed');
  const bundle = twin.status?.install?.bundle;
  if (installed?.status === 'True' && bundle !== undefined) {
    out.conditions.push({ type: 'Installed', status: true, reason: R.Succeeded, message: `Installed bundle ${bundle.image} successfully` });
    out.install = { bundle: { name: bundle.name, version: bundle.version } };
    if (i.revision !== undefined) out.activeRevisions = [{ name: `${twin.metadata.name ?? ''}-${i.revision}` }];
  } else if (installed?.reason === 'Failed') {
    out.conditions.push({ type: 'Installed', status: false, reason: R.Failed, message: installed.message });
  } else {
    out.conditions.push({ type: 'Installed', status: false, reason: R.Absent, message: installed?.message ?? 'no bundle installed' });
  }
}

/**
 * operator-controller's resolution error (resolve/catalog.go `resolutionError.Error`), when the
 * twin's resolution failed because no bundle of the package matches the request: `[error upgrading
 * from currently installed version "V": ]no bundles found for package "P"[ matching version
 * "R"][ in channels [a b]]`, or `found bundles for package "P" … in multiple catalogs with the same
 * priority [a b]` when the twin refused to choose between catalogs. Binnacle's own explanation (which constraint excluded what) stays on
 * the twin: its Progressing condition and `status.resolution.explanation` (`binnacle status NAME`).
 */
export function olmv1ResolutionMessage(twin: ClusterExtension): string | undefined {
  const r = twin.status?.resolution;
  const ambiguous = r?.ambiguousCatalogs ?? [];
  if (r?.requestUnmatched !== true && ambiguous.length < 2) return undefined;
  const cat = twin.spec.source.catalog;
  const installed = twin.status?.install?.bundle.version;
  const parts = [
    ...(installed === undefined || installed === '' ? [] : [`error upgrading from currently installed version ${JSON.stringify(installed)}:`]),
    ambiguous.length >= 2 ? `found bundles for package ${JSON.stringify(cat.packageName)}` : `no bundles found for package ${JSON.stringify(cat.packageName)}`,
    ...(cat.version === undefined || cat.version === '' ? [] : [`matching version ${JSON.stringify(cat.version)}`]),
    ...(cat.channels === undefined || cat.channels.length === 0 ? [] : [`in channels [${cat.channels.join(' ')}]`]),
    ...(ambiguous.length >= 2 ? [`in multiple catalogs with the same priority [${[...ambiguous].sort().join(' ')}]`] : []),
  ];
  return parts.join(' ');
}

/** Progressing; past the progress deadline a rollout still under way is ProgressDeadlineExceeded, before it `out` is requeued for the deadline. */
function progressingWithDeadline(i: ExtensionStatusInput, out: ExtensionStatusOutput): ConditionSpec {
  const p = current(i.twin, 'Progressing');
  const prog = progressing(p);
  // A resolution that found nothing for the request reads as operator-controller's error.
  const resolution = p?.reason === 'Retrying' && p.message.startsWith('resolution failed: ') ? olmv1ResolutionMessage(i.twin) : undefined;
  if (resolution !== undefined) prog.message = resolution;
  const deadline = i.progressDeadlineMinutes;
  if (deadline === undefined || prog.status !== true || prog.reason === R.Succeeded || p === undefined) return prog;
  const since = Date.parse(p.lastTransitionTime);
  const left = since + deadline * 60_000 - i.now.getTime();
  if (Number.isFinite(since) && left <= 0) {
    return { type: 'Progressing', status: false, reason: R.ProgressDeadlineExceeded, message: `Revision has not rolled out for ${deadline} minute(s). Last status: ${prog.message}` };
  }
  if (Number.isFinite(left)) out.requeueAfterMs = left;
  return prog;
}

function deprecationCondition(c: Condition | undefined, type: string, notMessage: string): ConditionSpec {
  if (c === undefined) return { type, status: 'Unknown', reason: R.DeprecationStatusUnknown, message: 'deprecation status unknown' };
  if (c.status === 'True') return { type, status: true, reason: R.Deprecated, message: c.message };
  return { type, status: false, reason: R.NotDeprecated, message: notMessage };
}

// --- ClusterCatalog --------------------------------------------------------------------------

/** The `binnacle.dev` ClusterCatalog that serves what an OLM v1 one names (the same fields, a subset of Binnacle's). */
export function catalogTwinSpec(v1: Olmv1ClusterCatalog): TwinSpec<ClusterCatalogSpec> {
  const image = v1.spec.source.image;
  if (v1.spec.source.type !== 'Image' || image === undefined || image.ref === '') return { ok: false, reason: R.Blocked, message: 'spec.source: type Image with image.ref set is the only source' };
  const spec: ClusterCatalogSpec = {
    source: { type: 'Image', image: { ref: image.ref, ...(image.pollIntervalMinutes === undefined ? {} : { pollIntervalMinutes: image.pollIntervalMinutes }) } },
    ...(v1.spec.priority === undefined ? {} : { priority: v1.spec.priority }),
    ...(v1.spec.availabilityMode === undefined ? {} : { availabilityMode: v1.spec.availabilityMode }),
  };
  return { ok: true, spec, annotations: {} };
}

export interface CatalogStatusOutput {
  conditions: ConditionSpec[];
  status: Omit<Olmv1ClusterCatalogStatus, 'conditions'>;
}

/** Progressing in catalogd's reasons: done (unpacked), blocked, or still trying. */
function catalogProgressing(p: Condition | undefined): ConditionSpec {
  if (p?.status === 'False' && p.reason === 'Succeeded') return { type: 'Progressing', status: true, reason: R.Succeeded, message: 'Successfully unpacked and stored content from resolved source' };
  if (p?.status === 'False') return { type: 'Progressing', status: false, reason: R.Blocked, message: p.message };
  return { type: 'Progressing', status: true, reason: R.Retrying, message: p?.message ?? 'not reconciled yet' };
}

/** An OLM v1 ClusterCatalog's status from its twin's (caught up), in catalogd's reasons. */
export function catalogStatusFromTwin(v1: Olmv1ClusterCatalog, twin: ClusterCatalog): CatalogStatusOutput {
  const unavailable = v1.spec.availabilityMode === 'Unavailable';
  const serving = current(twin, 'Serving');
  const p = current(twin, 'Progressing');
  const conditions: ConditionSpec[] = [];
  if (unavailable) {
    conditions.push({ type: 'Serving', status: false, reason: R.UserSpecifiedUnavailable, message: 'User has explicitly set the catalog availability mode to Unavailable' });
    conditions.push({ type: 'Progressing', status: true, reason: R.Succeeded, message: 'Catalog availability mode is set to Unavailable' });
    return { conditions, status: {} };
  }
  if (serving?.status === 'True') conditions.push({ type: 'Serving', status: true, reason: R.Available, message: 'Serving desired content from resolved source' });
  else conditions.push({ type: 'Serving', status: false, reason: R.Unavailable, message: serving?.message ?? 'not serving content yet' });
  conditions.push(catalogProgressing(p));
  const st = twin.status;
  const status: CatalogStatusOutput['status'] = {
    ...(st?.resolvedSource === undefined ? {} : { resolvedSource: { type: 'Image', image: { ref: st.resolvedSource.image.ref } } }),
    ...(st?.urls === undefined || serving?.status !== 'True' ? {} : { urls: { base: st.urls.base } }),
    ...(st?.lastUnpacked === undefined ? {} : { lastUnpacked: st.lastUnpacked }),
  };
  return { conditions, status };
}
