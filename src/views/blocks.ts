import type { types } from '@slack/bolt';
import { context } from './limits.js';
import { SLACK_LIMITS } from './slack-limits.js';

/**
 * Block Kit helpers for the views the command, the modals and App Home show: the shared builders of `limits.ts`
 * (which clip every text to Slack's limits), plus what only these views need.
 */

export type KnownBlock = types.KnownBlock;
export type ModalView = types.ModalView;
export type HomeView = types.HomeView;

export const BLOCK_LIMITS = {
  messageBlocks: SLACK_LIMITS.messageBlocks,
  viewBlocks: SLACK_LIMITS.viewBlocks,
  sectionText: SLACK_LIMITS.sectionText,
  fieldText: SLACK_LIMITS.sectionFieldText,
  headerText: SLACK_LIMITS.headerText,
  contextText: SLACK_LIMITS.sectionText,
  buttonText: SLACK_LIMITS.buttonText,
  buttonValue: SLACK_LIMITS.buttonValue,
  id: Math.min(SLACK_LIMITS.actionId, SLACK_LIMITS.blockId),
  privateMetadata: SLACK_LIMITS.privateMetadata,
  modalTitle: SLACK_LIMITS.viewTitle,
  optionText: SLACK_LIMITS.optionText,
} as const;

export { escapeText as escapeMrkdwn } from '../mrkdwn/escape.js';
export { context, divider, fields, header, section, truncate as clip } from './limits.js';

/**
 * Keeps a message within Slack's block limit: when there are more blocks than fit, the tail is replaced by one
 * context line saying how many were left out and where to find them.
 */
export function fitBlocks(blocks: readonly KnownBlock[], max: number, pointer: string): KnownBlock[] {
  if (blocks.length <= max) return [...blocks];
  const kept = blocks.slice(0, max - 1);
  return [...kept, context(`…${blocks.length - kept.length} more not shown. ${pointer}`)];
}

/** `2026-11-21T22:15:00.000Z` → Slack's localized date token, with a UTC fallback for clients without it. */
export function slackDate(iso: string): string {
  const seconds = Math.floor(Date.parse(iso) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  const fallback = `${iso.slice(0, 16).replace('T', ' ')} UTC`;
  return `<!date^${seconds}^{date_short_pretty} {time}|${fallback}>`;
}
