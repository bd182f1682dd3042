/**
 * The CustomResourceDefinitions of Binnacle's APIs, with structural schemas, printer columns
 * and short names so `kubectl get` is the natural way to look at everything.
 */
import type { KubeObject } from '../kube/types.js';
import { GROUP, VERSION } from './types.js';

type Schema = Record<string, unknown>;

const str = (description?: string, extra: Schema = {}): Schema => ({ type: 'string', ...(description === undefined ? {} : { description }), ...extra });
const int = (description?: string, extra: Schema = {}): Schema => ({ type: 'integer', ...(description === undefined ? {} : { description }), ...extra });
const bool = (description?: string): Schema => ({ type: 'boolean', ...(description === undefined ? {} : { description }) });
const obj = (properties: Schema, required: string[] = [], extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required } : {}),
  ...extra,
});
const arr = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
const freeform = (description: string): Schema => ({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true });

const conditions: Schema = arr(
  obj(
    {
      type: str(),
      status: str(undefined, { enum: ['True', 'False', 'Unknown'] }),
      reason: str(),
      message: str(),
      lastTransitionTime: str(undefined, { format: 'date-time' }),
      observedGeneration: int(),
    },
    ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  ),
  { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] },
);

const objectRef = obj({ apiVersion: str(), kind: str(), name: str(), namespace: str() }, ['apiVersion', 'kind', 'name']);

/** A basic-auth Secret (username, password) for an http or git source, read as the installing ServiceAccount. */
const secretRef = obj({ namespace: str(), name: str() }, ['namespace', 'name']);

/** A signature policy: the artifact must carry a cosign signature that a `*.pub` key of the Secret verifies. */
const verifyPolicy = (whoReads: string): Schema =>
  obj(
    {
      provider: str('cosign (notation is not supported).', { enum: ['cosign'], default: 'cosign' }),
      secretRef: obj({ namespace: str(), name: str() }, ['namespace', 'name'], { description: `A Secret whose *.pub keys are PEM public keys (several: a key rotation), read as ${whoReads}.` }),
    },
    ['secretRef'],
    { description: 'Verify the OCI artifact\'s signature before it is unpacked; other source types are refused.' },
  );

const bundleSource: Schema = obj(
  {
    type: str('Where the bundle comes from.', { enum: ['image', 'git', 'http', 'configMaps', 'local'] }),
    image: obj({ ref: str('Image reference, by tag or digest.'), pullSecret: obj({ namespace: str(), name: str() }, ['namespace', 'name']), insecure: bool('Plain HTTP registry.') }, ['ref']),
    git: obj({ repository: str(), ref: obj({ branch: str(), tag: str(), commit: str() }), directory: str(), secret: secretRef }, ['repository', 'ref']),
    http: obj({ url: str(), sha256: str(), secret: secretRef }, ['url']),
    configMaps: arr(obj({ namespace: str(), name: str(), path: str() }, ['namespace', 'name'])),
    local: obj({ path: str() }, ['path']),
    verify: verifyPolicy('the installing ServiceAccount'),
  },
  ['type'],
);

/** Flux's postRenderers: Kustomize-style patches (apply/post-render.ts), bounded. */
const postRenderers = arr(
  obj({
    kustomize: obj({
      patches: arr(
        obj(
          {
            patch: str('YAML: a list of JSON Patch (RFC 6902) operations, or an object applied as a merge patch (RFC 7386; a list is replaced whole).', { maxLength: 65536 }),
            target: obj({ group: str(), version: str(), kind: str(), name: str(), namespace: str(), labelSelector: str('Equality (k=v) and existence (k) terms, comma-separated.') }),
          },
          ['patch'],
        ),
        { maxItems: 50 },
      ),
    }),
  }),
  { maxItems: 10, description: "Patches applied to every release's rendered objects after Helm's render and before the scope check, as Flux's postRenderers; part of each release's input digest." },
);

/** Fields other field managers hold (apply/types.ts ConflictPolicy). */
const conflictPolicy = str(
  'What an apply does with a field another field manager holds with another value: Force (default) takes it, as helm --force-conflicts; Fail refuses the change before anything is applied, naming the manager and the fields.',
  { enum: ['Force', 'Fail'] },
);

/** How health is judged (apply/health.ts): Helm 4's wait strategies. */
const waitStrategy = str(
  "How the release's health is judged before it is called installed, as Helm 4's --wait: watcher (default; kstatus: claims Bound, LoadBalancers addressed, custom resources' observedGeneration, Stalled and Reconciling, with Binnacle's stricter rules kept), legacy (Binnacle's rules before Helm 4) or hookOnly (only hooks are waited for).",
  { enum: ['watcher', 'legacy', 'hookOnly'] },
);

/** How much one release may hold (apply/limits.ts). */
const limits: Schema = obj({
  maxObjects: int('Objects a render may hold (manifest, CRDs and hooks). Default 2000, at most 20000.', { minimum: 1 }),
  maxManifestBytes: int('Bytes a render may have. Default 8 MiB, at most 32 MiB.', { minimum: 1 }),
});

/** Drift rules, as Flux helm-controller's driftDetection (validated further by apply/drift-policy.ts). */
const drift: Schema = obj(
  {
    mode: str('Repair drift (default), only report it (Warn: a Drifted condition and an Event), or neither (Off).', { enum: ['Repair', 'Warn', 'Off'] }),
    ignore: arr(
      obj(
        {
          paths: arr(str(), { minItems: 1, description: 'JSON pointers (RFC 6901), e.g. /spec/replicas.' }),
          target: obj({ group: str(), kind: str(), name: str(), namespace: str(), labelSelector: obj({ matchLabels: { type: 'object', additionalProperties: { type: 'string' } } }) }),
        },
        ['paths'],
      ),
      { description: 'Fields left to other writers: neither repaired nor reported; an upgrade that changes one still applies it.' },
    ),
  },
  [],
  { description: 'What happens when the live objects differ from what was applied.' },
);

interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  priority?: number;
}

/** A column showing one field (status by default) of the condition of this type. */
function conditionColumn(type: string, field: 'status' | 'message' = 'status', priority?: number, name = type): PrinterColumn {
  return { name, type: 'string', jsonPath: `.status.conditions[?(@.type=='${type}')].${field}`, ...(priority === undefined ? {} : { priority }) };
}

/** A cluster-scoped Binnacle CRD; its singular is the kind in lower case, its plural that with an s. */
function crd(opts: {
  kind: string;
  shortNames: string[];
  spec: Schema;
  status: Schema;
  columns: PrinterColumn[];
  description: string;
}): KubeObject {
  const singular = opts.kind.toLowerCase();
  const plural = `${singular}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}`, labels: { 'app.kubernetes.io/part-of': 'binnacle' } },
    spec: {
      group: GROUP,
      scope: 'Cluster',
      names: { kind: opts.kind, listKind: `${opts.kind}List`, plural, singular, shortNames: opts.shortNames, categories: ['binnacle'] },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [...opts.columns, { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
          schema: { openAPIV3Schema: obj({ apiVersion: str(), kind: str(), metadata: { type: 'object' }, spec: opts.spec, status: opts.status }, ['spec'], { description: opts.description }) },
        },
      ],
    },
  };
}

export const CLUSTER_CATALOG_CRD = crd({
  kind: 'ClusterCatalog',
  shortNames: ['ccat'],
  description: 'A catalog of operator bundles, pulled from an image and served over HTTP.',
  spec: obj(
    {
      source: obj(
        {
          type: str('Image: an FBC image; ConfigMaps: FBC files in ConfigMaps (no registry).', { enum: ['Image', 'ConfigMaps'] }),
          image: obj({ ref: str(), pollIntervalMinutes: int(undefined, { minimum: 1 }), insecure: bool() }, ['ref']),
          verify: verifyPolicy("the manager's own identity (install-self lets it read Secrets in its own namespace only)"),
          configMaps: arr(obj({ namespace: str(), name: str() }, ['namespace', 'name'])),
          pollIntervalMinutes: int('ConfigMaps: how often to re-read them.', { minimum: 1 }),
        },
        ['type'],
      ),
      priority: int('Higher wins when catalogs offer the same bundle.', { default: 0 }),
      availabilityMode: str(undefined, { enum: ['Available', 'Unavailable'], default: 'Available' }),
    },
    ['source'],
  ),
  status: obj({
    conditions,
    observedGeneration: int(),
    resolvedSource: obj({ type: str(), image: obj({ ref: str() }) }),
    urls: obj({ base: str() }),
    lastUnpacked: str(undefined, { format: 'date-time' }),
  }),
  columns: [
    conditionColumn('Serving'),
    { name: 'Priority', type: 'integer', jsonPath: '.spec.priority' },
    { name: 'Resolved', type: 'string', jsonPath: '.status.resolvedSource.image.ref', priority: 1 },
  ],
});

export const BUNDLE_DEPLOYMENT_CRD = crd({
  kind: 'BundleDeployment',
  shortNames: ['bd'],
  description: 'One bundle, unpacked from its source and applied to the cluster.',
  spec: obj(
    {
      source: bundleSource,
      format: str(undefined, { enum: ['registry+v1', 'plain', 'helm'] }),
      installNamespace: str(),
      watchNamespace: str(),
      watchNamespaces: arr(str(), { description: 'Several watched namespaces (MultiNamespace install mode).' }),
      config: freeform('Deployment overrides: env, envFrom, volumes, volumeMounts, tolerations, resources, nodeSelector, affinity, annotations.'),
      bundleConfig: freeform("OLM v1's registry+v1 bundle configuration (watchNamespace, deploymentConfig), checked with OLM v1's rules; replaces watchNamespace(s) and config."),
      olmv1Owner: str("The olm.operatorframework.io/v1 ClusterExtension this bundle is installed for: its objects carry OLM v1's owner labels (informational; ownership stays Binnacle's).", { maxLength: 253 }),
      olmv1OwnerUID: str("That ClusterExtension's uid: the objects operator-controller installed for it (its controller ownerReference) are taken over in place.", { maxLength: 128 }),
      serviceAccount: obj({ name: str(), namespace: str('Namespace of the ServiceAccount (default: installNamespace).') }, ['name']),
      adoptExisting: bool('Take over objects that exist but belong to no one or someone else (as helm --take-ownership).'),
      conflictPolicy,
      waitStrategy,
      postRenderers,
      crdUpgradeSafety: str('Strict (default) refuses a CRD change that is not upgrade-safe; None applies it unchecked.', { enum: ['Strict', 'None'] }),
      autoRollback: bool(),
      keepFailedInstall: bool('Keep a failed first install for debugging instead of removing it (as helm install --atomic does).'),
      releaseName: str(),
      values: freeform('Format helm: the chart values.'),
      crdPolicy: str("Format helm: what to do with the chart's crds/ (default Create, as helm install does).", { enum: ['Skip', 'Create', 'CreateReplace'] }),
      disableHooks: bool('Format helm: run no hooks.'),
      drift,
      limits,
    },
    ['source', 'format', 'installNamespace'],
  ),
  status: obj({
    conditions,
    observedGeneration: int(),
    resolvedSource: freeform('The source pinned: image digest, git commit, archive checksum.'),
    contentDigest: str(),
    revision: int(),
    appliedObjects: arr(objectRef),
    warnings: arr(obj({ object: str(), field: str(), message: str() }, ['object', 'field', 'message']), {
      description: 'Fields of the bundle that their schemas do not declare, dropped when applying (as OLM does).',
    }),
  }),
  columns: [
    conditionColumn('Installed'),
    conditionColumn('Healthy'),
    { name: 'Revision', type: 'integer', jsonPath: '.status.revision' },
    { name: 'Namespace', type: 'string', jsonPath: '.spec.installNamespace', priority: 1 },
  ],
});

const approvalMode = str('Manual: a newer version waits until the digest of its plan (status.pendingPlan) is approved by the binnacle.dev/approved-plan annotation.', { enum: ['Automatic', 'Manual'] });

/** `PendingPlan` (approval.ts): what an upgrade awaiting approval would do. */
const pendingPlan = obj({
  digest: str('sha256 of what the upgrade would do; approve it with the binnacle.dev/approved-plan annotation.'),
  changes: arr(obj({ name: str(), package: str(), from: str(), to: str(), ref: str(), digest: str() })),
  objects: obj({ create: int(), update: int(), delete: int(), unchanged: int(), changed: arr(str()) }),
  crdSafety: arr(obj({ crd: str(), safe: bool(), problems: arr(str()) })),
  missingPermissions: arr(str()),
  supersedes: str('The unapproved plan this one replaced.'),
  since: str(undefined, { format: 'date-time' }),
  message: str(),
});

const resolvedBundle = obj({ name: str(), package: str(), version: str(), image: str(), catalog: str() });

export const CLUSTER_EXTENSION_CRD = crd({
  kind: 'ClusterExtension',
  shortNames: ['cext'],
  description: 'An operator the cluster should have: resolved from catalogs, installed, kept up to date.',
  spec: obj(
    {
      namespace: str('Install namespace.'),
      serviceAccount: obj({ name: str('ServiceAccount whose permissions the install uses.'), namespace: str('Namespace of the ServiceAccount (default: the install namespace).') }, ['name']),
      source: obj(
        {
          sourceType: str(undefined, { enum: ['Catalog'] }),
          catalog: obj(
            {
              packageName: str(),
              version: str('Version range, e.g. ">=1.2 <2" or "~1.4".'),
              channels: arr(str()),
              selector: obj({
                matchLabels: { type: 'object', additionalProperties: { type: 'string' } },
                matchExpressions: arr(obj({ key: str(), operator: str(undefined, { enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }), values: arr(str()) }, ['key', 'operator'])),
              }),
              upgradeConstraintPolicy: str(undefined, { enum: ['CatalogProvided', 'SelfCertified'], default: 'CatalogProvided' }),
            },
            ['packageName'],
          ),
        },
        ['sourceType', 'catalog'],
      ),
      install: obj({ watchNamespace: str(), watchNamespaces: arr(str()), config: freeform('Deployment overrides.'), bundleConfig: freeform("OLM v1's bundle configuration, passed to the main BundleDeployment."), adoptExisting: bool(), conflictPolicy, waitStrategy, crdUpgradeSafety: str('Strict (default) or None: passed to the BundleDeployments.', { enum: ['Strict', 'None'] }), autoRollback: bool(), keepFailedInstall: bool('Keep a failed first install for debugging.'), approval: approvalMode }),
      verify: verifyPolicy("the extension's ServiceAccount; copied to each BundleDeployment's spec.source.verify"),
      resolutionHistoryLimit: int('How many resolutions status.history keeps.', { minimum: 0, maximum: 100, default: 10 }),
      drift,
      upgradeApproval: approvalMode,
    },
    ['namespace', 'serviceAccount', 'source'],
  ),
  status: obj({
    conditions,
    observedGeneration: int(),
    install: obj({
      bundle: resolvedBundle,
      bundleDeployment: str('The BundleDeployment that installs it.'),
      namespace: str('Where it runs: a dependency taken over keeps the namespace it was installed in.'),
    }),
    resolution: obj({ bundles: arr(resolvedBundle), explanation: str(), notices: arr(str(), { description: 'Cluster constraints reported but not enforced.' }), requestUnmatched: bool('The last resolution failed because no bundle of the requested package matches the request.'), ambiguousCatalogs: arr(str(), { description: 'The last resolution was refused: these catalogs, of the same priority, offer the chosen bundle (OLM v1 twins only).' }) }),
    history: arr(
      obj(
        {
          time: str(undefined, { format: 'date-time' }),
          reason: str('Why it was resolved again.', { enum: ['Initial', 'SpecChanged', 'CatalogChanged', 'DependencyChanged'] }),
          generation: int(),
          catalogs: arr(obj({ name: str(), digest: str() })),
          bundles: arr(obj({ package: str(), version: str(), name: str() })),
          outcome: str(undefined, { enum: ['Resolved', 'Failed'] }),
          message: str(),
        },
        ['time', 'reason', 'outcome'],
      ),
      { description: 'The last resolutions, newest last.' },
    ),
    pendingPlan,
  }),
  columns: [
    { name: 'Package', type: 'string', jsonPath: '.spec.source.catalog.packageName' },
    { name: 'Installed Bundle', type: 'string', jsonPath: '.status.install.bundle.name' },
    { name: 'Version', type: 'string', jsonPath: '.status.install.bundle.version' },
    conditionColumn('Installed'),
    conditionColumn('Progressing'),
    { name: 'Pending Plan', type: 'string', jsonPath: '.status.pendingPlan.digest', priority: 1 },
  ],
});

export const PLATFORM_OPERATOR_CRD = crd({
  kind: 'PlatformOperator',
  shortNames: ['pop'],
  description: 'Packages the cluster must always have; their health is the cluster’s health.',
  spec: obj(
    {
      packages: arr(obj({ name: str(), channel: str(), version: str(), namespace: str() }, ['name']), { minItems: 1 }),
      serviceAccount: obj({ name: str(), namespace: str() }, ['name', 'namespace']),
    },
    ['packages'],
  ),
  status: obj({
    conditions,
    observedGeneration: int(),
    packages: arr(
      obj({
        name: str(),
        extension: str('The ClusterExtension that installs it.'),
        installed: bool(),
        healthy: bool(),
        version: str(),
        reason: str(undefined, { enum: ['Healthy', 'Installing', 'Upgrading', 'UpgradeBlocked', 'Failed', 'Unhealthy', 'Removing', 'Removed'] }),
        message: str(),
      }),
    ),
  }),
  columns: [
    conditionColumn('Available'),
    conditionColumn('Progressing'),
    conditionColumn('Degraded'),
    conditionColumn('Available', 'message', 1, 'Message'),
  ],
});

export const HELM_OPERATOR_CRD = crd({
  kind: 'HelmOperator',
  shortNames: ['hop'],
  description: "A Helm chart served as an operator: each kind's custom resources are Helm releases of the chart, their spec its values.",
  spec: obj(
    {
      chart: obj({
        oci: obj({ ref: str('oci://host/repository/chart'), insecure: bool('Plain HTTP registry.') }, ['ref']),
        repository: obj({ url: str('Chart repository URL (its index.yaml).'), name: str('Chart name.') }, ['url', 'name']),
        version: str('Version range, as helm --version takes it.'),
        pollIntervalMinutes: int('How often to look for a newer version in range.', { minimum: 1 }),
        verify: verifyPolicy("the manager's own identity (install-self lets it read Secrets in its own namespace only); an OCI chart only"),
      }),
      kinds: arr(
        obj(
          {
            group: str(),
            version: str(),
            kind: str(),
            plural: str(),
            chart: str('A subchart that serves this kind (dependency names or aliases, a/b).'),
            overrideValues: { type: 'object', additionalProperties: { type: 'string' }, description: 'Dotted keys set over each CR spec; ${ENV} is expanded.' },
            valuesFrom: arr(obj({ kind: str(undefined, { enum: ['ConfigMap', 'Secret'] }), name: str(), valuesKey: str(), targetPath: str(), optional: bool() }, ['kind', 'name'])),
            watchDependentResources: bool(),
            reconcilePeriod: str('Go duration, e.g. 1m.'),
            minReconcilePeriod: str("The least period a CR's reconcile-period annotation may ask for (Go duration); default 1m."),
            maxConcurrentReconciles: int(undefined, { minimum: 1 }),
            selector: obj({ matchLabels: { type: 'object', additionalProperties: { type: 'string' } } }),
            crdPolicy: str(undefined, { enum: ['Skip', 'Create', 'CreateReplace'] }),
          },
          ['group', 'version', 'kind'],
        ),
        { minItems: 1 },
      ),
      serviceAccount: obj(
        {
          name: str("The ServiceAccount releases act as, in each custom resource's own namespace."),
          namespace: str('With it: that one ServiceAccount for every custom resource, wherever it is (an explicit cluster-wide identity).'),
        },
        ['name'],
      ),
      allowedObjects: obj({
        namespaces: arr(str(), { description: 'Further namespaces a release may write to.' }),
        clusterScopedKinds: arr(str(), { description: 'Cluster-scoped kinds a release may hold: Kind.group, or Kind for the core group.' }),
      }),
      deletionPolicy: str('What deleting the HelmOperator does to its custom resources: Uninstall their releases, or Orphan them.', { enum: ['Uninstall', 'Orphan'] }),
      postRenderers,
      conflictPolicy,
      takeOwnership: bool("Releases take over objects that exist and that no release, owner or controller holds (as helm --take-ownership, narrowed); never a Namespace, CRD or volume."),
      drift,
      limits,
      upgradeApproval: approvalMode,
    },
    ['chart', 'kinds'],
  ),
  status: obj({
    conditions,
    observedGeneration: int(),
    chart: obj({ name: str(), version: str(), digest: str() }),
    kinds: arr(obj({ kind: str(), crd: str(), schema: str(), warnings: int() })),
    pendingPlan,
  }),
  columns: [
    conditionColumn('Ready'),
    { name: 'Chart', type: 'string', jsonPath: '.status.chart.name' },
    { name: 'Version', type: 'string', jsonPath: '.status.chart.version' },
  ],
});

export const ALL_CRDS: readonly KubeObject[] = [CLUSTER_CATALOG_CRD, BUNDLE_DEPLOYMENT_CRD, CLUSTER_EXTENSION_CRD, PLATFORM_OPERATOR_CRD, HELM_OPERATOR_CRD];
