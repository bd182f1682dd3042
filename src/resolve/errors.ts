/** Errors of the resolver; callers branch on the class or `code`. */
import { BinnacleError } from '../util/errors.js';
import type { Fact } from './facts.js';

/**
 * No set of bundles meets every rule. `facts` is a minimal clashing set (drop any one and a
 * solution exists); `sentences` says the same in words, and the message lists them.
 */
export class ResolutionError extends BinnacleError {
  readonly facts: readonly Fact[];
  readonly sentences: readonly string[];

  constructor(facts: readonly Fact[], sentences: readonly string[]) {
    super('input', 'RESOLUTION_FAILED', `no set of bundles satisfies the request:\n${sentences.map((s) => `  - ${s}`).join('\n')}`);
    this.facts = facts;
    this.sentences = sentences;
  }
}
