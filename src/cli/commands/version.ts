import { parseCommandLine } from '../flags.js';
import type { CliCommand } from '../io.js';
import { OUTPUT_FLAGS, outputFormat, renderData } from '../output.js';
import { CALMOPS_VERSION } from '../version.js';

export const USAGE = `Usage: calmops version [-o text|json|yaml]

Prints the version of calmops (also \`calmops --version\`), and with -o json or yaml the Node.js version it runs on.

  -o, --output F   text (default), json or yaml
`;

/** `calmops version`: which calmops this is. */
export const run: CliCommand = async (args, io) => {
  // Bad flags are UsageErrors, answered by main.ts as for every command.
  const { values } = parseCommandLine(
    args,
    { ...OUTPUT_FLAGS, help: { type: 'boolean', short: 'h' } },
    { command: 'version' },
  );
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const format = outputFormat(values, ['text', 'json', 'yaml'], 'text');
  io.stdout(
    format === 'text'
      ? `calmops ${CALMOPS_VERSION}\n`
      : renderData(format, { version: CALMOPS_VERSION, node: process.version }),
  );
  return 0;
};
