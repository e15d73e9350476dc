import { escapeText } from '../mrkdwn/escape.js';
import { code, context, fitMessage, reportPointer, section, type ThreadMessage } from './limits.js';

export interface ReadResultInput {
  sessionId: string;
  /** The read as the user asked for it, e.g. `kubectl get pods -n shop`. */
  title: string;
  outcome: 'ok' | 'empty' | 'failed';
  summary: string;
  /** Compact lines (one per object, or log lines), already scrubbed. */
  lines: readonly string[];
  /** Shown for hypothesis tests: which theory the read tested. */
  hypothesis?: string;
  warning?: string;
  guidance?: string;
  /** What the answer leaves out (a pipe stage calmops does not run). */
  note?: string;
  /** The lines shown are the first of more: the rest is in the attached file, or not shown. */
  rest?: 'attached' | 'not-shown';
}

/** The result of a read calmops ran with its read-only identity. */
export function readResultView(input: ReadResultInput): ThreadMessage {
  const icon = input.outcome === 'failed' ? ':x:' : input.outcome === 'empty' ? ':white_circle:' : ':mag:';
  // Log lines and object descriptions come from the cluster: inside a code block Slack still reads `<!channel>`.
  const body =
    input.lines.length > 0 ? `\n\`\`\`${escapeText(input.lines.join('\n')).replace(/```/g, "'''")}\`\`\`` : '';
  return fitMessage(
    {
      text: `${escapeText(input.title)}: ${escapeText(input.summary)}`,
      blocks: [
        ...(input.hypothesis ? [context(`Testing hypothesis: ${escapeText(input.hypothesis)}`)] : []),
        section(`${icon} ${code(escapeText(input.title))}: ${escapeText(input.summary)}${body}`),
        ...(input.note ? [context(`:information_source: ${escapeText(input.note)}`)] : []),
        ...(input.rest === 'attached' ? [context(':page_facing_up: The whole answer is in the file below.')] : []),
        ...(input.rest === 'not-shown' ? [context('The rest of the answer is not shown here.')] : []),
        ...(input.warning ? [context(`:warning: ${escapeText(input.warning)}`)] : []),
        ...(input.guidance ? [context(escapeText(input.guidance))] : []),
      ],
    },
    reportPointer(input.sessionId),
  );
}
