import type { StandInMessage } from '../../local/slack/index.js';

/** A button as a message's `actions` block carries it. */
export interface SlackButton {
  action_id: string;
  value: string;
}

/** A message's text and blocks in one string, so a pattern can match either. */
export function renderMessage(message: { text: string; blocks?: readonly unknown[] | undefined }): string {
  return `${message.text}\n${JSON.stringify(message.blocks ?? [])}`;
}

/** The buttons in a message's `actions` blocks. */
export function buttonsOf(message: Pick<StandInMessage, 'blocks'>): SlackButton[] {
  return (message.blocks ?? []).flatMap((b) => {
    const block = b as { type?: string; elements?: { type?: string; action_id?: string; value?: string }[] };
    return block.type === 'actions'
      ? (block.elements ?? [])
          .filter((e) => e.type === 'button' && e.action_id !== undefined)
          .map((e) => ({ action_id: e.action_id as string, value: e.value ?? '' }))
      : [];
  });
}
