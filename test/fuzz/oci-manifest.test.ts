/**
 * Fuzzing the OCI document readers (src/oci/manifest.ts): image manifests, image indexes (OCI and
 * Docker), image configs: real-looking documents as they are, with targeted corruptions (a digest,
 * size or media type null, missing, of the wrong type or almost valid; a layer repeated) or
 * structure-aware mutations, damaged bytes and random content types. Each document is read or
 * refused with a ManifestError.
 */
import { test } from 'node:test';
import { MediaType, manifestToJson, parseImageConfig, parseManifestDocument, selectPlatform } from '../../src/oci/manifest.js';
import { type Corruption, type Mutation, byteMutationArb, corrupt, corruptionArb, fc, fuzz, mutate, mutateText, mutationArb, nastyString } from './harness.js';

const digest = (c: string): string => `sha256:${c.repeat(64)}`;
const manifest = {
  schemaVersion: 2,
  mediaType: MediaType.ociManifest,
  config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: digest('a'), size: 123 },
  layers: [
    { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: digest('b'), size: 4567, annotations: { 'org.opencontainers.image.title': 'x' } },
    { mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: digest('c'), size: 0 },
  ],
  annotations: { 'org.opencontainers.image.created': '2026-01-01T00:00:00Z' },
};
const index = {
  schemaVersion: 2,
  mediaType: MediaType.ociIndex,
  manifests: [
    { mediaType: MediaType.ociManifest, digest: digest('d'), size: 500, platform: { architecture: 'amd64', os: 'linux' } },
    { mediaType: MediaType.dockerManifest, digest: digest('e'), size: 501, platform: { architecture: 'arm64', os: 'linux', variant: 'v8' } },
  ],
};
const config = {
  architecture: 'amd64',
  os: 'linux',
  config: { Labels: { 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1' }, Env: ['A=b'] },
  rootfs: { type: 'layers', diff_ids: [digest('f')] },
};

const contentType = fc.oneof(fc.constant(undefined), fc.constantFrom(...Object.values(MediaType), 'application/json', 'text/html; charset=utf-8', ''), nastyString);

test('fuzz: OCI manifests, indexes and image configs', { timeout: 30 * 60_000 }, async () => {
  await fuzz(
    'oci-manifests',
    fc.record({
      base: fc.constantFrom(manifest, index, config),
      corruptions: fc.oneof({ weight: 1, arbitrary: fc.constant<Corruption[]>([]) }, { weight: 1, arbitrary: fc.array(corruptionArb, { minLength: 1, maxLength: 2 }) }),
      mutations: fc.oneof({ weight: 1, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 1, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 3 }) }),
      damage: byteMutationArb,
      contentType,
    }),
    ({ base, corruptions, mutations, damage, contentType: ct }) => {
      const doc = mutations.reduce<unknown>((d, m) => mutate(d, m), corruptions.reduce<unknown>((d, c) => corrupt(d, c), base));
      const bytes = new TextEncoder().encode(mutateText(JSON.stringify(doc) ?? 'null', damage));
      let read: string;
      try {
        const m = parseManifestDocument('fuzz@sha256:0', bytes, ct);
        if ('manifests' in m) selectPlatform(m);
        read = manifestToJson(m);
      } catch (err) {
        // Every document is also tried as a config, which has its own reader.
        parseImageConfig('fuzz config', bytes);
        throw err;
      }
      return read;
    },
    { ciRuns: 1500, timeoutMs: 5_000 },
  );
});
