import type { types } from '@slack/bolt';
import { SLACK_LIMITS } from './slack-limits.js';

/**
 * Slack's Block Kit limits for the messages calmops posts into incident threads, and the builders the thread views
 * use. Content that does not fit is shortened with a pointer to where the full text lives; a message is never
 * rejected for being long, because at 4 AM a clipped envelope beats no envelope.
 */

export const THREAD_LIMITS = {
  blocks: SLACK_LIMITS.messageBlocks,
  /** section / context / header text objects. */
  text: SLACK_LIMITS.sectionText,
  headerText: SLACK_LIMITS.headerText,
  fieldText: SLACK_LIMITS.sectionFieldText,
  fields: SLACK_LIMITS.sectionFields,
  buttonText: SLACK_LIMITS.buttonText,
  buttonValue: SLACK_LIMITS.buttonValue,
  /** action_id and block_id. */
  id: Math.min(SLACK_LIMITS.actionId, SLACK_LIMITS.blockId),
  actionsElements: SLACK_LIMITS.actionsElements,
  contextElements: SLACK_LIMITS.contextElements,
  /** The notification text of a message; Slack allows 40,000 but nobody reads that much in a push. */
  fallbackText: 3000,
} as const;

export type Block = types.KnownBlock;
export type Button = types.Button;

/** What every thread view returns: the notification text and the blocks. */
export interface ThreadMessage {
  text: string;
  blocks: Block[];
}

/** Where the whole report can be read when a message had to be shortened. */
export function reportPointer(sessionId: string): string {
  return `Full report: \`/triage status ${sessionId}\``;
}

/** Cuts text to `max` characters; with a pointer, the cut ends with it so the reader knows where the rest is. */
export function truncate(text: string, max: number, pointer?: string): string {
  if (text.length <= max) return text;
  const tail = pointer === undefined ? '…' : `… _(truncated; ${pointer})_`;
  if (tail.length >= max) return text.slice(0, max);
  return `${text.slice(0, max - tail.length).trimEnd()}${tail}`;
}

/**
 * calmops never addresses a whole channel, so a broadcast in a thread message is foreign text that escaped
 * escaping: it is made inert as a last resort.
 */
function withoutBroadcasts(text: string): string {
  return text.replace(/<(!(?:channel|here|everyone)(?:\|[^>]*)?)>/g, '&lt;$1&gt;');
}

/** A code span that cannot be broken by backticks in the content (escape foreign content first). */
export function code(text: string): string {
  return `\`${text.replace(/`/g, "'")}\``;
}

export function header(text: string): Block {
  return { type: 'header', text: { type: 'plain_text', text: truncate(text, THREAD_LIMITS.headerText), emoji: true } };
}

export function section(text: string, blockId?: string): Block {
  return {
    type: 'section',
    ...(blockId === undefined ? {} : { block_id: truncate(blockId, THREAD_LIMITS.id) }),
    text: { type: 'mrkdwn', text: text === '' ? ' ' : text },
  };
}

export function fields(pairs: ReadonlyArray<readonly [string, string]>): Block {
  return {
    type: 'section',
    fields: pairs.slice(0, THREAD_LIMITS.fields).map(([label, value]) => ({
      type: 'mrkdwn' as const,
      text: truncate(`*${label}*\n${value}`, THREAD_LIMITS.fieldText),
    })),
  };
}

export function context(...texts: string[]): Block {
  return {
    type: 'context',
    elements: texts
      .slice(0, THREAD_LIMITS.contextElements)
      .map((t) => ({ type: 'mrkdwn' as const, text: t === '' ? ' ' : t })),
  };
}

export function divider(): Block {
  return { type: 'divider' };
}

export function button(text: string, actionId: string, value: string, style?: 'primary' | 'danger'): Button {
  return {
    type: 'button',
    text: { type: 'plain_text', text: truncate(text, THREAD_LIMITS.buttonText), emoji: true },
    action_id: truncate(actionId, THREAD_LIMITS.id),
    value: truncate(value, THREAD_LIMITS.buttonValue),
    ...(style === undefined ? {} : { style }),
  };
}

export function actions(blockId: string, elements: readonly Button[]): Block {
  return {
    type: 'actions',
    block_id: truncate(blockId, THREAD_LIMITS.id),
    elements: elements.slice(0, THREAD_LIMITS.actionsElements),
  };
}

type TextObject = { type: string; text: string };

function clampText(object: TextObject | undefined, max: number, pointer: string): void {
  if (object && typeof object.text === 'string' && object.type === 'mrkdwn') {
    object.text = withoutBroadcasts(object.text);
  }
  if (object && typeof object.text === 'string' && object.text.length > max) {
    object.text = truncate(object.text, max, object.type === 'mrkdwn' ? pointer : undefined);
  }
}

/**
 * Makes a message fit: every text, id and button value within its limit, at most 50 blocks (the tail becomes one
 * line saying how much was left out and where to read it). Views build freely and call this last.
 */
export function fitMessage(message: ThreadMessage, pointer: string): ThreadMessage {
  const blocks = structuredClone(message.blocks) as Block[];
  for (const block of blocks) {
    const b = block as unknown as Record<string, unknown>;
    if (typeof b['block_id'] === 'string') b['block_id'] = truncate(b['block_id'], THREAD_LIMITS.id);
    switch (block.type) {
      case 'header':
        clampText(block.text, THREAD_LIMITS.headerText, pointer);
        break;
      case 'section':
        clampText(block.text as TextObject | undefined, THREAD_LIMITS.text, pointer);
        for (const field of (block.fields ?? []) as TextObject[]) clampText(field, THREAD_LIMITS.fieldText, pointer);
        break;
      case 'context':
        for (const element of block.elements as TextObject[]) {
          if ('text' in element) clampText(element, THREAD_LIMITS.text, pointer);
        }
        break;
      case 'actions':
        for (const element of block.elements as unknown as Array<Record<string, unknown>>) {
          if (typeof element['action_id'] === 'string') {
            element['action_id'] = truncate(element['action_id'], THREAD_LIMITS.id);
          }
          if (typeof element['value'] === 'string') {
            element['value'] = truncate(element['value'], THREAD_LIMITS.buttonValue);
          }
          clampText(element['text'] as TextObject | undefined, THREAD_LIMITS.buttonText, pointer);
        }
        break;
      default:
        break;
    }
  }
  let fitted = blocks;
  if (blocks.length > THREAD_LIMITS.blocks) {
    const kept = blocks.slice(0, THREAD_LIMITS.blocks - 1);
    fitted = [...kept, context(`…${blocks.length - kept.length} more block(s) not shown. ${pointer}`)];
  }
  return { text: truncate(withoutBroadcasts(message.text || ' '), THREAD_LIMITS.fallbackText), blocks: fitted };
}
