import { escapeText, mention } from '../mrkdwn/escape.js';
import {
  actions,
  type Block,
  button,
  code,
  context,
  fitMessage,
  reportPointer,
  section,
  type ThreadMessage,
} from './limits.js';

/**
 * The thread's question when a request names no namespace and the cluster does not settle it: one button per
 * namespace the words matched, each with what matched there, or a plain "which namespace?" when nothing did. A
 * button carries the session id and the namespace, nothing else; the choice is checked against what was offered.
 */

/** Shared prefix of the candidate buttons; each button adds its position, as Slack wants one action_id per button. */
export const NAMESPACE_ACTION_PREFIX = 'namespace_choose';

interface NamespaceCandidateView {
  namespace: string;
  why: string;
}

export interface NamespaceQuestionInput {
  sessionId: string;
  reason: 'ambiguous' | 'not-found';
  /** The triage's own explanation (what it matched, which namespaces exist). */
  message: string;
  candidates: readonly NamespaceCandidateView[];
}

const HOW_TO_NAME =
  'Or reply in this thread with `in <namespace>`, or start again with `/triage <what is wrong> in <namespace>`.';

/** The triage's explanation without its closing advice, which is written for the command line. */
function explanation(message: string): string {
  const plain = message
    .replace(/;\s*name (?:it|one)\b[\s\S]*$/, '')
    .replace(/;\s*pass it explicitly\s*$/, '')
    .trim();
  return plain.charAt(0).toUpperCase() + plain.slice(1);
}

export function namespaceQuestionView(input: NamespaceQuestionInput): ThreadMessage {
  const { sessionId } = input;
  if (input.reason === 'not-found' || input.candidates.length === 0) {
    const text = `Which namespace? ${explanation(input.message)}.`;
    return fitMessage(
      {
        text,
        blocks: [
          section(`:round_pushpin: *Which namespace?* ${escapeText(explanation(input.message))}.`),
          context(
            'Reply in this thread with `in <namespace>` (for example `in payments`) and I read it, or start again with `/triage <what is wrong> in <namespace>`.',
          ),
        ],
      },
      reportPointer(sessionId),
    );
  }
  const shown = input.candidates.slice(0, 5);
  const blocks: Block[] = [
    section(
      [
        ':round_pushpin: *Which namespace?* The request names none, and its words match things in more than one:',
        ...shown.map((c) => `• ${code(escapeText(c.namespace))}: ${escapeText(c.why)}`),
      ].join('\n'),
    ),
    actions(
      `namespaces:${sessionId}`,
      shown.map((c, i) =>
        button(
          `Continue in ${c.namespace}`,
          `${NAMESPACE_ACTION_PREFIX}:${i + 1}`,
          JSON.stringify({ s: sessionId, n: c.namespace }),
        ),
      ),
    ),
    context(`Pick one to triage it there. ${HOW_TO_NAME}`),
  ];
  return fitMessage(
    { text: `Which namespace? The request matches ${shown.map((c) => c.namespace).join(', ')}.`, blocks },
    reportPointer(sessionId),
  );
}

/** What the question turns into once answered: the buttons go, the choice and who made it stay. */
export function namespaceChosenView(input: {
  sessionId: string;
  namespace: string;
  userId: string;
  why?: string;
}): ThreadMessage {
  const because = input.why === undefined ? '' : ` (${escapeText(input.why)})`;
  const text = `:round_pushpin: Continuing in ${code(escapeText(input.namespace))}, chosen by ${mention(input.userId)}${because}. Reading it now.`;
  return fitMessage({ text, blocks: [section(text)] }, reportPointer(input.sessionId));
}
