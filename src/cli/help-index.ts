/**
 * The top-level help without loading the command groups. `binnacle --help` lists every
 * top-level command with its usage term and description, which took importing every group
 * (about 40 modules, a third of its start-up). `npm run build` writes what that listing needs
 * into `dist/cli/help-index.json` (build-help-index.ts); the built CLI prints the top-level help
 * from it, through commander as before, so the text is the same. Run from source, where no
 * index is built, every group is loaded as before.
 */
import { readFileSync } from 'node:fs';
import { Help, type Command } from 'commander';

/** One top-level command as `--help` lists it. */
export interface HelpEntry {
  name: string;
  /** e.g. `install [options] <package>` */
  term: string;
  description: string;
}

export const HELP_INDEX_FILE = 'help-index.json';

/** The listing of `program`'s top-level commands (all groups registered). */
export function helpIndexOf(program: Command): HelpEntry[] {
  const help = program.createHelp();
  return program.commands.map((c) => ({ name: c.name(), term: help.subcommandTerm(c), description: help.subcommandDescription(c) }));
}

/** The index the build wrote beside this module, or undefined (run from source, or unreadable). */
export function loadHelpIndex(file = new URL(`./${HELP_INDEX_FILE}`, import.meta.url)): HelpEntry[] | undefined {
  try {
    const entries = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!Array.isArray(entries)) return undefined;
    const ok = entries.every((e: unknown) => typeof e === 'object' && e !== null && ['name', 'term', 'description'].every((k) => typeof (e as Record<string, unknown>)[k] === 'string'));
    return ok ? (entries as HelpEntry[]) : undefined;
  } catch {
    return undefined;
  }
}

/** Adds each command of the index to `program` as a placeholder that lists as the real one does. */
export function addIndexedCommands(program: Command, entries: readonly HelpEntry[]): void {
  const terms = new Map(entries.map((e) => [e.name, e.term]));
  for (const e of entries) program.command(e.name).description(e.description);
  const base = new Help();
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? base.subcommandTerm(cmd) });
}
