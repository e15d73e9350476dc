import type { App, SlashCommand } from '@slack/bolt';
import type { SlackAppDeps } from '../deps.js';
import { parseTriageCommand } from '../grammar.js';
import { collectMetrics } from '../metrics.js';
import type { KnownBlock } from '../views/blocks.js';
import { helpView, intentsView } from '../views/help.js';
import { breakGlassModal } from '../views/modals.js';
import { outsideChannelNotice, startedNotice } from '../views/notices.js';
import { listView, statusView } from '../views/sessions.js';
import { statsView } from '../views/stats.js';
import { channelAccess, nowOf } from './common.js';
import { startTriage } from './start.js';

export const SLASH_COMMAND = '/triage';

type Reply = { response_type: 'ephemeral'; text: string; blocks?: KnownBlock[] };

const reply = (text: string, blocks?: KnownBlock[]): Reply => ({
  response_type: 'ephemeral',
  text,
  ...(blocks === undefined ? {} : { blocks }),
});

/** Everything `/triage` can answer; the reply is the slash command's ack (ephemeral), or undefined for an empty ack. */
export async function answerCommand(deps: SlackAppDeps, command: SlashCommand): Promise<Reply | undefined> {
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
      const open = await deps.store.sessions.listOpenByChannel(channelId, { limit: 50 });
      const { metrics, scope } = await collectMetrics(deps, open);
      const view = statsView(metrics, scope);
      return reply(view.text, view.blocks);
    }
    case 'status': {
      const session =
        cmd.sessionId === undefined
          ? (await deps.store.sessions.listOpenByChannel(channelId, { limit: 50 })).find((s) => s.requester === userId)
          : await deps.store.sessions.get(cmd.sessionId);
      if (session === undefined) {
        return reply(
          cmd.sessionId === undefined
            ? `You have no open session in this channel. \`${SLASH_COMMAND} list\` shows everyone's.`
            : `No session \`${cmd.sessionId}\` exists. \`${SLASH_COMMAND} list\` shows the open sessions in this channel.`,
        );
      }
      const view = statusView(session, nowOf(deps));
      return reply(view.text, view.blocks);
    }
    case 'breakglass': {
      const open = await deps.store.sessions.listOpenByChannel(channelId, { limit: 50 });
      const session =
        cmd.sessionId === undefined
          ? open.find((s) => s.requester === userId)
          : await deps.store.sessions.get(cmd.sessionId);
      if (session === undefined || session.status !== 'open') {
        return reply(
          cmd.sessionId === undefined
            ? `Break glass applies to a session. You have no open session here; name one: \`${SLASH_COMMAND} breakglass <session>\`.`
            : `Session \`${cmd.sessionId}\` is not open, so there is nothing to override.`,
        );
      }
      await deps.client.views.open({
        trigger_id: command.trigger_id,
        view: breakGlassModal({
          sessionId: session.id,
          channelId: session.channelId,
          ...(session.threadTs === undefined ? {} : { threadTs: session.threadTs }),
          currentState: session.state,
        }),
      });
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

export function registerCommand(app: App, deps: SlackAppDeps): void {
  app.command(SLASH_COMMAND, async ({ command, ack }) => {
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
  });
}
