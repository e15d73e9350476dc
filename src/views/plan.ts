import { escapeText, mention } from '../mrkdwn/escape.js';
import type { PlanStep, RemediationPlan } from '../review/plan.js';
import type { AutomatedReview } from '../review/rubric.js';
import { safetyBadge } from './envelope.js';
import {
  actions,
  type Block,
  button,
  code,
  context,
  fitMessage,
  header,
  reportPointer,
  section,
  type ThreadMessage,
} from './limits.js';

/** "after steps 2 and 3": a step's needs, by the numbers this view shows. */
export function dependencyLine(steps: readonly PlanStep[], step: PlanStep): string | undefined {
  const numbers = step.needs
    .map((need) => steps.findIndex((s) => s.id === need) + 1)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  if (numbers.length === 0) return undefined;
  const list =
    numbers.length === 1 ? String(numbers[0]) : `${numbers.slice(0, -1).join(', ')} and ${numbers.at(-1) as number}`;
  return `after step${numbers.length > 1 ? 's' : ''} ${list}`;
}

function stepBlocks(steps: readonly PlanStep[]): Block[] {
  return steps.map((s, i) => {
    // The dependency sits on the step's own title line, so it cannot be read as belonging to the next step.
    const after = dependencyLine(steps, s);
    return section(
      [
        `*${i + 1}. ${escapeText(s.description)}* ${safetyBadge(s.safety)} _${s.mode}${after ? `, ${after}` : ''}_`,
        `\`\`\`${escapeText(s.command).replace(/```/g, "'''")}\`\`\``,
        ...(s.rollback ? [`Rollback: ${code(escapeText(s.rollback))}`] : []),
      ].join('\n'),
    );
  });
}

function reviewLines(review: AutomatedReview | undefined): string {
  if (!review) return 'Automated review: not run';
  const mark = (c: AutomatedReview['checks'][number]) =>
    c.passed ? ':white_check_mark:' : c.advisory ? ':mag:' : ':x:';
  return `Automated review: ${review.checks.map((c) => `${mark(c)} ${c.id}`).join('  ')}`;
}

/** What the reviewer still has to know: failed checks, and names or values the plan leaves open. */
function reviewWarnings(review: AutomatedReview | undefined): Block[] {
  if (!review) return [];
  const failed = review.checks.filter((c) => !c.passed && !c.advisory).map((c) => c.detail);
  const open = review.checks.filter((c) => c.id === 'names' && /look up|to choose/.test(c.detail)).map((c) => c.detail);
  return [
    ...(failed.length > 0 ? [context(`:warning: ${escapeText(failed.join('; '))}`)] : []),
    ...(open.length > 0 ? [context(`:mag: ${escapeText(open.join('; '))}`)] : []),
  ];
}

/** What this revision changed at the reviewer's request, or the question it asks them. */
function revisionBlocks(plan: RemediationPlan): Block[] {
  const r = plan.revision;
  if (!r) return [];
  const who = r.requestedBy ? mention(r.requestedBy) : 'the reviewer';
  return [
    section(
      [
        `*Changes asked by ${who}:* _${escapeText(r.note)}_`,
        ...(r.applied.length > 0 ? r.applied.map((a) => `• ${escapeText(a)}`) : ['• no change applied yet']),
        ...(r.question ? [`:question: ${who}: ${escapeText(r.question)}`] : []),
      ].join('\n'),
    ),
  ];
}

function alternativeBlocks(plan: RemediationPlan): Block[] {
  const alternatives = plan.alternatives ?? [];
  if (alternatives.length === 0) return [];
  return [
    context(
      alternatives
        .map(
          (a, i) =>
            `Alternative ${i + 1}: ${escapeText(a.summary)} (${a.steps.length} step${a.steps.length === 1 ? '' : 's'}; request changes with "use alternative ${i + 1}")`,
        )
        .join('\n'),
    ),
  ];
}

export interface PlanReviewViewInput {
  sessionId: string;
  approvalId: string;
  plan: RemediationPlan;
  review?: AutomatedReview;
  revision: number;
  expiresAt: string;
}

/** A remediation plan waiting for a human reviewer: approve, or request changes with a note. */
export function planReviewView(input: PlanReviewViewInput): ThreadMessage {
  const { plan } = input;
  const blocks: Block[] = [
    header(`Remediation plan for review${input.revision > 0 ? ` (revision ${input.revision})` : ''}`),
    section(
      `*${escapeText(plan.summary)}*\nRoot cause: ${escapeText(plan.rootCause)}\nNamespace ${code(escapeText(plan.namespace))} · author <@${plan.author}>`,
    ),
    ...revisionBlocks(plan),
    ...stepBlocks(plan.steps),
    ...alternativeBlocks(plan),
    context(reviewLines(input.review)),
    ...reviewWarnings(input.review),
    context(`calmops never runs these commands. Review expires ${input.expiresAt.slice(11, 16)} UTC.`),
    actions(`plan-review:${input.approvalId}`, [
      button('Approve plan', 'approval_approve', input.approvalId, 'primary'),
      button('Request changes', 'approval_request_changes', input.approvalId),
    ]),
  ];
  return fitMessage(
    { text: `Remediation plan for review: ${escapeText(plan.summary)}`, blocks },
    reportPointer(input.sessionId),
  );
}

/** The approved plan, for humans to run; a "resolved" button closes the incident once it worked. */
export function approvedPlanView(input: {
  sessionId: string;
  plan: RemediationPlan;
  approvedBy?: string;
  autonomous: boolean;
}): ThreadMessage {
  const by = input.autonomous
    ? 'approved automatically: every step only reads'
    : `approved${input.approvedBy ? ` by <@${input.approvedBy}>` : ''}`;
  const blocks: Block[] = [
    header('Approved remediation plan'),
    section(`*${escapeText(input.plan.summary)}* (${by})\nRoot cause: ${escapeText(input.plan.rootCause)}`),
    ...stepBlocks(input.plan.steps),
    context('calmops does not run changes: run each step yourself, rollback at hand. Ask here for any step.'),
    actions(`resolved:${input.sessionId}`, [button('Mark resolved', 'session_resolved', input.sessionId, 'primary')]),
  ];
  return fitMessage(
    { text: `Approved plan: ${escapeText(input.plan.summary)}`, blocks },
    reportPointer(input.sessionId),
  );
}

/** Why there is no approved plan: rejected after 3 revisions, expired, or the synthesizer needs a human. */
export function planOutcomeView(
  sessionId: string,
  outcome: 'rejected' | 'expired' | 'failed' | 'needs-human',
  detail?: string,
): ThreadMessage {
  const text = {
    rejected:
      'The plan was not approved after 3 revisions. Describe the fix you want in the thread, or confirm the root cause again for a fresh plan.',
    expired: 'Nobody reviewed the plan in time, so it expired. Confirm the root cause again to ask for a fresh plan.',
    failed: 'The plan review could not finish. Confirm the root cause again to retry.',
    'needs-human': 'I could not produce a valid plan.',
  }[outcome];
  return fitMessage(
    {
      text,
      blocks: [section(`:memo: ${text}`), ...(detail ? [context(escapeText(detail))] : [])],
    },
    reportPointer(sessionId),
  );
}

/** The mandatory post-incident review after a break-glass: who did what under the override. */
export function postmortemReviewView(input: {
  sessionId: string;
  approvalId: string;
  requestId: string;
  summary: string;
  /** The audit trail as mrkdwn lines, composed by the review step with their foreign parts already escaped. */
  lines: readonly string[];
  expiresAt: string;
}): ThreadMessage {
  return fitMessage(
    {
      text: `Post-incident review due for break-glass ${input.requestId}`,
      blocks: [
        header('Post-incident review (mandatory)'),
        section(escapeText(input.summary)),
        ...(input.lines.length > 0 ? [section(input.lines.map((l) => `• ${l}`).join('\n'))] : []),
        context(`Review the override's audit trail and confirm it was justified. Due ${input.expiresAt.slice(0, 10)}.`),
        actions(`postmortem:${input.approvalId}`, [
          button('Review completed', 'approval_approve', input.approvalId, 'primary'),
        ]),
      ],
    },
    reportPointer(input.sessionId),
  );
}
