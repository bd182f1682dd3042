/**
 * One side of bench/yaml.ts, as a process of its own: reads every .yaml/.yml file under the
 * folders given (Helm charts' templates/ left out: they are templates, not YAML) with the reader
 * of bundle manifests and catalogs (bundle/yaml-docs.ts parseYamlDocuments, which tries
 * util/yaml.ts's js-yaml path first; BINNACLE_FAST_YAML=0 turns that path off) and prints one JSON line: files, documents, bytes, the time spent reading
 * (the walk and file reads left out) and a digest of every value read, so both sides can be
 * checked to read the same thing.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../../src/util/canonical-json.js';
import { parseYamlDocuments } from '../../src/bundle/yaml-docs.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name) && !e.parentPath.split(path.sep).includes('templates'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

const files = process.argv.slice(2).flatMap(yamlFiles);
const texts = files.map((f) => [f, readFileSync(f, 'utf8')] as const);
const read: unknown[] = [];
let documents = 0;
let refused = 0;
const start = process.hrtime.bigint();
for (const [file, text] of texts) {
  const parsed = parseYamlDocuments(text, file);
  documents += parsed.documents.length;
  if (parsed.problems.some((p) => p.severity === 'error')) refused++;
  // The values only: the fast path reports no duplicate-key warnings (it declines such texts, which the exact path then reads and warns of).
  read.push(parsed.documents);
}
const readMs = Number(process.hrtime.bigint() - start) / 1e6;
// Digested after the clock stopped: writing 140 MB as canonical JSON is not reading.
const digest = createHash('sha256');
for (const r of read) digest.update(canonicalJson(r));
process.stdout.write(`${JSON.stringify({ files: files.length, documents, refused, bytes: texts.reduce((n, [, t]) => n + Buffer.byteLength(t), 0), readMs, digest: digest.digest('hex') })}\n`);
