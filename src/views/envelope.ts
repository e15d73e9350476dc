import { escapeText } from '../mrkdwn/escape.js';
import type { TriageEnvelope } from '../triage/envelope/index.js';
import {
  actions,
  type Block,
  button,
  code,
  context,
  divider,
  fitMessage,
  header,
  reportPointer,
  section,
  type ThreadMessage,
} from './limits.js';

/** The safety label as a coloured badge, so a DANGEROUS command stands out at a glance. */
export function safetyBadge(label: 'SAFE' | 'REQUIRES_APPROVAL' | 'DANGEROUS'): string {
  switch (label) {
    case 'SAFE':
      return ':large_green_circle: SAFE';
    case 'REQUIRES_APPROVAL':
      return ':large_yellow_circle: REQUIRES APPROVAL';
    case 'DANGEROUS':
      return ':red_circle: DANGEROUS';
  }
}

function percent(value: number): string {
  return `${Math.round(value * 100)}%`;
}

/** A testable theory offered as a button: choosing it runs its targeted reads. */
export interface HypothesisChoice {
  id: string;
  rank: number;
  code: string;
  summary: string;
  confidence: number;
}

export function hypothesisChoiceBlocks(sessionId: string, hypotheses: readonly HypothesisChoice[]): Block[] {
  if (hypotheses.length === 0) return [];
  const shown = hypotheses.slice(0, 5);
  return [
    section(
      [
        '*Hypotheses* (pick one to test it with targeted reads)',
        ...shown.map((h) => `${h.rank}. ${code(h.code)} ${escapeText(h.summary)} _(${percent(h.confidence)})_`),
      ].join('\n'),
    ),
    actions(
      `hypotheses:${sessionId}`,
      shown.map((h) =>
        // Slack refuses two buttons with one action_id in a block, so each carries its rank after the shared prefix.
        button(`Test #${h.rank} ${h.code}`, `hypothesis_choose:${h.rank}`, JSON.stringify({ s: sessionId, h: h.id })),
      ),
    ),
  ];
}

export interface EnvelopeViewInput {
  sessionId: string;
  envelope: TriageEnvelope;
  hypotheses: readonly HypothesisChoice[];
}

/** The triage envelope: what is wrong, how sure, what is missing, what to do next (each action labelled). */
export function envelopeView(input: EnvelopeViewInput): ThreadMessage {
  const { envelope: e, sessionId } = input;
  const completeness = percent(e.evidence.completeness);
  const checklist = [
    ...e.evidence.present.map((t) => `:white_check_mark: ${escapeText(t)}`),
    ...e.evidence.missing.map((t) => {
      const gap = e.evidence.gaps.find((g) => g.type === t);
      return `:x: ${escapeText(t)}${gap ? ` — ${gap.reason}: ${escapeText(gap.detail)}` : ''}`;
    }),
  ];
  const findings = e.findings
    .slice(0, 5)
    .map(
      (f) =>
        `• ${code(f.code)} _${f.severity}_ on ${escapeText(`${f.resource.kind} ${f.resource.namespace ? `${f.resource.namespace}/` : ''}${f.resource.name}`)}: ${escapeText(f.message)}`,
    );
  const causes = e.rootCause.slice(0, 3).map((c) => {
    const name = (r: { kind: string; name: string; namespace?: string | undefined }) =>
      escapeText(`${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`);
    const impact = (c.impact ?? []).slice(0, 4).map((i) => `${name(i.resource)} (${code(i.code)})`);
    return [
      `${c.rank}. *${name(c.resource)}* ${code(c.code)} _(${percent(c.confidence)})_`,
      ...(c.change ? [`      Change: ${escapeText(c.change)}`] : []),
      ...(c.alternatives ?? []).slice(0, 2).map((a) => `      Or: ${name(a.resource)}: ${escapeText(a.change)}`),
      ...(impact.length > 0
        ? [
            `      Impact: ${impact.join(', ')}${(c.impact ?? []).length > 4 ? ` and ${(c.impact ?? []).length - 4} more` : ''}`,
          ]
        : []),
    ].join('\n');
  });
  const nextActions = e.nextActions
    .slice(0, 6)
    .map((a) => `${safetyBadge(a.safety)} ${code(escapeText(a.command))}\n      ${escapeText(a.description)}`);
  const blocks: Block[] = [
    header(`Triage: ${e.routing.intent} in ${e.routing.namespace}`),
    section(escapeText(e.summary)),
    // How the words and the cluster chose what was read and where: a request without a namespace shows what matched.
    context(`*Routing* ${escapeText(e.routing.why)}`),
    context(
      `*Safety* ${e.rubrics.safety}`,
      `*Priority* ${e.rubrics.priority}`,
      `*Confidence* ${e.rubrics.confidence}`,
      // No state here: the envelope is never edited, so a state line would go stale as the session moves on;
      // `/triage status` and the App Home show the state now.
      `*Evidence* ${completeness} (needs ${percent(e.evidence.threshold)})`,
    ),
    ...(causes.length > 0 ? [section(`*Root cause*\n${causes.join('\n')}`)] : []),
    section(`*Evidence checklist* (${completeness} complete)\n${checklist.join('\n') || '_nothing was read_'}`),
    ...(findings.length > 0
      ? [
          section(
            `*Top findings*${e.findings.length > 5 ? ` (5 of ${e.findings.length})` : ''}\n${findings.join('\n')}`,
          ),
        ]
      : [section('*Top findings*\nNothing wrong was found in what could be read.')]),
    ...(nextActions.length > 0 ? [section(`*Next actions*\n${nextActions.join('\n')}`)] : []),
    ...(e.evidence.completeness < e.evidence.threshold
      ? [context(':hourglass: Changes are withheld until the evidence is complete enough.')]
      : []),
    ...hypothesisChoiceBlocks(sessionId, input.hypotheses),
    ...(e.promptSuggestions.length > 0
      ? [
          divider(),
          context(
            `*Try asking:* ${e.promptSuggestions
              .slice(0, 4)
              .map((p) => `“${escapeText(p)}”`)
              .join(' · ')}`,
          ),
        ]
      : []),
    context(
      `Session ${code(sessionId)} · ${e.routing.templateId} · ${e.execution.stepsExecuted}/${e.execution.stepBudget} steps, ${e.execution.requests} reads${e.execution.timedOut ? ' · :warning: deadline reached' : ''}`,
    ),
  ];
  return fitMessage(
    {
      text: `Triage ${escapeText(e.routing.intent)} in ${escapeText(e.routing.namespace)}: ${escapeText(e.summary)}`,
      blocks,
    },
    reportPointer(sessionId),
  );
}
