import type { FindingGroup } from '../diagnosis/blackboard.js';
import { escapeText } from '../mrkdwn/escape.js';
import type { RankingEffect, SpecialistCheck } from '../specialists/index.js';
import type { ResourceRef } from '../triage/envelope/index.js';
import { code, context, fitMessage, header, reportPointer, section, type ThreadMessage } from './limits.js';

export interface FindingsReportInput {
  sessionId: string;
  domain: string;
  groups: readonly FindingGroup[];
  /** New findings this specialist added. */
  added: number;
  newFindings?: ReadonlyArray<{ code: string; resource: ResourceRef; message: string; evidence?: readonly string[] }>;
  /** What the specialist checked: found, ruled out, or could not read. */
  checks?: readonly SpecialistCheck[];
  ranking?: RankingEffect;
  reads?: number;
  budget?: number;
}

const OUTCOME: Record<SpecialistCheck['outcome'], string> = {
  found: ':mag:',
  'ruled-out': ':white_check_mark: ruled out:',
  'not-read': ':grey_question: not read:',
};

function rankingLine(ranking: RankingEffect): string {
  const cause = (c: { code: string; resource: ResourceRef } | undefined) =>
    c ? `${code(c.code)} on ${escapeText(describe(c.resource))}` : 'no ranked cause';
  switch (ranking.effect) {
    case 'changed':
      return `*Ranking changed:* ${cause(ranking.to)} now leads, ahead of the envelope's ${cause(ranking.from)}, because ${escapeText(ranking.reason)}`;
    case 'confirmed':
      return `*Ranking confirmed:* the envelope's ${cause(ranking.top)} stands, with new evidence (${escapeText(ranking.by.map((f) => f.code).join(', '))}).`;
    case 'unchanged':
      return `*Ranking unchanged:* the envelope's ${cause(ranking.top)} stands (${escapeText(ranking.reason)}).`;
  }
}

function describe(ref: { kind: string; name: string; namespace?: string } | undefined): string {
  if (!ref) return 'no particular resource';
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}

/** The blackboard's findings report: incidents grouped across specialists, root cause first. */
export function findingsReportView(input: FindingsReportInput): ThreadMessage {
  const total = input.groups.reduce((n, g) => n + g.findings.length, 0);
  const checks = input.checks ?? [];
  const ruledOut = checks.filter((c) => c.outcome === 'ruled-out').length;
  const fresh = input.newFindings ?? [];
  const blocks = [
    header('Findings report'),
    context(
      `The ${input.domain} specialist added ${input.added} finding(s) and ruled out ${ruledOut} of ${checks.length} check(s)${input.reads !== undefined ? ` in ${input.reads} of its ${input.budget} reads` : ''}. ${total} finding(s) in ${input.groups.length} incident(s) on the shared context.`,
    ),
    ...(fresh.length > 0
      ? [
          section(
            [
              '*New findings*',
              ...fresh
                .slice(0, 5)
                .map((f) => `• ${code(f.code)} ${escapeText(describe(f.resource))}: ${escapeText(f.message)}`),
            ].join('\n'),
          ),
        ]
      : []),
    ...(checks.length > 0
      ? [
          section(
            [
              '*What it checked*',
              ...checks.slice(0, 10).map((c) => `${OUTCOME[c.outcome]} ${escapeText(c.what)}: ${escapeText(c.detail)}`),
            ].join('\n'),
          ),
        ]
      : []),
    ...(input.ranking ? [section(rankingLine(input.ranking))] : []),
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
