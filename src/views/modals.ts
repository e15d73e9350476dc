import { BREAK_GLASS_LIMITS } from '../diagnosis/break-glass.js';
import type { DiagnosticState } from '../diagnosis/state-machine.js';
import { NOTE_MAX } from '../limits.js';
import { BLOCK_LIMITS, clip, context, type KnownBlock, type ModalView, section } from './blocks.js';

export const BREAK_GLASS_CALLBACK = 'breakglass_request';
export const REQUEST_CHANGES_CALLBACK = 'plan_request_changes';

/** The modal's input blocks are named after the break-glass fields, so validation errors map onto them directly. */
export const BREAK_GLASS_BLOCKS = {
  justification: 'justification',
  seniorApprover: 'seniorApprover',
  skipToState: 'skipToState',
  timeLimitMinutes: 'timeLimitMinutes',
  change: 'change',
} as const;
export const INPUT_ACTION = 'value';

interface BreakGlassMetadata {
  s: string;
  c: string;
  t?: string;
}

interface RequestChangesMetadata {
  a: string;
  c?: string;
  m?: string;
}

const LATER_STATES: readonly DiagnosticState[] = ['ANALYZING', 'HYPOTHESIZING', 'TESTING', 'RESOLVING'];

export function breakGlassModal(input: {
  sessionId: string;
  channelId: string;
  threadTs?: string;
  currentState: DiagnosticState;
}): ModalView {
  const order: readonly DiagnosticState[] = ['GATHERING', ...LATER_STATES];
  const later = LATER_STATES.filter((s) => order.indexOf(s) > order.indexOf(input.currentState));
  const metadata: BreakGlassMetadata = {
    s: input.sessionId,
    c: input.channelId,
    ...(input.threadTs === undefined ? {} : { t: input.threadTs }),
  };
  const blocks: KnownBlock[] = [
    section(
      ':rotating_light: *Break glass skips the guided diagnosis.* Use it only when waiting costs more than the risk. ' +
        `A senior engineer approves, the override lasts at most ${BREAK_GLASS_LIMITS.maxTimeLimitMinutes} minutes, ` +
        `everything is audited, and a postmortem review is due within ${BREAK_GLASS_LIMITS.reviewDueDays} days.`,
    ),
    {
      type: 'input',
      block_id: BREAK_GLASS_BLOCKS.justification,
      label: { type: 'plain_text', text: 'Justification' },
      hint: { type: 'plain_text', text: 'What is broken, who is affected, why it cannot wait.' },
      element: {
        type: 'plain_text_input',
        action_id: INPUT_ACTION,
        multiline: true,
        min_length: BREAK_GLASS_LIMITS.minJustificationLength,
        max_length: NOTE_MAX,
      },
    },
    {
      type: 'input',
      block_id: BREAK_GLASS_BLOCKS.seniorApprover,
      label: { type: 'plain_text', text: 'Senior approver' },
      hint: { type: 'plain_text', text: 'A member of the senior group, not you.' },
      element: { type: 'users_select', action_id: INPUT_ACTION },
    },
    {
      type: 'input',
      block_id: BREAK_GLASS_BLOCKS.skipToState,
      label: { type: 'plain_text', text: 'Skip to' },
      element: {
        type: 'static_select',
        action_id: INPUT_ACTION,
        options: (later.length > 0 ? later : LATER_STATES).map((s) => ({
          text: { type: 'plain_text' as const, text: s },
          value: s,
        })),
      },
    },
    {
      type: 'input',
      block_id: BREAK_GLASS_BLOCKS.timeLimitMinutes,
      label: { type: 'plain_text', text: 'Time limit (minutes)' },
      element: {
        type: 'number_input',
        action_id: INPUT_ACTION,
        is_decimal_allowed: false,
        min_value: String(BREAK_GLASS_LIMITS.minTimeLimitMinutes),
        max_value: String(BREAK_GLASS_LIMITS.maxTimeLimitMinutes),
        initial_value: '30',
      },
    },
    {
      type: 'input',
      block_id: BREAK_GLASS_BLOCKS.change,
      optional: true,
      label: { type: 'plain_text', text: 'The change it is for' },
      hint: {
        type: 'plain_text',
        text: 'The command you will run, e.g. kubectl rollout restart deployment/web -n shop. The override unlocks that change only.',
      },
      element: { type: 'plain_text_input', action_id: INPUT_ACTION, max_length: NOTE_MAX },
    },
    context(`Session \`${input.sessionId}\`, currently ${input.currentState}.`),
  ];
  return {
    type: 'modal',
    callback_id: BREAK_GLASS_CALLBACK,
    private_metadata: clip(JSON.stringify(metadata), BLOCK_LIMITS.privateMetadata),
    title: { type: 'plain_text', text: 'Break glass' },
    submit: { type: 'plain_text', text: 'Request override' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks,
  };
}

export function requestChangesModal(input: { approvalId: string; channelId?: string; messageTs?: string }): ModalView {
  const metadata: RequestChangesMetadata = {
    a: input.approvalId,
    ...(input.channelId === undefined ? {} : { c: input.channelId }),
    ...(input.messageTs === undefined ? {} : { m: input.messageTs }),
  };
  return {
    type: 'modal',
    callback_id: REQUEST_CHANGES_CALLBACK,
    private_metadata: JSON.stringify(metadata),
    title: { type: 'plain_text', text: 'Request changes' },
    submit: { type: 'plain_text', text: 'Send back' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'input',
        block_id: 'note',
        label: { type: 'plain_text', text: 'What should change?' },
        element: {
          type: 'plain_text_input',
          action_id: INPUT_ACTION,
          multiline: true,
          min_length: 5,
          max_length: NOTE_MAX,
        },
      },
    ],
  };
}

/**
 * What a submitted modal turns into when calmops has no record of opening it (an old form, another app's, one opened
 * for someone else): the same words an unknown button gets, inside the modal, since a modal has no channel.
 */
export function untrackedModalView(): ModalView {
  return {
    type: 'modal',
    title: { type: 'plain_text', text: 'calmops' },
    close: { type: 'plain_text', text: 'Close' },
    blocks: [
      section(
        'This form belongs to a message calmops no longer tracks; nothing was changed. Open it again from the session thread.',
      ),
    ],
  };
}
