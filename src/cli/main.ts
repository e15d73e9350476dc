import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CliCommand, CliIo } from './io.js';
import { printable, shown } from './text.js';

/**
 * `calmops <command> [args]`: every command is a module in `commands/` exporting `run: CliCommand`, loaded only
 * when called so that `calmops triage` does not pay for what `calmops serve-snapshot` needs.
 */

const COMMANDS: ReadonlyArray<{ name: string; summary: string }> = [
  { name: 'triage', summary: 'triage a namespace: what is wrong, how sure, what is missing, what to do next' },
  { name: 'intents', summary: 'list what calmops can triage, with example phrasings' },
  { name: 'snapshot', summary: 'capture a namespace from a cluster into a replayable snapshot' },
  { name: 'serve-snapshot', summary: 'serve a snapshot through the Kubernetes API for kubectl and calmops' },
  { name: 'stats', summary: 'show triage and session statistics' },
];

export function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: calmops <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `calmops <command> --help` for the options of a command.',
    '',
  ].join('\n');
}

async function load(name: string): Promise<CliCommand | undefined> {
  try {
    // Only names from COMMANDS reach here, so the specifier never carries user input.
    const specifier = `./commands/${name}.js`;
    const module = (await import(/* @vite-ignore */ specifier)) as { run?: CliCommand };
    return module.run;
  } catch (error) {
    // A command listed here but absent from this build reads as "not available", not as a stack trace.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(`commands/${name}`)) {
      return undefined;
    }
    throw error;
  }
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout)(usage());
    return name === undefined ? 2 : 0;
  }
  if (!COMMANDS.some((c) => c.name === name)) {
    io.stderr(`calmops: unknown command "${shown(name, 80)}"\n\n${usage()}`);
    return 2;
  }
  const run = await load(name);
  if (!run) {
    io.stderr(`calmops: the ${name} command is not available in this build\n`);
    return 2;
  }
  return run(args, io);
}

/**
 * The process-bound I/O: stdout for results, stderr for everything else, Ctrl-C as `interrupted`. Both streams pass
 * through `printable`, so bytes from files, flags or a cluster never reach the terminal as control sequences (JSON
 * and YAML output already escape them, so for those this changes nothing).
 */
export function processIo(): CliIo {
  let interrupted: Promise<void> | undefined;
  return {
    stdout: (text) => process.stdout.write(printable(text)),
    stderr: (text) => process.stderr.write(printable(text)),
    env: process.env,
    // Handlers are installed only when a command asks, so Ctrl-C still ends the commands that do not.
    get interrupted() {
      interrupted ??= new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      return interrupted;
    },
  };
}

export async function runCli(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  try {
    process.exitCode = await main(argv, processIo());
  } catch (error) {
    process.stderr.write(printable(`calmops: ${error instanceof Error ? error.message : String(error)}\n`));
    process.exitCode = 1;
  }
  // Commands end by returning; a lingering handle (a keep-alive socket) must not hold the terminal.
  setTimeout(() => process.exit(), 100).unref();
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) await runCli();
