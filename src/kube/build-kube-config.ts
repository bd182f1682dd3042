/** `npm run build`'s step for the Kubernetes client: bundles KubeConfig into dist/vendor/ (see kube-config.ts). */
import { fileURLToPath } from 'node:url';
import { bundleKubeConfig } from './kube-config-bundle.js';

const out = fileURLToPath(new URL('../../dist/vendor/kubeconfig.js', import.meta.url));
await bundleKubeConfig(out);
process.stdout.write(`KubeConfig bundled in ${out}\n`);
