import { escapeText, mention } from '../mrkdwn/escape.js';
import { type Block, context, fitMessage, section, type ThreadMessage } from './limits.js';

type DecisionOutcome = 'approved' | 'denied' | 'changes-requested' | 'expired' | 'cancelled' | 'completed';

const WORDS: Record<DecisionOutcome, string> = {
  approved: ':white_check_mark: Approved',
  denied: ':no_entry_sign: Denied',
  'changes-requested': ':pencil2: Changes requested',
  expired: ':hourglass: Expired',
  cancelled: ':heavy_multiplication_x: Cancelled',
  completed: ':white_check_mark: Completed',
};

export interface DecidedViewInput {
  outcome: DecisionOutcome;
  /** Who decided; absent for expiry and cancellation. */
  by?: string;
  at: string;
  note?: string;
  /** The message as it was posted: kept, minus its buttons. */
  blocks?: readonly Block[];
  /** Used when the original blocks are not at hand. */
  title?: string;
  sessionId: string;
}

/** An approval message after its decision: who and when, and no buttons left to click. */
export function decidedView(input: DecidedViewInput): ThreadMessage {
  const kept = (input.blocks ?? (input.title ? [section(input.title)] : [])).filter((b) => b.type !== 'actions');
  const who = input.by ? ` by ${mention(input.by)}` : '';
  const line = `${WORDS[input.outcome]}${who} at ${input.at.slice(0, 16).replace('T', ' ')} UTC${input.note ? ` — “${escapeText(input.note)}”` : ''}`;
  return fitMessage(
    { text: `${WORDS[input.outcome]}${who}`, blocks: [...kept, context(line)] },
    `Full report: \`/triage status ${input.sessionId}\``,
  );
}
