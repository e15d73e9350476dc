import { UsageError } from './io.js';
import { didYouMean } from './suggest.js';
import { shown } from './text.js';

/**
 * Flags the way kubectl reads them: `--name value`, `--name=value`, `-n value`, `-nvalue`, grouped short booleans
 * (`-hv`), and `--` to end the flags. Anything it does not know is a usage error that says what was meant, in
 * calmops' words rather than the parser's: `unknown flag "--namspace"; did you mean --namespace?`.
 */

interface FlagSpec {
  type: 'string' | 'boolean';
  short?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

type FlagValues<T extends FlagSpecs> = {
  -readonly [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string;
};

export interface ParsedCommandLine<T extends FlagSpecs> {
  values: FlagValues<T>;
  positionals: string[];
}

export interface ParseOptions {
  /** Whether the command takes arguments besides flags; when it does not, one is a usage error. */
  positionals?: boolean;
  /** The command's name, for the message about an unexpected argument. */
  command?: string;
}

/** A value that is itself a flag (`-n --json`) is refused; a negative number (`--timeout -1`) is a value. */
function looksLikeFlag(arg: string): boolean {
  return arg.startsWith('-') && arg !== '-' && !/^-\d/.test(arg);
}

export function parseCommandLine<const T extends FlagSpecs>(
  args: readonly string[],
  specs: T,
  options: ParseOptions = {},
): ParsedCommandLine<T> {
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const shorts = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short) shorts.set(spec.short, name);
  const known = [...Object.keys(specs).map((name) => `--${name}`), ...[...shorts.keys()].map((short) => `-${short}`)];
  const unknown = (flag: string) =>
    new UsageError(`unknown flag "${shown(flag, 80)}"${didYouMean(flag, known, false)}`);
  // Own keys only: `--constructor` names no flag, whatever Object.prototype holds.
  const specOf = (name: string): FlagSpec | undefined => (Object.hasOwn(specs, name) ? specs[name] : undefined);
  const display = (name: string) => (specs[name]?.short ? `-${specs[name].short}, --${name}` : `--${name}`);

  let i = 0;
  const takeValue = (name: string): string => {
    const next = args[i + 1];
    if (next === undefined) throw new UsageError(`flag ${display(name)} needs a value`);
    if (looksLikeFlag(next)) {
      throw new UsageError(
        `flag ${display(name)} needs a value, got the flag "${shown(next, 80)}" (write --${name}=${shown(next, 80)} if that is the value)`,
      );
    }
    i++;
    return next;
  };

  for (; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const spec = specOf(name);
      if (!spec || name === '') throw unknown(eq < 0 ? arg : arg.slice(0, eq));
      if (spec.type === 'boolean') {
        if (eq >= 0) throw new UsageError(`flag --${name} takes no value`);
        values[name] = true;
      } else {
        values[name] = eq >= 0 ? arg.slice(eq + 1) : takeValue(name);
      }
      continue;
    }
    if (arg.startsWith('-') && arg !== '-' && !/^-\d/.test(arg)) {
      // `-namespace` is a long flag typed with one dash, not -n with the value "amespace".
      const word = arg.slice(1).split('=')[0] as string;
      if (word.length > 1 && specOf(word) !== undefined) {
        throw new UsageError(`unknown flag "${shown(arg, 80)}"; did you mean --${word}?`);
      }
      for (let j = 1; j < arg.length; j++) {
        const letter = arg[j] as string;
        const name = shorts.get(letter);
        if (name === undefined) throw unknown(j === 1 ? arg : `-${letter}`);
        if (specOf(name)?.type === 'boolean') {
          values[name] = true;
          continue;
        }
        const rest = arg.slice(j + 1);
        values[name] = rest === '' ? takeValue(name) : rest.startsWith('=') ? rest.slice(1) : rest;
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  if (options.positionals !== true && positionals.length > 0) {
    const command = options.command ? `calmops ${options.command}` : 'this command';
    throw new UsageError(
      `unexpected argument "${shown(positionals[0] as string, 80)}": ${command} takes no positional arguments`,
    );
  }
  return { values: values as FlagValues<T>, positionals };
}
