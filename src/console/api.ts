/**
 * The console's JSON API under /api/. Each handler gets the person's own client (see
 * identity.ts): what it reads and changes is exactly what their RBAC allows. Plans run on a
 * dry-run view of that client, through the same `plan()` as `binnacle plan`.
 */
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../api/types.js';
import { matchesSelector } from '../api/catalog-selector.js';
import { buildInstalledState, installedFacts } from '../installed/index.js';
import { plan } from '../actions/plan.js';
import type { ConsoleClient } from './client.js';
import { KubeClient } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import type { ExtensionDrift, ExtensionTimeline, GraphLayout, Inventory, PackageList, PackagePage, PackageSummary, PlanView, ReleaseDriftView, ReleaseTimeline, ResourceDeletePreview } from './contract/api-types.js';
import { CatalogCache, iconOf, packageDetail, packageSummaries, type CatalogLoader, type ServedCatalog } from './catalog-view.js';
import { InputError } from './errors.js';
import { layoutUpgradeGraph } from './graph.js';
import { upgradePath, type UpgradePath } from './upgrade-path.js';
import { CatalogIndex, type InstalledBundle } from '../resolve/index.js';
import { channelList, dnsLabel, exactVersion, installRequest, optionalString, readJsonBody, requiredString, versionRange } from './input.js';
import { eventsOf, extensionDetail, listExtensions, uninstallPreview } from './installed.js';
import { extensionHistory, rollbackExtension, rollbackPreview } from '../actions/release-history.js';
import { approvePlan } from '../actions/approve.js';
import { extensionSpecRef } from '../actions/extension-ref.js';
import { createResource, crdView, deletePreview, deleteResource, extensionApis, getResource, helmOperatorApis, updateResource } from './resources.js';
import { extensionDrift, resourceDrift } from './drift.js';
import { inventory } from './inventory.js';
import { extensionTimeline, resourceTimeline } from './release-timeline.js';

export type ApiResult = { status: number; json: unknown } | { status: number; bytes: Buffer; type: string };

export interface ApiContext {
  client: ConsoleClient;
  req: IncomingMessage;
  url: URL;
}

export interface ConsoleApiOptions {
  cacheDir: string;
  logger: Logger;
  catalogLoader?: CatalogLoader | undefined;
}

const ok = (json: unknown, status = 200): ApiResult => ({ status, json });
const notFound = (what: string): ApiResult => ({ status: 404, json: { error: `${what} not found` } });

type Handler = (ctx: ApiContext) => Promise<ApiResult>;

/** extensions/NAME/PART that only read: what each answers for the extension NAME. */
const EXTENSION_READS: Readonly<Record<string, (ctx: ApiContext, name: string) => Promise<unknown>>> = {
  events: async (ctx, name) => ({ events: await eventsOf(ctx.client, name) }),
  'uninstall-preview': (ctx, name) => uninstallPreview(ctx.client, name),
  apis: async (ctx, name) => ({ apis: await extensionApis(ctx.client, name) }),
  revisions: async (ctx, name) => ({ releases: (await extensionHistory(ctx.client, name)).releases }),
  timeline: async (ctx, name) => (await extensionTimeline(ctx.client, name, ctx.url.searchParams.get('bundleDeployment') ?? undefined)) satisfies ExtensionTimeline,
  drift: async (ctx, name) => (await extensionDrift(ctx.client, name)) satisfies ExtensionDrift,
  'rollback-preview': (ctx, name) => rollbackPreview(ctx.client, name, ctx.url.searchParams.get('version') ?? undefined),
};

/** The extension that has `pkg` installed, when the person may list extensions; undefined otherwise. */
async function installerOf(client: ConsoleClient, pkg: string): Promise<ClusterExtension | undefined> {
  try {
    return (await client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')).items.find((e) => e.status?.install?.bundle.package === pkg);
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 403) return undefined;
    throw err;
  }
}

/**
 * What is installed besides `ext`'s own set, as the controller weighs it (installedFacts), read as
 * the console user; someone who may not list BundleDeployments gets the path without it.
 */
async function installedOthers(client: ConsoleClient, ext: ClusterExtension): Promise<InstalledBundle[]> {
  try {
    const [bds, ces] = await Promise.all([client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'), client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')]);
    return installedFacts(buildInstalledState(bds.items, ces.items), ext.metadata.name ?? '');
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 403) return [];
    throw err;
  }
}

export class ConsoleApi {
  private readonly catalogs: CatalogCache;
  /** Summaries per loaded catalog content: computed once while the content is unchanged. */
  private readonly summaries = new WeakMap<ServedCatalog, PackageSummary[]>();
  /** The resolver's index of the catalogs last read, for upgrade paths. */
  private index: { of: readonly ServedCatalog[]; index: CatalogIndex } | undefined;

  constructor(private readonly opts: ConsoleApiOptions) {
    this.catalogs = new CatalogCache(opts.catalogLoader);
  }

  /** Answers the route, or undefined when no route matches. */
  async route(method: string, parts: string[], ctx: ApiContext): Promise<ApiResult | undefined> {
    const [a, b, c, d, e, f] = parts;
    const whole = b === undefined ? this.wholeRoute(`${method} ${a ?? ''}`) : undefined;
    if (whole !== undefined) return whole(ctx);
    if (a === 'catalogs' && c === 'packages' && b !== undefined && d !== undefined && method === 'GET') {
      if (e === 'icon' && f === undefined) return this.icon(ctx, b, d);
      if (e === undefined) return this.packagePage(ctx, b, d);
    }
    if (a === 'extensions') return this.extensions(method, b, c, ctx);
    if (a === 'crds' && b !== undefined && f === undefined) return this.customResources(method, b, c, d, e, ctx);
    return undefined;
  }

  /** Routes of one word, by `METHOD word`: the package list, a plan, the Helm operators, the inventory. */
  private wholeRoute(key: string): Handler | undefined {
    const routes: Readonly<Record<string, Handler>> = {
      'GET packages': (ctx) => this.packages(ctx),
      'POST plan': (ctx) => this.plan(ctx),
      'GET helm-operators': async (ctx) => ok({ helmOperators: await helmOperatorApis(ctx.client) }),
      'GET inventory': async (ctx) => ok((await inventory(ctx.client)) satisfies Inventory),
    };
    return Object.hasOwn(routes, key) ? routes[key] : undefined;
  }

  private async extensions(method: string, b: string | undefined, c: string | undefined, ctx: ApiContext): Promise<ApiResult | undefined> {
    if (b === undefined && method === 'GET') return ok({ extensions: await listExtensions(ctx.client) });
    if (b === undefined && method === 'POST') return this.createExtension(ctx);
    if (b !== undefined && c === undefined) {
      if (method === 'GET') return ok(await extensionDetail(ctx.client, b));
      if (method === 'PATCH') return this.patchExtension(ctx, b);
      if (method === 'DELETE') {
        // As `binnacle uninstall`: an OLM v1 ClusterExtension's twin is the manager's, and a PlatformOperator's extension is refused.
        await ctx.client.delete(await extensionSpecRef(ctx.client, b));
        return ok({ deleted: b });
      }
    }
    return b === undefined || c === undefined ? undefined : this.extensionPart(method, b, c, ctx);
  }

  /** extensions/NAME/PART: events, uninstall-preview, apis, revisions, timeline, drift, rollback-preview, rollback, approve. */
  private async extensionPart(method: string, b: string, c: string, ctx: ApiContext): Promise<ApiResult | undefined> {
    const read = method === 'GET' && Object.hasOwn(EXTENSION_READS, c) ? EXTENSION_READS[c] : undefined;
    if (read !== undefined) return ok(await read(ctx, b));
    if (c === 'rollback' && method === 'POST') {
      const body = await readJsonBody(ctx.req);
      return ok(await rollbackExtension(ctx.client, b, exactVersion(body, 'version')));
    }
    if (c === 'approve' && method === 'POST') {
      // As the person (their client), naming the digest they saw: a plan superseded meanwhile is refused.
      const digest = requiredString(await readJsonBody(ctx.req), 'digest');
      return ok(await approvePlan(ctx.client, { kind: 'ClusterExtension', name: b, digest }));
    }
    return undefined;
  }

  /**
   * crds/CRD (the API and its objects), crds/CRD/resources[/NAME?namespace=NS]: get, create,
   * replace, delete; crds/CRD/resources/NAME/delete-preview and, for a Helm operator's kind, /drift and /timeline.
   */
  private async customResources(method: string, crd: string, sub: string | undefined, name: string | undefined, extra: string | undefined, ctx: ApiContext): Promise<ApiResult | undefined> {
    if (sub === undefined && name === undefined && method === 'GET') return ok(await crdView(ctx.client, this.catalogs, crd));
    if (sub !== 'resources') return undefined;
    const namespace = ctx.url.searchParams.get('namespace') ?? undefined;
    if (extra !== undefined) return name === undefined || method !== 'GET' ? undefined : this.resourceView(ctx, crd, name, namespace, extra);
    if (name !== undefined && method === 'DELETE') return (await deleteResource(ctx.client, crd, name, namespace)) ? ok({ deleted: name }) : notFound(`custom resource ${name}`);
    if (name === undefined && method === 'POST') return ok({ created: (await createResource(ctx.client, crd, await readJsonBody(ctx.req))).metadata }, 201);
    if (name !== undefined && method === 'GET') return ok(await getResource(ctx.client, crd, name, namespace));
    if (name !== undefined && method === 'PATCH') return ok({ updated: (await updateResource(ctx.client, crd, name, namespace, await readJsonBody(ctx.req))).metadata });
    return undefined;
  }

  /** crds/CRD/resources/NAME/VIEW: what deleting it would remove, its drift, its release timeline. */
  private async resourceView(ctx: ApiContext, crd: string, name: string, namespace: string | undefined, view: string): Promise<ApiResult | undefined> {
    if (view === 'delete-preview') return ok((await deletePreview(ctx.client, crd, name, namespace)) satisfies ResourceDeletePreview);
    if (view === 'drift') return ok((await resourceDrift(ctx.client, crd, name, namespace)) satisfies ReleaseDriftView);
    if (view === 'timeline') return ok((await resourceTimeline(ctx.client, crd, name, namespace)) satisfies ReleaseTimeline);
    return undefined;
  }

  private async packages(ctx: ApiContext): Promise<ApiResult> {
    const { catalogs, warnings } = await this.catalogs.served(ctx.client);
    const packages = catalogs.flatMap((c) => {
      let list = this.summaries.get(c);
      if (list === undefined) this.summaries.set(c, (list = packageSummaries([c])));
      return list;
    });
    packages.sort((a, b) => a.displayName.localeCompare(b.displayName) || a.catalog.localeCompare(b.catalog));
    return ok({ packages, catalogs: catalogs.map((c) => c.name), warnings } satisfies PackageList);
  }

  private async findCatalog(ctx: ApiContext, name: string): Promise<Awaited<ReturnType<CatalogCache['served']>>['catalogs'][number] | undefined> {
    return (await this.catalogs.served(ctx.client)).catalogs.find((c) => c.name === name);
  }

  private async packagePage(ctx: ApiContext, catalogName: string, pkg: string): Promise<ApiResult> {
    const catalog = await this.findCatalog(ctx, catalogName);
    if (catalog === undefined) return notFound(`serving catalog ${catalogName}`);
    const detail = packageDetail(catalog, pkg);
    if (detail === undefined) return notFound(`package ${pkg} in catalog ${catalogName}`);
    const ext = await installerOf(ctx.client, pkg);
    const installed = ext?.status?.install?.bundle.name;
    const path = ext === undefined ? undefined : this.upgradePathOf(await this.catalogs.served(ctx.client), ext, await installedOthers(ctx.client, ext));
    const graphs: Record<string, GraphLayout> = {};
    for (const ch of detail.channels) {
      const deprecated = new Set(ch.entries.filter((x) => x.deprecation !== undefined).map((x) => x.name));
      const here = ch.entries.some((x) => x.name === installed);
      graphs[ch.name] = layoutUpgradeGraph(ch.entries, { head: ch.head, installed: here ? installed : undefined, deprecated, upgradePath: here ? path : undefined });
    }
    return ok({ ...detail, installedBundle: installed, graphs } satisfies PackagePage);
  }

  /**
   * Where the extension's next upgrade goes, through the catalogs its selector draws from that the
   * console reads (one index per set of contents), with what else is installed.
   */
  private upgradePathOf(served: { catalogs: ServedCatalog[] }, ext: ClusterExtension, others: InstalledBundle[]): UpgradePath | undefined {
    const b = ext.status?.install?.bundle;
    if (b === undefined) return undefined;
    const selector = ext.spec.source.catalog.selector;
    const cs = served.catalogs.filter((c) => matchesSelector({ name: c.name, labels: c.labels ?? {} }, selector));
    if (this.index === undefined || this.index.of.length !== cs.length || this.index.of.some((c, i) => c !== cs[i])) this.index = { of: cs, index: new CatalogIndex(cs) };
    const cat = ext.spec.source.catalog;
    return upgradePath(this.index.index, { package: b.package, version: b.version, channels: cat.channels, versionRange: cat.version, upgradePolicy: cat.upgradeConstraintPolicy, others });
  }

  private async icon(ctx: ApiContext, catalogName: string, pkg: string): Promise<ApiResult> {
    const catalog = await this.findCatalog(ctx, catalogName);
    const p = catalog?.config.packages.find((x) => x.name === pkg);
    const icon = p === undefined ? undefined : iconOf(p);
    return icon === undefined ? notFound(`icon of ${pkg}`) : { status: 200, bytes: icon.data, type: icon.type };
  }

  private async plan(ctx: ApiContext): Promise<ApiResult> {
    const body = await readJsonBody(ctx.req);
    const request = installRequest(body);
    const serviceAccount = optionalString(body, 'serviceAccount') === undefined ? undefined : dnsLabel(body, 'serviceAccount');
    // A plan is `binnacle plan` over the person's own connection to the API server: it changes
    // nothing (reads, server-side dry runs, access reviews; its render writes nothing). A client
    // that is no such connection (a test's fake cluster) cannot plan.
    if (!(ctx.client instanceof KubeClient)) return { status: 501, json: { error: 'plans run over a connection to the API server, and this client is none' } };
    const result = await plan(ctx.client, { ...request, ...(serviceAccount === undefined ? {} : { serviceAccount }) }, { cacheDir: join(this.opts.cacheDir, 'plan'), logger: this.opts.logger });
    return ok(result satisfies PlanView); // the page reads actions/plan.ts's Plan as a PlanView
  }

  private async createExtension(ctx: ApiContext): Promise<ApiResult> {
    const body = await readJsonBody(ctx.req);
    const { packageName, name, namespace, channels, version } = installRequest(body);
    const serviceAccount = dnsLabel(body, 'serviceAccount');
    const catalog = body.catalog === undefined || body.catalog === '' ? undefined : requiredString(body, 'catalog');
    const ce: ClusterExtension = {
      apiVersion: API_VERSION,
      kind: 'ClusterExtension',
      metadata: { name },
      spec: {
        namespace,
        serviceAccount: { name: serviceAccount },
        source: {
          sourceType: 'Catalog',
          catalog: {
            packageName,
            ...(channels === undefined ? {} : { channels }),
            ...(version === undefined ? {} : { version }),
            ...(catalog === undefined ? {} : { selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalog } } }),
          },
        },
      },
    };
    const created = await ctx.client.create<ClusterExtension>(ce);
    return ok({ created: created.metadata.name }, 201);
  }

  private async patchExtension(ctx: ApiContext, name: string): Promise<ApiResult> {
    const body = await readJsonBody(ctx.req);
    const channels = channelList(body, 'channel');
    const version = versionRange(body, 'version');
    if (!('channel' in body) && !('version' in body)) throw new InputError('body', 'nothing to change: give channel and/or version');
    // null removes the field (merge patch), so an empty form field means "any".
    const patch = { spec: { source: { catalog: { ...('channel' in body ? { channels: channels ?? null } : {}), ...('version' in body ? { version: version ?? null } : {}) } } } };
    await ctx.client.patch(await extensionSpecRef(ctx.client, name), patch, 'merge');
    return ok({ patched: name });
  }
}
