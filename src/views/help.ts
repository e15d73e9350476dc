import type { TemplateRegistry } from '../triage/templates/index.js';
import { BLOCK_LIMITS, clip, context, divider, fitBlocks, header, type KnownBlock, section } from './blocks.js';

/** `/triage help`: the grammar with examples, as an ephemeral message. */
export function helpView(invocation = '/triage'): { text: string; blocks: KnownBlock[] } {
  const blocks: KnownBlock[] = [
    header('calmops: calm, evidence-first triage'),
    section(
      [
        `*Start a triage* — \`${invocation} <what is wrong> in <namespace> [note]\``,
        `• \`${invocation} pods stuck pending in payments\``,
        `• \`${invocation} pvc-binding -n checkout since the 14:00 deploy\``,
        `• \`${invocation} the orders page times out\` — no namespace? I find it in the cluster from your words, or ask`,
        'I open a thread, read the cluster read-only, and post what I found, how sure I am and what to do next.',
      ].join('\n'),
    ),
    section(
      [
        '*In the incident thread* — mention me or reply:',
        '• ask for a read (`show events for pod api-7f9`), propose a command, choose a hypothesis,',
        '• say `resolved` when it is fixed, or `break glass` if the guided steps must be skipped (a senior approves).',
      ].join('\n'),
    ),
    section(
      [
        '*Other commands*',
        `• \`${invocation} intents\` — what I can triage`,
        `• \`${invocation} list\` — open sessions in this channel`,
        `• \`${invocation} status [session]\` — where a session stands`,
        `• \`${invocation} stats\` — diagnosis metrics`,
        `• \`${invocation} breakglass [session]\` — request an emergency override`,
      ].join('\n'),
    ),
    divider(),
    context('I never change the cluster: plans are for a person to run, after a second person approves them.'),
  ];
  return { text: `${invocation} <what is wrong> in <namespace> [note] — ${invocation} help for more`, blocks };
}

/** `/triage intents`: one line per intent with its synonyms as hints. */
export function intentsView(
  registry: TemplateRegistry,
  invocation = '/triage',
): { text: string; blocks: KnownBlock[] } {
  const lines = registry.list().map((t) => {
    const examples = t.synonyms
      .slice(0, 3)
      .map((s) => `"${s}"`)
      .join(', ');
    return section(
      clip(`*\`${t.id}\`* — ${t.title} (${t.domain})\n${t.description}\n_e.g._ ${examples}`, BLOCK_LIMITS.sectionText),
    );
  });
  const blocks = fitBlocks(
    [
      header('What I can triage'),
      ...lines,
      context(`Type the intent or describe the symptom: \`${invocation} <intent> -n <namespace>\`.`),
    ],
    BLOCK_LIMITS.messageBlocks,
    `\`${invocation} help\` explains the grammar.`,
  );
  return { text: `Intents: ${registry.ids().join(', ')}`, blocks };
}
