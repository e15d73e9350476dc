import { escapeText } from '../mrkdwn/escape.js';
import { context, fitMessage, reportPointer, section, type ThreadMessage } from './limits.js';

export interface InterventionViewInput {
  sessionId: string;
  blocked: boolean;
  /** The calming (or caution) message from the panic detector. */
  message: string;
  recommendedActions: readonly string[];
  forcedState?: string;
  /** Guidance for the state the session is in now. */
  guidance?: string;
}

/** A calming intervention: the request was held back (or let through with a caution) and why. */
export function interventionView(input: InterventionViewInput): ThreadMessage {
  const blocks = [
    section(escapeText(input.message)),
    ...(input.recommendedActions.length > 0
      ? [section(input.recommendedActions.map((a) => `• ${escapeText(a)}`).join('\n'))]
      : []),
    ...(input.forcedState
      ? [context(`The session moved back to *${input.forcedState}* so we can look at the evidence together.`)]
      : []),
    ...(input.guidance ? [context(escapeText(input.guidance))] : []),
  ];
  return fitMessage(
    { text: input.blocked ? 'Hold on: let us slow down and look at the evidence.' : 'A word of caution.', blocks },
    reportPointer(input.sessionId),
  );
}

/** A request the gate did not allow in the current state, with what is still needed. */
export function blockedView(sessionId: string, reason: string, guidance: string): ThreadMessage {
  return fitMessage(
    {
      text: `Not yet: ${escapeText(reason)}`,
      blocks: [section(`:no_entry_sign: *Not yet:* ${escapeText(reason)}`), context(escapeText(guidance))],
    },
    reportPointer(sessionId),
  );
}

/**
 * A plain answer in the thread (guidance, a plan step, an acknowledgement). `text` is mrkdwn the caller composed:
 * anything in it that came from a person or the cluster must already be escaped.
 */
export function replyView(sessionId: string, text: string, note?: string): ThreadMessage {
  return fitMessage(
    { text, blocks: [section(text), ...(note ? [context(escapeText(note))] : [])] },
    reportPointer(sessionId),
  );
}
