/**
 * Errors with stable codes. Code branches on the class or `code`, never on the message.
 *
 * - `BinnacleError`: base; `code` is stable and documented, `exitCode` is what the CLI exits with,
 *   and `errorClass` says what a caller can do about it (see `ErrorClass`); every constructor
 *   must name it, so no error is thrown unclassified.
 * - `UsageError`: the command line itself is wrong (exit 2).
 * - `TerminalError`: retrying will not help (a reconciler stops requeueing; reason goes to status).
 * - `ValidationError`: a tree of problems, each naming its file, field path and rule.
 */

export type ExitCode = 1 | 2;

/**
 * What kind of failure an error is, decided where it is thrown:
 * - `input`: the caller gave something wrong (a spec field, a file, a flag); fix the input;
 * - `terminal`: retrying will not help (the same content fails the same way), though the input
 *   is not at fault as such (a refused apply, content that does not match its digest);
 * - `transient`: a retry may succeed (the network, the API server, a registry, state in the
 *   cluster that changes on its own);
 * - `internal`: a bug in Binnacle.
 * Controllers act on it in one place (kube/controller.ts `retryPolicy`).
 */
export type ErrorClass = 'input' | 'terminal' | 'transient' | 'internal';

export const ERROR_CLASSES: readonly ErrorClass[] = ['input', 'terminal', 'transient', 'internal'];

export class BinnacleError extends Error {
  readonly errorClass: ErrorClass;
  readonly code: string;
  readonly exitCode: ExitCode;

  constructor(errorClass: ErrorClass, code: string, message: string, options?: { cause?: unknown; exitCode?: ExitCode }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.errorClass = errorClass;
    this.code = code;
    this.exitCode = options?.exitCode ?? 1;
  }
}

/**
 * An HTTP server's refusal of what a user pointed at: a server error, a timeout or a rate limit
 * may pass; any other status (404, 401, 400, …) answers the same until the reference changes.
 */
export function httpStatusClass(status: number): ErrorClass {
  return status >= 500 || status === 408 || status === 429 ? 'transient' : 'input';
}

/**
 * The class of any thrown value: a BinnacleError's own; anything else (a TypeError, a Node
 * error nobody wrapped) is `internal`, since Binnacle should have said what it means.
 */
export function errorClassOf(err: unknown): ErrorClass {
  return err instanceof BinnacleError ? err.errorClass : 'internal';
}

/** The user called a command wrongly: unknown flag, missing argument, bad flag value. */
export class UsageError extends BinnacleError {
  constructor(message: string) {
    super('input', 'USAGE', message, { exitCode: 2 });
  }
}

/** A failure that retrying cannot fix; controllers record `reason` and stop requeueing. */
export class TerminalError extends BinnacleError {
  readonly reason: string;
  constructor(reason: string, message: string, options?: { cause?: unknown }) {
    super('terminal', `TERMINAL_${reason.toUpperCase()}`, message, options);
    this.reason = reason;
  }
}

export type Severity = 'error' | 'warning';

/** One finding of a validator: what is wrong, where, and under which rule. */
export interface Problem {
  severity: Severity;
  /** Stable rule name, e.g. `csv.install-modes` or `channel.single-head`. */
  rule: string;
  message: string;
  /** File the problem is in, when there is one. */
  file?: string;
  /** Field path inside the object, e.g. `spec.install.spec.deployments[0].name`. */
  field?: string;
}

export function problemToString(p: Problem): string {
  const where = [p.file, p.field].filter((x) => x !== undefined && x !== '').join(': ');
  return `${p.severity} [${p.rule}]${where === '' ? '' : ` ${where}:`} ${p.message}`;
}

/**
 * A tree of validation results: each node is a subject (a package, channel, bundle, file)
 * with its own problems and its children's. Rendered as an indented tree.
 */
export class ValidationResult {
  readonly subject: string;
  readonly problems: Problem[] = [];
  readonly children: ValidationResult[] = [];

  constructor(subject: string) {
    this.subject = subject;
  }

  add(p: Problem): this {
    this.problems.push(p);
    return this;
  }

  error(rule: string, message: string, where?: { file?: string; field?: string }): this {
    return this.add({ severity: 'error', rule, message, ...where });
  }

  warning(rule: string, message: string, where?: { file?: string; field?: string }): this {
    return this.add({ severity: 'warning', rule, message, ...where });
  }

  child(subject: string): ValidationResult {
    const c = new ValidationResult(subject);
    this.children.push(c);
    return c;
  }

  /** Every problem in this subtree, depth first. */
  all(): Problem[] {
    return [...this.problems, ...this.children.flatMap((c) => c.all())];
  }

  errors(): Problem[] {
    return this.all().filter((p) => p.severity === 'error');
  }

  warnings(): Problem[] {
    return this.all().filter((p) => p.severity === 'warning');
  }

  get ok(): boolean {
    return this.errors().length === 0;
  }

  /** Indented text; subtrees with nothing to say are left out. */
  render(indent = ''): string {
    if (this.all().length === 0) return '';
    const lines = [`${indent}${this.subject}`];
    for (const p of this.problems) lines.push(`${indent}  ${problemToString(p)}`);
    for (const c of this.children) {
      const r = c.render(`${indent}  `);
      if (r !== '') lines.push(r);
    }
    return lines.join('\n');
  }
}

/** Thrown when a validation result has errors and the caller cannot go on. */
export class ValidationError extends BinnacleError {
  readonly result: ValidationResult;
  constructor(result: ValidationResult) {
    super('input', 'INVALID', `${result.subject} is invalid:\n${result.render()}`);
    this.result = result;
  }
}

/** Reading a file or input failed: names the file and, where known, the field. */
export class InputError extends BinnacleError {
  readonly file: string | undefined;
  /** The field, or for library options the option's name (`version`), which the CLI says as its flag. */
  readonly field: string | undefined;
  /** The message without the file and field in front. */
  readonly detail: string;
  constructor(code: string, message: string, where?: { file?: string; field?: string; cause?: unknown }) {
    const prefix = [where?.file, where?.field].filter((x) => x !== undefined && x !== '').join(': ');
    super('input', code, prefix === '' ? message : `${prefix}: ${message}`, { cause: where?.cause });
    this.file = where?.file;
    this.field = where?.field;
    this.detail = message;
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
