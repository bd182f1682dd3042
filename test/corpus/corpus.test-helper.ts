/**
 * Where the corpora are: beside the repository in `../shared/corpus/`, or where an environment
 * variable says, one name per corpus that the demo, the benches and every test read:
 * BINNACLE_CORPUS (OperatorHub 2021) and BINNACLE_CHARTS_CORPUS (Helm charts). A missing corpus
 * is an error naming the path and the variable, never a skip: a corpus test that passes without
 * its corpus has shown nothing.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

function corpusDir(variable: string, name: string): string {
  const dir = process.env[variable] ?? resolve(REPO, '../shared/corpus', name);
  if (!existsSync(dir)) throw new Error(`the ${name} corpus is missing: no directory ${dir} (set ${variable} to its path)`);
  return dir;
}

/** The 193 operators of OperatorHub in 2021, in package-manifest and bundle layouts. */
export function operatorCorpusDir(): string {
  return corpusDir('BINNACLE_CORPUS', 'operatorhub-2021');
}

/** The Helm chart corpus. */
export function corpusChartsDir(): string {
  return corpusDir('BINNACLE_CHARTS_CORPUS', 'charts');
}
