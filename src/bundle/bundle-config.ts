/**
 * OLM v1's registry+v1 bundle configuration (`spec.config.inline` of an
 * `olm.operatorframework.io/v1` ClusterExtension), checked as operator-controller v1.11.0 checks
 * it: a JSON schema built from the CSV's install modes (rukpak/bundle/registryv1.go,
 * `buildBundleConfigSchema`; registryv1bundleconfig.json), validated by santhosh-tekuri/jsonschema
 * v6 and its errors worded by config/config.go (`formatSingleError`). The rules:
 *
 * - only `watchNamespace` and `deploymentConfig` are known (`additionalProperties: false`);
 * - AllNamespaces (or MultiNamespace) only: `watchNamespace` is not in the schema at all, so it
 *   is an `unknown field`;
 * - SingleNamespace or OwnNamespace supported, AllNamespaces not: `watchNamespace` is required
 *   (no default is picked; null counts as missing);
 * - with AllNamespaces too it is optional (null or absent: all namespaces);
 * - a string of 1-63 characters matching DNS-1123 label `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`;
 * - OwnNamespace without SingleNamespace: it must equal the install namespace; SingleNamespace
 *   without OwnNamespace: it must differ from it (the schema's `format`, checked before length
 *   and pattern, as the library does).
 *
 * Messages are OLM's (`required field "watchNamespace" is missing`, `unknown field "x"`,
 * `field "watchNamespace" must match pattern "…"`, …), several joined as config.go joins them.
 * The caller prefixes `invalid ClusterExtension configuration: invalid configuration: `
 * (`olmv1ConfigMessage`). `deploymentConfig` is type-checked here (an object) and decoded by
 * Binnacle's own deployment-override decoder, whose messages are Binnacle's (OLM checks it against
 * the Kubernetes schemas embedded in registryv1bundleconfig.json).
 *
 * Where this is knowingly approximate: when several errors occur, the library's order follows
 * Go's map iteration, so OLM's order is not fixed; here it is required, watchNamespace,
 * deploymentConfig, unknown fields. Where watchNamespace is optional (anyOf null|string), a bad
 * value is reported as the flattened anyOf errors (`invalid value for field …` and the branch's
 * own), as BasicOutput lists them.
 */

/** registryv1.go's `namespaceNamePattern`. */
export const WATCH_NAMESPACE_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const WATCH_NAMESPACE_RE = new RegExp(WATCH_NAMESPACE_PATTERN);
const MAX_NAMESPACE_LENGTH = 63;

/** The prefix operator-controller's provider and config.UnmarshalConfig put before a schema error (applier/provider.go:107, config.go). */
export const OLMV1_CONFIG_PREFIX = 'invalid ClusterExtension configuration: invalid configuration: ';

export type BundleConfigCheck =
  | { ok: true; watchNamespaces: string[]; deploymentConfig?: Record<string, unknown> }
  | { ok: false; errors: string[] };

/** What the CSV's install modes make of `watchNamespace` in the schema. */
export interface WatchNamespaceRule {
  /** In the schema at all (SingleNamespace or OwnNamespace supported). */
  configurable: boolean;
  /** Required (configurable, and AllNamespaces not supported). */
  required: boolean;
  /** The install-mode format: must equal (`own`) or differ from (`single`) the install namespace. */
  format?: 'own' | 'single';
}

/** `modes`: the install modes the CSV supports (install-modes.ts `supportedInstallModes`). */
export function watchNamespaceRule(s: ReadonlySet<string>): WatchNamespaceRule {
  const own = s.has('OwnNamespace');
  const single = s.has('SingleNamespace');
  const configurable = own || single;
  const format = own && !single ? 'own' : single && !own ? 'single' : undefined;
  return { configurable, required: configurable && !s.has('AllNamespaces'), ...(format === undefined ? {} : { format }) };
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** The library's `display`: a string single-quoted, anything else as Go prints it. */
function display(v: unknown): string {
  if (typeof v === 'string') return `'${JSON.stringify(v).slice(1, -1).replaceAll("'", "\\'")}'`;
  if (typeof v === 'object' && v !== null) return 'value';
  return String(v);
}

/** The string schema of watchNamespace (type, format, minLength, maxLength, pattern), in the library's order; [] when valid. */
function watchNamespaceStringErrors(value: unknown, rule: WatchNamespaceRule, installNamespace: string): string[] {
  const field = 'watchNamespace';
  if (typeof value !== 'string') return [`invalid type for field "${field}": got ${jsonType(value)}, want string`];
  // The format is checked first and ends the checks of this value when it fails.
  if (rule.format === 'own' && installNamespace !== '' && value !== installNamespace) {
    const why = `invalid value ${JSON.stringify(value)}: must be ${JSON.stringify(installNamespace)} (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`;
    return [`invalid format for field "${field}": ${display(value)} is not valid ownNamespaceInstallMode: ${why}`];
  }
  if (rule.format === 'single' && installNamespace !== '' && value === installNamespace) {
    const why = `invalid value ${JSON.stringify(value)}: must be different from ${JSON.stringify(installNamespace)} (the install namespace) because this operator uses SingleNamespace install mode to watch a different namespace`;
    return [`invalid format for field "${field}": ${display(value)} is not valid singleNamespaceInstallMode: ${why}`];
  }
  const out: string[] = [];
  // JSON schema counts characters (code points).
  const len = Array.from(value).length;
  if (len < 1) out.push(`field "${field}" must have minimum length of 1 (len=${len})`);
  if (len > MAX_NAMESPACE_LENGTH) out.push(`field "${field}" must have maximum length of ${MAX_NAMESPACE_LENGTH} (len=${len})`);
  if (!WATCH_NAMESPACE_RE.test(value)) out.push(`field "${field}" must match pattern ${JSON.stringify(WATCH_NAMESPACE_PATTERN)}`);
  return out;
}

/** The errors of watchNamespace: required, and (when the schema has it) its value. */
function watchNamespaceErrors(obj: Record<string, unknown>, rule: WatchNamespaceRule, installNamespace: string): string[] {
  const present = 'watchNamespace' in obj;
  const watch = obj['watchNamespace'];
  // `required` is satisfied by a present key; a null value then fails the type ("got null": reported as missing).
  if (rule.required && (!present || watch === null)) return ['required field "watchNamespace" is missing'];
  if (!rule.configurable || !present || watch === null) return [];
  const own = watchNamespaceStringErrors(watch, rule, installNamespace);
  if (rule.required || own.length === 0) return own;
  // Optional: anyOf [null, string], flattened as BasicOutput lists it.
  return ['invalid value for field "watchNamespace"', `invalid type for field "watchNamespace": got ${jsonType(watch)}, want null`, ...own];
}

/**
 * Checks an OLM v1 inline configuration against the configuration schema of a bundle whose CSV
 * supports `modes`. `config` undefined is `{}` (operator-controller validates an absent config
 * too, so a required watchNamespace is reported). On success: the watched namespaces (`['']` for
 * all) and the deploymentConfig, if any.
 */
export function checkBundleConfig(modes: ReadonlySet<string>, installNamespace: string, config: unknown): BundleConfigCheck {
  const cfg = config ?? {};
  if (jsonType(cfg) !== 'object') return { ok: false, errors: [`invalid type: got ${jsonType(cfg)}, want object`] };
  const obj = cfg as Record<string, unknown>;
  const rule = watchNamespaceRule(modes);
  const errors = watchNamespaceErrors(obj, rule, installNamespace);
  const dc = obj['deploymentConfig'];
  const hasDc = dc !== null && dc !== undefined;
  if (hasDc && jsonType(dc) !== 'object') errors.push(`invalid type for field "deploymentConfig": got ${jsonType(dc)}, want object`);
  // additionalProperties: false; the message names the first property the library lists.
  const known = new Set(rule.configurable ? ['watchNamespace', 'deploymentConfig'] : ['deploymentConfig']);
  const unknown = Object.keys(obj).find((k) => !known.has(k));
  if (unknown !== undefined) errors.push(`unknown field ${JSON.stringify(unknown)}`);
  if (errors.length > 0) return { ok: false, errors };
  const watch = obj['watchNamespace'];
  const watchNamespaces = typeof watch === 'string' ? [watch] : [''];
  return { ok: true, watchNamespaces, ...(hasDc ? { deploymentConfig: dc as Record<string, unknown> } : {}) };
}

/** config.go's wording of one or several errors, with the provider's prefix: the condition message. */
export function olmv1ConfigMessage(errors: readonly string[]): string {
  const body = errors.length === 1 ? (errors[0] ?? '') : `multiple errors found:\n  - ${errors.join('\n  - ')}`;
  return `${OLMV1_CONFIG_PREFIX}${body}`;
}
