import * as z from 'zod';
import { isOverrideActive } from '../../diagnosis/break-glass.js';
import { evidenceFromPlan } from '../../diagnosis/evidence-sources.js';
import { SessionId, SUMMARY_MAX } from '../../limits.js';
import { synthesizePlan } from '../../review/guided-regeneration.js';
import { planInputFrom } from '../../review/input.js';
import type { RemediationPlan } from '../../review/plan.js';
import { revisePlan } from '../../review/revise.js';
import { reviewPlan } from '../../review/rubric.js';
import type { PlanRecord } from '../../store/workflow-records.js';
import { breakGlassAuditLine } from '../../views/break-glass.js';
import { timeoutNoticeView } from '../../views/failure.js';
import { approvedPlanView, planOutcomeView } from '../../views/plan.js';
import { DecisionSchema } from '../api.js';
import { expireApproval, postToSession, StepInputError } from '../common.js';
import type { WorkflowDeps } from '../deps.js';
import { recordEvent, timelineSink } from '../events.js';
import { addEvidence } from '../progress.js';

/**
 * The review machine's steps (the review loop, docs/concepts.md): synthesis behind the schema guard, the automated rubric, revisions with the
 * reviewer's note, and the final decision, each recorded as a structured event.
 */

const S = { sessionId: SessionId };

export const SynthesizePayload = z.object({
  step: z.literal('plan-synthesize'),
  ...S,
  revision: z.number().int().min(0),
  feedback: z.array(z.string()).optional(),
});
export const AutoReviewPayload = z.object({ step: z.literal('plan-review-auto'), ...S, planId: z.string() });
export const RevisePayload = z.object({
  step: z.literal('plan-revise'),
  ...S,
  revision: z.number().int().min(0),
  planId: z.string(),
  decision: DecisionSchema,
});
export const ReviewDecidedPayload = z.object({
  step: z.literal('review-decided'),
  ...S,
  status: z.enum(['approved', 'approved-autonomous', 'rejected', 'expired', 'postmortem-complete']),
  planId: z.string(),
  decision: DecisionSchema.optional(),
});
export const PostmortemPreparePayload = z.object({
  step: z.literal('postmortem-prepare'),
  ...S,
  requestId: z.string(),
});
export const ReviewOutcomePayload = z.object({
  step: z.literal('review-outcome'),
  ...S,
  review: z.object({ status: z.string(), planId: z.string().optional() }).passthrough(),
});

async function storePlanOutcome(
  deps: WorkflowDeps,
  p: z.infer<typeof SynthesizePayload>,
  record: Omit<PlanRecord, 'planId' | 'createdAt' | 'sessionId' | 'kind' | 'revision'>,
) {
  const stored = await deps.artifacts.putPlan(
    { sessionId: p.sessionId, kind: 'plan', revision: p.revision, ...record },
    deps.now(),
  );
  await deps.artifacts.mutateWorkflow(p.sessionId, deps.now(), (w) => ({ ...w, currentPlanId: stored.planId }));
  return { planId: stored.planId, status: stored.status };
}

/**
 * A revision requested by a reviewer is made from the plan they reviewed and their note (the review loop's revision);
 * only a first plan, or one whose predecessor had no valid plan, is synthesized afresh.
 */
async function reviseFromNote(
  deps: WorkflowDeps,
  p: z.infer<typeof SynthesizePayload>,
  current: PlanRecord | undefined,
): Promise<{ planId: string; status: string } | undefined> {
  if (!current || p.revision === 0) return undefined;
  const draft = current.plan as RemediationPlan | undefined;
  if (current.status === 'draft' && current.revision === p.revision && draft?.revision) {
    // A regeneration after the rubric cannot improve a reviewer's edits: the revision stands as it is.
    return { planId: current.planId, status: current.status };
  }
  const base = current.plan as RemediationPlan | undefined;
  if (current.status !== 'rejected' || current.revision !== p.revision - 1 || !base) return undefined;
  const note = (p.feedback ?? []).join('\n').trim();
  const envelope = await deps.artifacts.getEnvelope(p.sessionId);
  const known = (envelope?.findings ?? []).flatMap((f) => [f.resource, ...(f.owner ? [f.owner] : []), ...f.related]);
  const revised = revisePlan(base, {
    note: note || 'The reviewer asked for changes without a note.',
    number: p.revision,
    ...(current.decidedBy ? { requestedBy: current.decidedBy } : {}),
    known: [...known, ...(envelope?.rootCause ?? []).flatMap((c) => [c.resource, ...(c.chain ?? [])])],
  });
  await recordEvent(deps, p.sessionId, 'plan_revised', {
    summary: revised.applied.length > 0 ? revised.applied.join('; ').slice(0, SUMMARY_MAX) : 'No change applied',
    data: {
      revision: p.revision,
      basedOn: current.planId,
      applied: revised.applied,
      ...(revised.question ? { question: revised.question } : {}),
    },
  });
  return storePlanOutcome(deps, p, {
    status: 'draft',
    plan: revised.plan as unknown as Record<string, unknown>,
    feedback: p.feedback ?? [],
  });
}

export async function planSynthesize(deps: WorkflowDeps, p: z.infer<typeof SynthesizePayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const envelope = await deps.artifacts.getEnvelope(p.sessionId);
  const workflow = await deps.artifacts.getOrCreateWorkflow(p.sessionId, deps.now());
  const current = workflow.currentPlanId
    ? await deps.artifacts.getPlan(p.sessionId, workflow.currentPlanId)
    : undefined;
  const revised = await reviseFromNote(deps, p, current);
  if (revised) return revised;
  const confirmed = [...workflow.evidence].reverse().find((e) => e.type === 'confirmed_root_cause' && e.code);
  const feedback = p.feedback ?? [];
  const input = envelope
    ? planInputFrom(
        envelope,
        {
          sessionId: p.sessionId,
          namespace: session.namespace,
          intent: session.intent,
          author: session.requester,
          ...(confirmed?.code ? { confirmedCode: confirmed.code } : {}),
          feedback,
        },
        deps.templates,
      )
    : undefined;
  if (!input) {
    const message =
      'There is no ranked root cause to plan a fix for. Describe the fix in the thread, or re-run triage once more evidence is in.';
    const record = await deps.artifacts.putPlan(
      { sessionId: p.sessionId, kind: 'plan', revision: p.revision, status: 'needs-human', message, feedback },
      deps.now(),
    );
    await recordEvent(deps, p.sessionId, 'human_needed', { summary: message });
    await postToSession(deps, session, planOutcomeView(p.sessionId, 'needs-human', message));
    return { planId: record.planId, status: record.status };
  }
  const outcome = await synthesizePlan(deps.synthesizer, input, timelineSink(deps), deps.now);
  if (outcome.status === 'needs-human') {
    await postToSession(deps, session, planOutcomeView(p.sessionId, 'needs-human', outcome.message));
    return storePlanOutcome(deps, p, { status: 'needs-human', message: outcome.message, feedback: outcome.errors });
  }
  return storePlanOutcome(deps, p, {
    status: 'draft',
    plan: outcome.plan as unknown as Record<string, unknown>,
    feedback,
  });
}

export async function planReviewAuto(deps: WorkflowDeps, p: z.infer<typeof AutoReviewPayload>) {
  const record = await deps.artifacts.getPlan(p.sessionId, p.planId);
  if (!record) throw new StepInputError(`Plan ${p.planId} does not exist`);
  const envelope = await deps.artifacts.getEnvelope(p.sessionId);
  const workflow = await deps.artifacts.getOrCreateWorkflow(p.sessionId, deps.now());
  const review = reviewPlan(record.plan ?? null, {
    completeness: envelope?.evidence.completeness ?? 0,
    overrideActive: isOverrideActive(workflow.override, deps.now()),
  });
  await deps.artifacts.updatePlan(p.sessionId, p.planId, { review: review as unknown as Record<string, unknown> });
  // An advisory check informs the reviewer; it is no reason to regenerate.
  const failed = review.checks.filter((c) => !c.passed && !c.advisory);
  await recordEvent(deps, p.sessionId, review.passed ? 'automated_review_pass' : 'automated_review_fail', {
    summary: review.passed
      ? 'Automated review passed'
      : failed
          .map((c) => `${c.id}: ${c.detail}`)
          .join('; ')
          .slice(0, SUMMARY_MAX),
    data: { planId: p.planId, checks: review.checks, humanReviewRequired: review.humanReviewRequired },
  });
  return {
    passed: review.passed,
    humanReviewRequired: review.humanReviewRequired,
    checks: review.checks,
    feedback: failed.map((c) => `${c.id}: ${c.detail}`),
  };
}

export async function planRevise(deps: WorkflowDeps, p: z.infer<typeof RevisePayload>) {
  const note =
    p.decision.note?.trim() ||
    (p.decision.decision === 'deny' ? 'The reviewer rejected this plan.' : 'The reviewer asked for changes.');
  await deps.artifacts.updatePlan(p.sessionId, p.planId, {
    status: 'rejected',
    ...(p.decision.userId ? { decidedBy: p.decision.userId } : {}),
  });
  await recordEvent(deps, p.sessionId, 'human_review_changes_requested', {
    actor: p.decision.userId ?? 'calmops',
    summary: note.slice(0, SUMMARY_MAX),
    data: { planId: p.planId, revision: p.revision },
  });
  return { feedback: [note] };
}

const DECIDED_EVENT = {
  approved: 'human_review_approved',
  'approved-autonomous': 'review_autonomous_approved',
  rejected: 'review_rejected',
  expired: 'review_expired',
  'postmortem-complete': 'break-glass.review-completed',
} as const;

export async function reviewDecided(deps: WorkflowDeps, p: z.infer<typeof ReviewDecidedPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const record = await deps.artifacts.getPlan(p.sessionId, p.planId);
  const by = p.decision?.userId;
  const status = p.status === 'approved-autonomous' ? 'approved' : p.status;
  if (record) await deps.artifacts.updatePlan(p.sessionId, p.planId, { status, ...(by ? { decidedBy: by } : {}) });
  const kind = record?.kind === 'postmortem' ? 'postmortem' : 'plan-review';
  if (p.status === 'expired') {
    await expireApproval(deps, session, kind);
    if (kind === 'postmortem') {
      await postToSession(
        deps,
        session,
        timeoutNoticeView(
          p.sessionId,
          'The post-incident review was not completed in time.',
          'It stays overdue in the break-glass metrics.',
        ),
      );
    }
  }
  if (p.status === 'postmortem-complete' && record?.requestId) {
    await recordEvent(deps, p.sessionId, 'break-glass.review-completed', {
      actor: by ?? 'calmops',
      summary: `Post-incident review of ${record.requestId} completed`,
      data: { overrideId: record.requestId, at: deps.now().toISOString() },
    });
  } else {
    await recordEvent(deps, p.sessionId, DECIDED_EVENT[p.status], {
      actor: by ?? 'calmops',
      summary: `Plan ${p.planId}: ${p.status}`,
      data: { planId: p.planId, status: p.status, ...(p.decision?.note ? { note: p.decision.note } : {}) },
    });
  }
  return {};
}

export async function postmortemPrepare(deps: WorkflowDeps, p: z.infer<typeof PostmortemPreparePayload>) {
  const events = await deps.store.timeline.list(p.sessionId);
  const lines = events
    .filter(
      (e) =>
        e.type.startsWith('break-glass.') &&
        (e.data?.['overrideId'] === p.requestId ||
          e.data?.['requestId'] === p.requestId ||
          (e.data?.['details'] as { requestId?: unknown } | undefined)?.requestId === p.requestId ||
          e.type === 'break-glass.request-under-override'),
    )
    // The request is said once: the form's record and the run's audit entry describe the same request.
    .filter((e, i, all) => e.type !== 'break-glass.requested' || all.findIndex((x) => x.type === e.type) === i)
    .slice(-20)
    // mrkdwn for the review message, from the entries' fields: people as mentions, commands as code.
    .map((e) =>
      breakGlassAuditLine({
        type: e.type,
        at: e.at,
        ...(e.actor ? { actor: e.actor } : {}),
        ...(e.data ? { data: e.data } : {}),
      }),
    );
  const record = await deps.artifacts.putPlan(
    {
      sessionId: p.sessionId,
      kind: 'postmortem',
      revision: 0,
      status: 'draft',
      requestId: p.requestId,
      message: `Break-glass ${p.requestId} has ended. Review what was done under the override and whether it was justified.`,
      feedback: lines,
    },
    deps.now(),
  );
  return { planId: record.planId };
}

export async function reviewOutcome(deps: WorkflowDeps, p: z.infer<typeof ReviewOutcomePayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const status = p.review.status;
  if (status === 'approved' && p.review.planId) {
    const record = await deps.artifacts.getPlan(p.sessionId, p.review.planId);
    const plan = record?.plan as RemediationPlan | undefined;
    if (record && plan) {
      const at = deps.now().toISOString();
      const progress = await addEvidence(
        deps,
        p.sessionId,
        evidenceFromPlan({ id: record.planId, title: plan.summary, steps: plan.steps }, at),
        (w) => ({ ...w, approvedPlanId: record.planId }),
      );
      await postToSession(
        deps,
        progress.session,
        approvedPlanView({
          sessionId: p.sessionId,
          plan,
          ...(record.decidedBy ? { approvedBy: record.decidedBy } : {}),
          autonomous: !record.decidedBy,
        }),
      );
      return { status: 'approved', planId: record.planId };
    }
  }
  const outcome = status === 'rejected' ? 'rejected' : status === 'expired' ? 'expired' : 'failed';
  await postToSession(deps, session, planOutcomeView(p.sessionId, outcome));
  return { status };
}
