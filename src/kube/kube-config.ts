/**
 * @kubernetes/client-node's KubeConfig, the one part of that package Binnacle uses (kubeconfig
 * loading and its authentication: certificates, tokens, exec plugins, auth providers). Importing
 * the package loads its whole generated API as well: about 60 MiB of memory and 0.4 s before a
 * command can talk to a cluster. So `npm run build` bundles KubeConfig alone, tree-shaken, into
 * dist/vendor/kubeconfig.js (kube-config-bundle.ts), and the built CLI and manager load that; from
 * the sources (development, tests) the package itself is loaded. It is the same code either way.
 */
import { existsSync } from 'node:fs';
import type * as ClientNode from '@kubernetes/client-node';

const vendored = new URL('../vendor/kubeconfig.js', import.meta.url);

const loaded = (existsSync(vendored) ? await import(vendored.href) : await import('@kubernetes/client-node')) as Pick<typeof ClientNode, 'KubeConfig'>;

export const KubeConfig = loaded.KubeConfig;
export type KubeConfig = ClientNode.KubeConfig;
