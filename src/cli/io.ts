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
