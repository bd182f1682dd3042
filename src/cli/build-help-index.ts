/** `npm run build`'s step for the top-level help: writes dist/cli/help-index.json (see help-index.ts), or into the folder given. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultContext } from './context.js';
import { HELP_INDEX_FILE, helpIndexOf } from './help-index.js';
import { buildProgram } from './main.js';

const dir = process.argv[2] ?? fileURLToPath(new URL('../../dist/cli/', import.meta.url));
const out = path.join(dir, HELP_INDEX_FILE);
writeFileSync(out, `${JSON.stringify(helpIndexOf(await buildProgram(defaultContext())), null, 1)}\n`);
process.stdout.write(`top-level help indexed in ${out}\n`);
