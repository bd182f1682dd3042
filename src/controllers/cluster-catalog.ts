/**
 * ClusterCatalog reconciler: pull the catalog image (pinned by digest in status), unpack it
 * into the content-addressed cache, load and validate the FBC under the image's configs
 * label, store it for serving, and report `Serving`/`Progressing`, `resolvedSource`,
 * `urls.base` and `lastUnpacked`. A poll interval re-checks the tag; a bad image leaves the
 * last good content served and says why.
 *
 * Steps: HandleFinalizer → Validate → Pull → Load → Serve.
 *
 * A follower (a manager replica that does not lead: catalog-follower.ts) runs the same steps over
 * what the leader chose, and writes nothing: ForgetDeleted → Validate → PullResolved → Load → Serve.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { servingBlockers } from '../catalog/index.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog-render/index.js';
import { unpackCatalog, type UnpackedCatalog } from '../catalog-store/index.js';
import type { ObjectReader, ObjectWriter, StatusWriter } from '../kube/ports.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import { findCondition } from '../kube/types.js';
import { formatReference, imageLabelDir, isValidImageReference, parseReference, withDigest, type PulledImage } from '../oci/index.js';
import { API_VERSION, FINALIZER_CLEANUP, type ClusterCatalog } from '../api/types.js';
import { CREDENTIALS_INSTEAD, digestTree, fetchConfigMaps, formatConfigMapsImage, imageRefCredentialProblem, parseVerifyPolicy, secretReader, unverifiableSourceReason, verifiedImageRef, type VerifyPolicy } from '../source/index.js';
import { BinnacleError, errorClassOf, errorMessage } from '../util/errors.js';
import type { CatalogRegistry, ServedCatalog } from './catalog-registry.js';
import { applyStatus, Conditions, CONTINUE, methodSteps, ensureFinalizer, isDeleting, reconcileSteps, removeFinalizer, sameStatus, stop, type StepOutcome } from './common.js';

export type ImagePull = (ref: string, opts: { insecure: boolean }) => Promise<PulledImage>;
/** Verifies an image's signature by a policy; returns the reference pinned at the verified digest. */
export type ImageVerify = (ref: string, policy: VerifyPolicy, opts: { insecure: boolean; logger: Logger }) => Promise<string>;

/** What the reconciler asks of the cluster: its catalog (and ConfigMaps, verify keys) read, its finalizer patched, its status written. */
export type ClusterCatalogClient = Pick<ObjectReader, 'get'> & Pick<ObjectWriter, 'patch'> & Pick<StatusWriter, 'applyStatus'>;

export interface ClusterCatalogReconcilerOptions {
  client: ClusterCatalogClient;
  registry: CatalogRegistry;
  pull: ImagePull;
  /** Where stored catalogs live (one folder per catalog and digest). */
  storeDir: string;
  /** Base URL of the catalog HTTP server, e.g. `http://127.0.0.1:8083`. */
  serverUrl: string;
  /** How soon to retry a failed pull or a bad catalog. */
  retryAfterMs?: number;
  /** Default: the keys are read as the manager itself (install-self lets it read Secrets in its own namespace only). */
  verify?: ImageVerify;
  /**
   * Follow the leader instead of leading: serve the content each catalog's status resolved (the
   * leader's choice, verified again here), never a newer tag; no finalizer, no status written.
   */
  follow?: boolean;
}

interface State {
  catalog: ClusterCatalog;
  conditions: Conditions;
  logger: Logger;
  pulled?: PulledImage;
  /** The resolved reference: the image by digest, or the ConfigMaps with the digest of their files. */
  resolvedRef?: string;
  /** A scratch tree (ConfigMaps read), removed when the reconcile ends. */
  scratch?: string;
  /** `spec.source.verify`, checked. */
  verify?: VerifyPolicy;
  /** Write status after the steps (reconcileSteps): not once the catalog is gone. */
  writeStatus: boolean;
  /** What the status says besides its conditions, when the steps found it (the content served). */
  served?: Record<string, unknown>;
  /** The reconcile's stop: a follower that has stopped publishes nothing (the leader has taken over the registry). */
  signal: AbortSignal;
}

/** What unpackCatalog throws about the catalog's own records (the loader's other refusals are in its result). */
const CONTENT_REFUSALS: ReadonlySet<string> = new Set(['CATALOG_STORE_TOO_LARGE', 'CATALOG_RECORD_TOO_LARGE']);

/** How long content refused as invalid is not read again (unless the catalog's generation changes). */
const REFUSAL_KEPT_MS = 10 * 60_000;

export class ClusterCatalogReconciler implements Reconciler {
  /**
   * The last content refused as invalid, by catalog name: its digest, the catalog's generation, when,
   * and why (after the image reference, which may change). Read again after REFUSAL_KEPT_MS or at a
   * new generation: a refusal may come from a damaged tree on this node's disk, not from the content.
   */
  private readonly refused = new Map<string, { digest: string; generation: number | undefined; at: number; why: string }>();

  constructor(private readonly o: ClusterCatalogReconcilerOptions) {}

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let catalog: ClusterCatalog;
    try {
      catalog = await this.o.client.get<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: req.name });
    } catch (err) {
      if (isNotFound(err)) {
        this.o.registry.delete(req.name);
        this.refused.delete(req.name);
        return undefined;
      }
      throw err;
    }
    const state: State = { catalog, conditions: new Conditions(catalog.status?.conditions, catalog.metadata.generation), logger: ctx.logger, writeStatus: this.o.follow !== true, signal: ctx.signal };
    const steps = methodSteps<State, ClusterCatalogReconciler>(this, this.o.follow === true ? ['forgetDeleted', 'validate', 'pullResolved', 'loadAndServe'] : ['handleFinalizer', 'validate', 'pull', 'loadAndServe']);
    try {
      return await reconcileSteps(steps, state, ctx.logger, {
        write: (st) => (st.writeStatus ? this.writeStatus(st, st.served) : Promise.resolve()),
        // Anything a step did not expect: said in status (the last good content stays served), then retried with backoff.
        onError: (st, err) => st.conditions.set('Progressing', true, 'Retrying', errorMessage(err)),
      });
    } finally {
      if (state.scratch !== undefined) await rm(state.scratch, { recursive: true, force: true });
    }
  }

  private pollMs(c: ClusterCatalog): number | undefined {
    const m = c.spec.source.type === 'ConfigMaps' ? c.spec.source.pollIntervalMinutes : c.spec.source.image.pollIntervalMinutes;
    return m === undefined ? undefined : m * 60_000;
  }

  /** The one status write of a reconcile, none when nothing in it changed: the last resolved source, URLs and unpack time kept unless `extra` says anew. */
  private async writeStatus(s: State, extra: Record<string, unknown> = {}): Promise<void> {
    const prev = s.catalog.status ?? {};
    const status = {
      ...(prev.resolvedSource === undefined ? {} : { resolvedSource: prev.resolvedSource }),
      ...(prev.urls === undefined ? {} : { urls: prev.urls }),
      ...(prev.lastUnpacked === undefined ? {} : { lastUnpacked: prev.lastUnpacked }),
      ...extra,
      conditions: s.conditions.toArray(),
      observedGeneration: s.catalog.metadata.generation,
    };
    // A poll that found the same content says nothing new: no write.
    if (sameStatus(status, prev)) return;
    await applyStatus(this.o.client, s.catalog, status);
  }

  async handleFinalizer(s: State): Promise<StepOutcome> {
    if (isDeleting(s.catalog)) {
      await this.forget(s.catalog.metadata.name ?? '');
      await removeFinalizer(this.o.client, s.catalog, FINALIZER_CLEANUP);
      s.writeStatus = false;
      return stop();
    }
    await ensureFinalizer(this.o.client, s.catalog, FINALIZER_CLEANUP);
    return CONTINUE;
  }

  /** A follower's HandleFinalizer: a catalog being deleted is no longer served here; the leader removes the finalizer. */
  async forgetDeleted(s: State): Promise<StepOutcome> {
    if (!isDeleting(s.catalog)) return CONTINUE;
    await this.forget(s.catalog.metadata.name ?? '');
    return stop();
  }

  /** Served no more, and its stored content gone: the next ClusterCatalog of that name starts clean. */
  private async forget(name: string): Promise<void> {
    this.o.registry.delete(name);
    this.refused.delete(name);
    await rm(join(this.o.storeDir, name), { recursive: true, force: true });
  }

  validate(s: State): Promise<StepOutcome> {
    return Promise.resolve(this.checkSpec(s));
  }

  private checkSpec(s: State): StepOutcome {
    const spec = s.catalog.spec as Partial<ClusterCatalog['spec']> | undefined;
    const blocked = this.sourceProblem(s, spec);
    if (blocked !== undefined) {
      s.conditions.set('Progressing', false, 'Blocked', blocked);
      return stop();
    }
    if (spec?.availabilityMode === 'Unavailable') {
      this.o.registry.delete(s.catalog.metadata.name ?? '');
      s.conditions.set('Serving', false, 'Unavailable', 'availabilityMode is Unavailable: the catalog is not served');
      s.conditions.set('Progressing', false, 'Succeeded', 'nothing to do');
      return stop();
    }
    return CONTINUE;
  }

  /** Why the source cannot be used: neither an image nor ConfigMaps, credentials in the image reference, or a verify policy refused. */
  private sourceProblem(s: State, spec: Partial<ClusterCatalog['spec']> | undefined): string | undefined {
    const ref = spec?.source?.image?.ref;
    const configMaps = spec?.source?.type === 'ConfigMaps' ? spec.source.configMaps : undefined;
    const okImage = spec?.source?.type === 'Image' && typeof ref === 'string' && ref !== '';
    const okConfigMaps = Array.isArray(configMaps) && configMaps.length > 0;
    if (!okImage && !okConfigMaps) return 'spec.source: type must be Image with image.ref set, or ConfigMaps with configMaps listing at least one';
    const credential = okImage ? imageRefCredentialProblem(ref, CREDENTIALS_INSTEAD.catalog('spec.source.image.ref')) : undefined;
    if (credential !== undefined) return `spec.source.image.ref: ${credential}`;
    return this.checkVerify(s, spec?.source);
  }

  /** Records `spec.source.verify` in the state, or says why it is refused (a ConfigMaps source cannot be verified). */
  private checkVerify(s: State, source: Partial<ClusterCatalog['spec']['source']> | undefined): string | undefined {
    if (source?.verify === undefined) return undefined;
    const problems: string[] = [];
    const refusal = unverifiableSourceReason(source.type ?? 'unknown');
    if (refusal !== undefined) return `spec.source.verify: ${refusal}`;
    const policy = parseVerifyPolicy(source.verify, 'spec.source.verify', (field, message) => problems.push(`${field}: ${message}`));
    if (policy === undefined) return problems.join('; ');
    s.verify = policy;
    return undefined;
  }

  private verifyImage(ref: string, policy: VerifyPolicy, opts: { insecure: boolean; logger: Logger }): Promise<string> {
    if (this.o.verify !== undefined) return this.o.verify(ref, policy, opts);
    const reader = secretReader(this.o.client, "Binnacle's own service account");
    return verifiedImageRef({ type: 'image', ref, verify: policy, ...(opts.insecure ? { insecure: true } : {}) }, { secrets: reader, logger: opts.logger });
  }

  /** FBC files kept in ConfigMaps: read into a scratch tree, identified by the digest of its files. */
  pull(s: State): Promise<StepOutcome> {
    return s.catalog.spec.source.type === 'ConfigMaps' ? this.readConfigMaps(s) : this.pullImage(s);
  }

  private async readConfigMaps(s: State): Promise<StepOutcome> {
    const source = s.catalog.spec.source;
    if (source.type !== 'ConfigMaps') return stop();
    const names = source.configMaps.map((c) => `${c.namespace}/${c.name}`).join(', ');
    s.scratch = join(this.o.storeDir, s.catalog.metadata.name ?? '', `.configmaps-${randomBytes(6).toString('hex')}`);
    try {
      await fetchConfigMaps({ type: 'configMaps', configMaps: source.configMaps }, s.scratch, { client: this.o.client, maxBytes: 256 * 1024 * 1024 });
      const { digest } = await digestTree(s.scratch);
      s.pulled = { digest, dir: s.scratch, labels: { [LABEL_CATALOG_CONFIGS]: '/' } };
      const first = source.configMaps[0];
      const sameNamespace = source.configMaps.every((c) => c.namespace === first?.namespace);
      s.resolvedRef = `${sameNamespace && first !== undefined ? formatConfigMapsImage(first.namespace, source.configMaps) : `configmaps://${names}`}@${digest}`;
      return CONTINUE;
    } catch (err) {
      return this.retry(s, 'Retrying', `reading ConfigMaps ${names}: ${errorMessage(err)}`);
    }
  }

  /**
   * A follower's Pull: the content the leader serves for this generation (Serving, and the digest
   * its status resolved), read the same way (an image verified again by the policy, ConfigMaps
   * read and compared), or none while the leader serves none. Only a digest of the repository the
   * spec names: whoever may write a catalog's status (the manager's own account, a cluster admin)
   * chooses among that repository's digests, no further (docs/trust-model.md).
   */
  async pullResolved(s: State): Promise<StepOutcome> {
    const status = s.catalog.status;
    const resolved = (status?.resolvedSource?.image as { ref?: unknown } | undefined)?.ref;
    // The leader's status write for this generation brings the catalog back here.
    if (typeof resolved !== 'string' || status?.observedGeneration !== s.catalog.metadata.generation) return stop();
    // The leader serves nothing (a new leader that could not pull yet): nor does a follower.
    if (findCondition(status?.conditions, 'Serving')?.status !== 'True') {
      this.o.registry.delete(s.catalog.metadata.name ?? '');
      return stop();
    }
    const source = s.catalog.spec.source;
    if (source.type === 'ConfigMaps') {
      const read = await this.readConfigMaps(s);
      // ConfigMaps changed since the leader read them: its next status write brings the catalog back (looked at again in 5 minutes all the same).
      return read.done || s.resolvedRef === resolved ? read : stop({ requeueAfterMs: 5 * 60_000 });
    }
    if (source.type !== 'Image' || !isValidImageReference(source.image.ref)) return stop();
    if (!digestOf(resolved, source.image.ref)) {
      s.logger.warn({ resolved, ref: source.image.ref }, 'status.resolvedSource is not a digest of spec.source.image.ref: not followed');
      return stop();
    }
    return this.pullImage(s, resolved);
  }

  /** The image `spec.source.image.ref` names, or `ref` (the same repository at a digest). */
  private async pullImage(s: State, ref?: string): Promise<StepOutcome> {
    const source = s.catalog.spec.source;
    if (source.type !== 'Image') return stop();
    const image = source.image;
    const insecure = image.insecure === true;
    const wanted = ref ?? image.ref;
    try {
      // Verified first, then pulled at exactly the digest that was verified.
      const ref = s.verify === undefined ? wanted : await this.verifyImage(wanted, s.verify, { insecure, logger: s.logger });
      s.pulled = await this.o.pull(ref, { insecure });
      s.resolvedRef = formatReference(withDigest(parseReference(image.ref), s.pulled.digest));
      return CONTINUE;
    } catch (err) {
      // The last good content stays served; the condition names the artifact, its digest and why.
      if (err instanceof BinnacleError && err.code.startsWith('SIGNATURE_')) return this.retry(s, 'VerificationFailed', errorMessage(err));
      return this.retry(s, 'Retrying', `pulling ${wanted}: ${errorMessage(err)}`);
    }
  }

  async loadAndServe(s: State): Promise<StepOutcome> {
    const pulled = s.pulled;
    if (pulled === undefined || s.signal.aborted) return stop();
    const name = s.catalog.metadata.name ?? '';
    const priority = s.catalog.spec.priority ?? 0;
    const current = this.o.registry.get(name);
    const digestRef = s.resolvedRef ?? pulled.digest;
    if (current?.digest !== pulled.digest) {
      const refused = await this.unpack(s, pulled, digestRef);
      if (refused !== undefined) return refused;
    } else if (current.priority !== priority) {
      // The same content at another priority: nothing to unpack (which would rewrite the file being served).
      this.o.registry.set({ ...current, priority, labels: s.catalog.metadata.labels ?? {} });
    } else relabel(this.o.registry, current, s.catalog.metadata.labels ?? {});
    const changed = s.catalog.status?.resolvedSource?.image.ref !== digestRef;
    s.conditions.set('Serving', true, 'Available', `serving ${digestRef}`);
    s.conditions.set('Progressing', false, 'Succeeded', 'unpacked and serving the latest content');
    s.served = {
      resolvedSource: { type: s.catalog.spec.source.type, image: { ref: digestRef } },
      urls: { base: `${this.o.serverUrl}/catalogs/${name}` },
      lastUnpacked: changed || s.catalog.status?.lastUnpacked === undefined ? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') : s.catalog.status.lastUnpacked,
    };
    const poll = this.pollMs(s.catalog);
    return stop(poll === undefined ? undefined : { requeueAfterMs: poll });
  }

  /** Unpacks the pulled catalog into the store and serves it; a step outcome when it cannot. */
  private async unpack(s: State, pulled: PulledImage, digestRef: string): Promise<StepOutcome | undefined> {
    const name = s.catalog.metadata.name ?? '';
    // Content is named by its digest: what was refused once is refused again, without reading and spilling it every retry.
    const generation = s.catalog.metadata.generation;
    const known = this.refused.get(name);
    if (known?.digest === pulled.digest && known.generation === generation && Date.now() - known.at < REFUSAL_KEPT_MS) {
      return this.retry(s, 'InvalidCatalog', `image ${digestRef}${known.why}`);
    }
    const refuse = (why: string): StepOutcome => {
      this.refused.set(name, { digest: pulled.digest, generation, at: Date.now(), why });
      return this.retry(s, 'InvalidCatalog', `image ${digestRef}${why}`);
    };
    let unpacked: UnpackedCatalog;
    try {
      // The label is the image author's: it must name a directory inside this image.
      const root = await imageLabelDir(pulled.dir, LABEL_CATALOG_CONFIGS, pulled.labels[LABEL_CATALOG_CONFIGS] ?? '/configs');
      // A catalog an older opm built may break rules opm added since, or lack a default channel (catalogd serves it): no harm in serving it.
      unpacked = await unpackCatalog(root, join(this.o.storeDir, name, pulled.digest.replace(/^sha256:/, '')), (v) => servingBlockers(v).length === 0);
    } catch (err) {
      // The image's fault (a label out of it, no catalog there) or the store's (a full disk): only the first is an invalid catalog.
      // Remembered only when the content itself is at fault: a tree the cache lost since the pull is not the image's.
      if (err instanceof BinnacleError && CONTENT_REFUSALS.has(err.code)) return refuse(`: ${errorMessage(err)}`);
      if (errorClassOf(err) === 'input') return this.retry(s, 'InvalidCatalog', `image ${digestRef}: ${errorMessage(err)}`);
      return this.retry(s, 'Retrying', `unpacking image ${digestRef}: ${errorMessage(err)}`);
    }
    const { result, validation, view, stored } = unpacked;
    if (!result.ok) return refuse(` has an invalid catalog:\n${result.render()}`);
    if (stored === undefined) return refuse(` has an invalid catalog:\n${validation?.render() ?? ''}`);
    this.refused.delete(name);
    // A follower stopped meanwhile: the registry is the leader's now.
    if (s.signal.aborted) return stop();
    // Served from the stored file; resolved on a view without the bundles' manifests (most of the bytes).
    this.o.registry.set({ name, priority: s.catalog.spec.priority ?? 0, labels: s.catalog.metadata.labels ?? {}, digest: pulled.digest, config: view, stored });
    s.logger.info({ digest: pulled.digest, packages: view.packages.length, bundles: view.bundles.length }, 'catalog unpacked and served');
    return undefined;
  }

  /** Reports a failure but keeps serving the last good content. */
  private retry(s: State, reason: string, message: string): StepOutcome {
    const serving = this.o.registry.get(s.catalog.metadata.name ?? '');
    s.conditions.set('Progressing', true, reason, message);
    if (serving === undefined) s.conditions.set('Serving', false, reason, 'no good content has been unpacked yet');
    return stop({ requeueAfterMs: this.o.retryAfterMs ?? 10_000 });
  }
}

/** Whether `resolved` is `ref`'s repository at a digest. */
function digestOf(resolved: string, ref: string): boolean {
  const want = parseReference(ref);
  const got = isValidImageReference(resolved) ? parseReference(resolved) : undefined;
  return got?.digest !== undefined && got.registry === want.registry && got.repository === want.repository;
}

/** Extensions select catalogs by label: a label added or changed on served content selects it now. */
function relabel(registry: CatalogRegistry, current: ServedCatalog, labels: Record<string, string>): void {
  if (!sameLabels(current.labels, labels)) registry.set({ ...current, labels });
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
