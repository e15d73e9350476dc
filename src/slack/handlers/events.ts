import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { helpView, intentsView } from '../../views/help.js';
import type { SlackAppDeps } from '../deps.js';
import { parseTriageCommand, unescapeSlack } from '../grammar.js';
import { outsideChannelNotice } from '../notices.js';
import { publishHome } from '../publish-home.js';
import { channelAccess, ephemeral } from './common.js';
import { startTriage } from './start.js';

/** The fields of a message or app_mention event the handlers read. */
interface MessageLike {
  type: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  channel: string;
  channel_type?: string;
}

/** Subtypes that are still a person writing in the thread; every other subtype (edits, joins, bots) is ignored. */
const HUMAN_SUBTYPES = new Set(['thread_broadcast', 'file_share']);

function isFromBot(event: MessageLike): boolean {
  return event.bot_id !== undefined || event.subtype === 'bot_message';
}

function stripMention(text: string, botUserId: string | undefined): string {
  const mention =
    botUserId === undefined ? /<@[A-Z0-9]+(?:\|[^>]*)?>/ : new RegExp(`<@${botUserId}(?:\\|[^>]*)?>`, 'g');
  return unescapeSlack(text.replace(mention, ' ')).replace(/\s+/g, ' ').trim();
}

type EventClaim = Awaited<ReturnType<SlackAppDeps['store']['dedupe']['claim']>>;

/**
 * Claims the event id for this attempt; 'repeat' when a finished or live attempt holds it. The mark becomes final
 * only after the work, so a retry of an attempt that died before its input reached the inbox is processed.
 */
async function claimEvent(deps: SlackAppDeps, eventId: string | undefined): Promise<EventClaim | 'repeat'> {
  // Without an event id there is nothing to deduplicate on; Slack always sends one.
  if (eventId === undefined) return undefined;
  return (await deps.store.dedupe.claim(`event:${eventId}`)) ?? 'repeat';
}

/** Runs the work behind a claimed event; the claim is made final on success and given back on failure. */
async function underClaim(deps: SlackAppDeps, claim: EventClaim, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (claim) await deps.store.dedupe.release(claim).catch(() => undefined);
    throw error;
  }
  if (claim) await deps.store.dedupe.finish(claim);
}

async function handleMention(deps: SlackAppDeps, event: MessageLike, botUserId: string | undefined): Promise<void> {
  const user = event.user;
  if (user === undefined || isFromBot(event)) return;
  const text = stripMention(event.text ?? '', botUserId);
  const threadTs = event.thread_ts ?? event.ts;

  if (event.thread_ts !== undefined) {
    const sessionId = await deps.store.threads.sessionFor(event.channel, event.thread_ts);
    if (sessionId !== undefined) {
      await deliverToSession(
        deps,
        { sessionId, userId: user, text, source: 'mention', messageKey: `${event.channel}:${event.ts}` },
        { channel: event.channel, threadTs: event.thread_ts },
      );
      return;
    }
  }

  const access = event.channel_type === 'im' ? 'dm' : await channelAccess(deps, event.channel);
  if (access !== 'ok') {
    await ephemeral(deps, { channel: event.channel, user, text: outsideChannelNotice(access, '@calmops') });
    return;
  }
  const parsed = parseTriageCommand(text, deps.registry, { invocation: '@calmops' });
  if (!parsed.ok) {
    await ephemeral(deps, { channel: event.channel, user, text: parsed.problem.message, threadTs });
    return;
  }
  const command = parsed.command;
  if (command.kind === 'help' || command.kind === 'intents') {
    const view = command.kind === 'help' ? helpView('@calmops') : intentsView(deps.registry, '@calmops');
    await deps.client.chat.postEphemeral({
      channel: event.channel,
      user,
      text: view.text,
      blocks: view.blocks,
      thread_ts: threadTs,
    });
    return;
  }
  if (command.kind !== 'start') {
    await ephemeral(deps, {
      channel: event.channel,
      user,
      threadTs,
      text: `\`${command.kind}\` is a slash command: use \`/triage ${command.kind}\`.`,
    });
    return;
  }
  const outcome = await startTriage(deps, { channelId: event.channel, userId: user, command, threadTs });
  if (!outcome.ok) await ephemeral(deps, { channel: event.channel, user, text: outcome.message, threadTs });
}

/**
 * Hands thread input to its session, unless the session has ended: then the sender is told so, with what to do
 * instead, rather than being asked to repeat themselves. A session that ends while the input is on its way answers
 * the same.
 */
async function deliverToSession(
  deps: SlackAppDeps,
  input: Parameters<SlackAppDeps['workflow']['deliverInput']>[0],
  where: { channel: string; threadTs: string },
): Promise<void> {
  const session = await deps.store.sessions.get(input.sessionId);
  const ended = async (status: string) => {
    await ephemeral(deps, {
      channel: where.channel,
      user: input.userId,
      threadTs: where.threadTs,
      text: `This session is ${status}, so nothing was sent to it. \`/triage status ${input.sessionId}\` shows how it ended; to look again, start a new triage with \`/triage <what is wrong> in <namespace>\`.`,
    });
  };
  if (session !== undefined && session.status !== 'open') return ended(session.status);
  try {
    await deps.workflow.deliverInput(input);
  } catch (error) {
    if ((error as Error).name !== 'SessionClosedError') throw error;
    const now = await deps.store.sessions.get(input.sessionId);
    await ended(now?.status ?? 'closed');
  }
}

async function handleMessage(deps: SlackAppDeps, event: MessageLike, botUserId: string | undefined): Promise<boolean> {
  if (isFromBot(event)) return false;
  if (event.subtype !== undefined && !HUMAN_SUBTYPES.has(event.subtype)) return false;
  if (event.user === undefined) return false;
  // The app_mention event carries this message too; it is handled there.
  if (botUserId !== undefined && (event.text ?? '').includes(`<@${botUserId}`)) return false;
  if (event.thread_ts === undefined || event.thread_ts === event.ts) return false;
  const sessionId = await deps.store.threads.sessionFor(event.channel, event.thread_ts);
  if (sessionId === undefined) return false;
  await deliverToSession(
    deps,
    {
      sessionId,
      userId: event.user,
      text: unescapeSlack(event.text ?? ''),
      source: 'message',
      messageKey: `${event.channel}:${event.ts}`,
    },
    { channel: event.channel, threadTs: event.thread_ts },
  );
  return true;
}

/** The parts of Bolt's listener arguments an event listener reads; a test passes a fake payload of this shape. */
export type EventArgs<T extends string> = Pick<SlackEventMiddlewareArgs<T>, 'event' | 'body'> &
  Pick<AllMiddlewareArgs, 'context'>;

/** Someone @-mentioned calmops: thread input for a session, or a request to start one. */
async function onAppMention(deps: SlackAppDeps, { event, body, context }: EventArgs<'app_mention'>) {
  const logger = deps.logger ?? console;
  const mention = event as unknown as MessageLike;
  if (isFromBot(mention)) return;
  const claim = await claimEvent(deps, (body as { event_id?: string }).event_id);
  if (claim === 'repeat') {
    logger.info('duplicate event ignored', { retry: context.retryNum ?? 0 });
    return;
  }
  try {
    await underClaim(deps, claim, () => handleMention(deps, mention, context.botUserId));
  } catch (error) {
    logger.error('app_mention failed', { error: (error as Error).message });
    if (mention.user !== undefined) {
      await ephemeral(deps, {
        channel: mention.channel,
        user: mention.user,
        threadTs: mention.thread_ts ?? mention.ts,
        text: ':warning: I could not take that in; please say it again in a minute.',
      });
    }
  }
}

/** A message in a channel calmops is in: thread input when it is a reply in a session's thread. */
async function onMessage(deps: SlackAppDeps, { event, body, context }: EventArgs<'message'>) {
  const logger = deps.logger ?? console;
  const message = event as unknown as MessageLike;
  // Cheap filters first: most channel traffic is not for a session and must not cost a DynamoDB write.
  if (isFromBot(message) || (message.subtype !== undefined && !HUMAN_SUBTYPES.has(message.subtype))) return;
  if (message.thread_ts === undefined || message.thread_ts === message.ts) return;
  if (context.botUserId !== undefined && (message.text ?? '').includes(`<@${context.botUserId}`)) return;
  const claim = await claimEvent(deps, (body as { event_id?: string }).event_id);
  if (claim === 'repeat') {
    logger.info('duplicate event ignored', { retry: context.retryNum ?? 0 });
    return;
  }
  try {
    await underClaim(deps, claim, () => handleMessage(deps, message, context.botUserId));
  } catch (error) {
    logger.error('thread message failed', { error: (error as Error).message });
    if (message.user !== undefined) {
      await ephemeral(deps, {
        channel: message.channel,
        user: message.user,
        threadTs: message.thread_ts,
        text: ':warning: I could not take that in; please say it again in a minute.',
      });
    }
  }
}

/** The App Home tab opened: publishes the person's view of it. */
export async function onAppHomeOpened(deps: SlackAppDeps, { event }: Pick<EventArgs<'app_home_opened'>, 'event'>) {
  if (event.tab !== 'home') return;
  try {
    await publishHome(deps, event.user);
  } catch (error) {
    (deps.logger ?? console).error('App Home failed', { error: (error as Error).message });
  }
}

export function registerEvents(app: App, deps: SlackAppDeps): void {
  app.event('app_mention', (args) => onAppMention(deps, args));
  app.event('message', (args) => onMessage(deps, args));
  app.event('app_home_opened', (args) => onAppHomeOpened(deps, args));
}
