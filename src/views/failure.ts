import { escapeText } from '../mrkdwn/escape.js';
import { code, context, fitMessage, reportPointer, section, type ThreadMessage } from './limits.js';

/** A step failed: say which, in words, and what still works. The execution never dies silently. */
export function failureView(input: { sessionId: string; step: string; error: string; detail?: string }): ThreadMessage {
  return fitMessage(
    {
      text: `Something failed: ${escapeText(input.step)} (${escapeText(input.error)})`,
      blocks: [
        section(`:warning: *${escapeText(input.step)} failed* (${code(escapeText(input.error))}).`),
        ...(input.detail ? [context(escapeText(input.detail))] : []),
        context('The session and its evidence are kept. Send a message in this thread to pick it up again.'),
      ],
    },
    reportPointer(input.sessionId),
  );
}

/** A wait ran out: an approval nobody decided, or an idle session. */
export function timeoutNoticeView(sessionId: string, what: string, next: string): ThreadMessage {
  return fitMessage(
    {
      text: `${escapeText(what)} timed out`,
      blocks: [section(`:hourglass: ${escapeText(what)}`), context(escapeText(next))],
    },
    reportPointer(sessionId),
  );
}
