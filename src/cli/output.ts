import { writeYaml } from '../yaml-text.js';
import { UsageError } from './io.js';
import { didYouMean } from './suggest.js';
import { shown } from './text.js';

/**
 * `-o json|yaml|text` (or `--output=…`), as kubectl spells it; `--json` stays as the short form of `-o json`. JSON and
 * YAML carry the same data, so a script can read either; text is for a person and may change between versions.
 */

export type OutputFormat = 'text' | 'json' | 'yaml';

export const OUTPUT_FLAGS = {
  output: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
} as const;

export function outputFormat<const F extends OutputFormat>(
  values: { output?: string | undefined; json?: boolean | undefined },
  allowed: readonly F[],
  fallback: F,
): F {
  const { output, json } = values;
  if (json === true) {
    if (output !== undefined && output !== 'json') {
      throw new UsageError(`--json is -o json, so it cannot go with -o ${shown(output, 40)}: give one of them`);
    }
    if (!(allowed as readonly string[]).includes('json')) throw unknownFormat('json', allowed);
    return 'json' as F;
  }
  if (output === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(output)) throw unknownFormat(output, allowed);
  return output as F;
}

function unknownFormat(format: string, allowed: readonly string[]): UsageError {
  return new UsageError(
    `unknown output format "${shown(format, 40)}"${didYouMean(format, allowed)}; -o takes ${allowed.join(', ')}`,
  );
}

/**
 * The data as JSON or YAML. YAML is written from the JSON form, so both hold the same values (dates as ISO strings,
 * no undefined fields), and long strings stay on one line as kubectl prints them.
 */
export function renderData(format: 'json' | 'yaml', data: unknown): string {
  const json = JSON.stringify(data, null, 2);
  if (format === 'json') return `${json}\n`;
  return writeYaml(JSON.parse(json));
}
