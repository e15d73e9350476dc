import { SWEEP_INTENT } from '../triage/route/index.js';
import { clip, context, escapeMrkdwn, type KnownBlock, section } from '../views/blocks.js';
import type { StartCommand } from './grammar.js';

/** The message that opens an incident thread for `/triage`. */
export function threadRootView(input: { requester: string; command: StartCommand; cluster: string }): {
  text: string;
  blocks: KnownBlock[];
} {
  const { command } = input;
  const note = command.note === undefined ? '' : `\n>${escapeMrkdwn(clip(command.note, 500))}`;
  // A sweep is named for what it does; the envelope names the intent the evidence points to.
  const what = command.intent === SWEEP_INTENT ? 'a check of the whole namespace' : `\`${command.intent}\``;
  const where =
    command.namespace === undefined
      ? 'the namespace the request points to (found in the cluster)'
      : `\`${command.namespace}\``;
  return {
    text: `Triage for ${command.intent} in ${command.namespace ?? 'a namespace still to be found'}, requested by <@${input.requester}>`,
    blocks: [
      section(
        `:mag: *Triage* ${what} in ${where} on \`${input.cluster}\`, requested by <@${input.requester}>\n` +
          `_${escapeMrkdwn(clip(command.text, 500))}_${note}`,
      ),
      context(
        'Reading the cluster read-only. Findings, evidence and next steps follow in this thread; reply here to continue.',
      ),
    ],
  };
}

export function startedNotice(sessionId: string): string {
  return `Triage started (session \`${sessionId}\`). Follow the thread in this channel.`;
}

export function outsideChannelNotice(kind: 'dm' | 'not-member', invocation = '/triage'): string {
  return kind === 'dm'
    ? `I run triage in incident channels, not in direct messages, so the whole team sees the thread. Invite me to the channel (\`/invite @calmops\`) and use \`${invocation}\` there.`
    : `I am not a member of this channel, so I cannot open an incident thread here. Invite me with \`/invite @calmops\` and try again; nothing was started.`;
}
