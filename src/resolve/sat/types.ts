/**
 * The problem language of the SAT core, after Deppy's `pkg/deppy`: variables named by string
 * identifiers, each carrying constraints about itself ("subject").
 */

/** The subject must be selected. Mandatory variables are the roots ("anchors") of the search. */
export interface MandatoryConstraint {
  kind: 'mandatory';
}

/** The subject must not be selected. */
export interface ProhibitedConstraint {
  kind: 'prohibited';
}

/** If the subject is selected, at least one of `ids` is; earlier ids are preferred. */
export interface DependencyConstraint {
  kind: 'dependency';
  ids: readonly string[];
}

/** The subject and `id` are not both selected. */
export interface ConflictConstraint {
  kind: 'conflict';
  id: string;
}

/** At most `n` of `ids` are selected (the subject itself is not counted unless listed). */
export interface AtMostConstraint {
  kind: 'atMost';
  n: number;
  ids: readonly string[];
}

export type Constraint =
  | MandatoryConstraint
  | ProhibitedConstraint
  | DependencyConstraint
  | ConflictConstraint
  | AtMostConstraint;

export interface Variable {
  id: string;
  constraints: readonly Constraint[];
}

/** One input constraint together with the variable it belongs to; what a core is made of. */
export interface AppliedConstraint {
  variable: Variable;
  constraint: Constraint;
}

export interface SolveOptions {
  /** Conflicts allowed over the whole call (search, minimisation, core). Default 200,000. */
  maxConflicts?: number;
  /** Wall-clock budget for the whole call in milliseconds. Default 10,000. */
  timeoutMs?: number;
}

export interface SolveStats {
  satCalls: number;
  conflicts: number;
  decisions: number;
  propagations: number;
}

export interface Solution {
  satisfiable: true;
  /** Selected variables, in input order. */
  selected: Variable[];
  stats: SolveStats;
}

export interface Unsatisfiable {
  satisfiable: false;
  /** A minimal set of input constraints that cannot hold together: drop any one and the rest can. */
  core: AppliedConstraint[];
  stats: SolveStats;
}

export type SolveResult = Solution | Unsatisfiable;

export function describeConstraint(a: AppliedConstraint): string {
  const s = a.variable.id;
  const c = a.constraint;
  switch (c.kind) {
    case 'mandatory':
      return `${s} is mandatory`;
    case 'prohibited':
      return `${s} is prohibited`;
    case 'dependency':
      return c.ids.length === 0 ? `${s} requires a dependency that nothing provides` : `${s} requires at least one of ${c.ids.join(', ')}`;
    case 'conflict':
      return `${s} conflicts with ${c.id}`;
    case 'atMost':
      return `${s} permits at most ${c.n} of ${c.ids.join(', ')}`;
  }
}
