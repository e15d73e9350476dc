import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { colourEnabled } from './colour.js';
import { type CliCommand, type CliIo, isUsageError, USAGE_EXIT } from './io.js';
import { didYouMean } from './suggest.js';
import { printable, shown, terminalText } from './text.js';
import { CALMOPS_VERSION } from './version.js';

/**
 * `calmops <command> [args]`: every command is a module in `commands/` exporting `run: CliCommand` (and its `USAGE`),
 * loaded only when called so that `calmops triage` does not pay for what `calmops serve-snapshot` needs.
 */

const COMMANDS: ReadonlyArray<{ name: string; summary: string }> = [
  { name: 'triage', summary: 'triage a namespace: what is wrong, how sure, what is missing, what to do next' },
  { name: 'intents', summary: 'list what calmops can triage, with example phrasings' },
  { name: 'snapshot', summary: 'capture a namespace from a cluster into a replayable snapshot' },
  { name: 'serve-snapshot', summary: 'serve a snapshot through the Kubernetes API for kubectl and calmops' },
  { name: 'mcp', summary: 'serve triage and reads to an assistant over the Model Context Protocol (stdio)' },
  { name: 'stats', summary: 'show triage and session statistics' },
  { name: 'doctor', summary: 'check an install: Slack secret and token, kubeconfigs, RBAC, channel policy' },
  { name: 'manifest', summary: "print the Slack app manifest with your deployment's request URLs" },
  { name: 'version', summary: 'print the version of calmops' },
];

const GLOBAL_FLAGS = ['--help', '-h', '--version'];

export function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: calmops <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Flags:',
    '  -h, --help     show this help',
    '  --version      print the version of calmops',
    '',
    'Run `calmops help <command>` (or `calmops <command> --help`) for the options of a command.',
    '',
  ].join('\n');
}

export interface CommandModule {
  run?: CliCommand;
  USAGE?: string;
}

/**
 * Loads a command's module by name; undefined when this build has no such module. The sources import it; the
 * installed command (bin/calmops.js) loads the bundled module through its compiled-code cache instead.
 */
export type CommandLoader = (name: string) => Promise<CommandModule | undefined>;

/**
 * The extension of the command modules beside this one: the command-line bundle's are CommonJS files
 * (build/cli-bundle.mjs defines this), the sources' are modules. Undeclared when running from sources.
 */
declare const CALMOPS_COMMAND_EXTENSION: string | undefined;
const COMMAND_EXTENSION = typeof CALMOPS_COMMAND_EXTENSION !== 'undefined' ? CALMOPS_COMMAND_EXTENSION : '.js';

async function importCommand(name: string): Promise<CommandModule | undefined> {
  try {
    // Only names from COMMANDS reach here, so the specifier never carries user input.
    const specifier = `./commands/${name}${COMMAND_EXTENSION}`;
    return (await import(/* @vite-ignore */ specifier)) as CommandModule;
  } catch (error) {
    // A command listed here but absent from this build reads as "not available", not as a stack trace.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(`commands/${name}`)) {
      return undefined;
    }
    throw error;
  }
}

const isCommand = (name: string) => COMMANDS.some((c) => c.name === name);

function unknownCommand(name: string, io: CliIo): number {
  const hint = didYouMean(
    name,
    COMMANDS.map((c) => c.name),
  );
  io.stderr(`calmops: unknown command "${shown(name, 80)}"${hint}\n\n${usage()}`);
  return USAGE_EXIT;
}

async function runCommand(name: string, args: string[], io: CliIo, load: CommandLoader): Promise<number> {
  const module = await load(name);
  if (!module?.run) {
    io.stderr(`calmops: the ${name} command is not available in this build\n`);
    return USAGE_EXIT;
  }
  try {
    return await module.run(args, io);
  } catch (error) {
    // A command that lets bad input escape still answers as every command does: the message, its usage, exit 2.
    if (isUsageError(error)) {
      io.stderr(`calmops ${name}: ${error.message}\n${module.USAGE ? `\n${module.USAGE}` : ''}`);
      return USAGE_EXIT;
    }
    throw error;
  }
}

export async function main(argv: readonly string[], io: CliIo, load: CommandLoader = importCommand): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    io.stderr(usage());
    return USAGE_EXIT;
  }
  if (name === '--help' || name === '-h') {
    io.stdout(usage());
    return 0;
  }
  if (name === '--version') {
    io.stdout(`calmops ${CALMOPS_VERSION}\n`);
    return 0;
  }
  if (name === 'help') {
    const [topic, ...extra] = args;
    if (topic === undefined) {
      io.stdout(usage());
      return 0;
    }
    if (extra.length > 0) {
      io.stderr(`calmops help: one command at a time, got ${args.length}\n\n${usage()}`);
      return USAGE_EXIT;
    }
    if (!isCommand(topic)) return unknownCommand(topic, io);
    return runCommand(topic, ['--help'], io, load);
  }
  if (name.startsWith('-')) {
    const flag = name.split('=')[0] as string;
    io.stderr(`calmops: unknown flag "${shown(flag, 80)}"${didYouMean(flag, GLOBAL_FLAGS, false)}\n\n${usage()}`);
    return USAGE_EXIT;
  }
  if (!isCommand(name)) return unknownCommand(name, io);
  return runCommand(name, [...args], io, load);
}

/**
 * The process-bound I/O: stdout for results, stderr for everything else, Ctrl-C as `interrupted`. Both streams pass
 * through `terminalText`, so bytes from files, flags or a cluster never reach the terminal as control sequences (JSON
 * and YAML output already escape them, so for those this changes nothing); only calmops' own colours, where colour
 * is on, and the progress line's rewrite, on a terminal, get through.
 */
export function processIo(): CliIo {
  let interrupted: Promise<void> | undefined;
  const env = process.env;
  const tty = {
    stdout: process.stdout.isTTY === true,
    stderr: process.stderr.isTTY === true,
    ...(process.stderr.columns ? { columns: process.stderr.columns } : {}),
  };
  const stdout = { colour: colourEnabled(tty.stdout, env), clearLine: false };
  const stderr = { colour: colourEnabled(tty.stderr, env), clearLine: tty.stderr };
  return {
    stdout: (text) => process.stdout.write(terminalText(text, stdout)),
    stderr: (text) => process.stderr.write(terminalText(text, stderr)),
    env,
    tty,
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

export async function runCli(
  argv: readonly string[] = process.argv.slice(2),
  load: CommandLoader = importCommand,
): Promise<void> {
  try {
    process.exitCode = await main(argv, processIo(), load);
  } catch (error) {
    process.stderr.write(printable(`calmops: ${error instanceof Error ? error.message : String(error)}\n`));
    process.exitCode = 1;
  }
  exitOnceWritten();
}

/**
 * A command ends by returning, and the process ends as soon as what it wrote has been handed on: waiting for the
 * event loop to drain would let a lingering handle (a kept connection) hold the terminal, and ending naturally tears
 * down a heap of thousands of objects that nothing reads again (15 ms of a cached replay). A write that is never taken
 * (a reader that stopped reading) holds it at most 100 ms, as before.
 */
function exitOnceWritten(): void {
  let pending = 2;
  const written = () => {
    pending -= 1;
    if (pending === 0) process.exit();
  };
  process.stdout.write('', written);
  process.stderr.write('', written);
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

// Not awaited: the bundle is a CommonJS script, which has no top-level await; runCli reports its own failures.
if (isEntryPoint()) void runCli();
