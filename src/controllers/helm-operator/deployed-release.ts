/**
 * What a Helm operator CR's `status.deployedRelease` holds: the release's name and its manifest,
 * Secrets redacted, as operator-sdk's helm-operator shows it. A whole manifest does not always
 * fit: the CR (spec and status together) must stay under etcd's 1.5 MiB request limit, and the
 * release limits accept a render of up to 8 MiB. operator-sdk writes it anyway and its status
 * update is refused for good (the CR never says Deployed). Over STATUS_MANIFEST_MAX_BYTES the
 * manifest gives way to a comment that names its size and where to read it whole; nothing of
 * it is parsed or redacted on the way (the main thread's time on a large render, issue 43 §3).
 * `uninstall-wait` then waits for what the uninstall deleted (helm-uninstall-wait.ts).
 */
import { redactSecrets } from '../../apply/index.js';
import type { ReleaseRef } from '../../apply/index.js';

/** The most of a manifest status shows: a third of etcd's limit, the rest left for the CR's spec and conditions. */
export const STATUS_MANIFEST_MAX_BYTES = 512 * 1024;

export interface DeployedRelease {
  name: string;
  manifest: string;
}

export function deployedReleaseStatus(release: ReleaseRef, manifest: string, maxBytes = STATUS_MANIFEST_MAX_BYTES): DeployedRelease {
  const bytes = Buffer.byteLength(manifest);
  if (bytes <= maxBytes) return { name: release.name, manifest: redactSecrets(manifest) };
  return { name: release.name, manifest: `# The manifest is ${bytes} bytes, more than status holds (${maxBytes}): \`helm get manifest ${release.name} -n ${release.namespace}\` shows it.\n` };
}
