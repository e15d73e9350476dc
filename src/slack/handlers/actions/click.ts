import type { BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { isStoredId } from '../../../limits.js';
import type { SessionRecord } from '../../../store/sessions.js';
import type { KnownBlock } from '../../../views/blocks.js';
import type { SlackAppDeps } from '../../deps.js';
import { auditRefusal, ephemeral } from '../common.js';
import { inSessionChannel, OUTSIDE_CHANNEL_TEXT, outsideChannelRefusal } from '../session-scope.js';

/** What a button handler reads from a click: who clicked, where, and the button's value. */
export interface ClickContext {
  userId: string;
  channelId: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
  blocks: KnownBlock[] | undefined;
  value: string;
  actionTs: string;
  triggerId: string;
}

/** One button's handler: called once per click, after the acknowledgement and the duplicate check. */
export type ClickHandler = (deps: SlackAppDeps, click: ClickContext) => Promise<void>;

/** The parts of Bolt's listener arguments a button listener reads; a test passes a fake payload of this shape. */
export type ButtonArgs = Pick<SlackActionMiddlewareArgs<BlockAction<ButtonAction>>, 'ack' | 'body' | 'action'>;

function clickOf(body: BlockAction, action: ButtonAction): ClickContext {
  const message = body.message as { ts?: string; thread_ts?: string; blocks?: KnownBlock[] } | undefined;
  return {
    userId: body.user.id,
    channelId: body.channel?.id ?? body.container?.channel_id,
    messageTs: message?.ts ?? body.container?.message_ts,
    threadTs: message?.thread_ts ?? message?.ts,
    blocks: message?.blocks,
    value: action.value ?? '',
    actionTs: action.action_ts,
    triggerId: body.trigger_id,
  };
}

/** An ephemeral answer to the person who clicked, in the thread the button sits in. */
export async function tell(deps: SlackAppDeps, click: ClickContext, text: string): Promise<void> {
  if (click.channelId === undefined) return;
  await ephemeral(deps, {
    channel: click.channelId,
    user: click.userId,
    text,
    ...(click.threadTs === undefined ? {} : { threadTs: click.threadTs }),
  });
}

/** A duplicate delivery of the same click (same action_ts, same person) is dropped before any work. */
async function firstClick(deps: SlackAppDeps, click: ClickContext): Promise<boolean> {
  return deps.store.dedupe.firstDelivery(`action:${click.actionTs}:${click.userId}`);
}

/**
 * Runs one button's handler for a click: acknowledged first, a duplicate delivery dropped (unless the button only
 * opens a modal), and a failure answered with an ephemeral "click again".
 */
export async function handleClick(
  deps: SlackAppDeps,
  button: { actionId: string | RegExp; handler: ClickHandler; dedupe: boolean },
  { ack, body, action }: ButtonArgs,
): Promise<void> {
  await ack();
  const click = clickOf(body, action);
  try {
    if (button.dedupe && !(await firstClick(deps, click))) return;
    await button.handler(deps, click);
  } catch (error) {
    (deps.logger ?? console).error('button failed', { actionId: button.actionId, error: (error as Error).message });
    await tell(deps, click, ':warning: That did not go through on my side; please click again in a minute.');
  }
}

/** The session a button acts on, when it exists and the click came from its channel; otherwise says why not. */
export async function sessionOfClick(
  deps: SlackAppDeps,
  click: ClickContext,
  sessionId: string,
  action: string,
): Promise<SessionRecord | undefined> {
  const session = isStoredId(sessionId) ? await deps.store.sessions.get(sessionId) : undefined;
  if (session === undefined) {
    await tell(deps, click, 'This session no longer exists.');
    return undefined;
  }
  if (!inSessionChannel(session, click.channelId)) {
    await auditRefusal(deps, session.id, {
      actor: click.userId,
      action,
      decision: outsideChannelRefusal(),
      detail: { channelId: click.channelId ?? null },
    });
    await tell(deps, click, OUTSIDE_CHANNEL_TEXT);
    return undefined;
  }
  return session;
}

/** The idempotency key of thread input a click hands to its session. */
export function clickMessageKey(click: ClickContext): string {
  return `action:${click.actionTs}:${click.userId}`;
}
