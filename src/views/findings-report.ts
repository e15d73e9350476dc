import type { FindingGroup } from '../diagnosis/blackboard.js';
import { escapeText } from '../mrkdwn/escape.js';
import { code, context, fitMessage, header, reportPointer, section, type ThreadMessage } from './limits.js';

export interface FindingsReportInput {
  sessionId: string;
  domain: string;
  groups: readonly FindingGroup[];
  /** New findings this specialist added. */
  added: number;
}

function describe(ref: { kind: string; name: string; namespace?: string } | undefined): string {
  if (!ref) return 'no particular resource';
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}

/** The blackboard's findings report: incidents grouped across specialists, root cause first. */
export function findingsReportView(input: FindingsReportInput): ThreadMessage {
  const total = input.groups.reduce((n, g) => n + g.findings.length, 0);
  const blocks = [
    header('Findings report'),
    context(
      `The ${input.domain} specialist added ${input.added} finding(s). ${total} finding(s) in ${input.groups.length} incident(s) on the shared context.`,
    ),
    ...(input.groups.length === 0 ? [section('No findings were recorded.')] : []),
    ...input.groups
      .slice(0, 8)
      .map((g, i) =>
        section(
          [
            `*${i + 1}. ${escapeText(g.title)}*`,
            `Severity ${g.severity} · primary domain ${g.primaryDomain}${g.domains.length > 1 ? ` (also ${g.domains.filter((d) => d !== g.primaryDomain).join(', ')})` : ''}`,
            `Root cause ${g.rootCause.code ? code(g.rootCause.code) : ''} on ${escapeText(describe(g.rootCause.resource))} (confidence ${g.rootCause.confidence.toFixed(2)})`,
            ...(g.findings.length > 1 ? ['_Impact_ (fails because of it):'] : []),
            ...g.findings
              .slice(1, 6)
              .map(
                (f) => `• ${f.code ? code(f.code) : ''} ${escapeText(describe(f.resource))}: ${escapeText(f.message)}`,
              ),
            ...(g.links.length > 0
              ? [`_Causal links:_ ${escapeText(g.links.map((l) => `${l.cause} → ${l.dependent}`).join('; '))}`]
              : []),
          ].join('\n'),
        ),
      ),
  ];
  return fitMessage(
    { text: `Findings report: ${total} finding(s) in ${input.groups.length} incident(s)`, blocks },
    reportPointer(input.sessionId),
  );
}
