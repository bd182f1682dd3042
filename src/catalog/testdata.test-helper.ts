/**
 * The catalog's own fixtures, for its tests and for those of the folders above it (render, store,
 * publish, the CLI): `fbc/valid` (a valid catalog), `bad/` (unreadable ones), `invalid-model`
 * (readable, but breaking `opm validate` rules) and `parity/` (one case per rule, compared with opm).
 */
import path from 'node:path';

export const CATALOG_TESTDATA = path.join(import.meta.dirname, 'testdata');
