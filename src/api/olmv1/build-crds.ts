/** `npm run build`'s step for OLM v1's vendored CRDs: copies src/api/olmv1/crds/ beside the compiled crds.js (see crds.ts). */
import { cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('./crds/', import.meta.url));
const to = fileURLToPath(new URL('../../../dist/api/olmv1/crds/', import.meta.url));
cpSync(from, to, { recursive: true });
process.stdout.write(`OLM v1 CRDs copied to ${to}\n`);
