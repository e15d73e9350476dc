import type { SessionRecord } from '../store/sessions.js';
import {
  BLOCK_LIMITS,
  clip,
  context,
  escapeMrkdwn,
  fields,
  fitBlocks,
  header,
  type KnownBlock,
  section,
  slackDate,
} from './blocks.js';

/** A link to the session's thread; Slack resolves archive links for members of the channel. */
/** Where a session runs; a session that started without a namespace has none until its triage settles one. */
export function namespaceLabel(namespace: string): string {
  return namespace === '' ? '_(being located)_' : `\`${namespace}\``;
}

export function threadLink(session: Pick<SessionRecord, 'channelId' | 'threadTs'>, label = 'thread'): string {
  if (session.threadTs === undefined) return `<#${session.channelId}>`;
  return `<https://slack.com/archives/${session.channelId}/p${session.threadTs.replace('.', '')}|${label}>`;
}

function percent(value: number): string {
  return `${Math.round(value * 100)}%`;
}

/** `/triage status <session>`: where one session stands. */
export function statusView(session: SessionRecord, now: Date): { text: string; blocks: KnownBlock[] } {
  const override =
    session.override !== undefined && Date.parse(session.override.expiresAt) > now.getTime()
      ? `:rotating_light: break-glass to ${session.override.state} until ${slackDate(session.override.expiresAt)} (approved by <@${session.override.approver}>)`
      : undefined;
  const hypotheses = session.hypotheses
    .slice(0, 5)
    .map((h) => `• ${escapeMrkdwn(clip(h.statement, 200))} — ${h.status}, ${percent(h.confidence)}`)
    .join('\n');
  const blocks: KnownBlock[] = [
    header(`Session ${session.id}`),
    fields([
      ['State', `${session.state} (${session.status})`],
      ['Intent', `\`${session.intent}\``],
      ['Namespace', `${namespaceLabel(session.namespace)}${session.cluster ? ` on \`${session.cluster}\`` : ''}`],
      ['Requester', `<@${session.requester}>`],
      ['Evidence', percent(session.evidence.completeness)],
      ['Started', slackDate(session.createdAt)],
    ]),
    ...(override === undefined ? [] : [section(override)]),
    ...(hypotheses === '' ? [] : [section(`*Hypotheses*\n${hypotheses}`)]),
    context(`Follow the ${threadLink(session)}. Last change ${slackDate(session.updatedAt)}.`),
  ];
  return {
    text: `Session ${session.id}: ${session.state}, ${session.intent} in ${session.namespace || 'a namespace being located'}`,
    blocks,
  };
}

/** `/triage list`: open sessions in the channel. */
export function listView(
  sessions: readonly SessionRecord[],
  channelId: string,
  invocation = '/triage',
): { text: string; blocks: KnownBlock[] } {
  if (sessions.length === 0) {
    return {
      text: 'No open sessions in this channel.',
      blocks: [
        section(
          `No open sessions in <#${channelId}>. Start one with \`${invocation} <what is wrong> in <namespace>\`.`,
        ),
      ],
    };
  }
  const rows = sessions.map((s) =>
    section(
      `*\`${s.intent}\`* in ${namespaceLabel(s.namespace)} — ${s.state}, evidence ${percent(s.evidence.completeness)}\n` +
        `<@${s.requester}> · ${slackDate(s.createdAt)} · ${threadLink(s)} · \`${s.id}\``,
    ),
  );
  return {
    text: `${sessions.length} open session${sessions.length === 1 ? '' : 's'} in this channel`,
    blocks: fitBlocks(
      [header(`Open sessions (${sessions.length})`), ...rows],
      BLOCK_LIMITS.messageBlocks,
      `Use \`${invocation} status <session>\` for one of them.`,
    ),
  };
}
