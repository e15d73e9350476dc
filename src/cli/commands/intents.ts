import { intentSummaries } from '../../triage/route/index.js';
import { loadTemplates } from '../../triage/templates/index.js';
import { parseCommandLine } from '../flags.js';
import type { CliCommand } from '../io.js';
import { OUTPUT_FLAGS, outputFormat, renderData } from '../output.js';

export const USAGE = `Usage: calmops intents [-o text|json|yaml]

Lists the triage intents calmops understands, with example requests.

  -o, --output F   text (default), json or yaml
  --json           the same as -o json
`;

/**
 * `calmops intents`: the triage intents with their domain, title and example requests. Bad input is thrown as a
 * UsageError, which the command line answers with this usage and exit code 2.
 */
export const run: CliCommand = async (args, io) => {
  const { values } = parseCommandLine(
    args,
    { ...OUTPUT_FLAGS, help: { type: 'boolean', short: 'h' } },
    {
      command: 'intents',
    },
  );
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const format = outputFormat(values, ['text', 'json', 'yaml'], 'text');

  const templates = intentSummaries(loadTemplates());
  if (format !== 'text') {
    io.stdout(renderData(format, templates));
    return 0;
  }

  const idWidth = Math.max(...templates.map((t) => t.id.length));
  const domainWidth = Math.max(...templates.map((t) => t.domain.length));
  const lines: string[] = [];
  for (const t of templates) {
    lines.push(`${t.id.padEnd(idWidth)}  ${t.domain.padEnd(domainWidth)}  ${t.title}`);
    for (const example of t.examples) lines.push(`${' '.repeat(idWidth + 2)}e.g. "${example}"`);
  }
  lines.push('', 'Ask in your own words, e.g. calmops triage "pods stuck pending in payments".');
  io.stdout(`${lines.join('\n')}\n`);
  return 0;
};
