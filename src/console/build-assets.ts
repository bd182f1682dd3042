/** `npm run build`'s step for the console: bundles src/console/web into .cache/console/. */
import { ensureConsoleAssets } from './assets.js';

const out = await ensureConsoleAssets({ force: true });
process.stdout.write(`console assets built in ${out}\n`);
