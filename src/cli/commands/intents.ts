import { loadTemplates } from '../../triage/templates.js';
import { type CliCommand, UsageError } from '../io.js';

const USAGE = 'usage: calmops intents [--json]';

/** `calmops intents`: the triage intents with their domain, title and example requests. */
export const run: CliCommand = async (args, io) => {
  let json = false;
  for (const arg of args) {
    if (arg === '--json') json = true;
    else if (arg === '-h' || arg === '--help') {
      io.stdout(`${USAGE}\n\nLists the triage intents calmops understands, with example requests.\n`);
      return 0;
    } else throw new UsageError(`unknown argument "${arg}"\n${USAGE}`);
  }

  const templates = loadTemplates().list();
  if (json) {
    const out = templates.map((t) => ({
      id: t.id,
      domain: t.domain,
      title: t.title,
      description: t.description,
      examples: t.examples,
      relatedDomains: t.relatedDomains,
    }));
    io.stdout(`${JSON.stringify(out, null, 2)}\n`);
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
