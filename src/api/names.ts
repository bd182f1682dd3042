/**
 * Names Binnacle derives from others must fit where they go: label values (63 characters)
 * and Helm release names (53). A name that would be longer keeps a readable prefix and ends in
 * a hash of the whole, so it stays unique and stable.
 */
import { createHash } from 'node:crypto';

/** The longest name Binnacle derives: a Helm release name. */
export const MAX_DERIVED_NAME = 53;

export function boundedName(name: string, max = MAX_DERIVED_NAME): string {
  if (name.length <= max) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, max - 9).replace(/[-.]+$/, '')}-${hash}`;
}

/** A stable BundleDeployment name per (extension, package): upgrades pivot the same object. */
export function bundleDeploymentName(extension: string, pkg: string): string {
  // It is also the Helm release name and a label value: bounded to 53 characters.
  return boundedName(extension === pkg ? extension : `${extension}-${pkg}`);
}
