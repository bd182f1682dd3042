/**
 * What every layer shares, and the bottom of the stack: errors with stable codes (`errors`:
 * BinnacleError, InputError, TerminalError, ValidationError and its tree), the one YAML reader
 * with Go's alias rules (`yaml`, `yaml-values`), the one semver module (`semver`, blang's and
 * Masterminds' grammars), durations (`duration`), nesting limits (`nesting`), canonical JSON
 * (`canonical-json`), `-o json|yaml|table` output (`output`), deadlines and timeouts
 * (`deadline`), credential redaction (`redact`), hardened HTTP servers (`http-server`), a JSON member's span found without parsing (`json-member`), a small
 * PKI (`pki`), free ports below the ephemeral range (`ports`), ordered read-ahead (`read-ahead`), plain-object helpers (`object`)
 * and HTTPS_PROXY/HTTP_PROXY/NO_PROXY for outbound requests (`proxy-env`).
 *
 * Imports nothing of Binnacle's, only Node and npm packages; every other folder may import it.
 * The page (src/console/web) takes in `yaml-values` and `errors` too, so those stay free of Node.
 * Callers import the module they need (`../util/errors.js`), not this index, so a command loads
 * only what it uses; this index lists the folder and keeps its exports type-checked together.
 */
export * from './canonical-json.js';
export * from './deadline.js';
// Two `formatDuration`s: deadline's writes prose for messages (`30 s`), duration's Go's form (`1m30s`).
export { durationMs, goDurationMs, formatDuration as formatGoDuration } from './duration.js';
export * from './errors.js';
export * from './http-server.js';
export * from './ports.js';
export * from './json-member.js';
export * from './nesting.js';
export * from './object.js';
export * from './output.js';
export * from './pki.js';
export * from './proxy-env.js';
export * from './read-ahead.js';
export * from './redact.js';
export * from './semver.js';
export * from './yaml-values.js';
export * from './yaml.js';
