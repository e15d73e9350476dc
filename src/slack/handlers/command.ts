import type { App, SlackCommandMiddlewareArgs, SlashCommand } from '@slack/bolt';
import { escapeText } from '../../mrkdwn/escape.js';
import type { KnownBlock } from '../../views/blocks.js';
import { helpView, intentsView } from '../../views/help.js';
import { code } from '../../views/limits.js';
import { listView, statusView } from '../../views/sessions.js';
import { statsView } from '../../views/stats.js';
import { collectMetrics } from '../collect-metrics.js';
import type { SlackAppDeps } from '../deps.js';
import { parseTriageCommand } from '../grammar.js';
import { outsideChannelNotice, startedNotice } from '../notices.js';
import { openBreakGlassModal } from './actions/break-glass.js';
import { channelAccess, nowOf } from './common.js';
import { sessionInChannel } from './session-scope.js';
import { startTriage } from './start.js';

const SLASH_COMMAND = '/triage';

type Reply = { response_type: 'ephemeral'; text: string; blocks?: KnownBlock[] };

const reply = (text: string, blocks?: KnownBlock[]): Reply => ({
  response_type: 'ephemeral',
  text,
  ...(blocks === undefined ? {} : { blocks }),
});

/** The same answer for an unknown id and for a session of another channel, so neither can be told apart. */
function noSessionHere(sessionId: string): string {
  return `No session ${code(escapeText(sessionId.slice(0, 64)))} exists in this channel. \`${SLASH_COMMAND} list\` shows the open sessions here; session commands work only in the session's own channel.`;
}

/** Everything `/triage` can answer; the reply is the slash command's ack (ephemeral), or undefined for an empty ack. */
async function answerCommand(deps: SlackAppDeps, command: SlashCommand): Promise<Reply | undefined> {
  const parsed = parseTriageCommand(command.text ?? '', deps.registry, { invocation: SLASH_COMMAND });
  if (!parsed.ok) return reply(parsed.problem.message);
  const cmd = parsed.command;
  const channelId = command.channel_id;
  const userId = command.user_id;

  switch (cmd.kind) {
    case 'help': {
      const view = helpView(SLASH_COMMAND);
      return reply(view.text, view.blocks);
    }
    case 'intents': {
      const view = intentsView(deps.registry, SLASH_COMMAND);
      return reply(view.text, view.blocks);
    }
    case 'list': {
      const sessions = await deps.store.sessions.listOpenByChannel(channelId, { limit: 40 });
      const view = listView(sessions, channelId, SLASH_COMMAND);
      return reply(view.text, view.blocks);
    }
    case 'stats': {
      const { metrics, scope } = await collectMetrics(deps);
      const view = statsView(metrics, scope);
      return reply(view.text, view.blocks);
    }
    case 'status': {
      const session =
        cmd.sessionId === undefined
          ? (await deps.store.sessions.listOpenByChannel(channelId, { limit: 50 })).find((s) => s.requester === userId)
          : await sessionInChannel(deps, { sessionId: cmd.sessionId, channelId, userId, action: 'status' });
      if (session === undefined) {
        return reply(
          cmd.sessionId === undefined
            ? `You have no open session in this channel. \`${SLASH_COMMAND} list\` shows everyone's.`
            : noSessionHere(cmd.sessionId),
        );
      }
      const view = statusView(session, nowOf(deps));
      return reply(view.text, view.blocks);
    }
    case 'breakglass': {
      // An override is never aimed at a session by guesswork: with several open here, the person says which.
      const open =
        cmd.sessionId === undefined ? await deps.store.sessions.listOpenByChannel(channelId, { limit: 50 }) : [];
      if (cmd.sessionId === undefined && open.length > 1) {
        return reply(
          [
            `Which session? Break glass applies to one session: \`${SLASH_COMMAND} breakglass <session>\`. Open in this channel:`,
            ...open
              .slice(0, 10)
              .map(
                (s) =>
                  `• \`${s.id}\` ${s.intent} in ${s.namespace || 'a namespace still to be found'} (${s.state}, <@${s.requester}>)`,
              ),
          ].join('\n'),
        );
      }
      const session =
        cmd.sessionId === undefined
          ? open[0]
          : await sessionInChannel(deps, { sessionId: cmd.sessionId, channelId, userId, action: 'break-glass.open' });
      if (session === undefined) {
        return reply(
          cmd.sessionId === undefined
            ? `Break glass applies to a session. There is no open session here; name one: \`${SLASH_COMMAND} breakglass <session>\`.`
            : noSessionHere(cmd.sessionId),
        );
      }
      if (session.status !== 'open') {
        return reply(`Session \`${session.id}\` is not open, so there is nothing to override.`);
      }
      await openBreakGlassModal(deps, command.trigger_id, userId, session);
      return undefined;
    }
    case 'start': {
      const access = await channelAccess(deps, channelId);
      if (access !== 'ok') return reply(outsideChannelNotice(access, SLASH_COMMAND));
      const outcome = await startTriage(deps, { channelId, userId, command: cmd });
      return reply(outcome.ok ? startedNotice(outcome.sessionId) : outcome.message);
    }
  }
}

/** The parts of Bolt's listener arguments the slash command listener reads. */
export type CommandArgs = Pick<SlackCommandMiddlewareArgs, 'command' | 'ack'>;

/** `/triage …`: answered in its acknowledgement, once per trigger id. */
export async function onTriageCommand(deps: SlackAppDeps, { command, ack }: CommandArgs): Promise<void> {
  const logger = deps.logger ?? console;
  try {
    // A double submission reuses the trigger id; the second one is answered without starting anything.
    const first = await deps.store.dedupe.firstDelivery(`command:${command.trigger_id}`);
    if (!first) {
      await ack();
      return;
    }
    const answer = await answerCommand(deps, command);
    await ack(answer);
  } catch (error) {
    logger.error('slash command failed', { error: (error as Error).message });
    await ack(reply(':warning: Something went wrong on my side; nothing was started. Try again in a minute.'));
  }
}

export function registerCommand(app: App, deps: SlackAppDeps): void {
  app.command(SLASH_COMMAND, (args) => onTriageCommand(deps, args));
}
