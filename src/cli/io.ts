/** Every CLI command is `run(args, io) → exit code`, so tests drive commands without spawning processes. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Environment the command may read (defaults to process.env in main). */
  env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the user interrupts a long-running command (Ctrl-C); undefined for commands that end by themselves. */
  interrupted?: Promise<void>;
  /**
   * Which streams are terminals, and how wide stderr's is. Colour (with NO_COLOR and FORCE_COLOR) and the progress
   * line follow it; absent means neither is a terminal, as for a pipe.
   */
  tty?: { stdout?: boolean; stderr?: boolean; columns?: number };
}

export type CliCommand = (args: string[], io: CliIo) => Promise<number>;

// A mark every copy of the class sets: each command of the command-line bundle is a file of its own, with its own
// copy of this module, so the command line's main module cannot tell a command's usage errors by their class.
const USAGE_ERROR = Symbol.for('calmops.UsageError');

/** Bad input from the command line: printed to stderr, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly [USAGE_ERROR] = true;
}

/** Whether `error` is a UsageError from any copy of this module. */
export function isUsageError(error: unknown): error is UsageError {
  return typeof error === 'object' && error !== null && (error as { [USAGE_ERROR]?: unknown })[USAGE_ERROR] === true;
}

/** Exit code of every usage error, as kubectl and the shell's builtins use it. */
export const USAGE_EXIT = 2;

/** A command's answer to bad input (a UsageError, or a file or setting it cannot use): what was wrong, then its usage, on stderr; exit 2. */
export function usageFailure(io: CliIo, command: string, error: Error, usage: string): number {
  io.stderr(`calmops ${command}: ${error.message}\n\n${usage}`);
  return USAGE_EXIT;
}
