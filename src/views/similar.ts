import { escapeText } from '../mrkdwn/escape.js';
import { code, context, fitMessage, reportPointer, section, type ThreadMessage } from './limits.js';

export interface SimilarIncidentItem {
  id: string;
  title: string;
  score: number;
  explanation: string;
  rootCause: { code: string; summary: string };
  resolutionSteps: ReadonlyArray<{ command: string; description?: string }>;
  resolvedAt: string;
}

/** Past incidents that look like this one, with how they were resolved. */
export function similarIncidentsView(sessionId: string, matches: readonly SimilarIncidentItem[]): ThreadMessage {
  if (matches.length === 0) {
    return fitMessage(
      {
        text: 'No similar incident in operational memory.',
        blocks: [context(':mag: Searched operational memory: no similar incident was resolved before.')],
      },
      reportPointer(sessionId),
    );
  }
  const blocks = [
    section(`:books: *${matches.length} similar incident(s)* were resolved before. Here is how:`),
    ...matches
      .slice(0, 3)
      .map((m) =>
        section(
          [
            `*${escapeText(m.title)}* (${Math.round(m.score * 100)}% similar: ${escapeText(m.explanation)})`,
            `Root cause ${code(m.rootCause.code)}: ${escapeText(m.rootCause.summary)}`,
            ...m.resolutionSteps
              .slice(0, 4)
              .map((s) => `• ${code(escapeText(s.command))}${s.description ? ` ${escapeText(s.description)}` : ''}`),
            `_Resolved ${m.resolvedAt.slice(0, 10)}, memory ${code(m.id)}_`,
          ].join('\n'),
        ),
      ),
    context('Past fixes are suggestions: check they match this incident before following them.'),
  ];
  return fitMessage({ text: `${matches.length} similar incident(s) found`, blocks }, reportPointer(sessionId));
}
