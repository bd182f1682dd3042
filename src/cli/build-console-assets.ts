/** `npm run build`'s step for the console: bundles src/console/web into .cache/console/ (BINNACLE_CACHE_DIR/console when set). */
import { join } from 'node:path';
import { cacheDir } from '../cluster/layout.js';
import { ensureConsoleAssets } from '../console/assets.js';

const out = await ensureConsoleAssets({ outDir: join(cacheDir(), 'console'), force: true });
process.stdout.write(`console assets built in ${out}\n`);
