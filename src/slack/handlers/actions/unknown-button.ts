import type { BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import type { SlackAppDeps } from '../../deps.js';
import { ephemeral } from '../common.js';
import { isKnownAction } from './ids.js';

/** The answer to a button calmops does not know: one from an older version's message, or another app's. */
export const UNKNOWN_ACTION_TEXT =
  'This button belongs to a message calmops no longer tracks; nothing was changed. The session thread has the current buttons.';

export type BlockActionArgs = Pick<SlackActionMiddlewareArgs<BlockAction>, 'ack' | 'body' | 'action'>;

/**
 * Answers a click on a button no other listener knows. Bolt runs every matching listener, so a known id is left
 * to its own listener, which acknowledges it.
 */
export async function answerUnknownButton(deps: SlackAppDeps, { ack, body, action }: BlockActionArgs): Promise<void> {
  const actionId = (action as { action_id?: string }).action_id ?? '';
  if (isKnownAction(actionId)) return;
  await ack();
  (deps.logger ?? console).info('button with an unknown action id', { actionId: actionId.slice(0, 64) });
  const message = body.message as { ts?: string; thread_ts?: string } | undefined;
  const channelId = body.channel?.id ?? body.container?.channel_id;
  if (channelId === undefined) return;
  const threadTs = message?.thread_ts ?? message?.ts;
  await ephemeral(deps, {
    channel: channelId,
    user: body.user.id,
    text: UNKNOWN_ACTION_TEXT,
    ...(threadTs === undefined ? {} : { threadTs }),
  });
}
