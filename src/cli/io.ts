import { type ParseArgsConfig, parseArgs } from 'node:util';

/** Every CLI command is `run(args, io) → exit code`, so tests drive commands without spawning processes. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Environment the command may read (defaults to process.env in main). */
  env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the user interrupts a long-running command (Ctrl-C); undefined for commands that end by themselves. */
  interrupted?: Promise<void>;
}

export type CliCommand = (args: string[], io: CliIo) => Promise<number>;

/** Bad input from the command line: printed to stderr, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * A command's flags, strictly: no positionals, no unknown flags. What `parseArgs` refuses becomes a UsageError
 * (exit 2), followed by the command's usage when it is given.
 */
export function parseFlags<const T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  usage?: string,
) {
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true }).values;
  } catch (error) {
    const message = (error as Error).message;
    throw new UsageError(usage === undefined ? message : `${message}\n${usage}`, { cause: error });
  }
}
