import * as z from 'zod';
import type { BotAnswer } from '../bot-client.js';
import { failureName } from '../bot-client.js';
import {
  appHomeOpenedEvent,
  appMentionEvent,
  encodeMentions,
  eventCallbackBody,
  messageEvent,
  slashCommandBody,
} from '../payloads.js';
import { type ActionContext, channelFor, checkPersona, slackId, slackTs } from './context.js';
import { parse } from './requests.js';

const ComposeSchema = z.object({
  user: slackId,
  channel: slackId,
  text: z.string().min(1).max(40_000),
  threadTs: slackTs.optional(),
});

const HomeRequestSchema = z.object({ user: slackId });

/**
 * `POST /sandbox/api/compose` and `/sandbox/api/home`: what a person types (a message, a mention, a slash command)
 * and opening the app's Home tab, sent to the app as the events and commands Slack would send.
 */
export function messageActions(context: ActionContext) {
  const { standIn, workspace, bot, page } = context;

  const sendEvent = (event: Record<string, unknown>) => bot(eventCallbackBody(workspace, event), 'application/json');

  /** Slack shows a slash command's ack body to the person who typed it (or the channel for `in_channel`). */
  const showAck = (input: { user: string; channel: string; answer: BotAnswer }) => {
    const { answer } = input;
    if (answer.body.trim() === '') return;
    let content: Record<string, unknown>;
    if (answer.contentType.includes('application/json')) {
      try {
        content = JSON.parse(answer.body) as Record<string, unknown>;
      } catch {
        content = { text: answer.body };
      }
    } else {
      content = { text: answer.body };
    }
    if (typeof content['text'] !== 'string' && !Array.isArray(content['blocks'])) return;
    page.showAckMessage({
      channel: input.channel,
      text: typeof content['text'] === 'string' ? content['text'] : '',
      ...(Array.isArray(content['blocks']) ? { blocks: content['blocks'] } : {}),
      user: workspace.botUserId,
      ...(content['response_type'] === 'in_channel' ? {} : { ephemeral_to: input.user }),
    });
  };

  const command = async (input: z.infer<typeof ComposeSchema>, name: string, text: string) => {
    if (!workspace.commands.includes(name)) {
      page.notice(
        input.user,
        input.channel,
        `${name} is not a valid command. In Slack, all messages that start with the "/" character are interpreted as commands.`,
      );
      return { kind: 'notice' as const };
    }
    const body = slashCommandBody(workspace, {
      user: input.user,
      channel: input.channel,
      command: name,
      text,
      responseUrl: standIn.responseUrl({ channel: input.channel, user: input.user }),
      triggerId: standIn.triggerId(input.user),
    });
    const answer = await bot(body, 'application/x-www-form-urlencoded');
    const failure = failureName(answer);
    if (failure !== undefined) page.notice(input.user, input.channel, `${name} failed with the error "${failure}"`);
    else showAck({ user: input.user, channel: input.channel, answer });
    return { kind: 'command' as const, status: answer.status, ...(failure === undefined ? {} : { failure }) };
  };

  return {
    async compose(body: unknown) {
      const input = parse(ComposeSchema, body);
      checkPersona(workspace, input.user);
      const channel = channelFor(workspace, input.channel, input.user);
      const slash = /^\/([a-z0-9_-]+)(?:\s+([\s\S]*))?$/i.exec(input.text.trim());
      if (slash !== null) return command(input, `/${slash[1]?.toLowerCase()}`, (slash[2] ?? '').trim());
      const text = encodeMentions(workspace, input.text);
      const message = standIn.addUserMessage({
        channel: input.channel,
        user: input.user,
        text,
        ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
      });
      page.changed();
      const delivered = {
        user: input.user,
        channel: input.channel,
        text,
        ts: message.ts,
        ...(input.threadTs === undefined ? {} : { threadTs: input.threadTs }),
      };
      const events: Record<string, unknown>[] = [];
      const subscribed = (name: string) => workspace.botEvents.includes(name);
      if (channel.isIm) {
        if (subscribed('message.im')) events.push(messageEvent(workspace, delivered));
      } else if (channel.botIsMember) {
        if (text.includes(`<@${workspace.botUserId}>`) && subscribed('app_mention')) {
          events.push(appMentionEvent(workspace, delivered));
        }
        if (subscribed('message.channels')) events.push(messageEvent(workspace, delivered));
      }
      // Slack delivers the app_mention and the message copy as separate, concurrent requests.
      const answers = await Promise.all(events.map((event) => sendEvent(event)));
      return {
        kind: 'message' as const,
        ts: message.ts,
        events: events.map((e, i) => ({ type: e['type'], status: answers[i]?.status ?? 0 })),
      };
    },

    async openHome(body: unknown) {
      const input = parse(HomeRequestSchema, body);
      checkPersona(workspace, input.user);
      if (!workspace.botEvents.includes('app_home_opened')) return { sent: false };
      const dm = workspace.channels.find((c) => c.dmUser === input.user);
      const home = standIn.home(input.user);
      const event = appHomeOpenedEvent({
        user: input.user,
        channel: dm?.id ?? `D${input.user.slice(1)}`,
        ...(home === undefined ? {} : { view: home as Record<string, unknown> }),
      });
      const answer = await sendEvent(event);
      return { sent: true, status: answer.status };
    },
  };
}
