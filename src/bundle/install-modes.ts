/**
 * Install modes: which namespaces an operator watches, and whether its CSV allows that.
 * AllNamespaces = [''], OwnNamespace = [install namespace], SingleNamespace = [other],
 * MultiNamespace = several. Mirrors operator-controller's target-namespace validation.
 */
import { BinnacleError } from '../util/errors.js';
import type { RegistryV1Bundle } from './types.js';

export type InstallModeType = 'AllNamespaces' | 'OwnNamespace' | 'SingleNamespace' | 'MultiNamespace';

export function supportedInstallModes(bundle: RegistryV1Bundle): Set<string> {
  return new Set(bundle.csv.installModes.filter((m) => m.supported).map((m) => m.type));
}

/** Normalises watch namespaces: [] and [''] both mean all namespaces. */
export function targetNamespaces(watchNamespaces: readonly string[]): string[] {
  const set = [...new Set(watchNamespaces)];
  if (set.length === 0 || set.includes('')) return [''];
  return set.sort();
}

export function installModeFor(installNamespace: string, targets: readonly string[]): InstallModeType {
  if (targets.length === 1 && targets[0] === '') return 'AllNamespaces';
  if (targets.length === 1) return targets[0] === installNamespace ? 'OwnNamespace' : 'SingleNamespace';
  return 'MultiNamespace';
}

/** Throws `BUNDLE_INSTALL_MODE` when the CSV does not support watching `targets`. */
export function checkInstallMode(bundle: RegistryV1Bundle, installNamespace: string, targets: readonly string[]): InstallModeType {
  const mode = installModeFor(installNamespace, targets);
  const supported = supportedInstallModes(bundle);
  const list = `[${[...supported].sort().join(', ')}]`;
  const fail = (why: string): never => {
    throw new BinnacleError('input', 'BUNDLE_INSTALL_MODE', `${bundle.name}: ${why}; the CSV supports install modes ${list} (${bundle.csv.file}: spec.installModes)`);
  };
  if (mode === 'MultiNamespace' && targets.includes(installNamespace) && !supported.has('OwnNamespace')) {
    fail(`watching its own namespace "${installNamespace}" needs OwnNamespace`);
  }
  if (!supported.has(mode)) {
    const what =
      mode === 'AllNamespaces'
        ? 'watching all namespaces needs AllNamespaces'
        : mode === 'OwnNamespace'
          ? `watching only its install namespace "${installNamespace}" needs OwnNamespace`
          : mode === 'SingleNamespace'
            ? `watching namespace "${targets[0] ?? ''}" needs SingleNamespace`
            : `watching namespaces ${targets.join(', ')} needs MultiNamespace`;
    fail(what);
  }
  return mode;
}

/** The install the corpus and `render` default to: all namespaces if allowed, else the own namespace, else a single one. */
export function defaultWatchNamespaces(bundle: RegistryV1Bundle, installNamespace: string): string[] | undefined {
  const s = supportedInstallModes(bundle);
  if (s.has('AllNamespaces')) return [''];
  if (s.has('OwnNamespace')) return [installNamespace];
  if (s.has('SingleNamespace') || s.has('MultiNamespace')) return [`${installNamespace}-watched`];
  return undefined;
}
