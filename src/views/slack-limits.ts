/**
 * The Block Kit limits Slack enforces, in one table. The views clip their content to them (limits.ts, blocks.ts)
 * and the local Slack stand-in refuses what exceeds them the way Slack does (local/slack/block-rules.ts), so a
 * view that fits here is one Slack accepts.
 */
export const SLACK_LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  messageText: 40_000,
  sectionText: 3000,
  sectionFields: 10,
  sectionFieldText: 2000,
  headerText: 150,
  buttonText: 75,
  buttonValue: 2000,
  actionId: 255,
  blockId: 255,
  actionsElements: 25,
  contextElements: 10,
  viewTitle: 24,
  viewButton: 24,
  callbackId: 255,
  privateMetadata: 3000,
  inputLabel: 2000,
  optionText: 75,
  optionValue: 150,
  staticSelectOptions: 100,
  imageAltText: 2000,
} as const;
