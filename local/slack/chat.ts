import { messageBlockProblems, SLACK_LIMITS } from './block-rules.js';
import type { StandInChannel } from './demo.js';
import type { StandInMessage } from './records.js';
import { nextTs, type StandInState } from './state.js';
import { type Answer, type Args, fail, str } from './wire.js';

/**
 * The conversation as the bot changes it: `chat.*` methods, and the message rules a response_url post shares with
 * them (Slack refuses the same content on both paths).
 */

export function channelFor(state: StandInState, args: Args): StandInChannel {
  const id = str(args['channel']);
  if (id === undefined) fail('channel_not_found');
  const channel = state.channels.get(id);
  if (channel === undefined) fail('channel_not_found');
  return channel;
}

export function checkMessageContent(args: Args, requireContent: boolean): void {
  const text = args['text'];
  const blocks = args['blocks'];
  if (typeof text === 'string' && text.length > SLACK_LIMITS.messageText) fail('msg_too_long');
  if (blocks !== undefined) {
    if (typeof blocks === 'string') fail('invalid_blocks_format');
    const problems = messageBlockProblems(blocks);
    if (problems.length > 0) fail('invalid_blocks', problems);
  }
  const hasBlocks = Array.isArray(blocks) && blocks.length > 0;
  if (requireContent && str(text) === undefined && !hasBlocks && args['attachments'] === undefined) fail('no_text');
}

export function findMessage(state: StandInState, channel: string, ts: string): StandInMessage | undefined {
  return state.messages.find((m) => m.channel === channel && m.ts === ts && m.ephemeral_to === undefined && !m.deleted);
}

/** Stores a message the bot posts with `args` (text, blocks, thread_ts), visible only to `ephemeralTo` if given. */
export function addBotMessage(state: StandInState, channel: string, args: Args, ephemeralTo?: string): StandInMessage {
  const threadTs = str(args['thread_ts']);
  const message: StandInMessage = {
    channel,
    ts: nextTs(state),
    ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
    text: typeof args['text'] === 'string' ? args['text'] : '',
    ...(Array.isArray(args['blocks']) ? { blocks: args['blocks'] } : {}),
    user: state.botUserId,
    bot_id: state.botId,
    ...(ephemeralTo === undefined ? {} : { ephemeral_to: ephemeralTo }),
  };
  state.messages.push(message);
  return message;
}

/** Replaces what `args` carries (text, blocks) and marks the message edited, as chat.update does. */
export function editMessage(state: StandInState, message: StandInMessage, args: Args): void {
  if (typeof args['text'] === 'string') message.text = args['text'];
  if (Array.isArray(args['blocks'])) message.blocks = args['blocks'];
  message.edited = { ts: nextTs(state) };
}

export function chatMethods(state: StandInState): Record<string, (args: Args) => Answer> {
  return {
    'chat.postMessage': (args) => {
      const channel = channelFor(state, args);
      if (!channel.is_member && !channel.is_im) fail('not_in_channel');
      checkMessageContent(args, true);
      const message = addBotMessage(state, channel.id, args);
      return { channel: message.channel, ts: message.ts, message: { ...message, type: 'message' } };
    },
    'chat.update': (args) => {
      const channel = channelFor(state, args);
      const ts = str(args['ts']);
      if (ts === undefined) fail('message_not_found');
      const message = findMessage(state, channel.id, ts);
      if (message === undefined) fail('message_not_found');
      if (message.user !== state.botUserId) fail('cant_update_message');
      checkMessageContent(args, false);
      editMessage(state, message, args);
      return { channel: channel.id, ts, text: message.text, message: { ...message, type: 'message' } };
    },
    'chat.postEphemeral': (args) => {
      const channel = channelFor(state, args);
      const user = str(args['user']);
      if (user === undefined || !state.users.has(user)) fail('user_not_found');
      if (!channel.is_member && !channel.is_im) fail('not_in_channel');
      checkMessageContent(args, true);
      const message = addBotMessage(state, channel.id, args, user);
      return { message_ts: message.ts };
    },
  };
}
