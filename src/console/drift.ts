/**
 * Drift as the console shows it: for an installed extension, each release of its set (one per
 * BundleDeployment) against the live objects; for a Helm operator's custom resource, its
 * release. The comparing is `src/apply/drift.ts`'s; this only finds the releases, reading as
 * the person (a release's records are Secrets: without list on them, the answer is 403).
 */
import { releaseDrift } from '../apply/drift.js';
import { describeNeeds } from '../installed/index.js';
import type { ConsoleClient } from './client.js';
import type { ExtensionDrift, ReleaseDriftView } from './contract/api-types.js';
import { extensionReleases } from './installed.js';
import { releaseOfResource } from './resources.js';

export async function extensionDrift(client: ConsoleClient, name: string): Promise<ExtensionDrift> {
  const releases: ExtensionDrift['releases'] = [];
  for (const { unit, release } of await extensionReleases(client, name)) {
    const drift = await releaseDrift(client, release);
    releases.push({ bundleDeployment: unit.bundleDeployment, package: unit.package, neededBy: describeNeeds(unit.needs), ...(drift satisfies ReleaseDriftView) });
  }
  return { name, releases };
}

/** The release of a Helm operator's custom resource (the release is named as the resource, in its namespace). */
export async function resourceDrift(client: ConsoleClient, crdName: string, name: string, namespace: string | undefined): Promise<ReleaseDriftView> {
  return releaseDrift(client, await releaseOfResource(client, crdName, name, namespace));
}
